//! Arrow IPC streams of table rows: record batches of N rows, one IPC stream per run of a
//! table (a table switch ends the stream and starts a new one with its schema message, as
//! YT's Arrow format does), low-cardinality string columns as dictionaries.
//!
//! Layers:
//! - [`arrow_schema`], [`rows_to_batch`], [`batch_to_rows`]: the type mapping
//!   (docs/formats-protobuf-arrow-avro.md) between a [`TableSchema`] with rows and an Arrow
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

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use shapeshift_types::{PrimitiveType, TableSchema, Type, Value, ValueRef};

use crate::row_bridge::check_row;
use crate::table::{FormatError, RowBlock, RowPosition, RowRef, RowSink, RowSource};
use crate::yson::{self, YsonFormat};

mod columns;
mod composite_yson;
mod dictionary;
mod row_builders;
mod row_views;

use row_builders::ColumnBuilder;
use row_views::{ChunkViews, ColumnView};

const FORMAT: &str = "arrow";
const TABLE_INDEX_KEY: &str = "yt.table_index";
const ROW_INDEX: &str = "$row_index";
const RANGE_INDEX: &str = "$range_index";
const KEY_SWITCH: &str = "$key_switch";

/// Tables at most this wide are viewed one row at a time (the row's views stay in L1 and
/// the per-value match predicts well); wider ones a chunk of rows at a time, column by
/// column (BM1's 1000 columns: one tight loop per column). Chosen by A/B runs of the format
/// benchmark (docs/formats-protobuf-arrow-avro.md).
const ROW_AT_A_TIME_MAX_COLUMNS: usize = 32;

/// The largest message header (flatbuffer) read; real ones are a few KiB.
const MAX_METADATA_BYTES: u32 = 64 << 20;
/// Bytes reserved up front for a message body (larger bodies grow as they arrive).
const PREALLOCATE_BODY_BYTES: u64 = 64 << 20;

/// Rows per record batch written by [`BatchWriter`] unless set otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 8192;

fn error(offset: Option<u64>, row: Option<u64>, message: impl Into<String>) -> FormatError {
    FormatError {
        format: FORMAT,
        offset,
        row,
        message: message.into(),
    }
}

/// The Arrow schema of a table (no system columns, no dictionaries): one field per column,
/// with the column's YT type in the field metadata `yt.type_v3`.
pub fn arrow_schema(schema: &TableSchema) -> Schema {
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
            let schema = guarded(|| arrow_ipc::convert::try_fb_to_schema(schema))
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

/// A record batch of `rows` (schema order), with [`arrow_schema`]'s schema.
///
/// # Errors
/// When a value does not fit its column.
pub fn rows_to_batch(
    schema: &TableSchema,
    rows: &[Vec<Value>],
) -> Result<RecordBatch, FormatError> {
    for (i, row) in rows.iter().enumerate() {
        check_row(row, schema, FORMAT).map_err(|e| error(None, Some(i as u64), e.message))?;
    }
    let arrays = build_columns(schema, rows.iter().map(|r| r.as_slice()))?;
    RecordBatch::try_new_with_options(
        Arc::new(arrow_schema(schema)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
    .map_err(|e| error(None, None, e.to_string()))
}

fn build_columns<'r>(
    schema: &TableSchema,
    rows: impl Iterator<Item = &'r [Value]> + Clone,
) -> Result<Vec<ArrayRef>, FormatError> {
    schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let slots: Vec<Option<&Value>> = rows.clone().map(|r| Some(&r[i])).collect();
            columns::build(&c.ty, &slots)
                .map_err(|e| error(None, None, format!("column {:?}: {e}", c.name)))
        })
        .collect()
}

/// The rows of a batch with the table's columns (by position; extra system columns
/// `$row_index`, `$range_index`, `$key_switch` are ignored).
///
/// # Errors
/// When the batch's columns do not have the schema's types, or hold values out of range.
pub fn batch_to_rows(
    schema: &TableSchema,
    batch: &RecordBatch,
) -> Result<Vec<Vec<Value>>, FormatError> {
    let layout = Layout::new(schema, batch.schema().as_ref(), 0)?;
    (0..batch.num_rows())
        .map(|i| {
            schema
                .columns
                .iter()
                .zip(&layout.columns)
                .map(|(c, index)| {
                    columns::value_at(&c.ty, batch.column(*index).as_ref(), i).map_err(|e| {
                        error(None, Some(i as u64), format!("column {:?}: {e}", c.name))
                    })
                })
                .collect()
        })
        .collect()
}

