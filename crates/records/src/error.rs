//! Errors of the records layer: every one names the file and, for malformed content, the byte
//! offset where the problem was found.

use std::path::{Path, PathBuf};

/// What went wrong while reading or writing a record file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused an operation on the file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file's bytes do not follow the format (wrong magic, bad hash, truncation...).
    #[error("{path}: at byte {offset}: {what}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    /// A record index past the end of the file.
    #[error("{path}: record index {index} is out of range (the file has {num_records} records)")]
    OutOfRange {
        path: PathBuf,
        index: u64,
        num_records: u64,
    },
    /// An option string that does not parse or asks for something unsupported.
    #[error("invalid options {text:?}: {what}")]
    Options { text: String, what: String },
    /// The writer was used after it failed or was closed.
    #[error("{path}: {what}")]
    State { path: PathBuf, what: String },
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A format violation found while decoding, before the file name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    pub offset: u64,
    pub what: String,
}

impl Malformed {
    pub fn new(offset: u64, what: impl Into<String>) -> Self {
        Malformed {
            offset,
            what: what.into(),
        }
    }

    pub fn in_file(self, path: &Path) -> Error {
        Error::Corrupt {
            path: path.to_path_buf(),
            offset: self.offset,
            what: self.what,
        }
    }
}

pub(crate) fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}
