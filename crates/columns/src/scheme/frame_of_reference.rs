//! Frame of reference + bit-packing: one packed vector of the block's values
//! (`reference` = the block minimum in key order, `width` = bits of max - min).

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::Result;
use crate::packed::{packed_size, write_packed, PackedView};
use crate::value::{as_lanes_mut, ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let stats = &input.stats;
    Estimate::exact(7 + packed_size(stats.count, stats.range_width, T::Lane::BYTES))
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    write_packed(out, input.lanes, input.stats.min, input.stats.range_width);
    true
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let view = PackedView::<T::Lane>::parse(reader, out.len())?;
    view.decode_into(as_lanes_mut(out));
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let view = PackedView::<T::Lane>::parse(reader, count)?;
    view.gather(positions, 0, as_lanes_mut(out));
    Ok(())
}