/// Where a table's columns and the system columns are in a stream's batches.
#[derive(Clone, Debug)]
struct Layout {
    table_index: usize,
    columns: Vec<usize>,
    row_index: Option<usize>,
    range_index: Option<usize>,
    key_switch: Option<usize>,
}

fn strip_dictionary(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::Dictionary(_, values) => values,
        other => other,
    }
}

impl Layout {
    /// Checks a stream's schema against the table's and finds the columns.
    fn new(
        table: &TableSchema,
        stream: &Schema,
        table_index: usize,
    ) -> Result<Layout, FormatError> {
        let expected = arrow_schema(table);
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        for (i, f) in stream.fields().iter().enumerate() {
            by_name.insert(f.name().as_str(), i);
        }
        let mut columns = Vec::with_capacity(expected.fields().len());
        for (i, want) in expected.fields().iter().enumerate() {
            let found = stream
                .fields()
                .get(i)
                .filter(|f| f.name() == want.name())
                .map(|_| i);
            let index = found
                .or_else(|| by_name.get(want.name().as_str()).copied())
                .ok_or_else(|| {
                    error(
                        None,
                        None,
                        format!("stream has no column {:?}", want.name()),
                    )
                })?;
            let have = stream.field(index);
            if strip_dictionary(have.data_type()) != want.data_type() {
                return Err(error(
                    None,
                    None,
                    format!(
                        "column {:?} has Arrow type {} where {} is expected",
                        want.name(),
                        have.data_type(),
                        want.data_type()
                    ),
                ));
            }
            columns.push(index);
        }
        let system = |name: &str, data_type: DataType| -> Result<Option<usize>, FormatError> {
            match by_name.get(name) {
                Some(i) if stream.field(*i).data_type() == &data_type => Ok(Some(*i)),
                Some(_) => Err(error(
                    None,
                    None,
                    format!("system column {name} has a wrong type"),
                )),
                None => Ok(None),
            }
        };
        Ok(Layout {
            table_index,
            columns,
            row_index: system(ROW_INDEX, DataType::Int64)?,
            range_index: system(RANGE_INDEX, DataType::Int64)?,
            key_switch: system(KEY_SWITCH, DataType::Boolean)?,
        })
    }

    fn position(&self, batch: &RecordBatch, i: usize) -> RowPosition {
        let index_at = |column: Option<usize>| {
            column.and_then(|c| {
                let array = batch.column(c).as_primitive::<Int64Type>();
                (!array.is_null(i)).then(|| array.value(i))
            })
        };
        RowPosition {
            table_index: self.table_index,
            row_index: index_at(self.row_index),
            range_index: index_at(self.range_index),
            key_switch: self
                .key_switch
                .map(|c| {
                    let array = batch.column(c).as_boolean();
                    !array.is_null(i) && array.value(i)
                })
                .unwrap_or(false),
        }
    }
}

/// Bytes of the input for the decoder.
struct Piece {
    bytes: Buffer,
    /// Where the message they belong to starts in the input.
    offset: u64,
    /// An end-of-stream marker: once decoded, the stream must be complete.
    ends_stream: bool,
}

/// Reads a sequence of Arrow IPC streams (one per run of a table).
pub struct BatchReader {
    input: Box<dyn Read>,
    schemas: Vec<TableSchema>,
    decoder: StreamDecoder,
    /// Input bytes read so far (messages are read whole).
    offset: u64,
    /// Bytes read and not yet decoded: a message's head and body, or an end-of-stream mark.
    pieces: std::collections::VecDeque<Piece>,
    input_ended: bool,
    layout: Option<Layout>,
    /// The schema the layout was made for (one per stream).
    layout_schema: Option<SchemaRef>,
    batch: Option<RecordBatch>,
    next_row: usize,
    rows: u64,
    /// Views of the current chunk of rows of `batch`.
    views: ChunkViews,
    /// The layout has system columns (positions are read per row).
    positioned: bool,
    /// The current row's position: set once per batch when the rows carry none. Kept here
    /// rather than built in `next_row` because returning a position just assembled on the
    /// stack stalled every row on store forwarding (perf: about half of `next_row`'s samples
    /// on BM3 sat on that load).
    position: RowPosition,
}

