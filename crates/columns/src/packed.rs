//! Frame-of-reference bit-packed vectors: the workhorse every integer scheme cascades into.
//!
//! Layout (starts 8-byte aligned within its block):
//! `[width u8][7 zero bytes][reference u64 LE][floor(count/1024) chunks of 128*width bytes]
//! [tail bit stream]`.
//! Each chunk holds 1024 offsets `value - reference` (wrapping) packed to `width` bits in the
//! FastLanes transposed order, so the `fastlanes` kernels unpack it with SIMD-friendly loops.
//! The `count % 1024` values after the last full chunk (the "tail") follow as a plain
//! LSB-first bit stream of `ceil(tail * width / 8)` bytes, so short vectors (dictionaries,
//! run lists, exceptions, block tails) do not pay for a whole 1024-value chunk.
//! `width <= lane bits` is checked when parsing and the chunk data length is exact, which is
//! all the unchecked kernels require.

use std::borrow::Cow;

use crate::bytes::{pad8, ByteReader};
use crate::error::{corrupt, Result};
use crate::value::Lane;

pub(crate) const CHUNK: usize = 1024;

/// Rows per batch of `PackedView::gather`: enough independent loads to keep the CPU's miss
/// buffers busy, few enough that the batch's addresses stay in L1.
const GATHER_BATCH: usize = 64;

/// Row and lane of in-chunk value `i` (< 1024) in FastLanes' transposed layout of `lanes`
/// lanes (1024 / lane bits): the inverse of FastLanes'
/// `index(row, lane) = FL_ORDER[row / 8] * 16 + (row % 8) * 128 + lane`, with FL_ORDER as
/// the 3-bit reversal (its own inverse) so that batched gathers vectorise without a table
/// load. Value `i` starts at bit `row * width` of its lane's words.
#[inline(always)]
pub(crate) fn transposed_row_lane(i: u32, lanes: u32) -> (u32, u32) {
    let lane = i % lanes;
    let group = (i % 128 - lane) / 16;
    let reversed = (group & 1) << 2 | (group & 2) | group >> 2;
    (reversed * 8 + i / 128, lane)
}

/// The bits at `shift` of the double word `high:low` of `bits`-bit lanes (unmasked): a value
/// that straddles two words. Gathers pass `high == low` when it does not straddle, so random
/// widths do not mispredict; the caller masks the extra bits off.
#[inline(always)]
pub(crate) fn straddling_bits(low: u64, high: u64, shift: u32, bits: u32) -> u64 {
    if bits == 32 {
        (high << 32 | low) >> shift
    } else {
        // The upper word shifted in two steps so that shift 0 shifts it out whole.
        low >> shift | (high << 1) << (63 - shift)
    }
}

