//! Constant blocks: `[7 zero bytes][value u64 LE]` (the lane, zero-extended).

use super::{BlockInput, Estimate};
use crate::bytes::{pad8, ByteReader};
use crate::error::Result;
use crate::value::{ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    input.stats.is_constant().then_some(Estimate {
        bytes: 15,
        exact: true,
    })
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    if !input.stats.is_constant() {
        return false;
    }
    pad8(out);
    out.extend_from_slice(&input.lanes[0].to_u64().to_le_bytes());
    true
}

fn read<T: ColumnValue>(reader: &mut ByteReader<'_>) -> Result<T> {
    reader.align8("padding before the constant")?;
    Ok(T::from_lane(T::Lane::truncate_u64(
        reader.u64("constant value")?,
    )))
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let value = read::<T>(reader)?;
    out.fill(value);
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let value = read::<T>(reader)?;
    out.fill(value);
    Ok(())
}
