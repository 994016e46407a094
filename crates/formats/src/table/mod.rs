//! The common table interface: every format reads and writes table rows the same way.
//!
//! A row is its values in the table schema's column order plus its [`RowPosition`] (table
//! index, row and range index, key switch: the system attributes of YT's job protocol). Rows
//! are read as borrowed views ([`RowRef`], one [`ValueRef`] per column; composite values as
//! binary YSON, YT's own convention) so a reader allocates nothing per field, and written
//! from views or owned [`Value`]s.
//!
//! Each format keeps its own low-level API (its fast path); the types here are the one way to
//! reach every format alike, used by the CLI and the lab. This module names no format: the
//! registry (`crate::registry`) opens any of them over a reader or writer.
//!
//! # The value convention of a row
//! For a column of type `T`, the [`ValueRef`] of a value `v` is:
//! - `Null` when `v` is `Value::Null` (an absent optional, `null`, `void`);
//! - the scalar itself (`Bool`, `Int64`, `Uint64`, `Double`, `String`) when `T` is a primitive
//!   or decimal, or an optional of one (decimals and uuids as their binary bytes);
//! - `Any(bytes)` of the node's binary YSON when `T` is `yson` or `optional<yson>`;
//! - otherwise `Composite(bytes)`: the binary YSON of [`value_to_node`] of `v` and `T`
//!   (structs as maps, [`StructForm::Named`]); readers accept any form `value_from_node` does.
//!
//! [`value_to_node`]: shapeshift_types::value_to_node
//! [`StructForm::Named`]: shapeshift_types::StructForm::Named

use std::fmt;

use shapeshift_types::{Value, ValueRef};

pub(crate) mod framing;
pub(crate) mod other_columns;
pub(crate) mod position;
pub(crate) mod row_arena;
pub(crate) mod row_refs;
pub(crate) mod scanned_cell;
mod shared_output;
mod source_input;
pub(crate) mod values;
pub(crate) mod yson_binary;

pub use shared_output::SharedOutput;
pub use source_input::SourceInput;
pub use values::{value_from_ref, OwnedRefs};

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

/// Consecutive rows of one table read at once, as borrowed views: `values` holds `columns`
/// values per row, row after row.
///
/// A block never spans a change of position other than counting on: every row after the
/// first is in the first row's table and range, has no key switch, and its row index is the
/// previous row's plus one (or absent, when the first row's is).
#[derive(Clone, Copy, Debug)]
pub struct RowBlock<'a> {
    /// The first row's position; the others follow from it (see [`RowBlock::position`]).
    pub first: RowPosition,
    /// Rows in the block (at least one).
    pub rows: usize,
    /// Values per row: the table schema's column count.
    pub columns: usize,
    /// `rows * columns` values, row after row.
    pub values: &'a [ValueRef<'a>],
}

impl<'a> RowBlock<'a> {
    /// A block of the one row `row`.
    pub fn of_row(row: RowRef<'a>) -> RowBlock<'a> {
        RowBlock {
            first: row.position,
            rows: 1,
            columns: row.values.len(),
            values: row.values,
        }
    }

    /// The position of row `i` (0-based in the block).
    pub fn position(&self, i: usize) -> RowPosition {
        if i == 0 {
            return self.first;
        }
        RowPosition {
            row_index: self
                .first
                .row_index
                .and_then(|index| index.checked_add(i as i64)),
            key_switch: false,
            ..self.first
        }
    }

    /// The values of row `i` (0-based in the block), in schema order.
    ///
    /// # Panics
    /// When `i >= self.rows`.
    #[inline]
    pub fn values_of(&self, i: usize) -> &'a [ValueRef<'a>] {
        &self.values[i * self.columns..(i + 1) * self.columns]
    }

