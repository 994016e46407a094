//! Frame of reference per 1024-value chunk: the block is cut into FastLanes-sized chunks and
//! each chunk is an ordinary packed vector (`packed.rs`) with its own reference (the chunk's
//! minimum in key order) and its own width.
//!
//! `[chunks: ceil(count / 1024) packed vectors of min(1024, remaining) values, in order]`.
//!
//! Why: data that is locally narrow but drifts — sorted timestamps, monotone counters with
//! occasional resets, clustered keys — needs many bits under one block-wide frame but few
//! within 1024 neighbours. Delta encoding captures that drift in fewer bits, but its prefix sum
//! makes every read of one value a decode of the block; here a value is still one
//! `unpack_single` away (random access), and a full decode is the bit-packing kernel per chunk.
//! The 16-byte header per chunk costs 0.125 bits per value.
//!
//! Invariants: every chunk header starts 8-byte aligned (written by `write_packed`, checked by
//! `PackedView::parse`), chunk `c` holds values `[1024c, min(1024(c+1), count))`, and the
//! number of chunks follows from the block's value count, so nothing in the payload sizes an
//! allocation.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::Result;
use crate::packed::{packed_size, write_packed, PackedView, CHUNK};
use crate::value::{as_lanes_mut, order_key, ColumnValue, Lane};

/// `(reference lane, width)` of one chunk under the key order of `T`.
fn chunk_frame<T: ColumnValue>(chunk: &[T::Lane]) -> (T::Lane, u32) {
    let first = order_key::<T>(chunk[0]);
    let (mut low, mut high) = (first, first);
    for &lane in chunk {
        let key = order_key::<T>(lane);
        low = low.min(key);
        high = high.max(key);
    }
    (order_key::<T>(low), high.wrapping_sub_(low).bits_needed())
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    // A block narrow as a whole gains nothing from chunk frames: plain bit-packing wins.
    if input.stats.range_width <= 8 {
        return None;
    }
    let bytes: usize = input
        .lanes
        .chunks(CHUNK)
        .map(|chunk| {
            let (_, width) = chunk_frame::<T>(chunk);
            8 + packed_size(chunk.len(), width, T::Lane::BYTES)
        })
        .sum();
    Estimate::exact(bytes)
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    for chunk in input.lanes.chunks(CHUNK) {
        let (reference, width) = chunk_frame::<T>(chunk);
        write_packed(out, chunk, reference, width);
    }
    true
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let lanes = as_lanes_mut(out);
    // Unpacked into an L1-resident chunk and copied out sequentially (see
    // `PackedView::decode_into`).
    let mut staging = [T::Lane::default(); CHUNK];
    for piece in lanes.chunks_mut(CHUNK) {
        let view = PackedView::<T::Lane>::parse(reader, piece.len())?;
        let staged = &mut staging[..piece.len()];
        view.decode_piece(0, staged);
        piece.copy_from_slice(staged);
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let out = as_lanes_mut(out);
    let mut next = 0usize;
    let mut chunk_start = 0usize;
    while next < positions.len() && chunk_start < count {
        let length = CHUNK.min(count - chunk_start);
        let chunk_end = chunk_start + length;
        // Headers are read in order (each says how long its chunk is); chunks without a
        // requested position are stepped over by their header alone.
        if positions[next] as usize >= chunk_end {
            PackedView::<T::Lane>::skip(reader, length)?;
        } else {
            let view = PackedView::<T::Lane>::parse(reader, length)?;
            // A forward scan, not a binary search over the block's remaining rows: a chunk
            // holds few of them (about 10 at 1% density) and 64 searches per block cost more.
            let mut end = next + 1;
            while end < positions.len() && (positions[end] as usize) < chunk_end {
                end += 1;
            }
            view.gather(
                &positions[next..end],
                chunk_start as u32,
                &mut out[next..end],
            );
            next = end;
        }
        chunk_start = chunk_end;
    }
    Ok(())
}
