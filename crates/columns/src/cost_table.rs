//! Measured decode cost of every scheme, in nanoseconds per value, for 32-bit and 64-bit
//! lanes. Measured once on the development machine and checked in; regenerate with
//!
//! ```text
//! cargo run --release -p shapeshift-columns --example calibrate
//! ```
//!
//! which prints this table (figures below: 2026-11-21, the 2-core development VM built with
//! `-C target-cpu=native` (AVX-512), 1M values per scheme, output buffers larger than the
//! caches, so cheap schemes are memory-bound; pco on exponentially distributed integers, the
//! many-bin data it is chosen for — on one-bin uniform data it decodes ~4x faster). The selection engine only needs the *relative* costs to be right;
//! the absolute values shift with the CPU. For `lz4` and `zstd` the figure is the extra cost
//! on top of the wrapped scheme's own, measured over unencoded 64-bit values and used per
//! decompressed byte (figure / 8).

use crate::scheme::{Encoding, ENCODING_COUNT};

/// `[ns/value for 32-bit lanes, ns/value for 64-bit lanes]`, indexed by encoding tag.
pub(crate) const DECODE_NS_PER_VALUE: [[f64; 2]; ENCODING_COUNT] = [
    [0.122, 0.249], // zero
    [0.129, 0.276], // constant
    [0.220, 0.432], // bit_packed
    [0.182, 0.325], // byte_packed
    [0.204, 0.432], // run_length
    [0.573, 0.711], // delta
    [0.730, 0.562], // dictionary
    [0.262, 0.467], // patched_bit_packed
    [2.672, 3.018], // pco
    [0.247, 0.499], // unencoded
    [0.595, 0.990], // alp
    [1.350, 1.260], // lz4
    [3.251, 3.167], // zstd
    [0.256, 0.425], // chunked_bit_packed
    // Cascading schemes: only their own combining pass (their parts are priced as blocks of
    // their own): derived from the rows above, not calibrated (dictionary: the leaf
    // dictionary's cost over bit-packing at 32 bits; real_doubles: a shift and an OR over a
    // second vector; run-length: the fill, whose per-run cost is added separately).
    [0.25, 0.30], // real_doubles
    [0.40, 0.35], // cascaded_dictionary
    [0.10, 0.15], // cascaded_run_length
    [0.40, 0.35], // shared_dictionary (the same gather as cascaded_dictionary)
];

/// Extra decode cost of run-length blocks per run (the table's figure is for runs of 100
/// values, where it vanishes; measured by `calibrate` from runs of 4 against runs of 100).
pub(crate) const RUN_LENGTH_NS_PER_RUN: f64 = 1.873;

pub(crate) fn decode_ns_per_value(encoding: Encoding, lane_bits: u32) -> f64 {
    DECODE_NS_PER_VALUE[encoding.tag() as usize][usize::from(lane_bits == 64)]
}

/// Wrapper cost per decompressed byte: the 64-bit figure spread over its 8 bytes per value.
pub(crate) fn decode_ns_per_byte(wrapper: Encoding) -> f64 {
    DECODE_NS_PER_VALUE[wrapper.tag() as usize][1] / 8.0
}