impl BatchReader {
    pub fn new(schemas: &[TableSchema], input: Box<dyn Read>) -> BatchReader {
        BatchReader {
            input,
            schemas: schemas.to_vec(),
            decoder: StreamDecoder::new(),
            offset: 0,
            pieces: std::collections::VecDeque::new(),
            input_ended: false,
            layout: None,
            layout_schema: None,
            batch: None,
            next_row: 0,
            rows: 0,
            views: ChunkViews::default(),
            positioned: false,
            position: RowPosition::default(),
        }
    }

    fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads into `buf` until it is full or the input ends; the bytes read.
    fn read_up_to(&mut self, buf: &mut [u8]) -> Result<usize, FormatError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.input.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.fail(format!("read: {e}"))),
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Appends `len` bytes of input to `into`, which grows only as the input delivers them.
    fn read_exactly(
        &mut self,
        len: u64,
        into: &mut Vec<u8>,
        what: &str,
    ) -> Result<(), FormatError> {
        let start = self.offset;
        let read = (&mut self.input)
            .take(len)
            .read_to_end(into)
            .map_err(|e| self.fail(format!("read: {e}")))?;
        self.offset += read as u64;
        if (read as u64) < len {
            return Err(error(
                Some(self.offset),
                Some(self.rows),
                format!("input ends inside a {what} of {len} bytes that starts at byte {start}"),
            ));
        }
        Ok(())
    }

    fn fail(&self, message: impl Into<String>) -> FormatError {
        error(Some(self.offset()), Some(self.rows), message)
    }

    /// The next record batch and its table index; `None` at the end of the input.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset reached, for malformed or truncated streams
    /// and for schemas that do not match the table's.
    pub fn next_batch(&mut self) -> Result<Option<(usize, RecordBatch)>, FormatError> {
        loop {
            let Some(piece) = self.pieces.front_mut() else {
                if self.input_ended {
                    return Ok(None);
                }
                self.read_message()?;
                continue;
            };
            if !piece.bytes.is_empty() {
                let decoder = &mut self.decoder;
                let bytes = &mut piece.bytes;
                let start = piece.offset;
                match guarded(|| decoder.decode(bytes)) {
                    Ok(Some(batch)) => {
                        let table_index =
                            self.table_index_of(&batch.schema())
                                .map_err(|e| FormatError {
                                    offset: Some(start),
                                    ..e
                                })?;
                        return Ok(Some((table_index, batch)));
                    }
                    Ok(None) => {}
                    Err(e) => return Err(error(Some(start), Some(self.rows), e.to_string())),
                }
                continue;
            }
            let piece = self.pieces.pop_front().expect("the front piece");
            if piece.ends_stream {
                // A table switch follows, or the input ends.
                self.decoder.finish().map_err(|e| {
                    error(
                        Some(piece.offset),
                        Some(self.rows),
                        format!("end of stream: {e}"),
                    )
                })?;
                self.decoder = StreamDecoder::new();
            }
        }
    }

    /// Reads the next message whole into `pieces`: [continuation 0xFFFFFFFF], the metadata
    /// length (u32), the metadata flatbuffer (which holds the body's length), the body.
    /// Read whole, the body is taken by the decoder without a copy. At the end of the input
    /// an end-of-stream marker is queued instead, so the decoder finishes a last message
    /// without a body (the decoder only acts on bytes).
    fn read_message(&mut self) -> Result<(), FormatError> {
        const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        let message_start = self.offset;
        let mut head = Vec::with_capacity(8);
        let mut word = [0u8; 4];
        match self.read_up_to(&mut word)? {
            0 => {
                self.input_ended = true;
                self.pieces.push_back(Piece {
                    bytes: Buffer::from_vec(END_OF_STREAM.to_vec()),
                    offset: message_start,
                    ends_stream: false,
                });
                return Ok(());
            }
            4 => {}
            _ => return Err(self.fail("input ends inside a message length")),
        }
        head.extend_from_slice(&word);
        if word == [0xFF; 4] {
            if self.read_up_to(&mut word)? != 4 {
                return Err(self.fail("input ends inside a message length"));
            }
            head.extend_from_slice(&word);
        }
        let metadata_len = u32::from_le_bytes(word);
        if metadata_len == 0 {
            self.pieces.push_back(Piece {
                bytes: Buffer::from_vec(head),
                offset: message_start,
                ends_stream: true,
            });
            return Ok(());
        }
        let at_start = |message: String| error(Some(message_start), Some(self.rows), message);
        if metadata_len > MAX_METADATA_BYTES {
            return Err(at_start(format!(
                "message metadata of {metadata_len} bytes (at most {MAX_METADATA_BYTES})"
            )));
        }
        let metadata_start = head.len();
        self.read_exactly(u64::from(metadata_len), &mut head, "message header")?;
        let at_start = |message: String| error(Some(message_start), Some(self.rows), message);
        let body_len = arrow_ipc::root_as_message(&head[metadata_start..])
            .map(|m| m.bodyLength())
            .map_err(|e| at_start(format!("malformed message header: {e}")))?;
        let body_len = u64::try_from(body_len)
            .map_err(|_| at_start(format!("negative body length {body_len}")))?;
        let mut body = Vec::with_capacity(body_len.min(PREALLOCATE_BODY_BYTES) as usize);
        self.read_exactly(body_len, &mut body, "message body")?;
        self.pieces.push_back(Piece {
            bytes: Buffer::from_vec(head),
            offset: message_start,
            ends_stream: false,
        });
        if !body.is_empty() {
            self.pieces.push_back(Piece {
                bytes: Buffer::from_vec(body),
                offset: message_start,
                ends_stream: false,
            });
        }
        Ok(())
    }

    fn table_index_of(&mut self, schema: &SchemaRef) -> Result<usize, FormatError> {
        if let (Some(layout), Some(known)) = (&self.layout, &self.layout_schema) {
            if Arc::ptr_eq(known, schema) {
                return Ok(layout.table_index);
            }
        }
        let table_index = match schema.metadata().get(TABLE_INDEX_KEY) {
            None => 0,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| self.fail(format!("bad {TABLE_INDEX_KEY} {text:?}")))?,
        };
        let table = self.schemas.get(table_index).ok_or_else(|| {
            self.fail(format!(
                "table index {table_index} but the stream has {} tables",
                self.schemas.len()
            ))
        })?;
        let layout = Layout::new(table, schema, table_index).map_err(|e| self.fail(e.message))?;
        self.layout = Some(layout);
        self.layout_schema = Some(schema.clone());
        Ok(table_index)
    }
}

