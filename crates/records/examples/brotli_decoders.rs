//! Compares brotli decoders on records of a file: the system C library (what the reader
//! links) against the pure-Rust `brotli-decompressor`, on the same streams, one thread:
//! `cargo run --release -p shapeshift-records --example brotli_decoders -- FILE [GROUP]`.

use std::time::Instant;

use shapeshift_records::Reader;

#[link(name = "brotlidec")]
extern "C" {
    fn BrotliDecoderDecompress(
        encoded_size: usize,
        encoded: *const u8,
        decoded_size: *mut usize,
        decoded: *mut u8,
    ) -> i32;
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: brotli_decoders FILE [GROUP]")?;
    let group: usize = args.next().map(|g| g.parse()).transpose()?.unwrap_or(256);
    let reader = Reader::open(&path)?;
    let records = reader.read_all()?.to_vecs();
    let chunks: Vec<Vec<u8>> = records.chunks(group).map(|c| c.concat()).collect();
    let streams: Vec<Vec<u8>> = chunks
        .iter()
        .map(|chunk| {
            let mut out = Vec::new();
            let params = brotli::enc::BrotliEncoderParams {
                quality: 3,
                lgwin: 22,
                ..Default::default()
            };
            brotli::BrotliCompress(&mut &chunk[..], &mut out, &params).unwrap();
            out
        })
        .collect();
    let bytes: usize = chunks.iter().map(Vec::len).sum();
    let mut out = vec![0u8; chunks.iter().map(Vec::len).max().unwrap_or(0)];
    for round in 0..3 {
        let start = Instant::now();
        for (stream, chunk) in streams.iter().zip(&chunks) {
            let mut size = chunk.len();
            // SAFETY: the decoder writes at most `size` bytes into `out`.
            let ok = unsafe {
                BrotliDecoderDecompress(stream.len(), stream.as_ptr(), &mut size, out.as_mut_ptr())
            };
            assert!(ok == 1 && size == chunk.len());
        }
        let c = start.elapsed().as_secs_f64();
        let start = Instant::now();
        for (stream, chunk) in streams.iter().zip(&chunks) {
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
                matches!(result, brotli::BrotliResult::ResultSuccess)
                    && output_offset == chunk.len()
            );
        }
        let rust = start.elapsed().as_secs_f64();
        println!(
            "round {round}: group {group}: C {:.0} MB/s, Rust {:.0} MB/s",
            bytes as f64 / c / 1e6,
            bytes as f64 / rust / 1e6
        );
    }
    Ok(())
}
