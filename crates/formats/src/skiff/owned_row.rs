//! Owned rows: what a reader gives when asked to copy a row out, and what a writer takes.
//! Plain data apart from both, so the reader and the writer do not import each other.

use shapeshift_types::Value;

/// The system fields of a row (those its table's schema has).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemFields {
    /// `$key_switch`: the row starts a new key (reduce jobs).
    pub key_switch: bool,
    /// `$row_index`, resolved (a "previous + 1" tag becomes the number).
    pub row_index: Option<i64>,
    /// `$range_index`.
    pub range_index: Option<i64>,
    /// `$sparse_columns`: `(index among the sparse columns, value)` in wire order.
    pub sparse: Vec<(u16, Value)>,
    /// `$other_columns`: the YSON map of columns the schema does not name, as its bytes.
    pub other_columns: Option<Vec<u8>>,
}

/// An owned row: its table, its data columns' values in schema order, and its system fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnedRow {
    pub table_index: u16,
    pub values: Vec<Value>,
    pub system: SystemFields,
}
