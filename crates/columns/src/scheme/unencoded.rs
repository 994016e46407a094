//! Unencoded blocks: `[7 zero bytes][count values, little-endian]`. The fallback that always
//! applies.

use super::{BlockInput, Estimate};
use crate::bytes::{copy_lanes_from_le, lane_from_le, pad8, put_lanes, ByteReader};
use crate::error::Result;
use crate::value::{as_lanes_mut, ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    Estimate::exact(7 + input.lanes.len() * T::Lane::BYTES)
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    pad8(out);
    put_lanes(out, input.lanes);
    true
}

fn data<'a, T: ColumnValue>(reader: &mut ByteReader<'a>, count: usize) -> Result<&'a [u8]> {
    reader.align8("padding before unencoded values")?;
    reader.take(count * T::Lane::BYTES, "unencoded values")
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let bytes = data::<T>(reader, out.len())?;
    copy_lanes_from_le(bytes, as_lanes_mut(out));
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let bytes = data::<T>(reader, count)?;
    let width = T::Lane::BYTES;
    for (slot, &position) in out.iter_mut().zip(positions) {
        *slot = T::from_lane(lane_from_le(&bytes[position as usize * width..]));
    }
    Ok(())
}
