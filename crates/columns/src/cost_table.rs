//! Measured decode cost of every scheme, in nanoseconds per value, for 32-bit and 64-bit
//! lanes. Measured once on the development machine and checked in; regenerate with
//!
//! ```text
//! cargo run --release -p shapeshift-columns --example calibrate
//! ```
//!
//! which prints this table (figures below: 2026-11-21, the 2-core development VM, 1M values
//! per scheme, output buffers larger than the caches, so cheap schemes are memory-bound). The selection engine only needs the *relative* costs to be right;
//! the absolute values shift with the CPU. For `lz4` and `zstd` the figure is the extra cost
//! on top of the wrapped scheme's own, measured over unencoded 64-bit values and used per
//! decompressed byte (figure / 8).

use crate::scheme::{Encoding, ENCODING_COUNT};

/// `[ns/value for 32-bit lanes, ns/value for 64-bit lanes]`, indexed by encoding tag.
pub(crate) const DECODE_NS_PER_VALUE: [[f64; 2]; ENCODING_COUNT] = [
    [0.126, 0.256], // zero
    [0.138, 0.298], // constant
    [0.273, 0.708], // bit_packed
    [0.197, 0.350], // byte_packed
    [0.211, 0.387], // run_length
    [0.584, 1.185], // delta
    [1.167, 1.741], // dictionary
    [0.313, 0.747], // patched_bit_packed
    [1.566, 2.092], // pco
    [0.251, 0.510], // unencoded
    [1.011, 1.249], // alp
    [1.306, 1.221], // lz4
    [3.325, 3.180], // zstd
];

pub(crate) fn decode_ns_per_value(encoding: Encoding, lane_bits: u32) -> f64 {
    DECODE_NS_PER_VALUE[encoding.tag() as usize][usize::from(lane_bits == 64)]
}

/// Wrapper cost per decompressed byte: the 64-bit figure spread over its 8 bytes per value.
pub(crate) fn decode_ns_per_byte(wrapper: Encoding) -> f64 {
    DECODE_NS_PER_VALUE[wrapper.tag() as usize][1] / 8.0
}
