//! Delta encoding: `[7 zero bytes][first value u64 LE][packed differences]`. The `count - 1`
//! wrapping differences are framed in signed order (reference = smallest difference), so
//! sorted timestamps and slowly drifting counters pack into a few bits. Decoding is a prefix
//! sum, so a single value costs a block decode (no random access).

use super::{BlockInput, Estimate};
use crate::bytes::{pad8, ByteReader};
use crate::error::Result;
use crate::packed::{packed_size, write_packed, PackedView};
use crate::value::{as_lanes_mut, ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let stats = &input.stats;
    if stats.count < 2 {
        return None;
    }
    Estimate::exact(15 + packed_size(stats.count - 1, stats.delta_width, T::Lane::BYTES))
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let lanes = input.lanes;
    pad8(out);
    out.extend_from_slice(&lanes[0].to_u64().to_le_bytes());
    let deltas: Vec<T::Lane> = lanes
        .windows(2)
        .map(|pair| pair[1].wrapping_sub_(pair[0]))
        .collect();
    write_packed(out, &deltas, input.stats.delta_min, input.stats.delta_width);
    true
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    reader.align8("padding before the first value")?;
    let first = T::Lane::truncate_u64(reader.u64("first value")?);
    let count = out.len();
    let deltas = PackedView::<T::Lane>::parse(reader, count.saturating_sub(1))?;
    let out = as_lanes_mut(out);
    if count == 0 {
        return Ok(());
    }
    out[0] = first;
    deltas.decode_into(&mut out[1..]);
    let mut running = first;
    for slot in &mut out[1..] {
        running = running.wrapping_add_(*slot);
        *slot = running;
    }
    Ok(())
}
