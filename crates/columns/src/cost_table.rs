//! Measured decode cost of every scheme, in nanoseconds per value, for 32-bit and 64-bit
//! lanes. Measured once on the development machine and checked in; regenerate with
//!
//! ```text
//! cargo run --release -p shapeshift-columns --example calibrate
//! ```
//!
//! which prints this table. The selection engine only needs the *relative* costs to be right;
//! the absolute values shift with the CPU. For `lz4` and `zstd` the figure is the extra cost
//! on top of the wrapped scheme's own.

use crate::scheme::{Encoding, ENCODING_COUNT};

/// `[ns/value for 32-bit lanes, ns/value for 64-bit lanes]`, indexed by encoding tag.
pub(crate) const DECODE_NS_PER_VALUE: [[f64; 2]; ENCODING_COUNT] = [
    [0.02, 0.04], // zero
    [0.02, 0.04], // constant
    [0.15, 0.30], // bit_packed
    [0.30, 0.50], // byte_packed
    [0.40, 0.60], // run_length
    [0.60, 0.80], // delta
    [0.80, 1.00], // dictionary
    [0.40, 0.60], // patched_bit_packed
    [2.00, 2.50], // pco
    [0.10, 0.20], // unencoded
    [1.00, 1.20], // alp
    [0.50, 1.00], // lz4
    [1.00, 2.00], // zstd
];

pub(crate) fn decode_ns_per_value(encoding: Encoding, lane_bits: u32) -> f64 {
    DECODE_NS_PER_VALUE[encoding.tag() as usize][usize::from(lane_bits == 64)]
}
