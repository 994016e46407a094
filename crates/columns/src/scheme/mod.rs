//! The set of block encodings ("schemes"). Each scheme lives in its own file and offers the
//! same four functions to the encoding-agnostic engine in `selection`:
//!
//! * `estimate(input) -> Option<Estimate>`: encoded size from statistics or the sample,
//!   `None` when the scheme cannot represent the block;
//! * `encode(input, out) -> bool`: appends the payload after the tag byte (`false` = not
//!   applicable after all, for example a dictionary that turned out too large);
//! * `decode(reader, out)`: fills `out` (its length is the block's value count);
//! * `take(reader, count, positions, out)` (random-access schemes only): writes the values at
//!   the sorted in-block `positions` into `out` without decoding the rest of the block, with a
//!   batched kernel per scheme (bit-packed: direct bit extraction; dictionary: codes, then
//!   entries; run-length: a merged walk of the positions over the run ends; ALP: digits,
//!   then scale; patched: base, then an exception merge; chunked: per chunk).
//!
//! Cascading schemes (`real_doubles`, `cascaded_dictionary`, `cascaded_run_length`) do not
//! estimate: they split the block into parts (codes, entries, run values and ends, halves of
//! floats), have the selection engine encode each part as a block of its own (`nested`), and
//! report the real size and the parts' decode cost (`encode_cascade`). `shared_dictionary`
//! is chosen for the whole column by the writer, not per block: its blocks hold only codes
//! into the column's one dictionary, so the reader passes that dictionary in.
//!
//! A block is `[tag u8][payload]`; structures holding bit-packed words start 8-byte aligned
//! relative to the block start. Decoders check every length against the block's bytes and
//! every count against the block's value count before allocating.

use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::selection::Target;
use crate::statistics::{BlockStats, Sample};
use crate::value::ColumnValue;

pub(crate) mod adaptive_lossless_float;
pub(crate) mod byte_packed;
pub(crate) mod cascaded_dictionary;
pub(crate) mod cascaded_run_length;
pub(crate) mod chunked_frame_of_reference;
pub(crate) mod compressed;
pub(crate) mod constant;
pub(crate) mod delta;
pub(crate) mod dictionary;
pub(crate) mod frame_of_reference;
pub(crate) mod nested;
pub(crate) mod patched;
pub(crate) mod pco_entropy;
pub(crate) mod real_doubles;
pub(crate) mod run_length;
pub(crate) mod shared_dictionary;
pub(crate) mod unencoded;
pub(crate) mod zero;

/// The encoding of one block; the discriminant is the block's tag byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Encoding {
    /// Every value is zero (all bits clear); no payload.
    Zero = 0,
    /// Every value equals one stored value.
    Constant = 1,
    /// Frame of reference + FastLanes bit-packing in 1024-value chunks.
    BitPacked = 2,
    /// Frame of reference + whole bytes per value.
    BytePacked = 3,
    /// Run values and run ends, each bit-packed.
    RunLength = 4,
    /// First value + bit-packed consecutive differences.
    Delta = 5,
    /// Sorted distinct values + bit-packed codes.
    Dictionary = 6,
    /// Bit-packing at a narrow width with out-of-range values stored as exceptions (PFOR).
    PatchedBitPacked = 7,
    /// pcodec's entropy-coded form.
    Pco = 8,
    /// Plain little-endian values.
    Unencoded = 9,
    /// Floats as decimal integers `round(x * 10^e)` (ALP-style) + exceptions.
    Alp = 10,
    /// LZ4 over a byte-packed or unencoded block.
    Lz4 = 11,
    /// Zstandard over a byte-packed or unencoded block.
    Zstd = 12,
    /// Frame of reference + bit-packing with its own reference and width per 1024 values.
    ChunkedBitPacked = 13,
    /// Floats split into a left part (sign, exponent, top mantissa bits) and the low bits,
    /// each a nested vector (ALP-RD).
    RealDoubles = 14,
    /// Sorted distinct values and codes, each a nested vector.
    CascadedDictionary = 15,
    /// Run values and run ends, each a nested vector.
    CascadedRunLength = 16,
    /// Codes (a nested vector) into the column's one shared dictionary (format version 4).
    SharedDictionary = 17,
}

/// Number of encodings (tags are `0..ENCODING_COUNT`).
pub const ENCODING_COUNT: usize = 18;

/// Encodings `0..LEAF_COUNT` store their values directly; the rest cascade (`nested`).
pub(crate) const LEAF_COUNT: usize = 14;

