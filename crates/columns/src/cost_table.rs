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
//! on top of the wrapped scheme's own.

use crate::scheme::{Encoding, ENCODING_COUNT};

/// `[ns/value for 32-bit lanes, ns/value for 64-bit lanes]`, indexed by encoding tag.
pub(crate) const DECODE_NS_PER_VALUE: [[f64; 2]; ENCODING_COUNT] = [
    [0.123, 0.273], // zero
    [0.130, 0.285], // constant
    [0.249, 0.591], // bit_packed
    [0.185, 0.327], // byte_packed
    [0.172, 0.373], // run_length
    [0.565, 1.244], // delta
    [1.062, 1.405], // dictionary
    [0.301, 0.809], // patched_bit_packed
    [1.600, 2.115], // pco
    [0.248, 0.543], // unencoded
    [1.046, 1.184], // alp
    [1.388, 1.324], // lz4
    [3.361, 3.177], // zstd
];

pub(crate) fn decode_ns_per_value(encoding: Encoding, lane_bits: u32) -> f64 {
    DECODE_NS_PER_VALUE[encoding.tag() as usize][usize::from(lane_bits == 64)]
}
