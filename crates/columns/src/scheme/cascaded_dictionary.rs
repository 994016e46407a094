//! Dictionary with cascaded parts: `[3 zero bytes][entries u32][nested entries: T × entries]
//! [nested codes: u32 × n]`. The sorted distinct values and the codes are each encoded by the
//! selection engine (`nested`): entries of floats may be split (`real_doubles`), codes may be
//! bit-packed, run-length coded or entropy-coded (pco, zstd over byte-packed codes — what
//! Parquet's dictionary pages + zstd do), whichever the target prefers.

use super::dictionary::{bad_code, build, entry_limit, ENTRIES_PER_VALUE_TO_UNPACK, MAX_ENTRIES};
use super::{nested, BlockInput, Cascaded, Encoding, Nest};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::value::{as_lanes, as_lanes_mut, ColumnValue, Lane};

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, nest: &Nest) -> Option<Cascaded> {
    let sample = &input.sample;
    // A sample whose values are nearly all distinct means a dictionary as large as the block.
    if input.stats.is_constant() || sample.distinct * 10 > sample.values.len() * 9 {
        return None;
    }
    let (entries, codes) = build::<T>(input.lanes, entry_limit(input.lanes.len()))?;
    let entries: Vec<T> = entries.into_iter().map(T::from_lane).collect();
    let mut out = vec![Encoding::CascadedDictionary.tag(), 0, 0, 0];
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    let entries = nested::write(&mut out, &entries, &nest.child(nested::VALUES));
    let codes = nested::write(&mut out, &codes, &nest.child(nested::SMALL_CODES));
    // A take reads the codes it needs, then the entries (unpacked whole when few).
    Some(Cascaded {
        bytes: out,
        decode_ns: entries.decode_ns + codes.decode_ns,
        random_access: codes.random_access,
    })
}

struct Parts<'a> {
    size: usize,
    entries: nested::View<'a>,
    codes: nested::View<'a>,
    codes_at: usize,
}

fn parse<'a>(reader: &mut ByteReader<'a>, count: usize, level: u8) -> Result<Parts<'a>> {
    reader.take(3, "dictionary padding")?;
    let at = reader.offset();
    let size = reader.count(count.min(MAX_ENTRIES), "dictionary size")?;
    if size == 0 && count > 0 {
        return Err(corrupt(at, "empty dictionary for a non-empty block"));
    }
    let entries = nested::View::parse(reader, size, level)?;
    let codes_at = reader.offset();
    let codes = nested::View::parse(reader, count, level)?;
    Ok(Parts {
        size,
        entries,
        codes,
        codes_at,
    })
}

fn check_codes(codes: &[u32], size: usize, codes_at: usize) -> Result<()> {
    let worst = codes.iter().copied().max().unwrap_or(0);
    if worst as usize >= size {
        return Err(bad_code(codes_at, worst as u64, size));
    }
    Ok(())
}

pub(crate) fn decode<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let parts = parse(reader, out.len(), level)?;
    let mut entries = vec![T::default(); parts.size];
    parts.entries.decode(&mut entries)?;
    decode_codes_to_entries(&parts.codes, parts.codes_at, &entries, out)
}

