//! Shared dictionary: one dictionary for the whole column (a section of its own before the
//! blocks, format version 4) and blocks that hold only codes into it:
//! `[3 zero bytes][entries u32][nested codes: u32 × n]`, `entries` equal to the section's.
//!
//! Why: per-block dictionaries store a value once per block that holds it. When a column's
//! distinct values recur across blocks, that repeats the dictionary in every block (a float
//! ratio with ~10,000 distinct values over 337k rows kept 35,000 entries in six blocks, a
//! third of the column), which is what Parquet's column-chunk dictionary and ORC's stripe
//! dictionary avoid. The choice is the writer's, for the whole column, after the per-block
//! selection (`share`): the blocks that chose a dictionary are re-encoded as codes into the
//! union of their values, and the column keeps whichever form is smaller in total. The
//! section's entries and every block's codes are nested vectors chosen by the selection
//! engine like any cascade's parts (sorted floats may be split, codes entropy-coded or given
//! a dictionary of their own, since one block uses only part of the shared one).
//!
//! Reading: the entries are decoded at most once per `decode` or `take` call
//! (`SharedEntries`), and a sparse take reads only the entries it needs when their part has
//! random access.

use super::cascaded_dictionary::{decode_codes_to_entries, pick, take_codes, take_entries};
use super::dictionary::{build, ENTRIES_PER_VALUE_TO_UNPACK, MAX_ENTRIES};
use super::{nested, Encoding, Nest};
use crate::bytes::{pad8, ByteReader};
use crate::error::{corrupt, Error, Result};
use crate::selection;
use crate::value::{as_lanes, ColumnValue};
use crate::writer::EncodedVector;

/// The column's shared dictionary as the blocks see it: none, or its entries part, decoded
/// on first use.
pub(crate) struct SharedEntries<'a, T> {
    part: Option<nested::View<'a>>,
    size: usize,
    decoded: Option<Vec<T>>,
}

impl<'a, T: ColumnValue> SharedEntries<'a, T> {
    /// A column without a shared dictionary.
    pub(crate) fn none() -> Self {
        SharedEntries {
            part: None,
            size: 0,
            decoded: None,
        }
    }

    /// The section of a column (`bytes` at absolute offset `base`) holding `size` entries.
    ///
    /// # Errors
    /// `Corrupt`/`Truncated` when the section is not one nested vector of `size` values.
    pub(crate) fn parse(bytes: &'a [u8], base: usize, version: u16, size: usize) -> Result<Self> {
        let mut reader = ByteReader::of_version(bytes, base, version);
        let part = nested::View::parse(&mut reader, size, 0)?;
        if reader.remaining() != 0 {
            return Err(corrupt(
                reader.offset(),
                format!("{} bytes after the shared dictionary", reader.remaining()),
            ));
        }
        Ok(SharedEntries {
            part: Some(part),
            size,
            decoded: None,
        })
    }

    fn all(&mut self, at: usize) -> Result<&[T]> {
        if self.decoded.is_none() {
            let part = self.part.as_ref().ok_or_else(|| missing(at))?;
            let mut entries = vec![T::default(); self.size];
            part.decode(&mut entries)?;
            self.decoded = Some(entries);
        }
        Ok(self.decoded.as_deref().unwrap_or_default())
    }
}

fn missing(at: usize) -> Error {
    corrupt(
        at,
        "a shared_dictionary block in a column without a shared dictionary",
    )
}

/// The error for a `shared_dictionary` tag where only the column's top level may hold one.
pub(crate) fn outside_the_column(reader: &ByteReader<'_>) -> Error {
    corrupt(
        reader.offset().saturating_sub(1),
        "a shared_dictionary block nested inside another block",
    )
}

/// Reads the payload header and the codes part; the size must be the column's.
fn parse<'a>(
    reader: &mut ByteReader<'a>,
    count: usize,
    shared_size: usize,
) -> Result<(nested::View<'a>, usize)> {
    reader.take(3, "dictionary padding")?;
    let at = reader.offset();
    let size = reader.u32("dictionary size")? as usize;
    if shared_size == 0 {
        return Err(missing(at));
    }
    if size != shared_size {
        return Err(corrupt(
            at,
            format!(
                "block refers to {size} entries, the column's shared dictionary has {shared_size}"
            ),
        ));
    }
    let codes_at = reader.offset();
    let codes = nested::View::parse(reader, count, 0)?;
    Ok((codes, codes_at))
}

/// Decodes a block after its tag.
pub(crate) fn decode<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    out: &mut [T],
    shared: &mut SharedEntries<'_, T>,
) -> Result<()> {
    let at = reader.offset();
    let (codes, codes_at) = parse(reader, out.len(), shared.size)?;
    let entries = shared.all(at)?;
    decode_codes_to_entries(&codes, codes_at, entries, out)
}

