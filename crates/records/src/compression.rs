//! The compressors of Riegeli chunk data and their framing.
//!
//! A compressed buffer is `varint64(decompressed size)` followed by the compressor's output;
//! an uncompressed buffer is the bytes themselves. The framing mirrors what Riegeli's
//! writers produce so that file sizes match array_record's: zstd frames carry the content
//! size and no checksum (array_record's default window_log is 20), brotli streams use the
//! window given (22 by default) with the input size as hint, snappy is the raw format.
//!
//! Decompressed sizes come from the file and are not trusted: zstd output is bounded by the
//! format's maximal ratio before anything is allocated, brotli and snappy output grows only
//! as data actually decodes, and every buffer must decode to exactly its declared size.

use std::cell::RefCell;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use zstd::zstd_safe;

use crate::error::Malformed;
use crate::varint::{get_varint, put_varint};

/// How chunk data is compressed (the byte in front of a simple chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression (`uncompressed`).
    None,
    /// Brotli at a quality 0..=11 (`brotli:5`).
    Brotli { level: i32 },
    /// Zstandard at a level -32..=22 (`zstd:3`).
    Zstd { level: i32 },
    /// Snappy raw format (`snappy`).
    Snappy,
}

impl Compression {
    pub(crate) fn type_byte(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Brotli { .. } => b'b',
            Compression::Zstd { .. } => b'z',
            Compression::Snappy => b's',
        }
    }

    /// The name used in option strings and by `records info`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Brotli { .. } => "brotli",
            Compression::Zstd { .. } => "zstd",
            Compression::Snappy => "snappy",
        }
    }
}

/// Compression byte of shapeshift's extension: zstd with the file's shared dictionary.
pub(crate) const ZSTD_WITH_DICTIONARY: u8 = b'Z';

/// The parameters of one compressor instance.
#[derive(Clone)]
pub(crate) struct Compressor {
    pub compression: Compression,
    pub window_log: Option<u32>,
    pub dictionary: Option<Arc<Dictionary>>,
}

/// A shared zstd dictionary (shapeshift's extension). Contexts that loaded it are cached per
/// thread under `id`, which is unique per instance (never reused like an address could be).
pub(crate) struct Dictionary {
    pub raw: Vec<u8>,
    pub id: u64,
}

