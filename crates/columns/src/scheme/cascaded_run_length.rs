//! Run-length encoding with cascaded parts: `[3 zero bytes][runs u32][nested run values:
//! T × runs][nested run ends: u32 × runs]`. Run ends are exclusive, strictly increasing, the
//! last equal to the block's count (as in `run_length`); the run values may become a
//! dictionary, the ends delta- or bit-packed, as the selection engine finds best.

use super::run_length::{fill, locate, RUNS_PER_VALUE_TO_UNPACK};
use super::{nested, BlockInput, Cascaded, Encoding, Nest};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::value::{as_lanes_mut, ColumnValue};

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, nest: &Nest) -> Option<Cascaded> {
    let stats = &input.stats;
    if stats.runs * 2 > stats.count || stats.is_constant() {
        return None;
    }
    let lanes = input.lanes;
    let mut values = Vec::with_capacity(stats.runs);
    let mut ends = Vec::with_capacity(stats.runs);
    for (index, &lane) in lanes.iter().enumerate() {
        if index + 1 == lanes.len() || lanes[index + 1] != lane {
            values.push(T::from_lane(lane));
            ends.push(index as u32 + 1);
        }
    }
    let mut out = vec![Encoding::CascadedRunLength.tag(), 0, 0, 0];
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    let runs = values.len() as f64;
    let values = nested::write(&mut out, &values, &nest.child(nested::VALUES));
    let ends = nested::write(&mut out, &ends, &nest.child(nested::LEAVES));
    // A take decodes the run ends (one per run, not per value) and reads the values it needs.
    Some(Cascaded {
        bytes: out,
        decode_ns: values.decode_ns
            + ends.decode_ns
            + crate::cost_table::RUN_LENGTH_NS_PER_RUN * runs,
        random_access: true,
    })
}

struct Parts<'a> {
    runs: usize,
    values: nested::View<'a>,
    ends: nested::View<'a>,
    ends_at: usize,
}

fn parse<'a>(reader: &mut ByteReader<'a>, count: usize, level: u8) -> Result<Parts<'a>> {
    reader.take(3, "run-length padding")?;
    let at = reader.offset();
    let runs = reader.count(count, "run count")?;
    if runs == 0 && count > 0 {
        return Err(corrupt(at, "a non-empty block with no runs"));
    }
    let values = nested::View::parse(reader, runs, level)?;
    let ends_at = reader.offset();
    let ends = nested::View::parse(reader, runs, level)?;
    Ok(Parts {
        runs,
        values,
        ends,
        ends_at,
    })
}

pub(crate) fn decode<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let parts = parse(reader, out.len(), level)?;
    let mut values = vec![T::default(); parts.runs];
    parts.values.decode(&mut values)?;
    let mut ends = vec![0u32; parts.runs];
    parts.ends.decode(&mut ends)?;
    let values = as_lanes_mut(&mut values);
    fill(values, &ends, as_lanes_mut(out), parts.ends_at)
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let parts = parse(reader, count, level)?;
    let mut ends = vec![0u32; parts.runs];
    parts.ends.decode(&mut ends)?;
    if parts.runs <= RUNS_PER_VALUE_TO_UNPACK * positions.len() {
        // Few runs for the rows: each run's rows are a contiguous stretch of the sorted
        // positions, found by a forward scan and filled with the run's value (instead of a
        // run index per row, then a value per row; a binary search per run cost more than
        // the scan's predictable compare per row).
        let mut values = vec![T::default(); parts.runs];
        parts.values.decode(&mut values)?;
        let mut from = 0usize;
        for (&end, &value) in ends.iter().zip(&values) {
            let mut to = from;
            while to < positions.len() && positions[to] < end {
                to += 1;
            }
            out[from..to].fill(value);
            from = to;
        }
        if let Some(&position) = positions.get(from) {
            return Err(corrupt(
                parts.ends_at,
                format!("no run covers position {position}"),
            ));
        }
        return Ok(());
    }
    let mut runs = vec![0u32; positions.len()];
    locate(&ends, positions, parts.ends_at, |i, run| {
        runs[i] = run as u32
    })?;
    // The runs asked for (sorted, since the positions are), each taken once.
    let mut wanted = runs.clone();
    wanted.dedup();
    let mut values = vec![T::default(); wanted.len()];
    parts.values.take(&wanted, &mut values)?;
    let mut cursor = 0usize;
    for (slot, &run) in out.iter_mut().zip(&runs) {
        while wanted[cursor] != run {
            cursor += 1;
        }
        *slot = values[cursor];
    }
    Ok(())
}
