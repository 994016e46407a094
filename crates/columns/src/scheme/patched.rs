//! Patched bit-packing (PFOR, as in FastPFor): most values are packed at a narrow width `b`
//! above the block minimum; the few that need more bits are exceptions stored apart.
//! `[3 zero bytes][exceptions u32][packed base][exception positions u16 LE × exceptions]
//! [packed exception values]`. Exception slots in the base hold offset 0; positions are
//! increasing in-block indices (blocks have at most 65536 values, so u16 suffices).
//! The width is chosen exactly from the block's histogram of bit widths.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::packed::{frame_of, packed_size, write_packed, PackedView};
use crate::statistics::BlockStats;
use crate::value::{as_lanes_mut, order_key, ColumnValue, Lane};

/// `(base width, exception count, bytes)` of the cheapest patched layout of `count` values
/// whose bit widths above their minimum are counted in `histogram`, if it has exceptions at
/// all and beats plain bit-packing at `range_width`. Shared with ALP's patched digits.
pub(crate) fn choose_width(
    histogram: &[u32; 65],
    count: usize,
    range_width: u32,
    lane_bytes: usize,
) -> Option<(u32, usize, usize)> {
    let plain = packed_size(count, range_width, lane_bytes);
    let mut best: Option<(u32, usize, usize)> = None;
    let mut exceptions = 0usize;
    for width in (0..range_width).rev() {
        exceptions += histogram[width as usize + 1] as usize;
        if exceptions * 8 > count {
            break;
        }
        let bytes = 7
            + packed_size(count, width, lane_bytes)
            + 2 * exceptions
            + 7
            + packed_size(exceptions, range_width, lane_bytes);
        if bytes < plain && best.is_none_or(|(_, _, b)| bytes < b) {
            best = Some((width, exceptions, bytes));
        }
    }
    best
}

fn choose<L: Lane>(stats: &BlockStats<L>) -> Option<(u32, usize, usize)> {
    choose_width(
        &stats.width_histogram,
        stats.count,
        stats.range_width,
        L::BYTES,
    )
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    choose(&input.stats).and_then(|(_, _, bytes)| Estimate::exact(bytes))
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some((width, exceptions, _)) = choose(&input.stats) else {
        return false;
    };
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(exceptions as u32).to_le_bytes());
    write_body(out, input.lanes, input.stats.min, width, order_key::<T>);
    true
}

/// Writes `[packed base][exception positions u16 LE][packed exception values]`: values more
/// than `width` bits above `min` become exceptions (their base slot holds offset 0). The
/// caller writes the exception count first (`exception_count`).
pub(crate) fn write_body<L: Lane>(
    out: &mut Vec<u8>,
    lanes: &[L],
    min: L,
    width: u32,
    key: impl Fn(L) -> L,
) {
    let mut base = lanes.to_vec();
    let mut positions = Vec::new();
    let mut exceptions = Vec::new();
    for (index, slot) in base.iter_mut().enumerate() {
        if slot.wrapping_sub_(min).bits_needed() > width {
            positions.push(index as u16);
            exceptions.push(*slot);
            *slot = min;
        }
    }
    write_packed(out, &base, min, width);
    for position in &positions {
        out.extend_from_slice(&position.to_le_bytes());
    }
    let (reference, exception_width) = frame_of(&exceptions, key);
    write_packed(out, &exceptions, reference, exception_width);
}

/// How many of `lanes` `write_body` turns into exceptions.
pub(crate) fn exception_count<L: Lane>(lanes: &[L], min: L, width: u32) -> usize {
    lanes
        .iter()
        .filter(|lane| lane.wrapping_sub_(min).bits_needed() > width)
        .count()
}

/// Increasing in-block positions stored as u16 LE (exceptions of patched bodies and of ALP).
#[derive(Clone, Copy)]
pub(crate) struct SortedPositions<'a> {
    bytes: &'a [u8],
}

impl<'a> SortedPositions<'a> {
    /// Positions in `bytes` (its length is even: two bytes per position).
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        debug_assert!(bytes.len() % 2 == 0);
        SortedPositions { bytes }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / 2
    }

    #[inline]
    pub(crate) fn at(&self, index: usize) -> usize {
        u16::from_le_bytes([self.bytes[2 * index], self.bytes[2 * index + 1]]) as usize
    }
}

