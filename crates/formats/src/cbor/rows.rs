//! CBOR rows through the common interface: the tree codec's shared row adapter
//! ([`crate::tree::rows`]) spelled in [`Cbor`].

use std::io::{Read, Write};

use shapeshift_types::TableSchema;

use super::Cbor;
use crate::table::{FormatError, RowSink, RowSource, SourceInput};
use crate::tree::rows::{compile_tables, TreeSink, TreeSource, TreeTables};

pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    source_over(compile_tables(schemas), input.into())
}

pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    sink_over(compile_tables(schemas), output)
}

/// [`source`] over tables compiled once.
///
/// # Errors
/// As [`source`].
pub(crate) fn source_over(
    tables: TreeTables,
    input: SourceInput,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(TreeSource::<Cbor>::open(tables, input)?))
}

/// [`sink`] over tables compiled once.
///
/// # Errors
/// As [`sink`].
pub(crate) fn sink_over(
    tables: TreeTables,
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(TreeSink::<Cbor>::new(tables, output)))
}
