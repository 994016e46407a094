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
    [0.133, 0.252], // zero
    [0.133, 0.278], // constant
    [0.235, 0.439], // bit_packed
    [0.189, 0.353], // byte_packed
    [0.211, 0.371], // run_length
    [0.526, 0.736], // delta
    [0.538, 0.667], // dictionary
    [0.277, 0.470], // patched_bit_packed
    [2.818, 3.051], // pco
    [0.252, 0.517], // unencoded
    [0.606, 1.011], // alp
    [1.554, 1.438], // lz4
    [3.353, 3.314], // zstd
    [0.244, 0.464], // chunked_bit_packed
];

pub(crate) fn decode_ns_per_value(encoding: Encoding, lane_bits: u32) -> f64 {
    DECODE_NS_PER_VALUE[encoding.tag() as usize][usize::from(lane_bits == 64)]
}

/// Wrapper cost per decompressed byte: the 64-bit figure spread over its 8 bytes per value.
pub(crate) fn decode_ns_per_byte(wrapper: Encoding) -> f64 {
    DECODE_NS_PER_VALUE[wrapper.tag() as usize][1] / 8.0
}
