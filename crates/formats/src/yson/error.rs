//! The one error type of YSON reading: where (byte offset) and what was expected.

use std::fmt;

/// A YSON input could not be read: truncated, garbled, too deep, or the underlying reader failed.
///
/// The message names what the parser expected and what it found; [`YsonError::offset`] is the
/// byte offset (from the start of the input) of the first byte that did not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YsonError {
    /// Boxed so that `Result<Event, YsonError>` stays small on the parser's hot path.
    inner: Box<(u64, String)>,
}

impl YsonError {
    /// An error at byte `offset` with a message saying what was expected.
    pub fn new(offset: u64, message: impl Into<String>) -> YsonError {
        YsonError {
            inner: Box::new((offset, message.into())),
        }
    }

    /// The byte offset, from the start of the input, where reading failed.
    pub fn offset(&self) -> u64 {
        self.inner.0
    }

    /// What went wrong, without the offset.
    pub fn message(&self) -> &str {
        &self.inner.1
    }
}

impl fmt::Display for YsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "YSON error at byte {}: {}", self.inner.0, self.inner.1)
    }
}

impl std::error::Error for YsonError {}

impl From<YsonError> for std::io::Error {
    fn from(error: YsonError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, error)
    }
}

/// How a byte is named in messages: printable ASCII quoted, the rest in hex.
pub(crate) fn describe_byte(byte: Option<u8>) -> String {
    match byte {
        None => "end of input".to_string(),
        Some(b) if (0x21..0x7f).contains(&b) => format!("'{}'", b as char),
        Some(b) => format!("byte 0x{b:02x}"),
    }
}
