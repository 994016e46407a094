//! Row positions as control records, for the formats that carry them between rows (YSON,
//! JSON, MessagePack, CBOR) rather than in each row (Skiff's system fields).
//!
//! The stream semantics are YT's: a table index holds until the next one (streams start at
//! table 0); a range index holds until the next one or a table switch; a row index names the
//! next row's index and counts up by one per row, until the next row index, range or table
//! switch; a key switch marks the next row only. The writer emits exactly the records the
//! reader needs to recover each row's [`RowPosition`]: a row index only when it is not the
//! previous one plus one. What the records cannot say (a row without a row index after rows
//! with one in the same range) reads back as the continued count.

use super::RowPosition;

/// A control record between rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    TableIndex(usize),
    RangeIndex(i64),
    RowIndex(i64),
    KeySwitch,
}

/// The writer's side: which control records go before a row.
#[derive(Debug, Default)]
pub(crate) struct PositionWriter {
    table: usize,
    range: Option<i64>,
    next_row_index: Option<i64>,
}

impl PositionWriter {
    /// Calls `emit` for every record needed before a row at `position`, in order.
    #[inline]
    pub(crate) fn controls<E>(
        &mut self,
        position: &RowPosition,
        mut emit: impl FnMut(Control) -> Result<(), E>,
    ) -> Result<(), E> {
        if position.table_index != self.table {
            emit(Control::TableIndex(position.table_index))?;
            self.table = position.table_index;
            self.range = None;
            self.next_row_index = None;
        }
        if position.range_index.is_some() && position.range_index != self.range {
            emit(Control::RangeIndex(position.range_index.unwrap_or(0)))?;
            self.range = position.range_index;
            self.next_row_index = None;
        }
        if let Some(index) = position.row_index {
            if self.next_row_index != Some(index) {
                emit(Control::RowIndex(index))?;
            }
        }
        self.next_row_index = position.row_index.and_then(|i| i.checked_add(1));
        if position.key_switch {
            emit(Control::KeySwitch)?;
        }
        Ok(())
    }
}

/// The reader's side: the position of each row from the records before it.
#[derive(Debug, Default)]
pub(crate) struct PositionReader {
    table: usize,
    range: Option<i64>,
    next_row_index: Option<i64>,
    key_switch: bool,
}

impl PositionReader {
    pub(crate) fn control(&mut self, control: Control) {
        match control {
            Control::TableIndex(index) => {
                self.table = index;
                self.range = None;
                self.next_row_index = None;
            }
            Control::RangeIndex(index) => {
                self.range = Some(index);
                self.next_row_index = None;
            }
            Control::RowIndex(index) => self.next_row_index = Some(index),
            Control::KeySwitch => self.key_switch = true,
        }
    }

    /// The table the next row belongs to.
    pub(crate) fn table(&self) -> usize {
        self.table
    }

    /// The position of the row that follows, advancing the row count.
    #[inline]
    pub(crate) fn next_row(&mut self) -> RowPosition {
        let position = RowPosition {
            table_index: self.table,
            row_index: self.next_row_index,
            range_index: self.range,
            key_switch: std::mem::take(&mut self.key_switch),
        };
        self.next_row_index = self.next_row_index.and_then(|i| i.checked_add(1));
        position
    }
}
