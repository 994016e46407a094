//! The encoding-agnostic selection engine. For one block it gathers statistics (exact) and a
//! sample, asks every allowed scheme for a size estimate, prices each candidate as
//!
//! `score = bytes × byte_weight + decode_ns_per_value × count × time_weight`
//!
//! (decode cost from the calibrated table in `cost_table`), and returns the candidates best
//! first. Weights per target model the medium the column is read from, as "one byte read costs
//! as much as 1/time_weight ns of decoding": `Smaller` counts bytes only (decode time breaks
//! ties), `Balanced` uses 0.25 bytes/ns (a byte costs 4 ns: a ~250 MB/s medium such as a
//! network or object store), `Faster` uses 2 bytes/ns (a byte costs 0.5 ns: a ~2 GB/s medium,
//! decode time dominates but a much smaller form still wins).
//! Zero and constant blocks short-circuit before any sampling. Candidates priced from the
//! sample (dictionary, ALP, pco, LZ4/zstd) are skipped when their decode time alone already
//! loses to the best exactly-priced candidate.

use crate::cost_table::decode_ns_per_value;
use crate::scheme::{self, compressed, BlockInput, Encoding, Estimate};
use crate::value::{ColumnValue, Lane};

/// What the encoder optimises for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// Smallest encoded size; decode speed only breaks ties.
    Smaller,
    /// Trade size against decode time (a byte is worth 4 ns of decoding).
    #[default]
    Balanced,
    /// Fastest decode; size matters only when the difference is large.
    Faster,
}

impl Target {
    /// `"smaller"`, `"balanced"` or `"faster"`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Smaller => "smaller",
            Target::Balanced => "balanced",
            Target::Faster => "faster",
        }
    }

    /// Parses a target name.
    pub fn from_name(name: &str) -> Option<Target> {
        match name {
            "smaller" => Some(Target::Smaller),
            "balanced" => Some(Target::Balanced),
            "faster" => Some(Target::Faster),
            _ => None,
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Target::Smaller => 0,
            Target::Balanced => 1,
            Target::Faster => 2,
        }
    }

    /// (byte weight, nanosecond weight).
    fn weights(self) -> (f64, f64) {
        match self {
            Target::Smaller => (1.0, 1e-4),
            Target::Balanced => (1.0, 0.25),
            Target::Faster => (1.0, 2.0),
        }
    }
}

/// One priced candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) encoding: Encoding,
    pub(crate) inner: Option<Encoding>,
    pub(crate) estimate: Estimate,
    pub(crate) score: f64,
}

pub(crate) fn decode_ns(encoding: Encoding, inner: Option<Encoding>, lane_bits: u32) -> f64 {
    decode_ns_per_value(encoding, lane_bits)
        + inner.map_or(0.0, |i| decode_ns_per_value(i, lane_bits))
}

pub(crate) fn score(
    target: Target,
    encoding: Encoding,
    inner: Option<Encoding>,
    bytes: usize,
    count: usize,
    lane_bits: u32,
) -> f64 {
    let (byte_weight, time_weight) = target.weights();
    bytes as f64 * byte_weight + decode_ns(encoding, inner, lane_bits) * count as f64 * time_weight
}

/// Candidates for the block, best first (never empty when `Unencoded` is allowed).
pub(crate) fn rank<T: ColumnValue>(
    input: &BlockInput<'_, T>,
    allowed: &[bool; scheme::ENCODING_COUNT],
    target: Target,
) -> Vec<Candidate> {
    let count = input.lanes.len();
    let bits = T::Lane::BITS;
    let is_allowed = |e: Encoding| allowed[e.tag() as usize];
    let price = |encoding: Encoding, inner: Option<Encoding>, estimate: Estimate| Candidate {
        encoding,
        inner,
        estimate,
        score: score(target, encoding, inner, estimate.bytes, count, bits),
    };
    for shortcut in [Encoding::Zero, Encoding::Constant] {
        if is_allowed(shortcut) {
            if let Some(estimate) = scheme::estimate(shortcut, input) {
                return vec![price(shortcut, None, estimate)];
            }
        }
    }
    let mut candidates = Vec::new();
    for encoding in [
        Encoding::BitPacked,
        Encoding::BytePacked,
        Encoding::RunLength,
        Encoding::Delta,
        Encoding::PatchedBitPacked,
        Encoding::Unencoded,
    ] {
        if is_allowed(encoding) {
            if let Some(estimate) = scheme::estimate(encoding, input) {
                candidates.push(price(encoding, None, estimate));
            }
        }
    }
    let best_exact = candidates
        .iter()
        .map(|c| c.score)
        .fold(f64::INFINITY, f64::min);
    let (_, time_weight) = target.weights();
    let worth_sampling = |encoding: Encoding, inner: Option<Encoding>| {
        decode_ns(encoding, inner, bits) * count as f64 * time_weight < best_exact
    };
    for encoding in [Encoding::Dictionary, Encoding::Alp, Encoding::Pco] {
        if is_allowed(encoding) && worth_sampling(encoding, None) {
            if let Some(estimate) = scheme::estimate(encoding, input) {
                candidates.push(price(encoding, None, estimate));
            }
        }
    }
    for wrapper in [Encoding::Lz4, Encoding::Zstd] {
        if !is_allowed(wrapper) {
            continue;
        }
        for inner in compressed::INNER {
            if worth_sampling(wrapper, Some(inner)) {
                if let Some(estimate) = compressed::estimate(wrapper, inner, input) {
                    candidates.push(price(wrapper, Some(inner), estimate));
                }
            }
        }
    }
    candidates.sort_by(|a, b| a.score.total_cmp(&b.score));
    candidates
}