    /// Row `i` (0-based in the block).
    ///
    /// # Panics
    /// When `i >= self.rows`.
    pub fn row(&self, i: usize) -> RowRef<'a> {
        RowRef {
            position: self.position(i),
            values: self.values_of(i),
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowRef<'a>> + '_ {
        (0..self.rows).map(|i| self.row(i))
    }
}

/// Reads rows of one stream.
pub trait RowSource {
    /// The next row, or `None` at the end of the stream.
    ///
    /// # Errors
    /// A [`FormatError`] naming the format, position and problem for malformed input.
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError>;

    /// The next rows as one block, as many as the reader has ready (at least one), or `None`
    /// at the end of the stream. Reading a stream by blocks gives the same rows and positions
    /// as reading it by [`RowSource::next_row`]; the two may be mixed.
    ///
    /// A reader whose rows are decoded in runs (a transposed Arrow chunk, a buffer of scanned
    /// rows) hands a run out at once and saves the per-row call. When input goes bad in the
    /// middle of a run, the rows before the fault come first and the error on the next call,
    /// so no good row is lost and no bad one is returned. The default is a block of one row.
    /// Like [`RowSource::next_row`], a block leaves out the columns a row carries outside its
    /// schema ([`RowSource::next_row_with_other_columns`] gives those).
    ///
    /// # Errors
    /// As [`RowSource::next_row`].
    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        Ok(self.next_row()?.map(RowBlock::of_row))
    }

    /// The next row and the columns it carries outside its table's (non-strict) schema: a
    /// binary YSON map, `None` when there are none. [`RowSource::next_row`] gives the same
    /// row without them; a conversion ([`copy_rows`]) reads rows this way so nothing is lost.
    ///
    /// The default is for formats whose rows hold only the schema's columns.
    ///
    /// # Errors
    /// As [`RowSource::next_row`].
    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        Ok(self.next_row()?.map(|row| (row, None)))
    }
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

    /// Writes one row and the columns it carries outside its table's schema
    /// (`other_columns`: a YSON map, as [`RowSource::next_row_with_other_columns`] gives it).
    ///
    /// The default is for formats that cannot carry such columns: it refuses a row with any,
    /// naming the first, rather than drop them.
    ///
    /// # Errors
    /// As [`RowSink::write_row`]; also when `other_columns` is not a YSON map, names a column
    /// of the schema, the schema is strict, or the format has no place for them.
    fn write_row_with_other_columns(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        other_columns: Option<&[u8]>,
    ) -> Result<(), FormatError> {
        if let Some(bytes) = other_columns {
            other_columns::refuse("this format", bytes)?;
        }
        self.write_row(position, values)
    }

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

impl FormatError {
    /// An error of `format` with no position yet.
    #[cold]
    pub fn new(format: &'static str, message: impl Into<String>) -> FormatError {
        FormatError {
            format,
            offset: None,
            row: None,
            message: message.into(),
        }
    }

    /// The same error at byte `offset` of the input.
    pub fn at(mut self, offset: u64) -> FormatError {
        self.offset = Some(offset);
        self
    }

    /// The same error in row `row` (0-based), unless it already names one.
    pub fn in_row(mut self, row: u64) -> FormatError {
        if self.row.is_none() {
            self.row = Some(row);
        }
        self
    }

    /// An I/O error of `format`.
    #[cold]
    pub fn io(format: &'static str, error: &std::io::Error) -> FormatError {
        FormatError::new(format, format!("I/O error: {error}"))
    }
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

/// Copies every row of `source` into `sink`, with the columns rows carry outside their
/// schema, then finishes the sink; returns the row count.
///
/// # Errors
/// The first error of either side, with the row number (a sink that cannot carry a row's
/// other columns fails, naming the column).
pub fn copy_rows(source: &mut dyn RowSource, sink: &mut dyn RowSink) -> Result<u64, FormatError> {
    let mut rows = 0u64;
    while let Some((row, other_columns)) = source.next_row_with_other_columns()? {
        sink.write_row_with_other_columns(&row.position, row.values, other_columns)
            .map_err(|e| e.in_row(rows))?;
        rows += 1;
    }
    sink.finish()?;
    Ok(rows)
}
