//! Encoding a column: split into blocks, let the selection engine rank schemes per block,
//! encode the winner (and, when the winner was priced from the sample, the runner-up if it
//! might really be better), offer the dictionary blocks one shared dictionary, assemble the
//! container.

use crate::bytes::pad8;
use crate::error::{Error, Result};
use crate::layout::{self, EncodedBlock, MAX_BLOCK_LOG2, MIN_BLOCK_LOG2};
use crate::scheme::{
    self, byte_packed, compressed, nested, shared_dictionary, BlockInput, Encoding, Nest,
    ENCODING_COUNT,
};
use crate::selection::{self, Target};
use crate::statistics::{BlockStats, Sample};
use crate::value::{as_lanes, ColumnValue, Lane};

/// How to encode a column.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Values per block: 4096, 8192, 16384, 32768 or 65536.
    pub block_size: usize,
    /// What the per-block choice optimises.
    pub target: Target,
    /// Encodings the selection may use (indexed by tag); `Unencoded` is always allowed.
    pub allowed: [bool; ENCODING_COUNT],
    /// Zstandard level for zstd-wrapped blocks.
    pub zstd_level: i32,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            block_size: 1 << 16,
            target: Target::Balanced,
            allowed: [true; ENCODING_COUNT],
            zstd_level: 3,
        }
    }
}

impl EncodeOptions {
    /// Default options with the given target.
    pub fn new(target: Target) -> Self {
        EncodeOptions {
            target,
            ..Default::default()
        }
    }

    /// Sets the block size (validated by `encode`).
    pub fn with_block_size(mut self, block_size: usize) -> Self {
        self.block_size = block_size;
        self
    }

    /// Restricts the selection to `encodings` (plus `Unencoded`, the universal fallback).
    pub fn with_only(mut self, encodings: &[Encoding]) -> Self {
        self.allowed = [false; ENCODING_COUNT];
        for encoding in encodings {
            self.allowed[encoding.tag() as usize] = true;
        }
        self
    }

    fn block_log2(&self) -> Result<u8> {
        let size = self.block_size;
        let log2 = size.trailing_zeros() as u8;
        if !size.is_power_of_two() || !(MIN_BLOCK_LOG2..=MAX_BLOCK_LOG2).contains(&log2) {
            return Err(Error::InvalidOption(format!(
                "block size {size} is not a power of two between 4096 and 65536"
            )));
        }
        Ok(log2)
    }
}

/// A vector encoded by the selection engine: a top-level block or a part of a cascade.
pub(crate) struct EncodedVector {
    pub(crate) encoding: Encoding,
    /// `[tag][payload]`, zero-padded to a multiple of 8 bytes.
    pub(crate) bytes: Vec<u8>,
    /// Estimated decode nanoseconds (parts included).
    pub(crate) decode_ns: f64,
    /// Whether a take reads single values (for cascades: through their parts).
    pub(crate) random_access: bool,
}

/// Encodes one vector (a block, or a part of a cascading scheme at `nest.level`): ranks the
/// estimating schemes, encodes the best few, adds every allowed cascading scheme (encoded for
/// real: a cascade's size depends on what its parts become), and keeps the target's choice
/// among the real sizes.
pub(crate) fn encode_vector<T: ColumnValue>(values: &[T], nest: &Nest) -> EncodedVector {
    let lanes = as_lanes(values);
    let stats = BlockStats::compute::<T>(lanes);
    let sample = if stats.is_constant() {
        Sample {
            values: values[..1].to_vec(),
            fraction: 1.0 / values.len() as f64,
            distinct: 1,
        }
    } else {
        Sample::take(values)
    };
    let input = BlockInput {
        values,
        lanes,
        stats,
        sample,
        zstd_level: nest.zstd_level,
    };
    let mut allowed = nest.allowed;
    allowed[Encoding::Unencoded.tag() as usize] = true;
    let (candidates, budget) = selection::rank(&input, &allowed, nest.target, nest.level);
    let encode_candidate = |candidate: &selection::Candidate| {
        let mut bytes = Vec::new();
        scheme::encode(candidate.encoding, candidate.inner, &input, &mut bytes).then(|| {
            EncodedVector {
                encoding: candidate.encoding,
                bytes,
                decode_ns: candidate.decode_ns,
                random_access: candidate.encoding.random_access(),
            }
        })
    };
    // Estimates from the sample can miss. Candidates are encoded in order until one keeps the
    // budget (an exact estimate always does; at most 3 attempts); the final choice applies the
    // target's rule again to the real sizes of everything encoded.
    let mut encoded: Vec<EncodedVector> = Vec::new();
    let mut tried = Vec::new();
    for (index, candidate) in candidates.iter().enumerate().take(3) {
        tried.push(index);
        let Some(block) = encode_candidate(candidate) else {
            continue;
        };
        let fits = candidate.estimate.exact || block.bytes.len() <= budget;
        encoded.push(block);
        if fits {
            break;
        }
    }
    // The budget itself rests on the smallest estimate; when that came from the sample, the
    // smallest candidate is encoded too, so the final rule sees its real size (a sampled pco
    // estimate 10% too high would otherwise admit a form 20% larger than pco really is).
    let smallest_estimate = candidates
        .iter()
        .enumerate()
        .min_by_key(|(_, c)| c.estimate.bytes)
        .filter(|(index, c)| !c.estimate.exact && !tried.contains(index));
    if let Some((_, candidate)) = smallest_estimate {
        encoded.extend(encode_candidate(candidate));
    }
    let shortcut = candidates
        .first()
        .is_some_and(|c| matches!(c.encoding, Encoding::Zero | Encoding::Constant));
    if nest.level < nested::MAX_LEVEL && !shortcut {
        for encoding in Encoding::ALL.into_iter().filter(|e| e.cascades()) {
            if allowed[encoding.tag() as usize] {
                if let Some(block) = scheme::encode_cascade(encoding, &input, nest) {
                    encoded.push(EncodedVector {
                        encoding,
                        bytes: block.bytes,
                        decode_ns: block.decode_ns,
                        random_access: block.random_access,
                    });
                }
            }
        }
    }
    if encoded.is_empty() {
        let mut bytes = Vec::new();
        scheme::encode(Encoding::Unencoded, None, &input, &mut bytes);
        encoded.push(EncodedVector {
            encoding: Encoding::Unencoded,
            bytes,
            decode_ns: 0.0,
            random_access: true,
        });
    }
    for block in &mut encoded {
        pad8(&mut block.bytes);
    }
    let sizes: Vec<selection::Encoded> = encoded
        .iter()
        .map(|block| selection::Encoded {
            decode_ns: block.decode_ns,
            bytes: block.bytes.len(),
            random_access: block.random_access,
        })
        .collect();
    let raw_bytes = values.len() * T::Lane::BYTES;
    let position = selection::choose_encoded(nest.target, raw_bytes, nest.level, &sizes);
    encoded.swap_remove(position)
}

