//! Compares brotli decoders and encoders on records of a file, one thread, same streams:
//! the bundled C brotli (`brotlic-sys`, compiled by `cc`; what the reader and writer link),
//! the system C library (`libbrotlidec.so.1` / `libbrotlienc.so.1`, 1.0.9 on Debian 12,
//! loaded with `dlopen` so both C builds can run in one process), and the pure-Rust
//! `brotli-decompressor`:
//! `cargo run --release -p shapeshift-records --example brotli_decoders -- FILE [GROUP] [QUALITY] [ONLY]`.
//! With ONLY = `bundled`, `system` or `rust`, it decodes the streams 3 times with that
//! decoder alone (after the setup lines), for `perf stat -e instructions` A/B counts.
//!
//! The system library is optional: without it only the bundled and Rust figures print.
//! It is opened with `RTLD_LOCAL`, so its own internal calls stay inside it and do not bind
//! to the bundled copy's symbols (a Rust executable exports none of them anyway).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::time::Instant;

use shapeshift_records::Reader;

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;

type DecompressFn = unsafe extern "C" fn(usize, *const u8, *mut usize, *mut u8) -> c_int;
type CompressFn =
    unsafe extern "C" fn(c_int, c_int, c_int, usize, *const u8, *mut usize, *mut u8) -> c_int;
type VersionFn = unsafe extern "C" fn() -> u32;

/// The system library's one-shot entry points, if the shared objects are installed.
struct SystemBrotli {
    decompress: DecompressFn,
    compress: CompressFn,
    version: u32,
}

fn symbol(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `handle` came from a successful dlopen and `name` is NUL-terminated.
    let address = unsafe { dlsym(handle, name.as_ptr()) };
    (!address.is_null()).then_some(address)
}

fn load_system_brotli() -> Option<SystemBrotli> {
    // SAFETY: dlopen with NUL-terminated names; the handles are never closed, so the
    // function pointers stay valid for the process's lifetime. The transmuted pointers
    // have the C signatures declared in brotli's public headers.
    unsafe {
        let dec = dlopen(c"libbrotlidec.so.1".as_ptr(), RTLD_NOW | RTLD_LOCAL);
        let enc = dlopen(c"libbrotlienc.so.1".as_ptr(), RTLD_NOW | RTLD_LOCAL);
        if dec.is_null() || enc.is_null() {
            return None;
        }
        let decompress = symbol(dec, c"BrotliDecoderDecompress")?;
        let compress = symbol(enc, c"BrotliEncoderCompress")?;
        let version = symbol(dec, c"BrotliDecoderVersion")?;
        Some(SystemBrotli {
            decompress: std::mem::transmute::<*mut c_void, DecompressFn>(decompress),
            compress: std::mem::transmute::<*mut c_void, CompressFn>(compress),
            version: std::mem::transmute::<*mut c_void, VersionFn>(version)(),
        })
    }
}

/// Decodes every stream with `decompress`, checking each against its chunk; seconds taken.
fn time_c_decoder(decompress: DecompressFn, streams: &[Vec<u8>], chunks: &[Vec<u8>]) -> f64 {
    let mut out = vec![0u8; chunks.iter().map(Vec::len).max().unwrap_or(0)];
    let start = Instant::now();
    for (stream, chunk) in streams.iter().zip(chunks) {
        let mut size = chunk.len();
        // SAFETY: the decoder writes at most `size` bytes into `out`.
        let ok = unsafe { decompress(stream.len(), stream.as_ptr(), &mut size, out.as_mut_ptr()) };
        assert!(ok == 1 && size == chunk.len() && out[..size] == chunk[..]);
    }
    start.elapsed().as_secs_f64()
}

/// Encodes every chunk with `compress` at `quality`, window 22; seconds and total size.
fn time_c_encoder(compress: CompressFn, quality: i32, chunks: &[Vec<u8>]) -> (f64, usize) {
    let mut out = Vec::new();
    let mut total = 0usize;
    let start = Instant::now();
    for chunk in chunks {
        out.resize(chunk.len() + chunk.len() / 2 + 1024, 0);
        let mut size = out.len();
        // SAFETY: the encoder reads `chunk.len()` bytes and writes at most `size` bytes.
        let ok = unsafe {
            compress(
                quality,
                22,
                0,
                chunk.len(),
                chunk.as_ptr(),
                &mut size,
                out.as_mut_ptr(),
            )
        };
        assert!(ok == 1);
        total += size;
    }
    (start.elapsed().as_secs_f64(), total)
}