impl Encoding {
    /// All encodings in tag order.
    pub const ALL: [Encoding; ENCODING_COUNT] = [
        Encoding::Zero,
        Encoding::Constant,
        Encoding::BitPacked,
        Encoding::BytePacked,
        Encoding::RunLength,
        Encoding::Delta,
        Encoding::Dictionary,
        Encoding::PatchedBitPacked,
        Encoding::Pco,
        Encoding::Unencoded,
        Encoding::Alp,
        Encoding::Lz4,
        Encoding::Zstd,
        Encoding::ChunkedBitPacked,
        Encoding::RealDoubles,
        Encoding::CascadedDictionary,
        Encoding::CascadedRunLength,
        Encoding::SharedDictionary,
    ];

    /// The encoding with tag `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<Encoding> {
        Encoding::ALL.get(tag as usize).copied()
    }

    /// Tag byte of the encoding.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// Short snake_case name (used by `composition()` and the Python API).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Zero => "zero",
            Encoding::Constant => "constant",
            Encoding::BitPacked => "bit_packed",
            Encoding::BytePacked => "byte_packed",
            Encoding::RunLength => "run_length",
            Encoding::Delta => "delta",
            Encoding::Dictionary => "dictionary",
            Encoding::PatchedBitPacked => "patched_bit_packed",
            Encoding::Pco => "pco",
            Encoding::Unencoded => "unencoded",
            Encoding::Alp => "alp",
            Encoding::Lz4 => "lz4",
            Encoding::Zstd => "zstd",
            Encoding::ChunkedBitPacked => "chunked_bit_packed",
            Encoding::RealDoubles => "real_doubles",
            Encoding::CascadedDictionary => "cascaded_dictionary",
            Encoding::CascadedRunLength => "cascaded_run_length",
            Encoding::SharedDictionary => "shared_dictionary",
        }
    }

    /// Whether the encoding stores parts as nested vectors chosen by the selection engine.
    pub fn cascades(self) -> bool {
        self as usize >= LEAF_COUNT
    }

    /// Whether single values can be read without decoding the whole block (for cascading
    /// encodings: when their parts allow it, else the block is decoded).
    pub fn random_access(self) -> bool {
        matches!(
            self,
            Encoding::Zero
                | Encoding::Constant
                | Encoding::BitPacked
                | Encoding::BytePacked
                | Encoding::RunLength
                | Encoding::Dictionary
                | Encoding::PatchedBitPacked
                | Encoding::Unencoded
                | Encoding::Alp
                | Encoding::ChunkedBitPacked
                | Encoding::RealDoubles
                | Encoding::CascadedDictionary
                | Encoding::CascadedRunLength
                | Encoding::SharedDictionary
        )
    }
}

/// How the selection engine encodes a vector: at the top of a block (level 0) or as a part of
/// a cascading scheme (deeper levels, with fewer encodings allowed).
#[derive(Debug, Clone)]
pub(crate) struct Nest {
    pub(crate) target: Target,
    pub(crate) allowed: [bool; ENCODING_COUNT],
    pub(crate) zstd_level: i32,
    pub(crate) level: u8,
}

impl Nest {
    /// The options for a part one level down: `rule` (see `nested`) within what the caller
    /// allowed, plus bit-packing and plain lanes, which every part can use.
    pub(crate) fn child(&self, rule: [bool; ENCODING_COUNT]) -> Nest {
        let mut allowed = [false; ENCODING_COUNT];
        for (tag, slot) in allowed.iter_mut().enumerate() {
            *slot = rule[tag] && self.allowed[tag];
        }
        allowed[Encoding::BitPacked as usize] = true;
        allowed[Encoding::Unencoded as usize] = true;
        Nest {
            allowed,
            level: self.level + 1,
            ..self.clone()
        }
    }
}

/// A block written by a cascading scheme: its bytes (`[tag][payload]`) and estimated decode
/// nanoseconds (the parts' own plus the scheme's combining pass).
pub(crate) struct Cascaded {
    pub(crate) bytes: Vec<u8>,
    pub(crate) decode_ns: f64,
    /// Whether a take reads single values through the parts (see each scheme's `encode`).
    pub(crate) random_access: bool,
}

/// Encodes the block with the cascading `encoding`, if it applies.
pub(crate) fn encode_cascade<T: ColumnValue>(
    encoding: Encoding,
    input: &BlockInput<'_, T>,
    nest: &Nest,
) -> Option<Cascaded> {
    let mut block = match encoding {
        Encoding::RealDoubles => real_doubles::encode(input, nest),
        Encoding::CascadedDictionary => cascaded_dictionary::encode(input, nest),
        Encoding::CascadedRunLength => cascaded_run_length::encode(input, nest),
        _ => None,
    }?;
    let own =
        crate::cost_table::decode_ns_per_value(encoding, <T::Lane as crate::value::Lane>::BITS);
    block.decode_ns += own * input.lanes.len() as f64;
    Some(block)
}

