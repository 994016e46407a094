//! Nested vectors: how a cascading scheme stores its parts (dictionary codes and entries, run
//! values and ends, the two halves of a split float). Each part is a complete block of its own
//! value type, `[tag][payload]` chosen by the selection engine like a top-level block, so a
//! part can be bit-packed, entropy-coded (pco, zstd) or cascaded again, down to
//! `MAX_LEVEL`: a top-level block is level 0, its parts level 1, theirs level 2 (leaves only),
//! three levels of schemes as in BtrBlocks.
//!
//! Layout (8-byte aligned in the enclosing block): `[length u32][4 zero bytes][block]`, the
//! block `length` bytes long (a multiple of 8, zero-padded). Parts carry no checksum: the
//! enclosing block's covers them.

use super::{Encoding, Nest, ENCODING_COUNT};
use crate::bytes::{pad8, ByteReader};
use crate::error::{corrupt, Result};
use crate::value::ColumnValue;

/// The deepest level a block may sit at; cascading schemes only at levels below it.
pub(crate) const MAX_LEVEL: u8 = 2;

const fn set(extra: &[Encoding]) -> [bool; ENCODING_COUNT] {
    let mut allowed = [false; ENCODING_COUNT];
    let mut tag = 0;
    while tag < super::LEAF_COUNT {
        allowed[tag] = true;
        tag += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        allowed[extra[i] as usize] = true;
        i += 1;
    }
    allowed
}

/// What a part may become. Leaves: every non-cascading scheme.
pub(crate) const LEAVES: [bool; ENCODING_COUNT] = set(&[]);
/// Codes and small integers (dictionary codes, left halves of floats): runs of codes are
/// common, so run-length with cascaded parts is allowed too.
pub(crate) const SMALL_CODES: [bool; ENCODING_COUNT] = set(&[Encoding::CascadedRunLength]);
/// Codes into a column's shared dictionary: a block uses part of it, so a dictionary of the
/// codes (remapping them densely) may pay, beside what other codes may become.
pub(crate) const SHARED_CODES: [bool; ENCODING_COUNT] =
    set(&[Encoding::CascadedRunLength, Encoding::CascadedDictionary]);
/// Values of the column's own type (dictionary entries, run values).
pub(crate) const VALUES: [bool; ENCODING_COUNT] =
    set(&[Encoding::RealDoubles, Encoding::CascadedDictionary]);

/// What the engine reports of a part it wrote.
pub(crate) struct Written {
    pub(crate) decode_ns: f64,
    pub(crate) random_access: bool,
}

/// Encodes `values` as a part at `nest`'s level and appends it to `out`.
pub(crate) fn write<U: ColumnValue>(out: &mut Vec<u8>, values: &[U], nest: &Nest) -> Written {
    pad8(out);
    let part = crate::writer::encode_vector(values, nest);
    out.extend_from_slice(&(part.bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&part.bytes);
    Written {
        decode_ns: part.decode_ns,
        random_access: part.random_access,
    }
}

/// A part's own take kernel is used below 1 in this many of its values. Lower than a top-level
/// block's 16: the parts a take reaches into at random are dictionary entries and the halves of
/// split floats, where a decode costs more per value than bit-packed lanes (a split float
/// decodes two parts and combines them) — on a dictionary of ~6,500 split doubles, decoding
/// every entry for ~500 requested ones cost 4x the take of the codes.
const PART_GATHER_RATIO: usize = 4;

/// A parsed part: its bytes, where they are in the column, its value count and level.
pub(crate) struct View<'a> {
    bytes: &'a [u8],
    base: usize,
    count: usize,
    level: u8,
    version: u16,
}

impl<'a> View<'a> {
    /// Parses a part of `count` values inside a block at `level` (the part is one deeper).
    pub(crate) fn parse(reader: &mut ByteReader<'a>, count: usize, level: u8) -> Result<Self> {
        reader.align8("padding before a nested vector")?;
        let at = reader.offset();
        let length = reader.count(reader.remaining(), "nested vector length")?;
        reader.take(4, "nested vector padding")?;
        let base = reader.offset();
        let bytes = reader.take(length, "nested vector")?;
        if length == 0 || length % 8 != 0 {
            return Err(corrupt(at, format!("nested vector of {length} bytes")));
        }
        if level >= MAX_LEVEL {
            return Err(corrupt(at, "vectors nested deeper than the format allows"));
        }
        Ok(View {
            bytes,
            base,
            count,
            level: level + 1,
            version: reader.version(),
        })
    }

    /// The part's encoding (its first byte), if known.
    pub(crate) fn encoding(&self) -> Option<Encoding> {
        self.bytes.first().copied().and_then(Encoding::from_tag)
    }

    fn reader(&self) -> ByteReader<'a> {
        ByteReader::of_version(self.bytes, self.base, self.version)
    }

    /// Decodes all values (`out.len()` is the part's count).
    pub(crate) fn decode<U: ColumnValue>(&self, out: &mut [U]) -> Result<()> {
        debug_assert_eq!(out.len(), self.count);
        super::decode_at(self.reader(), out, self.level)
    }

    /// Values at `positions` in any order (each below the count) into `out`, when the part's
    /// encoding reads each value with independent loads (bit-packed, chunked with a frame
    /// table, byte-packed, plain, constant, zero); `Ok(false)` otherwise. Dictionary codes arrive in row order, not code
    /// order: this reads the entries at them directly instead of sorting them first.
    pub(crate) fn take_in_any_order<U: ColumnValue>(
        &self,
        positions: &[u32],
        out: &mut [U],
    ) -> Result<bool> {
        let independent = match self.encoding() {
            Some(
                Encoding::BitPacked
                | Encoding::BytePacked
                | Encoding::Unencoded
                | Encoding::Constant
                | Encoding::Zero,
            ) => true,
            // Sorted distinct entries often drift: chunk frames, read through the frame table.
            Some(Encoding::ChunkedBitPacked) => {
                self.version >= super::chunked_frame_of_reference::FRAME_TABLE_VERSION
            }
            _ => false,
        };
        if !independent {
            return Ok(false);
        }
        super::take_at(self.reader(), self.count, positions, out, self.level)
    }

    /// Values at sorted `positions` (each below the count) into `out`: the part's own take
    /// kernel when its encoding has one and fewer than 1 in `PART_GATHER_RATIO` values are
    /// asked for, else a decode of the part.
    pub(crate) fn take<U: ColumnValue>(&self, positions: &[u32], out: &mut [U]) -> Result<()> {
        if positions.len() * PART_GATHER_RATIO < self.count
            && super::take_at(self.reader(), self.count, positions, out, self.level)?
        {
            return Ok(());
        }
        let mut all = vec![U::default(); self.count];
        self.decode(&mut all)?;
        for (slot, &p) in out.iter_mut().zip(positions) {
            *slot = all[p as usize];
        }
        Ok(())
    }
}
