//! Columns a row carries outside its table's schema ("other columns"), so that nothing a
//! non-strict table holds is lost in a conversion.
//!
//! Through the common interface they travel as one binary YSON map per row (YT's own
//! convention: Skiff's `$other_columns` field is exactly that), next to the row's values:
//! [`RowSource::next_row_with_other_columns`](super::RowSource::next_row_with_other_columns)
//! and [`RowSink::write_row_with_other_columns`](super::RowSink::write_row_with_other_columns).
//!
//! Invariants of a map handed out: binary YSON spelled `{key=value;...;}` (so a YSON sink
//! can splice its entries into a row as they are); a map without attributes; it has at
//! least one entry (an empty map is no other columns, `None`); no key names a column of the
//! schema (the row would name a column twice) and the schema is not strict. A sink that has
//! no place for other columns refuses the row, naming the first such column.

use shapeshift_types::{Node, NodeValue, TableSchema};

use super::yson_binary;
use super::FormatError;

/// The entries of an other-columns map (binary or text YSON).
///
/// # Errors
/// A message when the bytes are not a YSON map without attributes.
pub(crate) fn entries(bytes: &[u8]) -> Result<Vec<(Vec<u8>, Node)>, String> {
    let node = crate::yson::from_slice(bytes).map_err(|e| format!("other columns: {e}"))?;
    match node.value {
        NodeValue::Map(entries) if node.attributes.is_empty() => Ok(entries),
        _ => Err("other columns: expected a YSON map without attributes".to_owned()),
    }
}

/// The entries of the other-columns map `bytes` of a row of `schema` (table `table`),
/// checked as [`normalize`] checks them: for sinks that spell the values themselves.
///
/// # Errors
/// As [`normalize`].
pub(crate) fn checked_entries(
    bytes: &[u8],
    schema: &TableSchema,
    table: usize,
) -> Result<Vec<(Vec<u8>, Node)>, String> {
    let entries = entries(bytes)?;
    write_checked(&entries, schema, table, &mut Vec::new())?;
    Ok(entries)
}

/// Checks the other-columns map `bytes` of a row of `schema` (table `table`) and writes it as
/// binary YSON into `out` (which stays empty for an empty map).
///
/// # Errors
/// A message naming the column when the schema is strict or names it too, or when the bytes
/// are not a YSON map.
pub(crate) fn normalize(
    bytes: &[u8],
    schema: &TableSchema,
    table: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let entries = entries(bytes)?;
    write_checked(&entries, schema, table, out)
}

/// [`normalize`] for entries already parsed.
///
/// # Errors
/// As [`normalize`].
pub(crate) fn write_checked(
    entries: &[(Vec<u8>, Node)],
    schema: &TableSchema,
    table: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if entries.is_empty() {
        return Ok(());
    }
    let start = out.len();
    out.push(b'{');
    for (key, value) in entries {
        let name = String::from_utf8_lossy(key);
        if schema.strict {
            out.truncate(start);
            return Err(format!(
                "column \"{name}\" is not in the strict schema of table {table}"
            ));
        }
        if schema
            .columns
            .iter()
            .any(|c| c.name.as_bytes() == key.as_slice())
        {
            out.truncate(start);
            return Err(format!(
                "column \"{name}\" appears both among the row's columns and its other columns"
            ));
        }
        yson_binary::string(out, key);
        out.push(b'=');
        yson_binary::node(out, value);
        out.push(b';');
    }
    out.push(b'}');
    Ok(())
}

/// The error of a sink of `format` that cannot carry the other columns `bytes`; `Ok` when
/// the map is empty.
///
/// # Errors
/// A [`FormatError`] naming the first column that would be lost.
pub(crate) fn refuse(format: &'static str, bytes: &[u8]) -> Result<(), FormatError> {
    let name = match entries(bytes) {
        Ok(entries) => match entries.first() {
            Some((key, _)) => String::from_utf8_lossy(key).into_owned(),
            None => return Ok(()),
        },
        Err(message) => return Err(FormatError::new(format, message)),
    };
    Err(FormatError::new(
        format,
        format!(
            "column \"{name}\" is not in the table schema, and {format} carries only the schema's \
             columns: it would be lost (declare the column in the schema)"
        ),
    ))
}
