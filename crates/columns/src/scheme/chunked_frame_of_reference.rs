//! Frame of reference per 1024-value chunk: the block is cut into FastLanes-sized chunks and
//! each chunk is bit-packed (`packed.rs`) with its own reference (the chunk's minimum in key
//! order) and its own width.
//!
//! `[widths: u8 × chunks][zero padding to 8][references: u64 × chunks][chunk bodies: the
//! words (and for a partial last chunk the tail stream) of min(1024, remaining) values each,
//! in order]`, `chunks = ceil(count / 1024)`. Format versions 1 and 2 had no frame table:
//! each chunk was a whole packed vector with its own 16-byte header, following the tag
//! directly; they are still read.
//!
//! Why: data that is locally narrow but drifts — sorted timestamps, monotone counters with
//! occasional resets, clustered keys — needs many bits under one block-wide frame but few
//! within 1024 neighbours. Delta encoding captures that drift in fewer bits, but its prefix sum
//! makes every read of one value a decode of the block; here a value is still one bit
//! extraction away (random access), and a full decode is the bit-packing kernel per chunk.
//! A chunk's frame costs 9 bytes, 0.07 bits per value.
//!
//! Why the frame table: a full chunk's body is `128 * width` bytes, so the widths alone give
//! where every chunk starts (a prefix sum over one cache line per block), and the references
//! sit together in a few more lines. With per-chunk headers a take walked them in order, each
//! header's width saying where the next one is: a chain of ~1000 dependent cache misses per
//! million values, which cost more than the values' own loads.
//!
//! Invariants: the bodies start 8-byte aligned and full bodies are multiples of 8 bytes, so
//! every chunk's words are aligned; chunk `c` holds values `[1024c, min(1024(c+1), count))`;
//! every width is at most the lane's (checked when the table is read); the number of chunks
//! follows from the block's value count, so nothing in the payload sizes an allocation.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::packed::{
    packed_body_size, straddling_bits, transposed_row_lane, write_packed_body, PackedView, CHUNK,
};
use crate::value::{as_lanes_mut, order_key, ColumnValue, Lane};

/// The first format version whose chunked blocks start with the frame table (and whose take
/// accepts positions in any order).
pub(crate) const FRAME_TABLE_VERSION: u16 = 3;

/// Rows per batch of the block-wide gather (as `packed`'s own gather).
const GATHER_BATCH: usize = 64;

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

/// Bytes of the frame table (widths, padding, references) of a block whose tag is its first
/// byte.
fn frame_table_bytes(chunks: usize) -> usize {
    (1 + chunks).next_multiple_of(8) - 1 + 8 * chunks
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    // A block narrow as a whole gains nothing from chunk frames: plain bit-packing wins.
    if input.stats.range_width <= 8 {
        return None;
    }
    let bodies: usize = input
        .lanes
        .chunks(CHUNK)
        .map(|chunk| {
            let (_, width) = chunk_frame::<T>(chunk);
            packed_body_size(chunk.len(), width)
        })
        .sum();
    Estimate::exact(frame_table_bytes(input.lanes.len().div_ceil(CHUNK)) + bodies)
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let frames: Vec<(T::Lane, u32)> = input.lanes.chunks(CHUNK).map(chunk_frame::<T>).collect();
    out.extend(frames.iter().map(|&(_, width)| width as u8));
    crate::bytes::pad8(out);
    for &(reference, _) in &frames {
        out.extend_from_slice(&reference.to_u64().to_le_bytes());
    }
    for (chunk, &(reference, width)) in input.lanes.chunks(CHUNK).zip(&frames) {
        write_packed_body(out, chunk, reference, width);
    }
    true
}

/// The frame table (format version 3 on): widths, checked against the lane width, and
/// references, and the byte offset of every chunk's body relative to the first.
struct FrameTable<'a> {
    widths: &'a [u8],
    references: &'a [u8],
    starts: Vec<usize>,
    /// Bytes of all bodies.
    length: usize,
}

