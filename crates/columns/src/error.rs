//! The one error type of the columns layer. Every decoding error names the absolute byte
//! offset in the column where the problem was found.

/// What went wrong while encoding or reading a column.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// The column ends before a structure that must be there.
    #[error("column truncated at byte {offset}: needed {needed} more bytes for {what}")]
    Truncated {
        offset: usize,
        needed: usize,
        what: &'static str,
    },
    /// A field holds a value the format does not allow.
    #[error("column corrupt at byte {offset}: {what}")]
    Corrupt { offset: usize, what: String },
    /// Stored and computed checksums differ.
    #[error(
        "checksum mismatch in {region} at byte {offset}: stored {stored:#010x}, computed {computed:#010x}"
    )]
    Checksum {
        region: &'static str,
        offset: usize,
        stored: u32,
        computed: u32,
    },
    /// The caller asked for values of another type than the column holds.
    #[error("the column holds {stored} values, not {requested}")]
    TypeMismatch {
        stored: &'static str,
        requested: &'static str,
    },
    /// A row index past the end of the column.
    #[error("row {index} is out of range for a column of {len} values")]
    IndexOutOfRange { index: u64, len: u64 },
    /// `take` needs indices in non-decreasing order.
    #[error("indices must be sorted: position {position} holds {index}, after {previous}")]
    UnsortedIndices {
        position: usize,
        index: u64,
        previous: u64,
    },
    /// Bad encode options (for example a block size that is not supported).
    #[error("invalid option: {0}")]
    InvalidOption(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn corrupt(offset: usize, what: impl Into<String>) -> Error {
    Error::Corrupt {
        offset,
        what: what.into(),
    }
}
