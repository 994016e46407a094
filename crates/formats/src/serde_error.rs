//! The error of the serde data formats (MessagePack, CBOR, and the schema formats' typed
//! paths): what went wrong and, when reading, at which byte. A leaf: it imports nothing of
//! the crate.

use std::fmt;

use serde::{de, ser};

/// A failure to write a value or to read one: what went wrong and, when reading, where.
/// (Boxed: a result's error stays one pointer wide on the decoder's hot path.)
#[derive(Debug, Clone, PartialEq)]
pub struct SerdeError(Box<ErrorDetail>);

#[derive(Debug, Clone, PartialEq)]
struct ErrorDetail {
    format: &'static str,
    offset: Option<usize>,
    /// The member path inside the value (`media.persons`), empty at the top.
    path: String,
    message: String,
}

impl SerdeError {
    pub(crate) fn new(format: &'static str, offset: Option<usize>, message: String) -> SerdeError {
        SerdeError(Box::new(ErrorDetail {
            format,
            offset,
            path: String::new(),
            message,
        }))
    }

    /// The format's name.
    pub fn format(&self) -> &'static str {
        self.0.format
    }

    /// Byte offset in the input of the item that failed (reading only).
    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The struct members, dict keys or values the failing value sits in (`media.persons`);
    /// empty when it is the whole value or the format does not track it.
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// The same error one member further out: inside member `name`.
    #[cold]
    pub(crate) fn in_member(mut self, name: &str) -> SerdeError {
        self.0.path = match self.0.path.is_empty() {
            true => name.to_owned(),
            false => format!("{name}.{}", self.0.path),
        };
        self
    }

    /// The same error in `format`, at `at` unless it has an offset already.
    pub(crate) fn located(mut self, format: &'static str, at: Option<usize>) -> SerdeError {
        self.0.format = format;
        self.0.offset = self.0.offset.or(at);
        self
    }
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.0.format)?;
        if let Some(offset) = self.0.offset {
            write!(f, "at byte {offset}: ")?;
        }
        if !self.0.path.is_empty() {
            write!(f, "{}: ", self.0.path)?;
        }
        write!(f, "{}", self.0.message)
    }
}

impl std::error::Error for SerdeError {}

impl ser::Error for SerdeError {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> SerdeError {
        SerdeError::new("", None, message.to_string())
    }
}

impl de::Error for SerdeError {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> SerdeError {
        SerdeError::new("", None, message.to_string())
    }
}

#[cold]
pub(crate) fn error(message: impl Into<String>) -> SerdeError {
    SerdeError::new("", None, message.into())
}
