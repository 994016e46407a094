//! Block statistics and sampling: everything the selection engine knows about a block before
//! choosing its encoding. One pass gives min, max, runs and the range of deltas; a second pass
//! over `value - min` gives the histogram of bit widths that prices bit-packing and patched
//! bit-packing exactly. Schemes whose size cannot be computed from these (dictionary, ALP, pco,
//! general-purpose compression) are priced on a sample of contiguous runs of the block, in the
//! spirit of BtrBlocks (which samples 10 runs of 64 values).

use hashbrown::HashSet;

use crate::value::{order_key, ColumnValue, Lane};

/// Statistics of one block of lanes.
pub(crate) struct BlockStats<L: Lane> {
    pub(crate) count: usize,
    /// Lane of the smallest value in key order (the frame of reference).
    pub(crate) min: L,
    /// Bits needed for `max - min` in key order.
    pub(crate) range_width: u32,
    /// Number of maximal runs of equal consecutive lanes.
    pub(crate) runs: usize,
    /// Frame of reference and width of consecutive differences (signed key order).
    pub(crate) delta_min: L,
    pub(crate) delta_width: u32,
    /// `width_histogram[b]` = how many values need exactly `b` bits above `min`.
    pub(crate) width_histogram: [u32; 65],
    pub(crate) all_zero: bool,
}

impl<L: Lane> BlockStats<L> {
    pub(crate) fn compute<T: ColumnValue<Lane = L>>(lanes: &[L]) -> Self {
        let count = lanes.len();
        let first = lanes[0];
        let (mut low, mut high) = (order_key::<T>(first), order_key::<T>(first));
        let mut runs = 1usize;
        let signed = |lane: L| lane.xor(L::TOP_BIT);
        let (mut delta_low, mut delta_high) = (L::TOP_BIT, L::TOP_BIT);
        let mut any_nonzero = first != L::default();
        if count > 1 {
            let d = signed(lanes[1].wrapping_sub_(first));
            delta_low = d;
            delta_high = d;
        }
        let mut previous = first;
        for &lane in &lanes[1..] {
            let key = order_key::<T>(lane);
            low = low.min(key);
            high = high.max(key);
            runs += (lane != previous) as usize;
            let delta = signed(lane.wrapping_sub_(previous));
            delta_low = delta_low.min(delta);
            delta_high = delta_high.max(delta);
            any_nonzero |= lane != L::default();
            previous = lane;
        }
        let min = order_key::<T>(low);
        let mut width_histogram = [0u32; 65];
        for &lane in lanes {
            width_histogram[lane.wrapping_sub_(min).bits_needed() as usize] += 1;
        }
        BlockStats {
            count,
            min,
            range_width: high.wrapping_sub_(low).bits_needed(),
            runs,
            delta_min: signed(delta_low),
            delta_width: delta_high.wrapping_sub_(delta_low).bits_needed(),
            width_histogram,
            all_zero: !any_nonzero,
        }
    }

    pub(crate) fn is_constant(&self) -> bool {
        self.runs == 1
    }
}

/// Values per sampled run and the most runs taken from one block.
const SAMPLE_RUN: usize = 256;
const SAMPLE_RUNS: usize = 16;

/// A sample of a block: up to 16 evenly spaced runs of 256 contiguous values (the whole block
/// when it is that small).
pub(crate) struct Sample<T> {
    pub(crate) values: Vec<T>,
    /// `values.len()` / block count: multiply a sample size by its inverse to estimate.
    pub(crate) fraction: f64,
    pub(crate) distinct: usize,
}

impl<T: ColumnValue> Sample<T> {
    pub(crate) fn take(values: &[T]) -> Self {
        let count = values.len();
        let sampled: Vec<T> = if count <= SAMPLE_RUN * SAMPLE_RUNS {
            values.to_vec()
        } else {
            let stride = count / SAMPLE_RUNS;
            (0..SAMPLE_RUNS)
                .flat_map(|run| {
                    let start = run * stride;
                    values[start..start + SAMPLE_RUN].iter().copied()
                })
                .collect()
        };
        let distinct = sampled
            .iter()
            .map(|v| v.to_lane())
            .collect::<HashSet<_>>()
            .len();
        Sample {
            fraction: sampled.len() as f64 / count as f64,
            values: sampled,
            distinct,
        }
    }
}
