//! Table rows between YSON's untyped form (a map per row, control entities between rows) and
//! typed rows (values in schema order, as Skiff carries them).
//!
//! A YSON row may name columns the schema lacks: a non-strict schema keeps them in
//! `$other_columns` (a binary YSON map), a strict one refuses the row. A column the row lacks
//! is null, which only a nullable column accepts. Nothing is dropped silently.

use std::path::Path;

use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{
    value_from_node, value_to_node, Node, NodeValue, StructForm, TableSchema, Value,
};

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

/// The typed values of a YSON row map, in schema order, and the bytes of the columns the
/// schema does not name (a binary YSON map), if any.
///
/// # Errors
/// A message naming the row and column when a value does not fit its type, a non-nullable
/// column is missing, or a strict schema meets an unknown column.
pub fn row_from_node(
    row: &Node,
    schema: &TableSchema,
    row_number: u64,
) -> Result<(Vec<Value>, Option<Vec<u8>>), String> {
    let NodeValue::Map(entries) = &row.value else {
        return Err(format!(
            "row {row_number}: expected a map, found {}",
            row.kind()
        ));
    };
    let mut values = vec![None; schema.columns.len()];
    let mut others = Vec::new();
    for (key, node) in entries {
        let name = String::from_utf8_lossy(key);
        match schema.column_index(&name) {
            Some(index) => {
                let column = &schema.columns[index];
                let value = value_from_node(node, &column.ty)
                    .map_err(|e| format!("row {row_number}, column '{name}': {e}"))?;
                values[index] = Some(value);
            }
            None if schema.strict => {
                return Err(format!(
                    "row {row_number}: column '{name}' is not in the strict schema"
                ))
            }
            None => others.push((key.clone(), node.clone())),
        }
    }
    let values = values
        .into_iter()
        .zip(&schema.columns)
        .map(|(value, column)| match value {
            Some(value) => Ok(value),
            None if column.ty.is_nullable() => Ok(Value::Null),
            None => Err(format!(
                "row {row_number}: required column '{}' is missing",
                column.name
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let others = (!others.is_empty()).then(|| yson::to_vec(&Node::map(others), YsonFormat::Binary));
    Ok((values, others))
}

/// The YSON row map of typed `values` (schema order) plus the `other_columns` map, if any.
///
/// # Errors
/// A message naming the row and column when a value does not fit its column's type, or when
/// `other_columns` is not a YSON map.
pub fn row_to_node(
    values: &[Value],
    schema: &TableSchema,
    other_columns: Option<&[u8]>,
    row_number: u64,
) -> Result<Node, String> {
    let mut entries = Vec::with_capacity(values.len());
    for (value, column) in values.iter().zip(&schema.columns) {
        let node = value_to_node(value, &column.ty, StructForm::Named)
            .map_err(|e| format!("row {row_number}, column '{}': {e}", column.name))?;
        entries.push((column.name.as_bytes().to_vec(), node));
    }
    if let Some(bytes) = other_columns {
        let node = yson::from_slice(bytes)
            .map_err(|e| format!("row {row_number}, $other_columns: {e}"))?;
        match node.value {
            NodeValue::Map(more) => entries.extend(more),
            _ => return Err(format!("row {row_number}: $other_columns is not a map")),
        }
    }
    Ok(Node::new(NodeValue::Map(entries)))
}
