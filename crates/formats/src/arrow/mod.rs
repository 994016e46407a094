//! Arrow IPC streams of table rows: record batches of N rows, one IPC stream per run of a
//! table (a table switch ends the stream and starts a new one with its schema message, as
//! YT's Arrow format does), low-cardinality string columns as dictionaries.
//!
//! Layers:
//! - [`arrow_schema`], [`rows_to_batch`], [`batch_to_rows`]: the type mapping
//!   (docs/formats/arrow.md) between a [`TableSchema`] with rows and an Arrow
//!   schema with record batches;
//! - [`BatchReader`] / [`BatchWriter`]: the stream, batch by batch (the columnar fast path)
//!   and row by row (the common [`RowSource`] / [`RowSink`] interface; rows are views of the
//!   current batch, composite values transcoded to binary YSON).
//!
//! Stream invariants:
//! - Each IPC stream's schema carries the table index in its metadata (`yt.table_index`)
//!   and, for every column, the full YT type (`yt.type_v3`, binary YSON in hex is not
//!   needed: the canonical text YSON).
//! - Row positions travel as system columns `$row_index`, `$range_index` (nullable Int64)
//!   and `$key_switch` (Boolean), present in a stream only when some row of its first batch
//!   has a position; a later batch that needs them starts a new stream.
//! - A string/utf8 column (or optional of one) is dictionary-encoded for the whole stream
//!   when at most a quarter of the first batch's first 1024 values are distinct.
//! - Reading checks every stream's schema against the expected one (dictionary encoding
//!   aside) before any value is read; the IPC decoder bounds allocations by the input.

use std::cell::RefCell;

use arrow_schema::{ArrowError, DataType, Field, Schema};
use shapeshift_types::{PrimitiveType, TableSchema, Type};

use crate::table::FormatError;
use crate::yson::{self, YsonFormat};

mod columns;
mod composite_yson;
mod dictionary;
pub mod rows;

pub(crate) const FORMAT: &str = "arrow";
pub(crate) const TABLE_INDEX_KEY: &str = "yt.table_index";
pub(crate) const ROW_INDEX: &str = "$row_index";
pub(crate) const RANGE_INDEX: &str = "$range_index";
pub(crate) const KEY_SWITCH: &str = "$key_switch";

/// Tables at most this wide are viewed one row at a time (the row's views stay in L1 and
/// the per-value match predicts well); wider ones a chunk of rows at a time, column by
/// column (BM1's 1000 columns: one tight loop per column). Chosen by A/B runs of the row-format
/// benchmark (`shapeshift bench formats`).
pub(crate) const ROW_AT_A_TIME_MAX_COLUMNS: usize = 32;

/// The largest message header (flatbuffer) read; real ones are a few KiB.
pub(crate) const MAX_METADATA_BYTES: u32 = 64 << 20;
/// Bytes reserved up front for a message body (larger bodies grow as they arrive).
pub(crate) const PREALLOCATE_BODY_BYTES: u64 = 64 << 20;

/// Rows per record batch written by [`BatchWriter`] unless set otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 8192;

pub(crate) fn error(
    offset: Option<u64>,
    row: Option<u64>,
    message: impl Into<String>,
) -> FormatError {
    FormatError {
        format: FORMAT,
        offset,
        row,
        message: message.into(),
    }
}

/// Table schemas derived lately, and their Arrow schemas (most recent last).
const DERIVED_KEPT: usize = 8;

thread_local! {
    /// Writing or reading a stream of a few rows derived its table's Arrow schema per call,
    /// more than once (perf: a quarter of a one-row message's time, most of it in the YT
    /// types' YSON for the fields' metadata); a derived schema is kept per thread instead.
    static DERIVED: RefCell<Vec<(TableSchema, Schema)>> = const { RefCell::new(Vec::new()) };
}

