//! CBOR rows through the common interface: the tree codec's shared row adapter
//! ([`crate::tree::rows`]) spelled in [`Cbor`].

use std::io::{Read, Write};

use shapeshift_types::TableSchema;

use super::Cbor;
use crate::table::{FormatError, RowSink, RowSource};
use crate::tree::rows::{TreeSink, TreeSource};

pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(TreeSource::<Cbor>::open(schemas, input)?))
}

pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(TreeSink::<Cbor>::new(schemas, output)))
}