impl<'a> FrameTable<'a> {
    /// Reads the frame table of a block of `count` values (`None` for columns written before
    /// the table existed) and leaves the reader at the first chunk's body.
    fn parse<L: Lane>(reader: &mut ByteReader<'a>, count: usize) -> Result<Option<Self>> {
        if reader.version() < FRAME_TABLE_VERSION {
            return Ok(None);
        }
        let chunks = count.div_ceil(CHUNK);
        let widths_at = reader.offset();
        let widths = reader.take(chunks, "chunk widths")?;
        reader.align8("padding after the chunk widths")?;
        let references = reader.take(8 * chunks, "chunk references")?;
        let mut starts = Vec::with_capacity(chunks);
        let mut start = 0usize;
        for (chunk, &width) in widths.iter().enumerate() {
            if width as u32 > L::BITS {
                return Err(corrupt(
                    widths_at + chunk,
                    format!("chunk width {width} exceeds the {}-bit lane", L::BITS),
                ));
            }
            starts.push(start);
            start += packed_body_size((count - chunk * CHUNK).min(CHUNK), width as u32);
        }
        Ok(Some(FrameTable {
            widths,
            references,
            starts,
            length: start,
        }))
    }

    fn width(&self, chunk: usize) -> u32 {
        self.widths[chunk] as u32
    }

