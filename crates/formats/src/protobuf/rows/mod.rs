//! Protobuf rows through the common interface, in YT's framing.
//!
//! Tables with a compiled message (the lab's, [`StaticMessage::for_schema`]) are read and
//! written by hand-compiled message codecs (`message_codecs.rs`, through `compiled.rs`) that
//! decode a message in one pass straight into the row's borrowed views and encode straight
//! from the row's values — the work prost's generated code does, minus the struct in between.
//! What those codecs do not accept (unusual field order, values out of range, corrupt input)
//! goes to the dynamic codec's general field table, which gives the same bytes, views and
//! errors. Any other table is read and written by the dynamic codec (`dynamic.rs`).

use std::io::{Read, Write};

use shapeshift_types::TableSchema;

use crate::protobuf::StaticMessage;
use crate::table::{FormatError, RowSink, RowSource, SourceInput};

mod compiled;
mod dynamic;
mod message_codecs;

pub(crate) use dynamic::FieldTables;

const FORMAT: &str = "protobuf";
/// The label of the dynamic format's errors (its registry name).
const DYNAMIC_FORMAT: &str = "protobuf-dynamic";

/// Reads framed rows of lab tables; a stream with any other table is read by the dynamic
/// codec (same layout, errors
/// labelled `protobuf`).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    match static_messages(schemas) {
        Some(messages) => Ok(compiled::source(schemas, &messages, input, FORMAT)),
        None => Ok(dynamic::source(dynamic::compile(schemas), input, FORMAT)),
    }
}

/// Writes framed rows of lab tables; a stream with any other table is written by the
/// dynamic codec (same layout, errors
/// labelled `protobuf`).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    match static_messages(schemas) {
        Some(messages) => Ok(compiled::sink(schemas, &messages, output, FORMAT)),
        None => Ok(dynamic::sink(dynamic::compile(schemas), output, FORMAT)),
    }
}

/// Reads framed row messages of any tables with the dynamic codec.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn dynamic_source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(dynamic::source(
        dynamic::compile(schemas),
        input,
        DYNAMIC_FORMAT,
    ))
}

/// Writes framed row messages of any tables with the dynamic codec.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn dynamic_sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(dynamic::sink(
        dynamic::compile(schemas),
        output,
        DYNAMIC_FORMAT,
    ))
}

/// The dynamic codec's tables of `schemas` compiled once, for many streams; `None` when the
/// `protobuf` format (`dynamic` false) reads and writes these tables with its static message
/// codecs, which compile nothing.
pub(crate) fn compile(schemas: &[TableSchema], dynamic: bool) -> Option<FieldTables> {
    (dynamic || static_messages(schemas).is_none()).then(|| dynamic::compile(schemas))
}

/// Each table's static message, when every table has one (the lab's tables).
fn static_messages(schemas: &[TableSchema]) -> Option<Vec<StaticMessage>> {
    schemas.iter().map(StaticMessage::for_schema).collect()
}

/// A source of framed rows over tables compiled once; errors name `protobuf-dynamic` when
/// `dynamic`, else `protobuf`.
pub(crate) fn source_over(
    tables: FieldTables,
    input: SourceInput,
    dynamic: bool,
) -> Box<dyn RowSource> {
    dynamic::source(tables, input, if dynamic { DYNAMIC_FORMAT } else { FORMAT })
}

/// A sink of framed rows over tables compiled once; errors named as [`source_over`]'s.
pub(crate) fn sink_over(
    tables: FieldTables,
    output: Box<dyn Write>,
    dynamic: bool,
) -> Box<dyn RowSink> {
    dynamic::sink(
        tables,
        output,
        if dynamic { DYNAMIC_FORMAT } else { FORMAT },
    )
}