impl Dictionary {
    pub fn new(raw: Vec<u8>) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Dictionary {
            raw,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

type CompressorKey = (i32, Option<u32>, u64);

thread_local! {
    /// Compression contexts are expensive to set up; each thread keeps its last one.
    static ZSTD_COMPRESSOR: RefCell<Option<(CompressorKey, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    /// The context for streamed buffers, apart: a context's history can change libzstd's
    /// output for the next frame, and one-shot frames then come out as array_record's.
    static ZSTD_STREAM_COMPRESSOR: RefCell<Option<(CompressorKey, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    /// A plain decompression context, and one per thread with the last dictionary loaded.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
    static ZSTD_DICTIONARY_DECOMPRESSOR: RefCell<Option<(u64, zstd_safe::DCtx<'static>)>> =
        const { RefCell::new(None) };
}

impl Compressor {
    pub fn type_byte(&self) -> u8 {
        if self.dictionary.is_some() {
            ZSTD_WITH_DICTIONARY
        } else {
            self.compression.type_byte()
        }
    }

    /// Appends the framed compressed form of `data` to `out`.
    pub fn compress_into(&self, data: &[u8], out: &mut Vec<u8>) {
        match self.compression {
            Compression::None => out.extend_from_slice(data),
            Compression::Zstd { level } => {
                put_varint(out, data.len() as u64);
                self.zstd_compress_into(level, data, out);
            }
            Compression::Brotli { level } => {
                put_varint(out, data.len() as u64);
                crate::brotli_c::compress_into(data, level, self.window_log.unwrap_or(22), out);
            }
            Compression::Snappy => {
                put_varint(out, data.len() as u64);
                let start = out.len();
                out.resize(start + snap::raw::max_compress_len(data.len()), 0);
                let written = snap::raw::Encoder::new()
                    .compress(data, &mut out[start..])
                    .expect("snappy output buffer has the maximal size");
                out.truncate(start + written);
            }
        }
    }

    fn zstd_compress_into(&self, level: i32, data: &[u8], out: &mut Vec<u8>) {
        let dictionary_key = self
            .dictionary
            .as_ref()
            .map_or(0, |dictionary| dictionary.id);
        let key = (level, self.window_log, dictionary_key);
        let streamed = self.dictionary.is_none() && data.len() >= RIEGELI_ZSTD_STREAMING_SIZE;
        let cache = if streamed {
            &ZSTD_STREAM_COMPRESSOR
        } else {
            &ZSTD_COMPRESSOR
        };
        cache.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.as_ref().is_none_or(|(existing, _)| *existing != key) {
                let mut compressor = match &self.dictionary {
                    Some(dictionary) => {
                        zstd::bulk::Compressor::with_dictionary(level, &dictionary.raw)
                    }
                    None => zstd::bulk::Compressor::new(level),
                }
                .expect("zstd context creation");
                if self.dictionary.is_some() {
                    // The dictionary extension frames records minimally: the size is in
                    // the varint prefix and the dictionary is the file's.
                    compressor
                        .set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
                        .expect("valid parameter");
                    compressor
                        .set_parameter(zstd_safe::CParameter::DictIdFlag(false))
                        .expect("valid parameter");
                }
                if let Some(window_log) = self.window_log {
                    compressor
                        .set_parameter(zstd::zstd_safe::CParameter::WindowLog(window_log))
                        .expect("window_log was validated by the options parser");
                }
                *slot = Some((key, compressor));
            }
            let (_, compressor) = slot.as_mut().expect("set above");
            let start = out.len();
            out.reserve(zstd_safe::compress_bound(data.len()));
            if streamed {
                stream_without_size(compressor.context_mut(), data, out);
                return;
            }
            let written = {
                let mut tail = OutputTail { out, start };
                compressor
                    .compress_to_buffer(data, &mut tail)
                    .expect("zstd output buffer has the bound size")
            };
            debug_assert_eq!(out.len(), start + written);
        });
    }
}

/// Buffers of at least this many bytes reach Riegeli's zstd writer in more than one piece (its
/// buffer fills before the chunk ends), so libzstd compresses them as a stream of unknown
/// size: no content size in the frame header, and parameters chosen for an unknown size
/// rather than reduced to the buffer's. Shorter ones go in one call, which libzstd treats as a
/// one-shot compression with the size known. Measured on array_record 0.8.6: one-record
/// chunks of 4,000 bytes carry the content size, of 4,096 and more do not.
const RIEGELI_ZSTD_STREAMING_SIZE: usize = 4096;

/// Compresses `data` as a zstd stream whose size is not given in advance (as Riegeli's
/// `ZstdWriter` does for data that exceeds its buffer), appending the frame to `out`.
fn stream_without_size(context: &mut zstd_safe::CCtx<'_>, data: &[u8], out: &mut Vec<u8>) {
    context
        .reset(zstd_safe::ResetDirective::SessionOnly)
        .expect("resetting a zstd session cannot fail");
    let start = out.len();
    let mut input = zstd_safe::InBuffer::around(data);
    let mut ending = false;
    loop {
        if out.capacity() - out.len() < zstd_safe::CCtx::out_size() {
            out.reserve(zstd_safe::CCtx::out_size());
        }
        let from = out.len();
        let remaining = {
            let mut tail = OutputTail { out, start: from };
            let mut output = zstd_safe::OutBuffer::around(&mut tail);
            let directive = if ending {
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end
            } else {
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue
            };
            context
                .compress_stream2(&mut output, &mut input, directive)
                .expect("zstd streaming compression of an in-memory buffer")
        };
        if ending && remaining == 0 {
            break;
        }
        if input.pos() == data.len() {
            ending = true;
        }
    }
    debug_assert!(out.len() > start);
}

/// Lets zstd write into the spare capacity of a Vec after `start`.
struct OutputTail<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

unsafe impl zstd_safe::WriteBuf for OutputTail<'_> {
    fn as_slice(&self) -> &[u8] {
        &self.out[self.start..]
    }
    fn capacity(&self) -> usize {
        self.out.capacity() - self.start
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: start <= len <= capacity, so the pointer stays inside the allocation.
        unsafe { self.out.as_mut_ptr().add(self.start) }
    }
    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd initialized n bytes from as_mut_ptr(), within capacity().
        unsafe { self.out.set_len(self.start + n) }
    }
}

/// zstd cannot expand by more than this factor (an RLE block: 4 bytes for 128 KiB).
const ZSTD_MAX_RATIO: u64 = 1 << 15;
/// Brotli buffers are preallocated up to this ratio (see [`plausible_size`]).
const BROTLI_PREALLOCATED_RATIO: u64 = 4096;
/// Nor can snappy (a 64-byte copy takes 2 bytes), with room for the preamble.
const SNAPPY_MAX_RATIO: u64 = 64;

/// The largest size a compressed `payload` can plausibly decode to; a declared size above
/// it marks corruption and is refused before any allocation.
pub(crate) fn plausible_size(compression_byte: u8, payload_len: usize) -> u64 {
    let payload_len = payload_len as u64;
    match compression_byte {
        0 => payload_len,
        b's' => payload_len.saturating_mul(SNAPPY_MAX_RATIO) + 64,
        // Brotli can legitimately exceed this; larger claims decode incrementally instead.
        b'b' => payload_len.saturating_mul(BROTLI_PREALLOCATED_RATIO) + (1 << 20),
        _ => payload_len.saturating_mul(ZSTD_MAX_RATIO) + 1024,
    }
}

/// Decompresses one framed buffer (size prefix + payload, or raw bytes when
/// `compression_byte` is 0) into a new vector. `offset` is the file offset of `buffer[0]`.
pub(crate) fn decompress(
    compression_byte: u8,
    buffer: &[u8],
    offset: u64,
    dictionary: Option<&Dictionary>,
) -> Result<Vec<u8>, Malformed> {
    if compression_byte == 0 {
        return Ok(buffer.to_vec());
    }
    let (size, prefix) = get_varint(buffer, offset)?;
    let payload = &buffer[prefix..];
    let payload_offset = offset + prefix as u64;
    if compression_byte == b'b' && size > plausible_size(b'b', payload.len()) {
        return brotli_to_vec(payload, payload_offset, size);
    }
    if size > plausible_size(compression_byte, payload.len()) {
        return Err(Malformed::new(
            offset,
            format!(
                "a compressed buffer of {} bytes cannot decode to the declared {size} bytes",
                payload.len()
            ),
        ));
    }
    decompress_payload_to_vec(
        compression_byte,
        payload,
        payload_offset,
        dictionary,
        size as usize,
        Vec::new(),
    )
}

/// [`decompress_payload`] into `buffer` (emptied first: a recycled buffer or a new one),
/// which then holds `size` bytes (a size the caller bounded with [`plausible_size`]).
/// Plain zstd decodes straight into the vector's uninitialized capacity: zeroing a chunk's
/// worth of memory first (a `memset`, 2.7% of the samples of a sequential `group_size:256`
/// zstd read) would be wasted work.
pub(crate) fn decompress_payload_to_vec(
    compression_byte: u8,
    payload: &[u8],
    offset: u64,
    dictionary: Option<&Dictionary>,
    size: usize,
    buffer: Vec<u8>,
) -> Result<Vec<u8>, Malformed> {
    let mut out = buffer;
    out.clear();
    if compression_byte == b'z' {
        out.reserve(size);
        // `Vec<u8>` as zstd's output buffer: written from its start up to its capacity,
        // its length set to the bytes written.
        let written = ZSTD_DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let dctx = slot.get_or_insert_with(zstd_safe::DCtx::create);
            dctx.decompress(&mut out, payload)
        });
        check_zstd(written, size, offset)?;
        return Ok(out);
    }
    out.resize(size, 0);
    decompress_payload(compression_byte, payload, offset, dictionary, &mut out)?;
    Ok(out)
}

