//! The common table interface: every format reads and writes table rows the same way.
//!
//! A row is its values in the table schema's column order plus its [`RowPosition`] (table
//! index, row and range index, key switch: the system attributes of YT's job protocol). Rows
//! are read as borrowed views ([`RowRef`], one [`ValueRef`] per column; composite values as
//! binary YSON, YT's own convention) so a reader allocates nothing per field, and written
//! from views or owned [`Value`]s.
//!
//! Each format keeps its own low-level API (its fast path); the types here are the one way to
//! reach every format alike, used by the CLI and the lab.

use std::fmt;

use shapeshift_types::{Value, ValueRef};

/// Where a row sits in a table stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowPosition {
    /// Input or output table (YT's table index).
    pub table_index: usize,
    /// The row's index in its table, where the stream carries it.
    pub row_index: Option<i64>,
    /// The read range the row comes from, where the stream carries it.
    pub range_index: Option<i64>,
    /// The row starts a new key group (reduce jobs).
    pub key_switch: bool,
}

/// A row read through the common interface.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    pub position: RowPosition,
    /// One value per column of the table's schema, in schema order.
    pub values: &'a [ValueRef<'a>],
}

/// Reads rows of one stream.
pub trait RowSource {
    /// The next row, or `None` at the end of the stream.
    ///
    /// # Errors
    /// A [`FormatError`] naming the format, position and problem for malformed input.
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError>;
}

/// Writes rows of one stream.
pub trait RowSink {
    /// Writes one row from borrowed values (schema order).
    ///
    /// # Errors
    /// A [`FormatError`] when a value does not fit its column, or on I/O failure.
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError>;

    /// Writes one row from owned values (schema order).
    ///
    /// # Errors
    /// As [`RowSink::write_row`].
    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError>;

    /// Flushes everything and ends the stream (footers, end markers).
    ///
    /// # Errors
    /// On I/O failure.
    fn finish(&mut self) -> Result<(), FormatError>;
}

/// An error of any format, through the common interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// The format's name (`"yson"`, `"skiff"`, `"protobuf"`, ...).
    pub format: &'static str,
    /// Byte offset in the input, where known.
    pub offset: Option<u64>,
    /// Row number (0-based) in the stream, where known.
    pub row: Option<u64>,
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.format)?;
        if let Some(offset) = self.offset {
            write!(f, ": at byte {offset}")?;
        }
        if let Some(row) = self.row {
            write!(f, ", row {row}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FormatError {}