fn time_rust_decoder(streams: &[Vec<u8>], chunks: &[Vec<u8>]) -> f64 {
    let mut out = vec![0u8; chunks.iter().map(Vec::len).max().unwrap_or(0)];
    let start = Instant::now();
    for (stream, chunk) in streams.iter().zip(chunks) {
        let output = &mut out[..chunk.len()];
        let mut state = brotli::BrotliState::new(
            brotli::enc::StandardAlloc::default(),
            brotli::enc::StandardAlloc::default(),
            brotli::enc::StandardAlloc::default(),
        );
        let (mut available_in, mut input_offset) = (stream.len(), 0usize);
        let (mut available_out, mut output_offset, mut total) = (output.len(), 0usize, 0usize);
        let result = brotli::BrotliDecompressStream(
            &mut available_in,
            &mut input_offset,
            stream,
            &mut available_out,
            &mut output_offset,
            output,
            &mut total,
            &mut state,
        );
        assert!(
            matches!(result, brotli::BrotliResult::ResultSuccess) && output_offset == chunk.len()
        );
    }
    start.elapsed().as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: brotli_decoders FILE [GROUP] [QUALITY] [bundled|system|rust]";
    let path = args.next().ok_or(usage)?;
    let group: usize = args.next().map(|g| g.parse()).transpose()?.unwrap_or(256);
    let quality: i32 = args.next().map(|q| q.parse()).transpose()?.unwrap_or(3);
    let only = args.next();
    let reader = Reader::open(&path)?;
    let records = reader.read_all()?.to_vecs();
    let chunks: Vec<Vec<u8>> = records.chunks(group.max(1)).map(|c| c.concat()).collect();
    let bytes: usize = chunks.iter().map(Vec::len).sum();
    let bundled_compress: CompressFn = brotlic_sys::BrotliEncoderCompress;
    let bundled_decompress: DecompressFn = brotlic_sys::BrotliDecoderDecompress;
    let system = load_system_brotli();
    // SAFETY: a version query without arguments.
    let bundled_version = unsafe { brotlic_sys::BrotliDecoderVersion() };
    println!(
        "{} chunks of {group} records, {bytes} bytes, quality {quality}; bundled brotli {bundled_version:#x}, system {}",
        chunks.len(),
        system
            .as_ref()
            .map_or("not installed".to_string(), |s| format!("{:#x}", s.version))
    );
    // The streams all decoders read: the bundled encoder's (checked below to equal the
    // system encoder's when both are present).
    let streams: Vec<Vec<u8>> = chunks
        .iter()
        .map(|chunk| {
            let mut out = vec![0u8; chunk.len() + chunk.len() / 2 + 1024];
            let mut size = out.len();
            // SAFETY: as in `time_c_encoder`.
            let ok = unsafe {
                bundled_compress(
                    quality,
                    22,
                    0,
                    chunk.len(),
                    chunk.as_ptr(),
                    &mut size,
                    out.as_mut_ptr(),
                )
            };
            assert!(ok == 1);
            out.truncate(size);
            out
        })
        .collect();
    if let Some(system) = &system {
        let identical = streams.iter().zip(&chunks).all(|(stream, chunk)| {
            let mut out = vec![0u8; chunk.len() + chunk.len() / 2 + 1024];
            let mut size = out.len();
            // SAFETY: as in `time_c_encoder`.
            let ok = unsafe {
                (system.compress)(
                    quality,
                    22,
                    0,
                    chunk.len(),
                    chunk.as_ptr(),
                    &mut size,
                    out.as_mut_ptr(),
                )
            };
            ok == 1 && out[..size] == stream[..]
        });
        println!("system and bundled encoders byte-identical: {identical}");
    }
    if let Some(only) = only {
        for _ in 0..3 {
            match only.as_str() {
                "bundled" => drop(time_c_decoder(bundled_decompress, &streams, &chunks)),
                "system" => drop(time_c_decoder(
                    system
                        .as_ref()
                        .ok_or("system brotli not installed")?
                        .decompress,
                    &streams,
                    &chunks,
                )),
                "rust" => drop(time_rust_decoder(&streams, &chunks)),
                _ => return Err(usage.into()),
            }
        }
        return Ok(());
    }
    for round in 0..3 {
        let mb_per_s = |seconds: f64| bytes as f64 / seconds / 1e6;
        let bundled = time_c_decoder(bundled_decompress, &streams, &chunks);
        let rust = time_rust_decoder(&streams, &chunks);
        let (bundled_enc, bundled_size) = time_c_encoder(bundled_compress, quality, &chunks);
        let mut line = format!(
            "round {round}: decode MB/s: bundled C {:.0}, Rust {:.0}; encode MB/s: bundled C {:.0} ({bundled_size} B)",
            mb_per_s(bundled),
            mb_per_s(rust),
            mb_per_s(bundled_enc)
        );
        if let Some(system) = &system {
            let sys = time_c_decoder(system.decompress, &streams, &chunks);
            let (sys_enc, sys_size) = time_c_encoder(system.compress, quality, &chunks);
            line += &format!(
                "; system C decode {:.0}, encode {:.0} ({sys_size} B); bundled/system decode time {:.3}, encode time {:.3}",
                mb_per_s(sys),
                mb_per_s(sys_enc),
                bundled / sys,
                bundled_enc / sys_enc
            );
        }
        println!("{line}");
    }
    Ok(())
}