impl SortedPositions<'_> {
    /// The first index whose position is not below `wanted` (`len()` if none), by a
    /// branch-free binary search over all positions.
    fn lower_bound(&self, wanted: usize) -> usize {
        let mut size = self.len();
        if size == 0 {
            return 0;
        }
        let mut base = 0usize;
        while size > 1 {
            let half = size / 2;
            let middle = base + half;
            base = if self.at(middle) < wanted {
                middle
            } else {
                base
            };
            size -= half;
        }
        base + (self.at(base) < wanted) as usize
    }

    /// Calls `hit(i, e)` for every `i` with `wanted[i]` equal to position `e` (`wanted`
    /// sorted, repeats allowed).
    ///
    /// A merge of the two sorted lists makes every row wait for the previous row's cursor
    /// (a dependency chain), and it costs O(exceptions) however few rows are asked for. Two
    /// paths without a chain instead:
    ///
    /// * Few rows for many exceptions (`SEARCH_RATIO`): an independent branch-free binary
    ///   search per row, O(rows · log exceptions), which the CPU overlaps across rows.
    /// * Otherwise a membership test in a bitmap of the block's 2^16 positions (8 KiB,
    ///   L1-resident) of the smaller side: marking costs a read-modify-write per entry,
    ///   testing an independent load, so the fewer entries are marked and the more are
    ///   tested. Rows fewer than exceptions (a 1% take of a patched or ALP block, where
    ///   exceptions are 1–5x the rows): the rows are marked, every exception tests its bit,
    ///   and the few that hit — about `rows · exceptions / 2^16` — find their rows by one
    ///   forward scan.
    ///   Otherwise the exceptions are marked, every row tests its bit, and the rows that hit
    ///   binary-search their exception's index.
    ///
    /// The merge in four interleaved streams cost 2–3 ns per row; marking the exceptions
    /// and testing the rows well under one; marking the rows instead another 30–50% less on
    /// the lab's patched columns. Pairs are reported in no particular order. On positions
    /// that are not increasing (corrupt data) a row may miss or hit a wrong exception: wrong
    /// values, never a panic.
    pub(crate) fn for_each_match(&self, wanted: &[u32], mut hit: impl FnMut(usize, usize)) {
        let (rows, len) = (wanted.len(), self.len());
        if rows == 0 || len == 0 {
            return;
        }
        let mut matching = |row: usize, position: usize| {
            let found = self.lower_bound(position);
            if found < len && self.at(found) == position {
                hit(row, found);
            }
        };
        if len >= SEARCH_RATIO * rows {
            for (row, &position) in wanted.iter().enumerate() {
                matching(row, position as usize);
            }
            return;
        }
        let mut marked = [0u64; BITMAP_WORDS];
        // Positions past u16 (none, in a valid take) alias a word but then fail the equality
        // check after the search.
        let bit = |marked: &[u64; BITMAP_WORDS], position: usize| {
            (marked[(position >> 6) % BITMAP_WORDS] >> (position & 63)) & 1 != 0
        };
        if rows < len {
            for &position in wanted {
                let position = position as usize;
                marked[(position >> 6) % BITMAP_WORDS] |= 1 << (position & 63);
            }
            // Exceptions tested 64 at a time into one bit each of a mask (a dense loop of
            // independent loads the compiler vectorises, from an aligned copy of the
            // positions); hits are rare, and each hit's rows are found by a binary search.
            let mut batch_positions = [0u16; 64];
            let mut row = 0usize;
            for (batch, pairs) in self.bytes.chunks(2 * 64).enumerate() {
                let tested = pairs.len() / 2;
                for (slot, pair) in batch_positions.iter_mut().zip(pairs.chunks_exact(2)) {
                    *slot = u16::from_le_bytes([pair[0], pair[1]]);
                }
                let mut hits = 0u64;
                for (k, &position) in batch_positions[..tested].iter().enumerate() {
                    let position = position as usize;
                    hits |= ((marked[position >> 6] >> (position & 63)) & 1) << k;
                }
                while hits != 0 {
                    let exception = batch * 64 + hits.trailing_zeros() as usize;
                    hits &= hits - 1;
                    let position = self.at(exception);
                    // Hits come in increasing position order, so their rows are found by one
                    // forward scan over the rows for the whole block (a binary search per hit
                    // cost a fifth of the merge at 1% of the rows).
                    while row < rows && (wanted[row] as usize) < position {
                        row += 1;
                    }
                    let mut repeat = row;
                    while repeat < rows && wanted[repeat] as usize == position {
                        hit(repeat, exception);
                        repeat += 1;
                    }
                }
            }
            return;
        }
        for pair in self.bytes.chunks_exact(2) {
            let position = u16::from_le_bytes([pair[0], pair[1]]) as usize;
            marked[position >> 6] |= 1 << (position & 63);
        }
        for (row, &position) in wanted.iter().enumerate() {
            if bit(&marked, position as usize) {
                matching(row, position as usize);
            }
        }
    }
}