/// The Arrow schema of a table (no system columns, no dictionaries): one field per column,
/// with the column's YT type in the field metadata `yt.type_v3`.
pub fn arrow_schema(schema: &TableSchema) -> Schema {
    let kept = DERIVED.with(|derived| {
        let derived = derived.borrow();
        let found = derived.iter().rev().find(|(table, _)| table == schema);
        found.map(|(_, arrow)| arrow.clone())
    });
    if let Some(arrow) = kept {
        return arrow;
    }
    let arrow = derive_arrow_schema(schema);
    DERIVED.with(|derived| {
        let mut derived = derived.borrow_mut();
        if derived.len() == DERIVED_KEPT {
            derived.remove(0);
        }
        derived.push((schema.clone(), arrow.clone()));
    });
    arrow
}

fn derive_arrow_schema(schema: &TableSchema) -> Schema {
    Schema::new(
        schema
            .columns
            .iter()
            .map(|c| {
                let field = columns::field(&c.name, &c.ty);
                let mut metadata = field.metadata().clone();
                metadata.insert(
                    "yt.type_v3".to_owned(),
                    String::from_utf8_lossy(&yson::to_vec(&c.ty.to_node(), YsonFormat::Text))
                        .into_owned(),
                );
                field.with_metadata(metadata)
            })
            .collect::<Vec<Field>>(),
    )
}

/// The table schema an Arrow schema was written from: each field's `yt.type_v3`, or for a
/// field without one (a stream of another writer) the YT type of its plain Arrow type
/// (integers, floats, boolean, binary/utf8, date32, timestamps, durations, lists, structs;
/// nullable fields as optionals). The system columns are left out.
///
/// # Errors
/// A field whose `yt.type_v3` does not parse, or whose Arrow type has no YT counterpart.
pub fn table_schema_of(schema: &Schema) -> Result<TableSchema, FormatError> {
    let mut columns = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        if [ROW_INDEX, RANGE_INDEX, KEY_SWITCH].contains(&field.name().as_str()) {
            continue;
        }
        let ty = yt_type_of_field(field)
            .map_err(|e| error(None, None, format!("column {:?}: {e}", field.name())))?;
        columns.push(shapeshift_types::ColumnSchema::new(field.name(), ty));
    }
    Ok(TableSchema::new(columns))
}

fn yt_type_of_field(field: &Field) -> Result<Type, String> {
    if let Some(text) = field.metadata().get("yt.type_v3") {
        let node = yson::from_slice(text.as_bytes()).map_err(|e| format!("yt.type_v3: {e}"))?;
        return Type::from_node(&node).map_err(|e| format!("yt.type_v3: {e}"));
    }
    let item = yt_type_of_arrow(strip_dictionary(field.data_type()))?;
    Ok(if field.is_nullable() && !item.is_nullable() {
        Type::optional(item)
    } else {
        item
    })
}

fn yt_type_of_arrow(data_type: &DataType) -> Result<Type, String> {
    use arrow_schema::TimeUnit;
    use PrimitiveType as P;
    let p = |p: P| Ok(Type::Primitive(p));
    match data_type {
        DataType::Null => p(P::Null),
        DataType::Boolean => p(P::Bool),
        DataType::Int8 => p(P::Int8),
        DataType::Int16 => p(P::Int16),
        DataType::Int32 => p(P::Int32),
        DataType::Int64 => p(P::Int64),
        DataType::UInt8 => p(P::Uint8),
        DataType::UInt16 => p(P::Uint16),
        DataType::UInt32 => p(P::Uint32),
        DataType::UInt64 => p(P::Uint64),
        DataType::Float32 => p(P::Float),
        DataType::Float64 => p(P::Double),
        DataType::Binary | DataType::LargeBinary => p(P::String),
        DataType::Utf8 | DataType::LargeUtf8 => p(P::Utf8),
        DataType::Date32 => p(P::Date32),
        DataType::Timestamp(TimeUnit::Second, _) => p(P::Datetime64),
        DataType::Timestamp(TimeUnit::Microsecond, _) => p(P::Timestamp64),
        DataType::Duration(TimeUnit::Microsecond) => p(P::Interval64),
        DataType::List(item) => Ok(Type::list(yt_type_of_field(item)?)),
        DataType::Struct(fields) => Ok(Type::Struct(
            fields
                .iter()
                .map(|f| {
                    Ok(shapeshift_types::Member::new(
                        f.name(),
                        yt_type_of_field(f)?,
                    ))
                })
                .collect::<Result<_, String>>()?,
        )),
        other => Err(format!(
            "Arrow type {other} has no YT type here (and no yt.type_v3)"
        )),
    }
}