/// Runs the third-party decoder, turning a panic on hostile input into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, ArrowError>) -> Result<T, ArrowError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "decoder panicked".to_owned());
        Err(ArrowError::IpcError(format!("malformed stream: {message}")))
    })
}

impl BatchReader {
    /// Makes `batch` (of the current layout) the one rows are read from: every column
    /// resolved once.
    fn start_batch(&mut self, batch: RecordBatch) {
        let Some(layout) = &self.layout else {
            unreachable!("a batch is read with its layout")
        };
        let table = &self.schemas[layout.table_index];
        let columns = table
            .columns
            .iter()
            .zip(&layout.columns)
            .map(|(column, index)| ColumnView::new(&column.ty, batch.column(*index)))
            .collect();
        self.views.reset(columns);
        self.positioned = layout.row_index.is_some()
            || layout.range_index.is_some()
            || layout.key_switch.is_some();
        self.position = RowPosition {
            table_index: layout.table_index,
            ..RowPosition::default()
        };
        self.batch = Some(batch);
        self.next_row = 0;
    }
}

impl BatchReader {
    /// Makes the current batch one with a row left to read (reading batches as needed);
    /// `false` at the end of the input.
    fn have_row(&mut self) -> Result<bool, FormatError> {
        loop {
            if let Some(batch) = &self.batch {
                if self.next_row < batch.num_rows() {
                    return Ok(true);
                }
            }
            match self.next_batch()? {
                Some((_, batch)) => self.start_batch(batch),
                None => return Ok(false),
            }
        }
    }

