//! The encoding-agnostic selection engine. For one block it gathers statistics (exact) and a
//! sample, asks every allowed scheme for a size estimate, prices each candidate's decode time
//! from the calibrated table in `cost_table`, and orders the candidates for the target:
//!
//! Decode costs within `SPEED_TIE` (1.5x) of the fastest in-budget candidate count as equal,
//! and the smallest of those wins:
//!
//! * `Smaller`: fewest bytes (decode time breaks ties);
//! * `Balanced`: fastest decode among candidates within 10% of the fewest bytes;
//! * `Faster`: fastest decode among candidates within 2x of the fewest bytes, or within the
//!   fewest bytes plus a quarter of the raw size when that is more.
//!
//! A size *budget* rather than a byte/nanosecond exchange rate keeps each target's promise
//! independent of the data: `Balanced` is never more than ~10% larger than `Smaller`, `Faster`
//! never more than ~2x or a quarter of the raw size larger, and inside that budget decode speed decides. Zero and constant blocks
//! short-circuit before any sampling.

use crate::cost_table::{decode_ns_per_byte, decode_ns_per_value, RUN_LENGTH_NS_PER_RUN};
use crate::scheme::{self, compressed, BlockInput, Encoding, Estimate};
use crate::value::{ColumnValue, Lane};

/// What the encoder optimises for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// Smallest encoded size; decode speed only breaks ties.
    Smaller,
    /// Fastest decode within 10% of the smallest size.
    #[default]
    Balanced,
    /// Fastest decode within 2x of the smallest size (or the smallest plus a quarter of the
    /// raw size, when that is more).
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

    /// The most bytes a block may take under this target, given its smallest candidate and
    /// its unencoded size: `Smaller` the smallest, `Balanced` 10% more (enough for
    /// bit-packed forms with patches next to pco on skewed data, e.g. ALP prices at 1.07x), `Faster` twice the
    /// smallest or the smallest plus a quarter of the raw size, whichever is larger. The
    /// absolute allowance matters for well-compressed blocks: 2x of 1 bit per value rules out
    /// every random-access form, while 1 + 16 bits does not (and costs little in total).
    ///
    /// Parts of a cascade (`level` > 0) get a budget of 3% under `Balanced`: slack taken at
    /// every level compounds, and a dictionary whose codes took 10% more than they need left a
    /// plain bit-packed block inside the top level's 10% (larger than Parquet's dictionary +
    /// zstd on flight numbers).
    pub(crate) fn byte_budget(self, smallest: usize, raw_bytes: usize, level: u8) -> usize {
        match self {
            Target::Smaller => smallest,
            Target::Balanced if level > 0 => (smallest as f64 * 1.03).ceil() as usize,
            Target::Balanced => (smallest as f64 * 1.10).ceil() as usize,
            Target::Faster => (smallest * 2).max(smallest + raw_bytes / 4),
        }
    }
}

/// One priced candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) encoding: Encoding,
    pub(crate) inner: Option<Encoding>,
    pub(crate) estimate: Estimate,
    /// Estimated decode nanoseconds for the block.
    pub(crate) decode_ns: f64,
}

/// Decode nanoseconds per value; wrappers add their per-byte cost over the inner form's bytes.
pub(crate) fn decode_ns(
    encoding: Encoding,
    inner: Option<Encoding>,
    inner_bytes_per_value: f64,
    lane_bits: u32,
) -> f64 {
    match inner {
        None => decode_ns_per_value(encoding, lane_bits),
        Some(inner) => {
            decode_ns_per_value(inner, lane_bits)
                + decode_ns_per_byte(encoding) * inner_bytes_per_value
        }
    }
}

