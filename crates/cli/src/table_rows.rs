//! Table schemas for the commands that read or write typed rows.

use std::path::Path;

use shapeshift_formats::yson;
use shapeshift_types::TableSchema;

/// Reads a table schema in YT's YSON form (text or binary) from `path`.
///
/// # Errors
/// A message naming the file and what is wrong with it.
pub fn read_schema(path: &Path) -> Result<TableSchema, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let node = yson::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    TableSchema::from_node(&node)
        .map_err(|e| format!("{}: not a table schema: {e}", path.display()))
}
