//! Thrift (binary and compact protocols): round trips, corruption, compatibility with the
//! Apache Thrift library (the `thrift` crate) both ways.

mod compatibility;
mod corruption;
mod roundtrip;
mod serde;

use shapeshift_formats::table::{FormatError, RowSink, RowSource};
use shapeshift_formats::thrift::{self, Protocol};
use shapeshift_types::TableSchema;

use crate::support::{SinkFn, SourceFn};

/// Both protocols.
pub const PROTOCOLS: [Protocol; 2] = [Protocol::Binary, Protocol::Compact];

fn binary_sink(
    s: &[TableSchema],
    o: Box<dyn std::io::Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    thrift::rows::sink(s, o, Protocol::Binary)
}
fn compact_sink(
    s: &[TableSchema],
    o: Box<dyn std::io::Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    thrift::rows::sink(s, o, Protocol::Compact)
}
fn binary_source(
    s: &[TableSchema],
    i: Box<dyn std::io::Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    thrift::rows::source(s, i, Protocol::Binary)
}
fn compact_source(
    s: &[TableSchema],
    i: Box<dyn std::io::Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    thrift::rows::source(s, i, Protocol::Compact)
}

/// The row interface's writer and reader of `protocol`.
pub fn ends(protocol: Protocol) -> (SinkFn, SourceFn) {
    match protocol {
        Protocol::Binary => (binary_sink, binary_source),
        Protocol::Compact => (compact_sink, compact_source),
    }
}