    /// Fills the chunk with up to `len` rows of the batch from row `first`. When a value
    /// is bad, the chunk is cut before its row, so the good rows come out first and the bad
    /// one starts the next chunk (whose fill then fails at its first row: the error).
    fn fill_chunk(&mut self, first: usize, len: usize) -> Result<(), FormatError> {
        let mut len = len;
        loop {
            match self.views.fill(first, len) {
                Ok(()) => return Ok(()),
                Err(e) if e.row > first && e.row < first + len => len = e.row - first,
                Err(e) => return Err(self.view_error(e, first)),
            }
        }
    }

    /// A [`ViewError`](row_views::ViewError) of the current batch, whose row `first` is the
    /// stream's row `self.rows`.
    #[cold]
    fn view_error(&self, e: row_views::ViewError, first: usize) -> FormatError {
        let table_index = self.layout.as_ref().map_or(0, |l| l.table_index);
        let name = self.schemas[table_index]
            .columns
            .get(e.column)
            .map_or("?", |c| c.name.as_str());
        FormatError {
            format: FORMAT,
            offset: None,
            row: Some(self.rows + e.row.saturating_sub(first) as u64),
            message: format!("column {name:?}: {}", e.message),
        }
    }

    /// The rows `first..end` of the batch cut where the rows' positions stop counting on
    /// (a range switch, a key switch, a row index that is not the previous one's plus one):
    /// the first row's position and the block's end.
    fn positioned_block(&self, first: usize, end: usize) -> (RowPosition, usize) {
        let (Some(batch), Some(layout)) = (&self.batch, &self.layout) else {
            unreachable!("a batch is read with its layout")
        };
        let head = layout.position(batch, first);
        let mut previous = head.row_index;
        for i in first + 1..end {
            let p = layout.position(batch, i);
            let next = previous.and_then(|index| index.checked_add(1));
            if p.key_switch || p.range_index != head.range_index || p.row_index != next {
                return (head, i);
            }
            previous = p.row_index;
        }
        (head, end)
    }
}

impl RowSource for BatchReader {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.have_row()? {
            return Ok(None);
        }
        let i = self.next_row;
        if self.views.width() <= ROW_AT_A_TIME_MAX_COLUMNS {
            if let Err(e) = self.views.fill_row(i) {
                return Err(self.view_error(e, i));
            }
        } else if !self.views.holds(i) {
            let rows = self.batch.as_ref().map_or(0, RecordBatch::num_rows);
            self.fill_chunk(i, self.views.chunk_rows().min(rows - i))?;
        }
        if self.positioned {
            let (Some(batch), Some(layout)) = (&self.batch, &self.layout) else {
                unreachable!("a batch is read with its layout")
            };
            self.position = layout.position(batch, i);
        }
        self.next_row += 1;
        self.rows += 1;
        Ok(Some(RowRef {
            position: self.position,
            values: self.views.row(i),
        }))
    }

    /// The rows of one transposed chunk at once (cut at position changes when the stream
    /// carries positions): the chunk's views are already a block, row after row.
    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        if !self.have_row()? {
            return Ok(None);
        }
        let i = self.next_row;
        if !self.views.holds(i) {
            let rows = self.batch.as_ref().map_or(0, RecordBatch::num_rows);
            self.fill_chunk(i, self.views.chunk_rows().min(rows - i))?;
        }
        let (first, end) = if self.positioned {
            self.positioned_block(i, self.views.end())
        } else {
            (self.position, self.views.end())
        };
        let rows = end - i;
        self.next_row = end;
        self.rows += rows as u64;
        Ok(Some(RowBlock {
            first,
            rows,
            columns: self.views.width(),
            values: self.views.rows(i, rows),
        }))
    }
}

/// Reads rows from Arrow IPC streams.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(BatchReader::new(schemas, input)))
}