/// `for_each_match` binary-searches every row when exceptions are at least this many times
/// the rows: building the bitmap costs about one step per exception plus clearing 8 KiB, a
/// search about log2(exceptions) steps per row that mispredict (at 0.1% of the rows, 16 sent
/// sparse_i64 to the searches: 23 → 68 µs), so searches only win for very few rows.
const SEARCH_RATIO: usize = 64;

/// One bit per u16 position.
const BITMAP_WORDS: usize = (1 << 16) / 64;

/// A parsed patched body: base values with exceptions patched over them.
pub(crate) struct PatchedBody<'a, L: Lane> {
    base: PackedView<'a, L>,
    positions: SortedPositions<'a>,
    positions_at: usize,
    exceptions: PackedView<'a, L>,
    count: usize,
}

impl<'a, L: Lane> PatchedBody<'a, L> {
    /// Parses a body of `count` values with `exception_count` exceptions (already bounded by
    /// `count` by the caller).
    pub(crate) fn parse(
        reader: &mut ByteReader<'a>,
        count: usize,
        exception_count: usize,
    ) -> Result<Self> {
        let base = PackedView::parse(reader, count)?;
        let positions_at = reader.offset();
        let positions =
            SortedPositions::new(reader.take(2 * exception_count, "exception positions")?);
        let exceptions = PackedView::parse(reader, exception_count)?;
        Ok(PatchedBody {
            base,
            positions,
            positions_at,
            exceptions,
            count: exception_count,
        })
    }

    /// Decodes every value into `out` (its length is the body's value count).
    pub(crate) fn decode_into(&self, out: &mut [L]) -> Result<()> {
        self.base.decode_into(out);
        for index in 0..self.count {
            let at = self.positions.at(index);
            let slot = out.get_mut(at).ok_or_else(|| {
                corrupt(
                    self.positions_at + 2 * index,
                    format!("exception position {at} outside the block"),
                )
            })?;
            *slot = self.exceptions.get(index);
        }
        Ok(())
    }