/// Decodes the codes part of a dictionary block (at `codes_at` in the column) and replaces
/// each code by its entry, into `out` (the block's values).
///
/// The codes are decoded into the output itself, into its last `n` u32 words (all of it for
/// 32-bit values), and replaced by entries front to back: entry `i` covers bytes
/// [w·i, w·i + w) and code `i` sits at or after them, so every code is read before an entry
/// overwrites it. This saves a scratch buffer as large as the block and its zeroing pass.
pub(crate) fn decode_codes_to_entries<T: ColumnValue>(
    codes_part: &nested::View<'_>,
    codes_at: usize,
    entries: &[T],
    out: &mut [T],
) -> Result<()> {
    let entries = as_lanes(entries);
    let count = out.len();
    let lanes = as_lanes_mut(out);
    let words = count * T::Lane::BYTES / 4;
    // SAFETY: the output's bytes viewed as u32 words (u32 or u64 lanes, so aligned and a whole
    // number of words); every bit pattern is a valid u32.
    let codes: &mut [u32] =
        unsafe { std::slice::from_raw_parts_mut(lanes.as_mut_ptr().cast::<u32>(), words) };
    let first_code = words - count;
    codes_part.decode(&mut codes[first_code..])?;
    check_codes(&codes[first_code..], entries.len(), codes_at)?;
    let base = lanes.as_mut_ptr();
    let codes = base.cast::<u32>().cast_const();
    for i in 0..count {
        // SAFETY: i < count and first_code + i < words, both inside the output; the code is
        // read before entry i is written (see above), and every code is < entries.len().
        unsafe {
            let code = *codes.add(first_code + i) as usize;
            *base.add(i) = *entries.get_unchecked(code);
        }
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let parts = parse(reader, count, level)?;
    let codes = take_codes(&parts.codes, parts.codes_at, parts.size, positions)?;
    if parts.size <= ENTRIES_PER_VALUE_TO_UNPACK * positions.len() {
        let mut entries = vec![T::default(); parts.size];
        parts.entries.decode(&mut entries)?;
        pick(&entries, &codes, out);
        return Ok(());
    }
    take_entries(&parts.entries, parts.size, &codes, out)
}

/// The codes at `positions`, each checked against a dictionary of `size` entries.
pub(crate) fn take_codes(
    codes_part: &nested::View<'_>,
    codes_at: usize,
    size: usize,
    positions: &[u32],
) -> Result<Vec<u32>> {
    let mut codes = vec![0u32; positions.len()];
    codes_part.take(positions, &mut codes)?;
    check_codes(&codes, size, codes_at)?;
    Ok(codes)
}

/// `out[i] = entries[codes[i]]` for codes checked against `entries.len()`.
pub(crate) fn pick<T: ColumnValue>(entries: &[T], codes: &[u32], out: &mut [T]) {
    for (slot, &code) in out.iter_mut().zip(codes) {
        *slot = entries[code as usize];
    }
}

/// Only the entries asked for (`codes`, checked against `size`), out of the entries part: read
/// at the codes directly when the part allows, else the distinct codes in order, taken from
/// the part, then each code's rank.
pub(crate) fn take_entries<T: ColumnValue>(
    entries: &nested::View<'_>,
    size: usize,
    codes: &[u32],
    out: &mut [T],
) -> Result<()> {
    if entries.take_in_any_order(codes, out)? {
        return Ok(());
    }
    let distinct = DistinctCodes::mark(codes, size);
    let wanted = distinct.in_order();
    let mut values = vec![T::default(); wanted.len()];
    entries.take(&wanted, &mut values)?;
    for (slot, &code) in out.iter_mut().zip(codes) {
        *slot = values[distinct.rank(code)];
    }
    Ok(())
}

/// The distinct codes of a take as a bitmap over the dictionary (at most 2^16 bits), with a
/// running count per word: listing them in order and finding a code's rank among them are
/// each one pass, where sorting and a binary search per row cost half of a sparse take.
struct DistinctCodes {
    words: Vec<u64>,
    /// Set bits in the words before each word.
    ranks: Vec<u32>,
}

impl DistinctCodes {
    /// Every code must be below `size` (checked by `check_codes`).
    fn mark(codes: &[u32], size: usize) -> Self {
        let mut words = vec![0u64; size.div_ceil(64)];
        for &code in codes {
            words[code as usize / 64] |= 1 << (code % 64);
        }
        let mut ranks = Vec::with_capacity(words.len());
        let mut seen = 0u32;
        for word in &words {
            ranks.push(seen);
            seen += word.count_ones();
        }
        DistinctCodes { words, ranks }
    }

    fn in_order(&self) -> Vec<u32> {
        let mut codes = Vec::new();
        for (index, &word) in self.words.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                codes.push(index as u32 * 64 + rest.trailing_zeros());
                rest &= rest - 1;
            }
        }
        codes
    }

    /// Position of a marked `code` among the marked codes.
    fn rank(&self, code: u32) -> usize {
        let (word, bit) = (code as usize / 64, code % 64);
        let below = self.words[word] & ((1u64 << bit) - 1);
        self.ranks[word] as usize + below.count_ones() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::DistinctCodes;
    use proptest::prelude::*;

    proptest! {
        // The distinct codes come out sorted and deduplicated, and each code's rank is its
        // index among them (what the sort and binary search gave before).
        #[test]
        fn distinct_codes_match_sort_and_search(
            size in 1usize..70_000,
            picks in prop::collection::vec(any::<u32>(), 0..600),
        ) {
            let codes: Vec<u32> = picks.iter().map(|&p| p % size as u32).collect();
            let distinct = DistinctCodes::mark(&codes, size);
            let mut sorted = codes.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(distinct.in_order(), sorted.clone());
            for &code in &codes {
                prop_assert_eq!(distinct.rank(code), sorted.binary_search(&code).unwrap());
            }
        }
    }
}