/// Writes rows as Arrow IPC streams, [`DEFAULT_BATCH_ROWS`] rows per batch.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(BatchWriter::new(schemas, output)))
}

/// The stream being written: one table, its schema and encoding decisions.
struct Segment {
    table_index: usize,
    schema: SchemaRef,
    dictionary: Vec<bool>,
    system_columns: bool,
    writer: StreamWriter<Box<dyn Write>>,
}

/// Writes Arrow IPC streams: rows are buffered into batches; a table switch (or a batch
/// needing system columns the stream lacks) ends the stream and starts a new one.
pub struct BatchWriter {
    schemas: Vec<TableSchema>,
    output: Option<Box<dyn Write>>,
    segment: Option<Segment>,
    batch_rows: usize,
    /// The table the builders are for.
    pending_table: usize,
    /// One builder per column of `pending_table`, reused from batch to batch.
    builders: Vec<ColumnBuilder>,
    /// Rows in the builders.
    pending_rows: usize,
    /// Positions of the rows in the builders, kept only once one of them has a row index,
    /// range index or key switch (empty while every row has none, so a row of a plain
    /// table costs no 48-byte store).
    positions: Vec<RowPosition>,
    rows: u64,
    finished: bool,
}

impl BatchWriter {
    pub fn new(schemas: &[TableSchema], output: Box<dyn Write>) -> BatchWriter {
        BatchWriter {
            schemas: schemas.to_vec(),
            output: Some(output),
            segment: None,
            batch_rows: DEFAULT_BATCH_ROWS,
            pending_table: usize::MAX,
            builders: Vec::new(),
            pending_rows: 0,
            positions: Vec::new(),
            rows: 0,
            finished: false,
        }
    }

    /// Rows per record batch (at least 1).
    pub fn with_batch_rows(mut self, rows: usize) -> BatchWriter {
        self.batch_rows = rows.max(1);
        self
    }

    fn fail(&self, message: impl Into<String>) -> FormatError {
        error(None, Some(self.rows), message)
    }

    /// Makes the builders those of `table_index`, writing the rows of another table first.
    fn switch_builders(&mut self, table_index: usize) -> Result<(), FormatError> {
        if table_index == self.pending_table {
            return Ok(());
        }
        self.flush_pending()?;
        let table = self.schemas.get(table_index).ok_or_else(|| {
            error(
                None,
                Some(self.rows),
                format!("table index {table_index} out of range"),
            )
        })?;
        let capacity = self.batch_rows.min(DEFAULT_BATCH_ROWS);
        self.builders = table
            .columns
            .iter()
            .map(|c| ColumnBuilder::new(&c.ty, capacity))
            .collect();
        self.pending_table = table_index;
        Ok(())
    }

