//! MessagePack rows through the common interface: the tree codec's shared row adapter
//! ([`crate::tree::rows`]) spelled in [`MsgPack`].

use std::io::Write;

use super::MsgPack;
use crate::table::{FormatError, RowSink, RowSource, SourceInput};
use crate::tree::rows::{TreeSink, TreeSource, TreeTables};

/// A source of rows of `tables` (compiled by `compile_tables`) over `input`.
///
/// # Errors
/// None today; kept fallible for the constructor shape.
pub(crate) fn source_over(
    tables: TreeTables,
    input: SourceInput,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(TreeSource::<MsgPack>::open(tables, input)?))
}

/// A sink of rows of `tables` (compiled by `compile_tables`) into `output`.
///
/// # Errors
/// None today; kept fallible for the constructor shape.
pub(crate) fn sink_over(
    tables: TreeTables,
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(TreeSink::<MsgPack>::new(tables, output)))
}