    fn reference<L: Lane>(&self, chunk: usize) -> L {
        let bytes = &self.references[8 * chunk..8 * chunk + 8];
        L::truncate_u64(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let table = FrameTable::parse::<T::Lane>(reader, out.len())?;
    let bodies = match &table {
        Some(table) => Some(reader.take(table.length, "chunk bodies")?),
        None => None,
    };
    let lanes = as_lanes_mut(out);
    // Unpacked into an L1-resident chunk and copied out sequentially (see
    // `PackedView::decode_into`).
    let mut staging = [T::Lane::default(); CHUNK];
    for (chunk, piece) in lanes.chunks_mut(CHUNK).enumerate() {
        let view = match (&table, bodies) {
            (Some(table), Some(bodies)) => {
                let width = table.width(chunk);
                let body = &bodies[table.starts[chunk]..][..packed_body_size(piece.len(), width)];
                PackedView::from_body(width, table.reference(chunk), piece.len(), body)
            }
            _ => PackedView::<T::Lane>::parse(reader, piece.len())?,
        };
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
    match FrameTable::parse::<T::Lane>(reader, count)? {
        Some(table) => take_with_table(reader, &table, count, positions, as_lanes_mut(out)),
        None => take_by_headers(reader, count, positions, as_lanes_mut(out)),
    }
}

/// The take of a block with a frame table: every chunk's place and reference are known up
/// front, so the rows of the whole block go through one batched gather, each row with its
/// chunk's width, words and reference. Positions may come in any order.
fn take_with_table<L: Lane>(
    reader: &mut ByteReader<'_>,
    table: &FrameTable<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [L],
) -> Result<()> {
    let chunks = table.starts.len();
    if chunks > MAX_CHUNKS {
        // Blocks (and their parts) hold at most 2^16 values; the caller guarantees it.
        return Err(corrupt(
            reader.offset(),
            format!("{count} values in one chunked block"),
        ));
    }
    // With the zero padding up to 8 bytes (a block or part is a multiple of 8 bytes long and
    // the bodies start 8-byte aligned in it), so a partial last chunk's tail stream ends in
    // whole words.
    let data = reader.take(table.length.next_multiple_of(8), "chunk bodies and padding")?;
    let mut frames = Frames::<L> {
        places: [0; MAX_CHUNKS],
        references: [L::default(); MAX_CHUNKS],
        full_rows: (count / CHUNK * CHUNK) as u32,
    };
    for (chunk, &start) in table.starts.iter().enumerate() {
        frames.references[chunk] = table.reference(chunk);
        // First word below 2^24 (a block's data is under 2^16 values of 8 bytes), width
        // below 2^7: one table entry, one lookup per row. Width 0 reads no words.
        let width = table.width(chunk);
        if width > 0 {
            frames.places[chunk] = ((start / L::BYTES) as u32) << 7 | width;
        }
    }
    // SAFETY: any bytes are valid lanes; align_to only yields a middle part that is aligned.
    let (prefix, middle, _) = unsafe { data.align_to::<L>() };
    let copied;
    let words: &[L] = if prefix.is_empty() && middle.len() * L::BYTES == data.len() {
        middle
    } else {
        let mut owned = vec![L::default(); data.len() / L::BYTES];
        crate::bytes::copy_lanes_from_le(data, &mut owned);
        copied = owned;
        &copied
    };
    frames.gather(words, positions, out);
    Ok(())
}

/// Chunks in a block of at most 2^16 values.
const MAX_CHUNKS: usize = 1 << 16 >> 10;

/// The chunks of one block as the gather reads them, indexed by chunk (fixed-size tables, so
/// the per-row lookups need no bounds checks and vectorise). Chunks without words (width 0,
/// or no chunk at all) have place 0 (width 0, first word 0).
struct Frames<L: Lane> {
    /// First word (in lanes) `<< 7 | width`.
    places: [u32; MAX_CHUNKS],
    references: [L; MAX_CHUNKS],
    /// Rows in full chunks; a later row is in the partial last chunk's tail bit stream.
    full_rows: u32,
}

impl<L: Lane> Frames<L> {
    /// Values at in-block `positions` (below 2^16, in any order) into `out`: the batched
    /// gather of `PackedView::gather` with a width, first word and reference per chunk. Rows
    /// of the partial last chunk read its tail stream, which in words of the lane width is
    /// the same extraction at bit `i * width` with a stride of one word instead of the
    /// transposed row and lane, chosen per row without a branch. Addresses are clamped to
    /// `words`, which changes none of a valid block's (each chunk's words lie inside `words`)
    /// and keeps any other input in bounds, without a branch.
    fn gather(&self, words: &[L], positions: &[u32], out: &mut [L]) {
        let Some(last) = words.len().checked_sub(1) else {
            // No words at all: only chunks without words.
            for (slot, &position) in out.iter_mut().zip(positions) {
                *slot = self.references[position as usize / CHUNK % MAX_CHUNKS];
            }
            return;
        };
        let last = last as u32;
        let bits = L::BITS;
        let lanes = CHUNK as u32 / bits;
        let mut low_at = [0u32; GATHER_BATCH];
        let mut high_at = [0u32; GATHER_BATCH];
        let mut shifts = [0u32; GATHER_BATCH];
        let mut masks = [0u64; GATHER_BATCH];
        let mut references = [L::default(); GATHER_BATCH];
        for (batch, batch_out) in positions
            .chunks(GATHER_BATCH)
            .zip(out.chunks_mut(GATHER_BATCH))
        {
            let n = batch.len();
            for (k, &position) in batch.iter().enumerate() {
                let chunk = position as usize / CHUNK % MAX_CHUNKS;
                let place = self.places[chunk];
                let width = place & 127;
                let i = position % CHUNK as u32;
                let (row, lane) = transposed_row_lane(i, lanes);
                let in_tail = position >= self.full_rows;
                let start_bit = if in_tail { i } else { row } * width;
                let stride = if in_tail { 1 } else { lanes };
                let lane = if in_tail { 0 } else { lane };
                let at = (place >> 7) + start_bit / bits * stride + lane;
                let straddles = start_bit % bits + width > bits;
                let next = if straddles { at + stride } else { at };
                low_at[k] = at.min(last);
                high_at[k] = next.min(last);
                shifts[k] = start_bit % bits;
                // (`1 << 64` is 0 here, as in a vector shift: the mask is then all ones.)
                masks[k] = 1u64.checked_shl(width).unwrap_or(0).wrapping_sub(1);
                references[k] = self.references[chunk];
            }
            for (((slot, (&low, &high)), &shift), (&mask, &reference)) in batch_out
                .iter_mut()
                .zip(low_at[..n].iter().zip(&high_at[..n]))
                .zip(&shifts[..n])
                .zip(masks[..n].iter().zip(&references[..n]))
            {
                // SAFETY: both addresses are clamped to the last word.
                let (low, high) = unsafe {
                    (
                        Lane::to_u64(*words.get_unchecked(low as usize)),
                        Lane::to_u64(*words.get_unchecked(high as usize)),
                    )
                };
                let value = straddling_bits(low, high, shift, bits) & mask;
                *slot = L::truncate_u64(value).wrapping_add_(reference);
            }
        }
    }
}

/// The take of a block without a frame table (format versions 1 and 2): headers are read in
/// order (each says how long its chunk is); chunks without a requested position are stepped
/// over by their header alone.
fn take_by_headers<L: Lane>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [L],
) -> Result<()> {
    let mut next = 0usize;
    let mut chunk_start = 0usize;
    while next < positions.len() && chunk_start < count {
        let length = CHUNK.min(count - chunk_start);
        let chunk_end = chunk_start + length;
        if positions[next] as usize >= chunk_end {
            PackedView::<L>::skip(reader, length)?;
        } else {
            let view = PackedView::<L>::parse(reader, length)?;
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
