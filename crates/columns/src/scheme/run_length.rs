//! Run-length encoding: `[3 zero bytes][run_count u32][packed run values][packed run ends]`.
//! Run ends are exclusive positions, strictly increasing, the last equal to the block's
//! count; a value is found by binary search over the ends, so blocks stay random-accessible.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::packed::{frame_of, packed_size, write_packed, PackedView};
use crate::value::{as_lanes_mut, ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let stats = &input.stats;
    if stats.runs * 2 > stats.count {
        return None;
    }
    let end_width = (stats.count as u64).bits_needed();
    Estimate::exact(
        7 + packed_size(stats.runs, stats.range_width, T::Lane::BYTES)
            + 8
            + packed_size(stats.runs, end_width, T::Lane::BYTES),
    )
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let lanes = input.lanes;
    let mut values = Vec::with_capacity(input.stats.runs);
    let mut ends = Vec::with_capacity(input.stats.runs);
    for (index, &lane) in lanes.iter().enumerate() {
        if index + 1 == lanes.len() || lanes[index + 1] != lane {
            values.push(lane);
            ends.push(T::Lane::truncate_u64(index as u64 + 1));
        }
    }
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    write_packed(out, &values, input.stats.min, input.stats.range_width);
    let (reference, width) = frame_of(&ends, |lane| lane);
    write_packed(out, &ends, reference, width);
    true
}

struct Runs<'a, L: Lane> {
    values: PackedView<'a, L>,
    ends: PackedView<'a, L>,
    runs: usize,
    ends_at: usize,
}

fn parse<'a, L: Lane>(reader: &mut ByteReader<'a>, count: usize) -> Result<Runs<'a, L>> {
    reader.take(3, "run-length padding")?;
    let at = reader.offset();
    let runs = reader.count(count, "run count")?;
    if runs == 0 && count > 0 {
        return Err(corrupt(at, "a non-empty block with no runs"));
    }
    let values = PackedView::parse(reader, runs)?;
    let ends_at = reader.offset();
    let ends = PackedView::parse(reader, runs)?;
    Ok(Runs {
        values,
        ends,
        runs,
        ends_at,
    })
}

/// Runs up to this long are written as a fixed-size window (see `decode`).
const SHORT_RUN: usize = 8;

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let runs = parse::<T::Lane>(reader, out.len())?;
    let mut values = vec![T::Lane::default(); runs.runs];
    let mut ends = vec![T::Lane::default(); runs.runs];
    runs.values.decode_into(&mut values);
    runs.ends.decode_into(&mut ends);
    fill(&values, &ends, as_lanes_mut(out), runs.ends_at)
}

/// Writes run `i`'s value over `[ends[i-1], ends[i])` of `out`, checking that the ends
/// increase and cover `out` exactly (`ends_at` locates them for errors).
pub(crate) fn fill<L: Lane, E: Lane>(
    values: &[L],
    ends: &[E],
    out: &mut [L],
    ends_at: usize,
) -> Result<()> {
    let length = out.len();
    let mut start = 0usize;
    for (&value, &end) in values.iter().zip(ends) {
        let end = Lane::to_u64(end);
        if end <= start as u64 || end > length as u64 {
            return Err(corrupt(
                ends_at,
                format!("run end {end} after {start} in a block of {length}"),
            ));
        }
        let end = end as usize;
        // Short runs (keys repeated a few times) dominate some blocks: writing a fixed window
        // of 8 lanes is one unrolled store sequence instead of a length-dependent fill; the
        // lanes past the run's end are overwritten by the following runs, which start there.
        if end - start <= SHORT_RUN && start + SHORT_RUN <= length {
            out[start..start + SHORT_RUN].fill(value);
        } else {
            out[start..end].fill(value);
        }
        start = end;
    }
    if start != length {
        return Err(corrupt(
            ends_at,
            format!("runs cover {start} of {length} values"),
        ));
    }
    Ok(())
}

/// A take unpacks the run values when there are at most this many runs per requested value;
/// with more, each value is read from the packed run values at its run's index.
pub(crate) const RUNS_PER_VALUE_TO_UNPACK: usize = 4;

/// The run index of every sorted position, by a cursor over the run `ends` that only moves
/// forward: a merge when runs are few per position, a binary search from the cursor when they
/// are many. `run_of(i, run)` receives them in order.
pub(crate) fn locate<E: Lane>(
    ends: &[E],
    positions: &[u32],
    ends_at: usize,
    mut run_of: impl FnMut(usize, usize),
) -> Result<()> {
    let walk = ends.len() <= RUNS_PER_VALUE_TO_UNPACK * positions.len();
    let mut run = 0usize;
    for (i, &position) in positions.iter().enumerate() {
        if walk {
            while run < ends.len() && Lane::to_u64(ends[run]) <= position as u64 {
                run += 1;
            }
        } else {
            run += ends[run..].partition_point(|&end| Lane::to_u64(end) <= position as u64);
        }
        if run >= ends.len() {
            return Err(corrupt(
                ends_at,
                format!("no run covers position {position}"),
            ));
        }
        run_of(i, run);
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let runs = parse::<T::Lane>(reader, count)?;
    // The run ends are unpacked once per block (at most `count` lanes, bounded in `parse`).
    let mut ends = vec![T::Lane::default(); runs.runs];
    runs.ends.decode_into(&mut ends);
    // The run index of every position, written into the output's lanes first.
    let out = as_lanes_mut(out);
    locate(&ends, positions, runs.ends_at, |i, run| {
        out[i] = T::Lane::truncate_u64(run as u64)
    })?;
    if runs.runs <= RUNS_PER_VALUE_TO_UNPACK * positions.len() {
        let mut values = vec![T::Lane::default(); runs.runs];
        runs.values.decode_into(&mut values);
        for slot in out.iter_mut() {
            *slot = values[slot.to_u64() as usize];
        }
    } else {
        runs.values.gather_in_place(out);
    }
    Ok(())
}