fn top_level(options: &EncodeOptions) -> Nest {
    Nest {
        target: options.target,
        allowed: options.allowed,
        zstd_level: options.zstd_level,
        level: 0,
    }
}

/// Encodes `values` as an adaptive column.
///
/// # Errors
/// `Error::InvalidOption` when the block size is not a power of two in 4096..=65536.
pub fn encode<T: ColumnValue>(values: &[T], options: &EncodeOptions) -> Result<Vec<u8>> {
    let block_log2 = options.block_log2()?;
    let nest = top_level(options);
    let mut blocks: Vec<EncodedVector> = values
        .chunks(options.block_size)
        .map(|block| encode_vector(block, &nest))
        .collect();
    // Dictionaries that repeat across blocks: one for the column, if that is smaller. Not
    // under `faster`: a block's own dictionary stays in cache where a large shared one does
    // not (zipf-like integers decoded 1.8x slower through 15 shared blocks).
    let shared = if options.allowed[Encoding::SharedDictionary.tag() as usize]
        && options.target != Target::Faster
    {
        shared_dictionary::share(values, options.block_size, &mut blocks, &nest)
    } else {
        None
    };
    Ok(layout::assemble(
        T::VALUE_TYPE,
        block_log2,
        options.target.code(),
        values.len(),
        shared.as_ref(),
        &blocks
            .into_iter()
            .map(|block| EncodedBlock {
                encoding: block.encoding,
                bytes: block.bytes,
            })
            .collect::<Vec<_>>(),
    ))
}

/// Block size of the baseline: 8192 values (64 KiB of 64-bit values, Druid's block size).
pub const BASELINE_BLOCK_SIZE: usize = 8192;

/// Encodes `values` like Druid's default numeric columns: fixed blocks of 8192 values,
/// each byte-packed to the bytes its largest value needs (reference 0, "VSize") and
/// compressed with LZ4. Readable with `Column` like any other column.
pub fn encode_baseline<T: ColumnValue>(values: &[T]) -> Vec<u8> {
    let blocks: Vec<EncodedBlock> = values
        .chunks(BASELINE_BLOCK_SIZE)
        .map(|block| {
            let lanes = as_lanes(block);
            let largest = lanes.iter().copied().max().unwrap_or_default();
            let per_value = largest.bits_needed().div_ceil(8) as usize;
            let mut raw = vec![Encoding::BytePacked.tag()];
            byte_packed::write(&mut raw, lanes, T::Lane::default(), per_value);
            let mut bytes = vec![Encoding::Lz4.tag()];
            compressed::write(&mut bytes, raw.len(), &lz4_flex::block::compress(&raw));
            pad8(&mut bytes);
            EncodedBlock {
                encoding: Encoding::Lz4,
                bytes,
            }
        })
        .collect();
    layout::assemble(
        T::VALUE_TYPE,
        BASELINE_BLOCK_SIZE.trailing_zeros() as u8,
        layout::BASELINE_TARGET,
        values.len(),
        None,
        &blocks,
    )
}