/// Candidates for the block, best first for `target` (never empty when `Unencoded` is allowed),
/// and the byte budget the target allows.
pub(crate) fn rank<T: ColumnValue>(
    input: &BlockInput<'_, T>,
    allowed: &[bool; scheme::ENCODING_COUNT],
    target: Target,
    level: u8,
) -> (Vec<Candidate>, usize) {
    let count = input.lanes.len();
    let bits = T::Lane::BITS;
    let is_allowed = |e: Encoding| allowed[e.tag() as usize];
    let inner_bytes = |inner: Encoding| match inner {
        Encoding::BytePacked => input.stats.range_width.div_ceil(8) as f64,
        _ => T::Lane::BYTES as f64,
    };
    let per_run = match count {
        0 => 0.0,
        _ => RUN_LENGTH_NS_PER_RUN * input.stats.runs as f64 / count as f64,
    };
    let price = |encoding: Encoding, inner: Option<Encoding>, estimate: Estimate| Candidate {
        encoding,
        inner,
        estimate,
        decode_ns: (decode_ns(encoding, inner, inner.map_or(0.0, inner_bytes), bits)
            + if encoding == Encoding::RunLength {
                per_run
            } else {
                0.0
            })
            * count as f64,
    };
    for shortcut in [Encoding::Zero, Encoding::Constant] {
        if is_allowed(shortcut) {
            if let Some(estimate) = scheme::estimate(shortcut, input) {
                return (vec![price(shortcut, None, estimate)], estimate.bytes);
            }
        }
    }
    let mut candidates = Vec::new();
    for encoding in [
        Encoding::BitPacked,
        Encoding::ChunkedBitPacked,
        Encoding::BytePacked,
        Encoding::RunLength,
        Encoding::Delta,
        Encoding::PatchedBitPacked,
        Encoding::Unencoded,
        Encoding::Dictionary,
        Encoding::Alp,
        Encoding::Pco,
    ] {
        if is_allowed(encoding) {
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
            if let Some(estimate) = compressed::estimate(wrapper, inner, input) {
                candidates.push(price(wrapper, Some(inner), estimate));
            }
        }
    }
    let smallest = candidates
        .iter()
        .map(|c| c.estimate.bytes)
        .min()
        .unwrap_or(usize::MAX);
    let budget = target.byte_budget(smallest, count * T::Lane::BYTES, level);
    let random_access_fits = candidates
        .iter()
        .any(|c| c.estimate.bytes <= budget && c.encoding.random_access());
    let shut_out = |c: &Candidate| {
        target == Target::Faster && random_access_fits && !c.encoding.random_access()
    };
    let fastest = candidates
        .iter()
        .filter(|c| c.estimate.bytes <= budget && !shut_out(c))
        .map(|c| c.decode_ns)
        .fold(f64::INFINITY, f64::min);
    // Inside the budget and as fast as the fastest (see `SPEED_TIE`): smallest first; then the
    // rest of the budget, fastest first; outside the budget: smallest first. Under `Faster`,
    // forms without random access (pco, delta, LZ4, zstd) never count as fastest while a
    // random-access form fits: a take would decode their whole block.
    let tier = |c: &Candidate| {
        if c.estimate.bytes > budget {
            2
        } else if c.decode_ns <= fastest * SPEED_TIE && !shut_out(c) {
            0
        } else {
            1
        }
    };
    candidates.sort_by(|a, b| {
        tier(a).cmp(&tier(b)).then_with(|| match tier(a) {
            1 => a
                .decode_ns
                .total_cmp(&b.decode_ns)
                .then(a.estimate.bytes.cmp(&b.estimate.bytes)),
            _ => a
                .estimate
                .bytes
                .cmp(&b.estimate.bytes)
                .then(a.decode_ns.total_cmp(&b.decode_ns)),
        })
    });
    (candidates, budget)
}

/// Decode costs within this factor of the fastest candidate's count as equally fast, and the
/// smallest of them wins: the calibrated costs of the light schemes differ by 10-35%
/// (byte- vs bit-packing, one frame vs one per chunk), less than a shared machine's noise and
/// than the differences the lab measures behind Python (where bit-packing at 20 bits decoded
/// as fast as byte-packing at 24), and much less than their size differences.
pub(crate) const SPEED_TIE: f64 = 1.5;

/// One encoded vector as the final choice sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Encoded {
    pub(crate) decode_ns: f64,
    pub(crate) bytes: usize,
    /// A take can read single values of it (for cascades: through their parts).
    pub(crate) random_access: bool,
}

/// Index of the block to keep among `encoded`: the target's rule applied to real sizes
/// (budget from the smallest, then `SPEED_TIE` and, under `Faster`, random access when a
/// random-access form fits, then fewest bytes).
pub(crate) fn choose_encoded(
    target: Target,
    raw_bytes: usize,
    level: u8,
    encoded: &[Encoded],
) -> usize {
    let smallest = encoded.iter().map(|e| e.bytes).min().unwrap_or(0);
    let budget = target.byte_budget(smallest, raw_bytes, level);
    let need_random_access =
        target == Target::Faster && encoded.iter().any(|e| e.bytes <= budget && e.random_access);
    let eligible = |e: &Encoded| e.bytes <= budget && (e.random_access || !need_random_access);
    let fastest = encoded
        .iter()
        .filter(|e| eligible(e))
        .map(|e| e.decode_ns)
        .fold(f64::INFINITY, f64::min);
    encoded
        .iter()
        .enumerate()
        .filter(|(_, e)| eligible(e) && e.decode_ns <= fastest * SPEED_TIE)
        .min_by(|(_, a), (_, b)| {
            a.bytes
                .cmp(&b.bytes)
                .then(a.decode_ns.total_cmp(&b.decode_ns))
        })
        .map(|(i, _)| i)
        .unwrap_or(0)
}