/// Decodes with the output growing as data decodes, so a lying size allocates nothing.
fn brotli_to_vec(payload: &[u8], offset: u64, size: u64) -> Result<Vec<u8>, Malformed> {
    let mut out = Vec::new();
    let mut decoder = brotli::Decompressor::new(payload, 4096);
    (&mut decoder)
        .take(size.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|error| Malformed::new(offset, format!("brotli data is corrupt: {error}")))?;
    if out.len() as u64 != size {
        return Err(Malformed::new(
            offset,
            format!(
                "brotli data decoded to {} bytes, {size} were declared",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// Decompresses `payload` (what follows the size prefix) into `out`, whose length is the
/// declared size; the payload must decode to exactly that many bytes.
pub(crate) fn decompress_payload(
    compression_byte: u8,
    payload: &[u8],
    offset: u64,
    dictionary: Option<&Dictionary>,
    out: &mut [u8],
) -> Result<(), Malformed> {
    let size = out.len();
    let bad = |what: String| Malformed::new(offset, what);
    match compression_byte {
        0 => {
            if payload.len() != size {
                return Err(bad(format!(
                    "buffer has {} bytes, {size} were declared",
                    payload.len()
                )));
            }
            out.copy_from_slice(payload);
            Ok(())
        }
        b'z' => {
            let written = ZSTD_DECOMPRESSOR.with(|cell| {
                let mut slot = cell.borrow_mut();
                let dctx = slot.get_or_insert_with(zstd_safe::DCtx::create);
                dctx.decompress(out, payload)
            });
            check_zstd(written, size, offset)
        }
        ZSTD_WITH_DICTIONARY => {
            let dictionary = dictionary.ok_or_else(|| {
                bad("chunk needs the shared zstd dictionary, the file has none".into())
            })?;
            let written = ZSTD_DICTIONARY_DECOMPRESSOR.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.as_ref().is_none_or(|(id, _)| *id != dictionary.id) {
                    let mut dctx = zstd_safe::DCtx::create();
                    dctx.load_dictionary(&dictionary.raw)?;
                    *slot = Some((dictionary.id, dctx));
                }
                let (_, dctx) = slot.as_mut().expect("set above");
                dctx.decompress(out, payload)
            });
            check_zstd(written, size, offset)
        }
        b'b' => crate::brotli_c::decompress_exact(payload, out).map_err(bad),
        b's' => {
            let declared = snap::raw::decompress_len(payload)
                .map_err(|error| bad(format!("snappy data is corrupt: {error}")))?;
            if declared != size {
                return Err(bad(format!(
                    "snappy data declares {declared} bytes, the chunk {size}"
                )));
            }
            let written = snap::raw::Decoder::new()
                .decompress(payload, out)
                .map_err(|error| bad(format!("snappy data is corrupt: {error}")))?;
            if written != size {
                return Err(bad(format!(
                    "snappy data decoded to {written} bytes, {size} were declared"
                )));
            }
            Ok(())
        }
        other => Err(bad(format!("unknown compression type byte 0x{other:02x}"))),
    }
}

fn check_zstd(written: Result<usize, usize>, size: usize, offset: u64) -> Result<(), Malformed> {
    match written {
        Ok(written) if written == size => Ok(()),
        Ok(written) => Err(Malformed::new(
            offset,
            format!("zstd data decoded to {written} bytes, {size} were declared"),
        )),
        Err(code) => Err(Malformed::new(
            offset,
            format!("zstd data is corrupt: {}", zstd_safe::get_error_name(code)),
        )),
    }
}
