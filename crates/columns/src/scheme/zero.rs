//! Zero blocks: every value has all bits clear (0, or +0.0). No payload at all.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::Result;
use crate::value::ColumnValue;

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    input.stats.all_zero.then_some(Estimate {
        bytes: 0,
        exact: true,
    })
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, _out: &mut Vec<u8>) -> bool {
    input.stats.all_zero
}

pub(crate) fn decode<T: ColumnValue>(_reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    out.fill(T::from_lane(Default::default()));
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(out: &mut [T]) {
    out.fill(T::from_lane(Default::default()));
}