/// Estimated payload size of a scheme for one block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Estimate {
    pub(crate) bytes: usize,
    /// Computed from full-block statistics (exact) rather than scaled from the sample.
    pub(crate) exact: bool,
}

impl Estimate {
    pub(crate) fn exact(bytes: usize) -> Option<Estimate> {
        Some(Estimate { bytes, exact: true })
    }
    pub(crate) fn sampled(sample_bytes: usize, fraction: f64) -> Option<Estimate> {
        Some(Estimate {
            bytes: (sample_bytes as f64 / fraction).ceil() as usize,
            exact: false,
        })
    }
}

/// What schemes see of a block.
pub(crate) struct BlockInput<'a, T: ColumnValue> {
    pub(crate) values: &'a [T],
    pub(crate) lanes: &'a [T::Lane],
    pub(crate) stats: BlockStats<T::Lane>,
    pub(crate) sample: Sample<T>,
    pub(crate) zstd_level: i32,
}

pub(crate) fn estimate<T: ColumnValue>(
    encoding: Encoding,
    input: &BlockInput<'_, T>,
) -> Option<Estimate> {
    match encoding {
        Encoding::Zero => zero::estimate(input),
        Encoding::Constant => constant::estimate(input),
        Encoding::BitPacked => frame_of_reference::estimate(input),
        Encoding::BytePacked => byte_packed::estimate(input),
        Encoding::RunLength => run_length::estimate(input),
        Encoding::Delta => delta::estimate(input),
        Encoding::Dictionary => dictionary::estimate(input),
        Encoding::PatchedBitPacked => patched::estimate(input),
        Encoding::Pco => pco_entropy::estimate(input),
        Encoding::Unencoded => unencoded::estimate(input),
        Encoding::Alp => adaptive_lossless_float::estimate(input),
        Encoding::ChunkedBitPacked => chunked_frame_of_reference::estimate(input),
        Encoding::Lz4 | Encoding::Zstd => None, // priced per inner form by `compressed`
        Encoding::RealDoubles
        | Encoding::CascadedDictionary
        | Encoding::CascadedRunLength
        | Encoding::SharedDictionary => None, // encoded, not estimated
    }
}

/// Appends the block `[tag][payload]` to `out`; `false` (and `out` unchanged) if the scheme
/// turned out not to apply.
pub(crate) fn encode<T: ColumnValue>(
    encoding: Encoding,
    inner: Option<Encoding>,
    input: &BlockInput<'_, T>,
    out: &mut Vec<u8>,
) -> bool {
    let start = out.len();
    out.push(encoding.tag());
    let done = match encoding {
        Encoding::Zero => zero::encode(input, out),
        Encoding::Constant => constant::encode(input, out),
        Encoding::BitPacked => frame_of_reference::encode(input, out),
        Encoding::BytePacked => byte_packed::encode(input, out),
        Encoding::RunLength => run_length::encode(input, out),
        Encoding::Delta => delta::encode(input, out),
        Encoding::Dictionary => dictionary::encode(input, out),
        Encoding::PatchedBitPacked => patched::encode(input, out),
        Encoding::Pco => pco_entropy::encode(input, out),
        Encoding::Unencoded => unencoded::encode(input, out),
        Encoding::Alp => adaptive_lossless_float::encode(input, out),
        Encoding::ChunkedBitPacked => chunked_frame_of_reference::encode(input, out),
        Encoding::Lz4 | Encoding::Zstd => {
            compressed::encode(encoding, inner.unwrap_or(Encoding::Unencoded), input, out)
        }
        Encoding::RealDoubles
        | Encoding::CascadedDictionary
        | Encoding::CascadedRunLength
        | Encoding::SharedDictionary => false,
    };
    if !done {
        out.truncate(start);
    }
    done
}

fn read_tag(reader: &mut ByteReader<'_>) -> Result<Encoding> {
    let at = reader.offset();
    let tag = reader.u8("block encoding tag")?;
    Encoding::from_tag(tag).ok_or_else(|| corrupt(at, format!("unknown block encoding tag {tag}")))
}

