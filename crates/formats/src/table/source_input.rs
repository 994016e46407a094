//! What a source reads: a stream, read in chunks into a buffer of the source's own, or bytes
//! already in memory, which the source reads in place (no buffer to allocate, zero and copy
//! into: most of opening a source for one small message).

use std::io::{Cursor, Read};

/// The input of a row source.
pub enum SourceInput {
    Stream(Box<dyn Read>),
    /// The whole input. No record length limit applies: the bytes are already in memory,
    /// and nothing is allocated by a length they declare.
    Bytes(Vec<u8>),
}

impl SourceInput {
    /// The input as a stream (bytes through a cursor), for readers without an in-place path.
    pub fn into_reader(self) -> Box<dyn Read> {
        match self {
            SourceInput::Stream(reader) => reader,
            SourceInput::Bytes(bytes) => Box::new(Cursor::new(bytes)),
        }
    }
}

impl From<Box<dyn Read>> for SourceInput {
    fn from(reader: Box<dyn Read>) -> SourceInput {
        SourceInput::Stream(reader)
    }
}

impl From<Vec<u8>> for SourceInput {
    fn from(bytes: Vec<u8>) -> SourceInput {
        SourceInput::Bytes(bytes)
    }
}
