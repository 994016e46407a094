//! General-purpose compression around a compressible form: LZ4 (fast) or Zstandard (small)
//! over the complete bytes of a byte-packed or unencoded block (inner tag included).
//! `[3 zero bytes][inner length u32][compressed length u32][compressed bytes]`.
//! The inner length is bounded by the largest inner block for the value count before anything
//! is allocated, and the decompressed block is decoded with the ordinary checks.

use super::{byte_packed, BlockInput, Encoding, Estimate};
use crate::bytes::{pad8, put_lanes, ByteReader};
use crate::error::{corrupt, Result};
use crate::value::{ColumnValue, Lane};

/// Inner forms worth wrapping: they keep byte-aligned redundancy that LZ-style codecs see.
pub(crate) const INNER: [Encoding; 2] = [Encoding::BytePacked, Encoding::Unencoded];

fn inner_block<T: ColumnValue>(
    inner: Encoding,
    input: &BlockInput<'_, T>,
    lanes: &[T::Lane],
) -> Vec<u8> {
    let mut raw = vec![inner.tag()];
    match inner {
        Encoding::BytePacked => {
            let per_value = input.stats.range_width.div_ceil(8) as usize;
            byte_packed::write(&mut raw, lanes, input.stats.min, per_value);
        }
        _ => {
            pad8(&mut raw);
            put_lanes(&mut raw, lanes);
        }
    }
    raw
}

fn compress(wrapper: Encoding, raw: &[u8], zstd_level: i32) -> Option<Vec<u8>> {
    match wrapper {
        Encoding::Lz4 => Some(lz4_flex::block::compress(raw)),
        Encoding::Zstd => zstd::bulk::compress(raw, zstd_level).ok(),
        _ => None,
    }
}

/// Values compressed to price LZ4/zstd: a contiguous stretch, not the engine's sample of short
/// runs, which cannot show what LZ-style codecs live on, repeats far apart (flight numbers that
/// come back every day, dictionary codes of a schedule): priced from the sample they were
/// underestimated by 10-20%. A quarter of a full block keeps most of the encode time.
const PRICED_VALUES: usize = 16_384;

/// Size of `wrapper(inner)`, from compressing the block's first `PRICED_VALUES` values in
/// their inner form (exact when the block is no longer).
pub(crate) fn estimate<T: ColumnValue>(
    wrapper: Encoding,
    inner: Encoding,
    input: &BlockInput<'_, T>,
) -> Option<Estimate> {
    let count = input.lanes.len();
    let priced = count.min(PRICED_VALUES);
    let raw = inner_block(inner, input, &input.lanes[..priced]);
    let compressed = compress(wrapper, &raw, input.zstd_level)?;
    if priced == count {
        return Estimate::exact(compressed.len() + 12);
    }
    Estimate::sampled(compressed.len() + 12, priced as f64 / count as f64)
}

pub(crate) fn encode<T: ColumnValue>(
    wrapper: Encoding,
    inner: Encoding,
    input: &BlockInput<'_, T>,
    out: &mut Vec<u8>,
) -> bool {
    if !INNER.contains(&inner) {
        return false;
    }
    let raw = inner_block(inner, input, input.lanes);
    let Some(compressed) = compress(wrapper, &raw, input.zstd_level) else {
        return false;
    };
    write(out, raw.len(), &compressed);
    true
}

/// Writes the wrapper payload (after the tag) around already compressed bytes.
pub(crate) fn write(out: &mut Vec<u8>, raw_length: usize, compressed: &[u8]) {
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(raw_length as u32).to_le_bytes());
    out.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
    out.extend_from_slice(compressed);
}

pub(crate) fn decode<T: ColumnValue>(
    wrapper: Encoding,
    reader: &mut ByteReader<'_>,
    out: &mut [T],
) -> Result<()> {
    reader.take(3, "compressed block padding")?;
    let largest_inner = 16 + out.len() * T::Lane::BYTES;
    let raw_length = reader.count(largest_inner, "decompressed length")?;
    let compressed_length = reader.count(usize::MAX >> 1, "compressed length")?;
    let at = reader.offset();
    let compressed = reader.take(compressed_length, "compressed data")?;
    // u64 words keep the decompressed block 8-byte aligned, as blocks are in a column.
    let mut words = vec![0u64; raw_length.div_ceil(8)];
    // SAFETY: viewing initialised u64 words as bytes is always valid.
    let raw: &mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), raw_length) };
    let produced = match wrapper {
        Encoding::Lz4 => lz4_flex::block::decompress_into(compressed, raw)
            .map_err(|e| corrupt(at, format!("lz4: {e}")))?,
        _ => zstd::bulk::decompress_to_buffer(compressed, raw)
            .map_err(|e| corrupt(at, format!("zstd: {e}")))?,
    };
    if produced != raw_length {
        return Err(corrupt(
            at,
            format!("decompressed {produced} bytes, expected {raw_length}"),
        ));
    }
    let mut inner_reader = reader.inner(raw, at);
    let tag_at = inner_reader.offset();
    let tag = inner_reader.u8("inner encoding tag")?;
    match Encoding::from_tag(tag) {
        Some(inner) if INNER.contains(&inner) => {
            super::decode_payload(inner, &mut inner_reader, out, super::nested::MAX_LEVEL)
        }
        _ => Err(corrupt(
            tag_at,
            format!("encoding tag {tag} cannot be wrapped by {}", wrapper.name()),
        )),
    }
}