/// The tables of a sequence of Arrow IPC streams, in stream order: each stream's table
/// index (`yt.table_index`, 0 when absent) and table schema ([`table_schema_of`]). Record
/// batches are skipped unread.
///
/// # Errors
/// A [`FormatError`] with the byte offset of a malformed or truncated message.
pub fn stream_tables(bytes: &[u8]) -> Result<Vec<(usize, TableSchema)>, FormatError> {
    let mut tables = Vec::new();
    let mut at = 0usize;
    let fail = |offset: usize, message: String| error(Some(offset as u64), None, message);
    let word = |at: usize| -> Option<u32> {
        bytes
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    while at < bytes.len() {
        let start = at;
        let mut len =
            word(at).ok_or_else(|| fail(start, "input ends inside a message length".into()))?;
        at += 4;
        if len == u32::MAX {
            len =
                word(at).ok_or_else(|| fail(start, "input ends inside a message length".into()))?;
            at += 4;
        }
        if len == 0 {
            continue;
        }
        let metadata = bytes.get(at..at + len as usize).ok_or_else(|| {
            fail(
                start,
                format!("input ends inside a message header of {len} bytes"),
            )
        })?;
        at += len as usize;
        let message = arrow_ipc::root_as_message(metadata)
            .map_err(|e| fail(start, format!("malformed message header: {e}")))?;
        let body = usize::try_from(message.bodyLength())
            .ok()
            .filter(|b| *b <= bytes.len() - at)
            .ok_or_else(|| {
                fail(
                    start,
                    format!(
                        "message body of {} bytes past the input",
                        message.bodyLength()
                    ),
                )
            })?;
        at += body;
        if let Some(schema) = message.header_as_schema() {
            let schema = guarded(|| Ok(arrow_ipc::convert::fb_to_schema(schema)))
                .map_err(|e| fail(start, e.to_string()))?;
            let table_index = match schema.metadata().get(TABLE_INDEX_KEY) {
                None => 0,
                Some(text) => text
                    .parse::<usize>()
                    .map_err(|_| fail(start, format!("bad {TABLE_INDEX_KEY} {text:?}")))?,
            };
            let table = table_schema_of(&schema).map_err(|e| FormatError {
                offset: Some(start as u64),
                ..e
            })?;
            tables.push((table_index, table));
        }
    }
    Ok(tables)
}

pub(crate) fn strip_dictionary(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::Dictionary(_, values) => values,
        other => other,
    }
}

/// Runs the third-party decoder, turning a panic on hostile input into an error.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, ArrowError>) -> Result<T, ArrowError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "decoder panicked".to_owned());
        Err(ArrowError::IpcError(format!("malformed stream: {message}")))
    })
}

#[cfg(test)]
mod tests {
    use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type};

    use super::{arrow_schema, derive_arrow_schema, DERIVED_KEPT};

    /// Tables that differ only inside a column's type, more of them than are kept.
    fn tables() -> Vec<TableSchema> {
        let mut ty = Type::Primitive(PrimitiveType::Int64);
        (0..DERIVED_KEPT + 3)
            .map(|i| {
                ty = if i % 2 == 0 {
                    Type::List(Box::new(ty.clone()))
                } else {
                    Type::Optional(Box::new(ty.clone()))
                };
                TableSchema::new(vec![ColumnSchema::new("a", ty.clone())])
            })
            .collect()
    }

    #[test]
    fn a_kept_schema_is_the_one_its_table_derives() {
        let tables = tables();
        // Forward, backward and forward again, past the number kept: each call gives its
        // own table's.
        let order = (0..tables.len())
            .chain((0..tables.len()).rev())
            .chain(0..tables.len());
        for i in order {
            let table = &tables[i];
            assert_eq!(arrow_schema(table), derive_arrow_schema(table), "table {i}");
        }
        let fields: Vec<_> = tables
            .iter()
            .map(|t| arrow_schema(t).field(0).clone())
            .collect();
        for (i, a) in fields.iter().enumerate() {
            for b in &fields[i + 1..] {
                assert_ne!(a, b, "tables of different types share an Arrow field");
            }
        }
    }
}
