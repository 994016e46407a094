//! The one error type of the Skiff module: what went wrong, and where.

use std::fmt;

/// What kind of failure a [`SkiffError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkiffErrorKind {
    /// A Skiff schema or format description is invalid (bad node, missing or cyclic reference).
    Schema,
    /// A table schema cannot be mapped, or does not fit the Skiff schema it is paired with.
    Mapping,
    /// The input ended inside a row.
    Truncated,
    /// The input holds bytes the schema does not allow (bad tag, boolean other than 0/1, ...).
    Corrupt,
    /// A value given to the writer does not fit its column.
    Value,
    /// An I/O error from the underlying reader or writer.
    Io,
}

/// A Skiff error: its kind, where it happened (byte offset, row, column) and what was expected.
///
/// Displays as `skiff: at byte 1234, row 7, column 'x': expected variant8 tag 0..1, got 5`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkiffError {
    pub kind: SkiffErrorKind,
    /// Byte offset in the input (from the start of the stream) where the bad item starts.
    pub offset: Option<u64>,
    /// Zero-based row number in the stream.
    pub row: Option<u64>,
    /// The top-level column (or system field) being read or written.
    pub column: Option<String>,
    pub message: String,
}

impl SkiffError {
    #[cold]
    pub(crate) fn new(kind: SkiffErrorKind, message: impl Into<String>) -> SkiffError {
        SkiffError {
            kind,
            offset: None,
            row: None,
            column: None,
            message: message.into(),
        }
    }

    #[cold]
    pub(crate) fn schema(message: impl Into<String>) -> SkiffError {
        SkiffError::new(SkiffErrorKind::Schema, message)
    }

    #[cold]
    pub(crate) fn mapping(message: impl Into<String>) -> SkiffError {
        SkiffError::new(SkiffErrorKind::Mapping, message)
    }

    #[cold]
    pub(crate) fn value(message: impl Into<String>) -> SkiffError {
        SkiffError::new(SkiffErrorKind::Value, message)
    }

    pub(crate) fn at(mut self, offset: u64) -> SkiffError {
        self.offset = Some(offset);
        self
    }

    pub(crate) fn in_row(mut self, row: u64) -> SkiffError {
        self.row = Some(row);
        self
    }

    pub(crate) fn in_column(mut self, column: &str) -> SkiffError {
        if self.column.is_none() {
            self.column = Some(column.to_owned());
        }
        self
    }
}

impl fmt::Display for SkiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("skiff: ")?;
        let mut wrote_place = false;
        if let Some(offset) = self.offset {
            write!(f, "at byte {offset}")?;
            wrote_place = true;
        }
        if let Some(row) = self.row {
            if wrote_place {
                f.write_str(", ")?;
            }
            write!(f, "row {row}")?;
            wrote_place = true;
        }
        if let Some(column) = &self.column {
            if wrote_place {
                f.write_str(", ")?;
            }
            write!(f, "column '{column}'")?;
            wrote_place = true;
        }
        if wrote_place {
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SkiffError {}

impl From<std::io::Error> for SkiffError {
    fn from(error: std::io::Error) -> SkiffError {
        SkiffError::new(SkiffErrorKind::Io, error.to_string())
    }
}