/// The low `width` bits set (`width <= 64`).
#[inline(always)]
pub(crate) fn low_bits(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Bytes a packed vector of `count` values at `width` bits takes (with its 16-byte header,
/// not counting the alignment padding before it).
pub(crate) fn packed_size(count: usize, width: u32, lane_bytes: usize) -> usize {
    let _ = lane_bytes;
    16 + packed_body_size(count, width)
}

/// Bytes of a packed vector's words and tail (without its header).
pub(crate) fn packed_body_size(count: usize, width: u32) -> usize {
    count / CHUNK * 128 * width as usize + tail_bytes(count % CHUNK, width)
}

fn tail_bytes(tail: usize, width: u32) -> usize {
    (tail * width as usize).div_ceil(8)
}

/// Reads `width` bits at `bit` of an LSB-first stream (bytes past the end read as zero).
#[inline]
fn read_bits(data: &[u8], bit: usize, width: u32) -> u64 {
    let start = bit / 8;
    // Away from the end one unaligned 16-byte load; only the last 15 bytes go through a
    // zero-padded copy (a `memcpy` call per value cost a third of a short vector's decode).
    let word = match data.get(start..start + 16) {
        Some(bytes) => u128::from_le_bytes(bytes.try_into().expect("16 bytes")),
        None => {
            let mut window = [0u8; 16];
            let available = data.len().saturating_sub(start).min(16);
            window[..available].copy_from_slice(&data[start..start + available]);
            u128::from_le_bytes(window)
        }
    } >> (bit % 8);
    if width >= 64 {
        word as u64
    } else {
        (word as u64) & ((1u64 << width) - 1)
    }
}

/// Values `first..first + out.len()` of a tail bit stream of `width`-bit offsets from
/// `reference` into `out`. Up to 56 bits a value lies in the 8 bytes at its first byte, so
/// every value whose 8 bytes are inside the stream is one unaligned load, shift and mask
/// (independent per value; `read_bits` with its 16-byte window and end check cost about
/// twice as much on dictionaries' entries); the last few values, and wider ones, go
/// through `read_bits`.
fn unpack_tail<L: Lane>(tail: &[u8], first: usize, width: u32, reference: L, out: &mut [L]) {
    let bits = width as usize;
    let fast = if (1..=56).contains(&width) && tail.len() >= 8 {
        ((tail.len() - 8) * 8 + 7) / bits + 1
    } else {
        0
    }
    .saturating_sub(first)
    .min(out.len());
    let mask = low_bits(width);
    let (quick, rest) = out.split_at_mut(fast);
    for (index, slot) in (first..).zip(quick.iter_mut()) {
        let bit = index * bits;
        let window = u64::from_le_bytes(tail[bit / 8..bit / 8 + 8].try_into().expect("8 bytes"));
        *slot = L::truncate_u64((window >> (bit % 8)) & mask).wrapping_add_(reference);
    }
    for (index, slot) in (first + fast..).zip(rest.iter_mut()) {
        let value = read_bits(tail, index * bits, width);
        *slot = L::truncate_u64(value).wrapping_add_(reference);
    }
}

/// Writes `values` as offsets from `reference` in `width` bits each.
/// Every `value - reference` must fit in `width` bits.
pub(crate) fn write_packed<L: Lane>(out: &mut Vec<u8>, values: &[L], reference: L, width: u32) {
    pad8(out);
    out.push(width as u8);
    out.extend_from_slice(&[0; 7]);
    out.extend_from_slice(&reference.to_u64().to_le_bytes());
    write_packed_body(out, values, reference, width);
}

/// Writes the words and tail of a packed vector without its header (`packed_body_size`
/// bytes), for layouts that keep widths and references elsewhere.
pub(crate) fn write_packed_body<L: Lane>(
    out: &mut Vec<u8>,
    values: &[L],
    reference: L,
    width: u32,
) {
    if width == 0 {
        return;
    }
    let words = CHUNK * width as usize / L::BITS as usize;
    let mut input = vec![L::default(); CHUNK];
    let mut packed = vec![L::default(); words];
    let full = values.len() / CHUNK * CHUNK;
    for chunk in values[..full].chunks_exact(CHUNK) {
        for (slot, &value) in input.iter_mut().zip(chunk) {
            *slot = value.wrapping_sub_(reference);
        }
        // SAFETY: input has exactly 1024 lanes, packed has 1024*width/BITS lanes, width <= BITS.
        unsafe { L::unchecked_pack(width as usize, &input, &mut packed) };
        crate::bytes::put_lanes(out, &packed);
    }
    // Tail: LSB-first bit stream.
    let mut buffer: u128 = 0;
    let mut filled = 0u32;
    for &value in &values[full..] {
        buffer |= (value.wrapping_sub_(reference).to_u64() as u128) << filled;
        filled += width;
        while filled >= 8 {
            out.push(buffer as u8);
            buffer >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(buffer as u8);
    }
}

/// Frame of reference for `values` under an order given by `key` (an involution):
/// returns `(reference, width)` so that every value is `reference + offset`, offset < 2^width.
pub(crate) fn frame_of<L: Lane>(values: &[L], key: impl Fn(L) -> L) -> (L, u32) {
    let Some(&first) = values.first() else {
        return (L::default(), 0);
    };
    let (mut low, mut high) = (key(first), key(first));
    for &value in values {
        let k = key(value);
        low = low.min(k);
        high = high.max(k);
    }
    (key(low), high.wrapping_sub_(low).bits_needed())
}

/// A parsed packed vector, borrowing the column when its words are aligned.
pub(crate) struct PackedView<'a, L: Lane> {
    width: u32,
    reference: L,
    count: usize,
    words: Cow<'a, [L]>,
    tail: &'a [u8],
}

impl<'a, L: Lane> PackedView<'a, L> {
    /// Parses a packed vector of `count` values at the reader's next 8-byte boundary.
    pub(crate) fn parse(reader: &mut ByteReader<'a>, count: usize) -> Result<Self> {
        reader.align8("padding before a packed vector")?;
        let at = reader.offset();
        let width = reader.u8("packed vector width")? as u32;
        if width > L::BITS {
            return Err(corrupt(
                at,
                format!("bit width {width} exceeds the {}-bit lane", L::BITS),
            ));
        }
        reader.take(7, "packed vector padding")?;
        let reference = L::truncate_u64(reader.u64("packed vector reference")?);
        let body = reader.take(packed_body_size(count, width), "bit-packed words and tail")?;
        Ok(Self::from_body(width, reference, count, body))
    }

    /// The vector of `count` values at `width` bits (at most the lane's, checked by the
    /// caller) over `reference` whose words and tail are `body` (`packed_body_size` bytes).
    pub(crate) fn from_body(width: u32, reference: L, count: usize, body: &'a [u8]) -> Self {
        debug_assert!(width <= L::BITS && body.len() == packed_body_size(count, width));
        let word_count = count / CHUNK * CHUNK * width as usize / L::BITS as usize;
        let (data, tail) = body.split_at(word_count * L::BYTES);
        // SAFETY: any bytes are valid lanes; align_to only yields a middle part that is aligned.
        let (prefix, middle, _) = unsafe { data.align_to::<L>() };
        let words = if prefix.is_empty() && middle.len() == word_count {
            Cow::Borrowed(middle)
        } else {
            let mut owned = vec![L::default(); word_count];
            crate::bytes::copy_lanes_from_le(data, &mut owned);
            Cow::Owned(owned)
        };
        PackedView {
            width,
            reference,
            count,
            words,
            tail,
        }
    }

    /// Steps over a packed vector of `count` values without looking at its words (for chunks
    /// a gather does not need). Checks what `parse` checks about the header and lengths.
    pub(crate) fn skip(reader: &mut ByteReader<'a>, count: usize) -> Result<()> {
        reader.align8("padding before a packed vector")?;
        let at = reader.offset();
        let width = reader.u8("packed vector width")? as u32;
        if width > L::BITS {
            return Err(corrupt(
                at,
                format!("bit width {width} exceeds the {}-bit lane", L::BITS),
            ));
        }
        let word_count = count / CHUNK * CHUNK * width as usize / L::BITS as usize;
        let length = 15 + word_count * L::BYTES + tail_bytes(count % CHUNK, width);
        reader.take(length, "bit-packed words")?;
        Ok(())
    }

    /// Bits per value.
    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    /// The value every offset is added to.
    pub(crate) fn reference(&self) -> L {
        self.reference
    }

    fn chunk_words(&self, chunk: usize) -> &[L] {
        let per_chunk = CHUNK * self.width as usize / L::BITS as usize;
        &self.words[chunk * per_chunk..(chunk + 1) * per_chunk]
    }

    /// Value `index` (< count).
    ///
    /// Computed straight from the transposed layout with the runtime width: FastLanes' own
    /// `unpack_single` dispatches over 64 compile-time widths per call, which measured ~2x
    /// slower in a gather (and this stays bounds-checked).
    #[inline]
    pub(crate) fn get(&self, index: usize) -> L {
        debug_assert!(index < self.count);
        if self.width == 0 {
            return self.reference;
        }
        let width = self.width as usize;
        let full = self.count / CHUNK * CHUNK;
        if index >= full {
            return self.tail_value(index);
        }
        let bits = L::BITS as usize;
        let lanes = CHUNK / bits;
        let per_chunk = CHUNK * width / bits;
        let (row, lane) = transposed_row_lane((index % CHUNK) as u32, lanes as u32);
        let (row, lane) = (row as usize, lane as usize);
        let start_bit = row * width;
        let (word, shift) = (start_bit / bits, start_bit % bits);
        let base = index / CHUNK * per_chunk;
        let mut value = self.words[base + word * lanes + lane].to_u64() >> shift;
        if shift + width > bits {
            value |= self.words[base + (word + 1) * lanes + lane].to_u64() << (bits - shift);
        }
        L::truncate_u64(value & low_bits(self.width)).wrapping_add_(self.reference)
    }

    /// Values at the positions `positions[i] - first` (each below `count`, in any order) into
    /// `out` (same length): the batched form of `get`.
    ///
    /// Rows go in batches of `GATHER_BATCH`: first the word addresses and shifts of the whole
    /// batch (branch-free integer arithmetic the compiler vectorises), then the loads, a dense
    /// loop of independent loads whose misses the CPU overlaps many at a time — computing the
    /// addresses inline kept fewer rows in flight and left the gather latency-bound. A value
    /// that straddles two words is read from both as one double-width integer; the second
    /// address falls back to the first word when it does not straddle (the extra bits are
    /// masked off), so random widths do not mispredict. Rows in the tail (after the last full
    /// chunk) read address 0 in the batch pass and are then read from the tail bit stream.
    pub(crate) fn gather(&self, positions: &[u32], first: u32, out: &mut [L]) {
        debug_assert_eq!(positions.len(), out.len());
        if self.width == 0 {
            out.fill(self.reference);
            return;
        }
        let full = (self.count / CHUNK * CHUNK) as u32;
        if full == 0 {
            for (slot, &position) in out.iter_mut().zip(positions) {
                *slot = self.tail_value((position - first) as usize);
            }
            return;
        }
        let width = self.width;
        let bits = L::BITS;
        let lanes = CHUNK as u32 / bits;
        let per_chunk = CHUNK as u32 * width / bits;
        let mask = low_bits(width);
        let words: &[L] = &self.words;
        let mut low_at = [0u32; GATHER_BATCH];
        let mut high_at = [0u32; GATHER_BATCH];
        let mut shifts = [0u32; GATHER_BATCH];
        for (batch, batch_out) in positions
            .chunks(GATHER_BATCH)
            .zip(out.chunks_mut(GATHER_BATCH))
        {
            let n = batch.len();
            let mut in_tail = false;
            let mut highest = 0u32;
            for (((&position, low), high), shift) in batch
                .iter()
                .zip(&mut low_at[..n])
                .zip(&mut high_at[..n])
                .zip(&mut shifts[..n])
            {
                let index = position.wrapping_sub(first);
                let in_chunks = index < full;
                in_tail |= !in_chunks;
                let (row, lane) = transposed_row_lane(index % CHUNK as u32, lanes);
                let start_bit = row * width;
                let at = index / CHUNK as u32 * per_chunk + start_bit / bits * lanes + lane;
                let straddles = start_bit % bits + width > bits;
                let next = if straddles { at + lanes } else { at };
                *low = if in_chunks { at } else { 0 };
                *high = if in_chunks { next } else { 0 };
                highest = highest.max(*high);
                *shift = start_bit % bits;
            }
            // Every in-chunk row's words lie inside its chunk; this one check per batch is what
            // lets the loads below go unchecked (a caller passing rows past `count` panics here).
            assert!(
                (highest as usize) < words.len(),
                "gather row past the packed vector"
            );
            for (((slot, &low), &high), &shift) in batch_out
                .iter_mut()
                .zip(&low_at[..n])
                .zip(&high_at[..n])
                .zip(&shifts[..n])
            {
                // SAFETY: both addresses are at most `highest`, checked above.
                let (low, high) = unsafe {
                    (
                        Lane::to_u64(*words.get_unchecked(low as usize)),
                        Lane::to_u64(*words.get_unchecked(high as usize)),
                    )
                };
                let value = straddling_bits(low, high, shift, bits);
                *slot = L::truncate_u64(value & mask).wrapping_add_(self.reference);
            }
            if in_tail {
                for (slot, &position) in batch_out.iter_mut().zip(batch) {
                    let index = (position - first) as usize;
                    if index >= full as usize {
                        *slot = self.tail_value(index);
                    }
                }
            }
        }
    }

    /// Replaces every lane of `slots` (a position below `count`, such as a dictionary code)
    /// by the value at that position: `gather` in place, a batch at a time.
    pub(crate) fn gather_in_place(&self, slots: &mut [L]) {
        let mut positions = [0u32; GATHER_BATCH];
        for batch in slots.chunks_mut(GATHER_BATCH) {
            let positions = &mut positions[..batch.len()];
            for (position, slot) in positions.iter_mut().zip(batch.iter()) {
                *position = Lane::to_u64(*slot) as u32;
            }
            self.gather(positions, 0, batch);
        }
    }

    /// Value `index` (at or after the last full chunk) from the tail bit stream.
    #[inline]
    fn tail_value(&self, index: usize) -> L {
        let full = self.count / CHUNK * CHUNK;
        let bits = read_bits(self.tail, (index - full) * self.width as usize, self.width);
        L::truncate_u64(bits).wrapping_add_(self.reference)
    }

    /// Decodes values `[start, start + out.len())` into `out`; `start` must be a multiple of
    /// 1024 and `out.len() <= 1024` (one chunk, or the tail) — a cache-sized piece. `out`
    /// should be in L1 (see `decode_into` on why).
    pub(crate) fn decode_piece(&self, start: usize, out: &mut [L]) {
        debug_assert!(start % CHUNK == 0 && out.len() <= CHUNK && start + out.len() <= self.count);
        if self.width == 0 {
            out.fill(self.reference);
            return;
        }
        let width = self.width as usize;
        let full = self.count / CHUNK * CHUNK;
        if start < full && out.len() == CHUNK {
            let words = self.chunk_words(start / CHUNK);
            // SAFETY: exact input length (see chunk_words), output of exactly 1024 lanes.
            unsafe { L::unchecked_unfor_pack(width, words, self.reference, out) };
            return;
        }
        unpack_tail(self.tail, start - full, self.width, self.reference, out);
    }

    /// Decodes all values into `out` (`out.len() == count`).
    pub(crate) fn decode_into(&self, out: &mut [L]) {
        assert_eq!(out.len(), self.count, "packed vector output length");
        if self.width == 0 {
            out.fill(self.reference);
            return;
        }
        let width = self.width as usize;
        let full = self.count / CHUNK;
        // The transposed kernel stores to 64 rows of a 1024-lane chunk at once; into memory
        // that is not in cache that scatter costs ~20% more than unpacking into an L1-resident
        // staging chunk and copying it out sequentially (measured: 0.54 vs 0.44 ns per u64).
        let mut staging = [L::default(); CHUNK];
        for chunk in 0..full {
            let words = self.chunk_words(chunk);
            // SAFETY: exact input length (see chunk_words), output of exactly 1024 lanes.
            unsafe { L::unchecked_unfor_pack(width, words, self.reference, &mut staging) };
            out[chunk * CHUNK..(chunk + 1) * CHUNK].copy_from_slice(&staging);
        }
        unpack_tail(
            self.tail,
            0,
            self.width,
            self.reference,
            &mut out[full * CHUNK..],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A packed vector of `values` at `width`, parsed back.
    fn packed<L: Lane>(values: &[L], reference: L, width: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_packed(&mut bytes, values, reference, width);
        bytes
    }

    fn check<L: Lane>(raw: &[u64], width: u32, picks: &[u32], first: u32) {
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1 << width) - 1
        };
        let reference = L::truncate_u64(0x1234_5678_9abc_def0);
        let values: Vec<L> = raw
            .iter()
            .map(|&r| L::truncate_u64(r & mask).wrapping_add_(reference))
            .collect();
        let bytes = packed(&values, reference, width);
        let mut reader = ByteReader::new(&bytes, 0);
        let view = PackedView::<L>::parse(&mut reader, values.len()).unwrap();
        // Positions in any order (dictionary codes arrive unsorted), offset by `first`.
        let positions: Vec<u32> = picks
            .iter()
            .map(|&p| p % values.len() as u32 + first)
            .collect();
        let mut out = vec![L::default(); positions.len()];
        view.gather(&positions, first, &mut out);
        for (k, (&p, &got)) in positions.iter().zip(&out).enumerate() {
            let index = (p - first) as usize;
            assert_eq!(got, values[index], "row {index} (position {k})");
            assert_eq!(view.get(index), values[index]);
        }
        let mut all = vec![L::default(); values.len()];
        view.decode_into(&mut all);
        assert_eq!(all, values, "decode_into");
        let full = values.len() / CHUNK * CHUNK;
        let mut piece = vec![L::default(); values.len() - full];
        view.decode_piece(full, &mut piece);
        assert_eq!(piece, values[full..], "decode_piece of the tail");
        let mut slots: Vec<L> = positions
            .iter()
            .map(|&p| L::truncate_u64((p - first) as u64))
            .collect();
        view.gather_in_place(&mut slots);
        assert_eq!(slots, out);
    }

    proptest! {
        // The batched gather and the decoders against the values written, for every width of
        // both lanes, counts with and without a tail, and positions in any order, in and past
        // the batch size.
        #[test]
        fn gather_matches_values(
            raw in prop::collection::vec(any::<u64>(), 1..5000),
            width in 0u32..=64,
            picks in prop::collection::vec(any::<u32>(), 0..300),
            first in 0u32..70_000,
        ) {
            check::<u64>(&raw, width, &picks, first);
            check::<u32>(&raw, width.min(32), &picks, first);
        }
    }
}