    /// Appends one row through `append(builder, column)`, all or nothing.
    fn append_row(
        &mut self,
        position: &RowPosition,
        width: usize,
        mut append: impl FnMut(&mut ColumnBuilder, usize) -> Result<(), String>,
    ) -> Result<(), FormatError> {
        self.switch_builders(position.table_index)?;
        if width != self.builders.len() {
            return Err(self.fail(format!(
                "row has {width} values, the schema {} columns",
                self.builders.len()
            )));
        }
        let before = self.pending_rows;
        for c in 0..width {
            if let Err(message) = append(&mut self.builders[c], c) {
                for builder in &mut self.builders[..=c] {
                    builder.truncate(before);
                }
                let name = &self.schemas[self.pending_table].columns[c].name;
                return Err(self.fail(format!("column {name:?}: {message}")));
            }
        }
        if position.row_index.is_some() || position.range_index.is_some() || position.key_switch {
            self.keep_position(position);
        } else if !self.positions.is_empty() {
            self.positions.push(*position);
        }
        self.pending_rows += 1;
        self.rows += 1;
        if self.pending_rows >= self.batch_rows {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// Keeps `position` for the row being appended, with the plain positions of the rows
    /// before it in the builders.
    #[cold]
    fn keep_position(&mut self, position: &RowPosition) {
        if self.positions.is_empty() {
            let plain = RowPosition {
                table_index: position.table_index,
                ..RowPosition::default()
            };
            self.positions.resize(self.pending_rows, plain);
        }
        self.positions.push(*position);
    }

    fn flush_pending(&mut self) -> Result<(), FormatError> {
        if self.pending_rows == 0 {
            return Ok(());
        }
        let mut arrays = Vec::with_capacity(self.builders.len());
        for (builder, column) in self
            .builders
            .iter_mut()
            .zip(&self.schemas[self.pending_table].columns)
        {
            debug_assert_eq!(builder.len(), self.pending_rows);
            arrays.push(
                builder
                    .cut()
                    .map_err(|e| error(None, None, format!("column {:?}: {e}", column.name)))?,
            );
        }
        let positions = std::mem::take(&mut self.positions);
        let rows = std::mem::take(&mut self.pending_rows);
        self.write_arrays(self.pending_table, arrays, rows, &positions)?;
        self.positions = positions;
        self.positions.clear();
        Ok(())
    }

    /// Writes a record batch of table `table_index` (columns as [`arrow_schema`], plain or
    /// dictionary-encoded strings). Rows buffered before are written first.
    ///
    /// # Errors
    /// When the batch's columns do not have the table's types, or on I/O failure.
    pub fn write_batch(
        &mut self,
        table_index: usize,
        batch: &RecordBatch,
    ) -> Result<(), FormatError> {
        self.flush_pending()?;
        let table = self
            .schemas
            .get(table_index)
            .ok_or_else(|| self.fail(format!("table index {table_index} out of range")))?;
        let layout = Layout::new(table, batch.schema().as_ref(), table_index)?;
        let arrays: Vec<ArrayRef> = layout
            .columns
            .iter()
            .map(|i| batch.column(*i).clone())
            .collect();
        let positions: Vec<RowPosition> = (0..batch.num_rows())
            .map(|i| layout.position(batch, i))
            .collect();
        self.rows += batch.num_rows() as u64;
        self.write_arrays(table_index, arrays, batch.num_rows(), &positions)
    }

    fn end_segment(&mut self) -> Result<(), FormatError> {
        if let Some(mut segment) = self.segment.take() {
            segment
                .writer
                .finish()
                .map_err(|e| self.fail(format!("write: {e}")))?;
            let output = segment
                .writer
                .into_inner()
                .map_err(|e| self.fail(format!("write: {e}")))?;
            self.output = Some(output);
        }
        Ok(())
    }

    fn start_segment(
        &mut self,
        table_index: usize,
        arrays: &[ArrayRef],
        system_columns: bool,
    ) -> Result<(), FormatError> {
        let table = &self.schemas[table_index];
        let base = arrow_schema(table);
        let mut dictionary = Vec::with_capacity(arrays.len());
        let mut fields: Vec<Field> = Vec::with_capacity(arrays.len() + 3);
        for (field, array) in base.fields().iter().zip(arrays) {
            let plain = matches!(array.data_type(), DataType::Binary | DataType::Utf8)
                && field.metadata().get(columns::EXTENSION_NAME).is_none();
            let encode = plain && columns::low_cardinality(array);
            dictionary.push(encode);
            let data_type = match (encode, array.data_type()) {
                (true, values) => {
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(values.clone()))
                }
                (false, DataType::Dictionary(..)) => array.data_type().clone(),
                (false, _) => field.data_type().clone(),
            };
            fields.push(field.as_ref().clone().with_data_type(data_type));
        }
        if system_columns {
            fields.push(Field::new(ROW_INDEX, DataType::Int64, true));
            fields.push(Field::new(RANGE_INDEX, DataType::Int64, true));
            fields.push(Field::new(KEY_SWITCH, DataType::Boolean, false));
        }
        let mut metadata = HashMap::new();
        metadata.insert(TABLE_INDEX_KEY.to_owned(), table_index.to_string());
        let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
        let output = self
            .output
            .take()
            .ok_or_else(|| self.fail("output lost after a write error"))?;
        let writer =
            StreamWriter::try_new(output, &schema).map_err(|e| self.fail(format!("write: {e}")))?;
        self.segment = Some(Segment {
            table_index,
            schema,
            dictionary,
            system_columns,
            writer,
        });
        Ok(())
    }

    fn write_arrays(
        &mut self,
        table_index: usize,
        arrays: Vec<ArrayRef>,
        rows: usize,
        positions: &[RowPosition],
    ) -> Result<(), FormatError> {
        // `positions` is empty (every row plain) or has one per row.
        debug_assert!(positions.is_empty() || positions.len() == rows);
        let needs_system = positions
            .iter()
            .any(|p| p.row_index.is_some() || p.range_index.is_some() || p.key_switch);
        let fits = self
            .segment
            .as_ref()
            .is_some_and(|s| s.table_index == table_index && (s.system_columns || !needs_system));
        if !fits {
            self.end_segment()?;
            self.start_segment(table_index, &arrays, needs_system)?;
        }
        let Some(segment) = self.segment.as_mut() else {
            unreachable!("a segment was started above")
        };
        let mut columns = Vec::with_capacity(arrays.len() + 3);
        for (array, encode) in arrays.into_iter().zip(&segment.dictionary) {
            let is_dictionary = matches!(array.data_type(), DataType::Dictionary(..));
            columns.push(match (encode, is_dictionary) {
                (true, false) => {
                    columns::dictionary_encode(&array).map_err(|e| error(None, None, e))?
                }
                (false, true) => arrow_cast_plain(&array).map_err(|e| error(None, None, e))?,
                _ => array,
            });
        }
        if segment.system_columns {
            let position = |i: usize| positions.get(i).copied().unwrap_or_default();
            columns.push(Arc::new(Int64Array::from_iter(
                (0..rows).map(|i| position(i).row_index),
            )));
            columns.push(Arc::new(Int64Array::from_iter(
                (0..rows).map(|i| position(i).range_index),
            )));
            columns.push(Arc::new(BooleanArray::from_iter(
                (0..rows).map(|i| Some(position(i).key_switch)),
            )));
        }
        let batch = RecordBatch::try_new_with_options(
            segment.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| error(None, None, e.to_string()))?;
        segment
            .writer
            .write(&batch)
            .map_err(|e| error(None, None, format!("write: {e}")))
    }
}

/// A dictionary array of strings as a plain array (for a stream that decided against
/// dictionaries).
fn arrow_cast_plain(array: &ArrayRef) -> Result<ArrayRef, String> {
    let dictionary = array.as_any_dictionary_opt().ok_or("not a dictionary")?;
    let keys = dictionary
        .keys()
        .as_primitive_opt::<arrow_array::types::Int32Type>()
        .ok_or("dictionary keys other than int32")?;
    let values = dictionary.values();
    let indices: Vec<Option<usize>> = (0..keys.len())
        .map(|i| (!keys.is_null(i)).then(|| keys.value(i) as usize))
        .collect();
    match values.data_type() {
        DataType::Utf8 => {
            let v = values.as_string::<i32>();
            Ok(Arc::new(arrow_array::StringArray::from_iter(
                indices.into_iter().map(|k| k.map(|k| v.value(k))),
            )))
        }
        DataType::Binary => {
            let v = values.as_binary::<i32>();
            Ok(Arc::new(arrow_array::BinaryArray::from_iter(
                indices.into_iter().map(|k| k.map(|k| v.value(k))),
            )))
        }
        other => Err(format!("dictionary of {other}")),
    }
}

impl RowSink for BatchWriter {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.append_row(position, values.len(), |builder, c| {
            builder.append_view(&values[c])
        })
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.append_row(position, values.len(), |builder, c| {
            builder.append_owned(&values[c])
        })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.flush_pending()?;
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if self.segment.is_none() && self.output.is_some() && !self.schemas.is_empty() {
            // An empty stream still has its schema, so readers know the columns.
            let table = &self.schemas[0];
            let arrays = build_columns(table, std::iter::empty())?;
            self.start_segment(0, &arrays, false)?;
        }
        self.end_segment()?;
        if let Some(output) = self.output.as_mut() {
            output
                .flush()
                .map_err(|e| error(None, None, format!("write: {e}")))?;
        }
        Ok(())
    }
}