    /// Values at sorted in-block `positions` into `out` (same length): the base gathered
    /// in one batch, then the exceptions merged in (`SortedPositions::for_each_match`).
    ///
    /// An exception's base slot holds offset 0, so only rows whose base value is the base's
    /// reference can be exceptions. When the base is wider than 0 bits those are few (the
    /// exceptions and the rows at the minimum), and merging just them skips most of the
    /// merge's work: a search each, where the whole merge tests every exception.
    pub(crate) fn take(&self, positions: &[u32], out: &mut [L]) {
        self.base.gather(positions, 0, out);
        if self.count == 0 {
            return;
        }
        if self.base.width() == 0 {
            // Every row is a candidate.
            self.positions.for_each_match(positions, |row, exception| {
                out[row] = self.exceptions.get(exception)
            });
            return;
        }
        // The candidate rows, appended without a branch.
        let reference = self.base.reference();
        let mut candidates = vec![0u32; positions.len()];
        let mut found = 0usize;
        for (row, &value) in out.iter().enumerate() {
            candidates[found] = row as u32;
            found += (value == reference) as usize;
        }
        let candidates = &candidates[..found];
        let wanted: Vec<u32> = candidates
            .iter()
            .map(|&row| positions[row as usize])
            .collect();
        self.positions.for_each_match(&wanted, |k, exception| {
            out[candidates[k] as usize] = self.exceptions.get(exception)
        });
    }
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    reader.take(3, "patched padding")?;
    let exceptions = reader.count(out.len(), "exception count")?;
    let body = PatchedBody::<T::Lane>::parse(reader, out.len(), exceptions)?;
    body.decode_into(as_lanes_mut(out))
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    reader.take(3, "patched padding")?;
    let exceptions = reader.count(count, "exception count")?;
    let body = PatchedBody::<T::Lane>::parse(reader, count, exceptions)?;
    body.take(positions, as_lanes_mut(out));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every `(row, exception)` pair with equal positions, by the definition.
    fn naive(positions: &[u16], wanted: &[u32]) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for (row, &w) in wanted.iter().enumerate() {
            if let Some(e) = positions.iter().position(|&p| p as u32 == w) {
                pairs.push((row, e));
            }
        }
        pairs
    }

    fn matches(positions: &[u16], wanted: &[u32]) -> Vec<(usize, usize)> {
        let bytes: Vec<u8> = positions.iter().flat_map(|p| p.to_le_bytes()).collect();
        let mut pairs = Vec::new();
        SortedPositions::new(&bytes).for_each_match(wanted, |row, e| pairs.push((row, e)));
        pairs.sort_unstable();
        pairs
    }

    fn sorted_distinct(mut v: Vec<u16>) -> Vec<u16> {
        v.sort_unstable();
        v.dedup();
        v
    }

    proptest! {
        // Both paths: many exceptions and few rows (binary search per row), and few
        // exceptions and many rows (bitmap), against the definition.
        #[test]
        fn many_exceptions_few_rows(
            positions in prop::collection::vec(any::<u16>(), 1000..4000),
            rows in prop::collection::vec(any::<u16>(), 0..12),
        ) {
            let positions = sorted_distinct(positions);
            let mut wanted: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
            // Some rows on exceptions, so hits happen.
            wanted.extend(positions.iter().step_by(97).map(|&p| p as u32));
            wanted.truncate(12);
            wanted.sort_unstable();
            prop_assert!(positions.len() >= SEARCH_RATIO * wanted.len().max(1));
            prop_assert_eq!(matches(&positions, &wanted), naive(&positions, &wanted));
        }

        #[test]
        fn few_exceptions_many_rows(
            positions in prop::collection::vec(any::<u16>(), 1..64),
            rows in prop::collection::vec(0u32..65536, 64..3000),
            repeats in 0usize..4,
        ) {
            let positions = sorted_distinct(positions);
            let mut wanted = rows;
            wanted.extend(positions.iter().map(|&p| p as u32));
            for _ in 0..repeats {
                wanted.push(positions[0] as u32);
            }
            wanted.sort_unstable();
            prop_assert!(positions.len() < SEARCH_RATIO * wanted.len());
            prop_assert_eq!(matches(&positions, &wanted), naive(&positions, &wanted));
        }

        // Rows fewer than the exceptions but not few enough for searches: the rows are
        // marked and every exception tested (batches of 64, a partial last one), rows on
        // exceptions repeated.
        #[test]
        fn more_exceptions_than_rows(
            positions in prop::collection::vec(any::<u16>(), 200..5000),
            rows in prop::collection::vec(any::<u16>(), 10..150),
            repeats in 0usize..4,
        ) {
            let positions = sorted_distinct(positions);
            let mut wanted: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
            wanted.extend(positions.iter().step_by(31).map(|&p| p as u32));
            for k in 0..repeats {
                wanted.push(positions[k * 7 % positions.len()] as u32);
            }
            wanted.sort_unstable();
            prop_assume!(wanted.len() < positions.len());
            prop_assume!(positions.len() < SEARCH_RATIO * wanted.len());
            prop_assert_eq!(matches(&positions, &wanted), naive(&positions, &wanted));
        }

        #[test]
        fn unsorted_positions_never_panic(
            positions in prop::collection::vec(any::<u16>(), 0..3000),
            rows in prop::collection::vec(0u32..70000, 0..300),
        ) {
            let mut wanted = rows;
            wanted.sort_unstable();
            let pairs = matches(&positions, &wanted);
            prop_assert!(pairs.iter().all(|&(r, e)| r < wanted.len() && e < positions.len()));
        }
    }
}