/// The values at sorted in-block `positions` of a block after its tag.
pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    shared: &mut SharedEntries<'_, T>,
) -> Result<()> {
    let at = reader.offset();
    let (codes_part, codes_at) = parse(reader, count, shared.size)?;
    let codes = take_codes(&codes_part, codes_at, shared.size, positions)?;
    // Decoded once already, small next to the take, or without random access: all entries
    // (kept for the call's next blocks); else only the requested ones.
    let entries_part = shared.part.as_ref().ok_or_else(|| missing(at))?;
    let readable = entries_part
        .encoding()
        .is_some_and(|e| e.random_access() && !e.cascades());
    if shared.decoded.is_some()
        || shared.size <= ENTRIES_PER_VALUE_TO_UNPACK * positions.len()
        || !readable
    {
        pick(shared.all(at)?, &codes, out);
        return Ok(());
    }
    take_entries(entries_part, shared.size, &codes, out)
}

/// A shared dictionary the writer decided on: its entry count and section bytes.
pub(crate) struct SharedSection {
    pub(crate) entries: usize,
    pub(crate) bytes: Vec<u8>,
}

/// Re-encodes the column's dictionary blocks (per-block or cascaded) as codes into one shared
/// dictionary where the target prefers that form, and keeps it when the column gets smaller:
/// `blocks` are the per-block choices for `values.chunks(block_size)`, replaced in place.
///
/// Per block the target's rule (`selection::choose_encoded`) weighs the block as it is against
/// its shared form, whose size and decode cost include its share of the dictionary's: under
/// `faster`, codes that are smaller but slower to decode than a block's own dictionary lose.
pub(crate) fn share<T: ColumnValue>(
    values: &[T],
    block_size: usize,
    blocks: &mut [EncodedVector],
    nest: &Nest,
) -> Option<SharedSection> {
    let chosen: Vec<usize> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            matches!(
                b.encoding,
                Encoding::Dictionary | Encoding::CascadedDictionary
            )
        })
        .map(|(index, _)| index)
        .collect();
    // One dictionary block has nothing to share with.
    if chosen.len() < 2 {
        return None;
    }
    let block_values = |index: usize| {
        let start = index * block_size;
        as_lanes(&values[start..(start + block_size).min(values.len())])
    };
    // One dictionary over the chosen blocks' values, in block order, then split by block.
    let chosen_lanes: Vec<T::Lane> = chosen
        .iter()
        .flat_map(|&i| block_values(i))
        .copied()
        .collect();
    let (entries, all_codes) = build::<T>(&chosen_lanes, MAX_ENTRIES)?;
    let mut block_codes = all_codes.chunks(block_size);
    let mut section = Vec::new();
    let entry_values: Vec<T> = entries.iter().map(|&lane| T::from_lane(lane)).collect();
    let written = nested::write(&mut section, &entry_values, &nest.child(nested::VALUES));
    let section_share = section.len() / chosen.len();
    let entries_ns_share = written.decode_ns / chosen.len() as f64;
    let gather_ns = crate::cost_table::decode_ns_per_value(
        Encoding::SharedDictionary,
        <T::Lane as crate::value::Lane>::BITS,
    );
    let mut rewritten = Vec::new();
    let mut saved = 0usize;
    for &index in &chosen {
        let lanes = block_values(index);
        let codes = block_codes.next().unwrap_or_default();
        let mut bytes = vec![Encoding::SharedDictionary.tag(), 0, 0, 0];
        bytes.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        let codes = nested::write(&mut bytes, codes, &nest.child(nested::SHARED_CODES));
        pad8(&mut bytes);
        let before = &blocks[index];
        let forms = [
            selection::Encoded {
                bytes: before.bytes.len(),
                decode_ns: before.decode_ns,
                random_access: before.random_access,
            },
            selection::Encoded {
                bytes: bytes.len() + section_share,
                decode_ns: codes.decode_ns + gather_ns * lanes.len() as f64 + entries_ns_share,
                random_access: codes.random_access,
            },
        ];
        let raw_bytes = std::mem::size_of_val(lanes);
        if selection::choose_encoded(nest.target, raw_bytes, 0, &forms) == 1
            && bytes.len() < before.bytes.len()
        {
            saved += before.bytes.len() - bytes.len();
            rewritten.push((index, bytes, forms[1]));
        }
    }
    // The section is paid once; only blocks whose shared form won take part.
    if saved <= section.len() {
        return None;
    }
    for (index, bytes, form) in rewritten {
        blocks[index] = EncodedVector {
            encoding: Encoding::SharedDictionary,
            bytes,
            decode_ns: form.decode_ns,
            random_access: form.random_access,
        };
    }
    Some(SharedSection {
        entries: entries.len(),
        bytes: section,
    })
}
