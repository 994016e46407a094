//! Dictionary encoding: `[3 zero bytes][entries u32][packed sorted distinct values][packed
//! codes]`. Codes are bit-packed with reference 0; a code outside the dictionary is reported
//! as corruption. Chosen for low-cardinality blocks whose values are spread too widely for a
//! frame of reference (prices, categories stored as numbers).

use hashbrown::{HashMap, HashSet};

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::packed::{frame_of, packed_size, write_packed, PackedView};
use crate::value::{as_lanes_mut, order_key, ColumnValue, Lane};

/// More entries than this and codes stop paying for the dictionary.
pub(crate) const MAX_ENTRIES: usize = 1 << 16;

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let sample = &input.sample;
    // A sample whose values repeat a lot has (nearly) seen the whole dictionary.
    if sample.distinct * 4 > sample.values.len() || input.stats.is_constant() {
        return None;
    }
    let entries = sample.distinct + sample.distinct / 4 + 1;
    let code_width = (entries as u64 - 1).bits_needed();
    let bytes = 7
        + packed_size(entries, input.stats.range_width, T::Lane::BYTES)
        + 8
        + packed_size(input.lanes.len(), code_width, T::Lane::BYTES);
    Some(Estimate {
        bytes,
        exact: false,
    })
}

/// The sorted distinct lanes of a block and each value's code (its index among them), or
/// `None` when there are more than `limit` distinct values.
pub(crate) fn build<T: ColumnValue>(
    lanes: &[T::Lane],
    limit: usize,
) -> Option<(Vec<T::Lane>, Vec<u32>)> {
    let mut distinct = HashSet::new();
    for &lane in lanes {
        if distinct.insert(lane) && distinct.len() > limit {
            return None;
        }
    }
    let mut entries: Vec<T::Lane> = distinct.into_iter().collect();
    entries.sort_unstable_by_key(|&lane| order_key::<T>(lane));
    let index: HashMap<T::Lane, u32> = entries
        .iter()
        .enumerate()
        .map(|(code, &lane)| (lane, code as u32))
        .collect();
    let codes = lanes.iter().map(|lane| index[lane]).collect();
    Some((entries, codes))
}

/// At most this many entries: half the block (more and codes stop paying) and 2^16.
pub(crate) fn entry_limit(count: usize) -> usize {
    MAX_ENTRIES.min(count / 2)
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some((entries, codes)) = build::<T>(input.lanes, entry_limit(input.lanes.len())) else {
        return false;
    };
    let codes: Vec<T::Lane> = codes
        .iter()
        .map(|&c| T::Lane::truncate_u64(c as u64))
        .collect();
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    let (reference, width) = frame_of(&entries, order_key::<T>);
    write_packed(out, &entries, reference, width);
    let code_width = (entries.len() as u64 - 1).bits_needed();
    write_packed(out, &codes, T::Lane::default(), code_width);
    true
}

struct Dictionary<'a, L: Lane> {
    entries: PackedView<'a, L>,
    size: usize,
    codes: PackedView<'a, L>,
    codes_at: usize,
}

fn parse<'a, L: Lane>(reader: &mut ByteReader<'a>, count: usize) -> Result<Dictionary<'a, L>> {
    reader.take(3, "dictionary padding")?;
    let at = reader.offset();
    let size = reader.count(count.min(MAX_ENTRIES), "dictionary size")?;
    if size == 0 && count > 0 {
        return Err(corrupt(at, "empty dictionary for a non-empty block"));
    }
    let entries = PackedView::<L>::parse(reader, size)?;
    let codes_at = reader.offset();
    let codes = PackedView::parse(reader, count)?;
    Ok(Dictionary {
        entries,
        size,
        codes,
        codes_at,
    })
}

impl<L: Lane> Dictionary<'_, L> {
    fn decode_entries(&self) -> Vec<L> {
        let mut entries = vec![L::default(); self.size];
        self.entries.decode_into(&mut entries);
        entries
    }
}

/// A take unpacks the whole dictionary when it has at most this many entries per requested
/// value; a larger one (zipf-like blocks hold thousands of distinct values) is read entry by
/// entry, one random read per value instead of a decode of the dictionary.
pub(crate) const ENTRIES_PER_VALUE_TO_UNPACK: usize = 4;

pub(crate) fn bad_code(at: usize, code: u64, size: usize) -> crate::error::Error {
    corrupt(
        at,
        format!("dictionary code {code} outside a dictionary of {size}"),
    )
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let dictionary = parse::<T::Lane>(reader, out.len())?;
    let out = as_lanes_mut(out);
    let entries = &dictionary.decode_entries();
    // Codes are unpacked one 1024-value piece at a time into a buffer that stays in L1,
    // validated (a max reduction vectorises) and mapped.
    let mut codes = [T::Lane::default(); 1024];
    for (piece, target) in out.chunks_mut(1024).enumerate() {
        let codes = &mut codes[..target.len()];
        dictionary.codes.decode_piece(piece * 1024, codes);
        let worst = codes.iter().map(|c| c.to_u64()).max().unwrap_or(0);
        if worst >= entries.len() as u64 {
            return Err(bad_code(dictionary.codes_at, worst, entries.len()));
        }
        for (slot, code) in target.iter_mut().zip(codes.iter()) {
            // Every code is < entries.len() (checked above), so indexing cannot fail.
            *slot = entries[code.to_u64() as usize];
        }
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let dictionary = parse::<T::Lane>(reader, count)?;
    let out = as_lanes_mut(out);
    // Codes first, into the output itself; then each code is checked and replaced in place.
    dictionary.codes.gather(positions, 0, out);
    let size = dictionary.size;
    let worst = out.iter().map(|c| c.to_u64()).max().unwrap_or(0);
    if worst >= size as u64 {
        return Err(bad_code(dictionary.codes_at, worst, size));
    }
    if size <= ENTRIES_PER_VALUE_TO_UNPACK * positions.len() {
        let entries = dictionary.decode_entries();
        for slot in out.iter_mut() {
            // Every code is < size (checked above).
            *slot = entries[slot.to_u64() as usize];
        }
    } else {
        dictionary.entries.gather_in_place(out);
    }
    Ok(())
}