/// Decodes a whole top-level block (`out.len()` values); `shared` is the column's shared
/// dictionary, which only top-level blocks refer to.
pub(crate) fn decode<T: ColumnValue>(
    mut reader: ByteReader<'_>,
    out: &mut [T],
    shared: &mut shared_dictionary::SharedEntries<'_, T>,
) -> Result<()> {
    if reader.peek_u8() == Some(Encoding::SharedDictionary.tag()) {
        read_tag(&mut reader)?;
        return shared_dictionary::decode(&mut reader, out, shared);
    }
    decode_at(reader, out, 0)
}

/// Decodes a whole block at nesting `level` (0 = top level).
pub(crate) fn decode_at<T: ColumnValue>(
    mut reader: ByteReader<'_>,
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let encoding = read_tag(&mut reader)?;
    decode_payload(encoding, &mut reader, out, level)
}

pub(crate) fn decode_payload<T: ColumnValue>(
    encoding: Encoding,
    reader: &mut ByteReader<'_>,
    out: &mut [T],
    level: u8,
) -> Result<()> {
    match encoding {
        Encoding::Zero => zero::decode(reader, out),
        Encoding::Constant => constant::decode(reader, out),
        Encoding::BitPacked => frame_of_reference::decode(reader, out),
        Encoding::BytePacked => byte_packed::decode(reader, out),
        Encoding::RunLength => run_length::decode(reader, out),
        Encoding::Delta => delta::decode(reader, out),
        Encoding::Dictionary => dictionary::decode(reader, out),
        Encoding::PatchedBitPacked => patched::decode(reader, out),
        Encoding::Pco => pco_entropy::decode(reader, out),
        Encoding::Unencoded => unencoded::decode(reader, out),
        Encoding::Alp => adaptive_lossless_float::decode(reader, out),
        Encoding::ChunkedBitPacked => chunked_frame_of_reference::decode(reader, out),
        Encoding::Lz4 | Encoding::Zstd => compressed::decode(encoding, reader, out),
        Encoding::RealDoubles => real_doubles::decode(reader, out, level),
        Encoding::CascadedDictionary => cascaded_dictionary::decode(reader, out, level),
        Encoding::CascadedRunLength => cascaded_run_length::decode(reader, out, level),
        Encoding::SharedDictionary => Err(shared_dictionary::outside_the_column(reader)),
    }
}

/// Writes the values at sorted in-block `positions` (each below `count`) of a random-access
/// block into `out` (same length), reading only what those values need.
/// Returns `Ok(false)` (nothing written) when the block's encoding has no random access.
pub(crate) fn take<T: ColumnValue>(
    mut reader: ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    shared: &mut shared_dictionary::SharedEntries<'_, T>,
) -> Result<bool> {
    if reader.peek_u8() == Some(Encoding::SharedDictionary.tag()) {
        read_tag(&mut reader)?;
        shared_dictionary::take(&mut reader, count, positions, out, shared)?;
        return Ok(true);
    }
    take_at(reader, count, positions, out, 0)
}

/// `take` for a block at nesting `level`.
pub(crate) fn take_at<T: ColumnValue>(
    mut reader: ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    level: u8,
) -> Result<bool> {
    debug_assert_eq!(positions.len(), out.len());
    let encoding = read_tag(&mut reader)?;
    let r = &mut reader;
    match encoding {
        Encoding::Zero => zero::take(out),
        Encoding::Constant => constant::take(r, out)?,
        Encoding::BitPacked => frame_of_reference::take(r, count, positions, out)?,
        Encoding::BytePacked => byte_packed::take(r, count, positions, out)?,
        Encoding::RunLength => run_length::take(r, count, positions, out)?,
        Encoding::Dictionary => dictionary::take(r, count, positions, out)?,
        Encoding::PatchedBitPacked => patched::take(r, count, positions, out)?,
        Encoding::Unencoded => unencoded::take(r, count, positions, out)?,
        Encoding::Alp => adaptive_lossless_float::take(r, count, positions, out)?,
        Encoding::ChunkedBitPacked => chunked_frame_of_reference::take(r, count, positions, out)?,
        Encoding::RealDoubles => real_doubles::take(r, count, positions, out, level)?,
        Encoding::CascadedDictionary => cascaded_dictionary::take(r, count, positions, out, level)?,
        Encoding::CascadedRunLength => cascaded_run_length::take(r, count, positions, out, level)?,
        Encoding::SharedDictionary => return Err(shared_dictionary::outside_the_column(r)),
        Encoding::Delta | Encoding::Pco | Encoding::Lz4 | Encoding::Zstd => return Ok(false),
    }
    Ok(true)
}
