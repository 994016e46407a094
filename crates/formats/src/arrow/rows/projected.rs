//! [`ProjectedReader`]: Arrow IPC streams held whole in memory (a mapped file, say), decoded
//! one record batch at a time but only in the columns a query reads.
//!
//! [`BatchReader`](super::BatchReader) reads any `Read` and hands every batch out whole,
//! which `arrow_ipc`'s stream decoder decodes (and validates: UTF-8, offsets) column by
//! column. Over bytes already in memory each message's body is a slice of the input, so a
//! column that is not decoded is never touched: its pages of a mapped file are never even
//! read. Dictionaries are decoded only for the columns read.
//!
//! Invariants: every length read from the input is checked against the bytes left before
//! it is used, so nothing is allocated from a length and a cut-off message is an error at
//! its offset; each stream's schema is checked against its table's (as `BatchReader`
//! does); a batch before its stream's schema, or a dictionary batch for an id the schema
//! does not have, is an error.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::{MessageHeader, MetadataVersion};
use arrow_schema::SchemaRef;
use shapeshift_types::TableSchema;

use super::super::{error, guarded, MAX_METADATA_BYTES, TABLE_INDEX_KEY};
use super::Layout;
use crate::table::FormatError;

/// The current stream: its schema, where the projected columns are in it, its dictionaries.
struct Stream {
    schema: SchemaRef,
    table_index: usize,
    /// Stream column indices of the projected table columns, in projection order.
    columns: Vec<usize>,
    /// Ids of the dictionaries the projected columns use.
    wanted: HashSet<i64>,
    dictionaries: HashMap<i64, ArrayRef>,
    version: MetadataVersion,
}

/// Reads a sequence of Arrow IPC streams (one per run of a table) from bytes in memory,
/// decoding only some of the tables' columns.
pub struct ProjectedReader {
    data: Buffer,
    offset: usize,
    schemas: Vec<TableSchema>,
    /// Indices of the table columns to decode (the same for every table).
    projection: Vec<usize>,
    stream: Option<Stream>,
    rows: u64,
}

impl ProjectedReader {
    /// A reader of the streams in `data` for tables `schemas`, decoding table columns
    /// `projection` (indices into each table's columns).
    pub fn new(schemas: &[TableSchema], data: Buffer, projection: &[usize]) -> ProjectedReader {
        ProjectedReader {
            data,
            offset: 0,
            schemas: schemas.to_vec(),
            projection: projection.to_vec(),
            stream: None,
            rows: 0,
        }
    }

    fn fail(&self, at: usize, message: impl Into<String>) -> FormatError {
        error(Some(at as u64), Some(self.rows), message)
    }

    /// The next record batch (the projected columns, named as in the stream) and its table
    /// index; `None` at the end of the input.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset of the message, for malformed or cut-off
    /// messages, schemas that do not match the table's, and columns that do not decode.
    pub fn next_batch(&mut self) -> Result<Option<(usize, RecordBatch)>, FormatError> {
        loop {
            let bytes = self.data.as_slice();
            let start = self.offset;
            let left = bytes.len() - start;
            if left == 0 {
                return Ok(None);
            }
            let word = |at: usize| -> Option<u32> {
                bytes
                    .get(at..at + 4)
                    .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            };
            let Some(first) = word(start) else {
                return Err(self.fail(start, "input ends inside a message length"));
            };
            let (metadata_len, metadata_start) = if first == u32::MAX {
                match word(start + 4) {
                    Some(len) => (len, start + 8),
                    None => return Err(self.fail(start, "input ends inside a message length")),
                }
            } else {
                (first, start + 4)
            };
            if metadata_len == 0 {
                // End of a stream: a table switch follows, or the input ends.
                self.offset = metadata_start;
                self.stream = None;
                continue;
            }
            if metadata_len > MAX_METADATA_BYTES {
                return Err(self.fail(
                    start,
                    format!(
                        "message metadata of {metadata_len} bytes (at most {MAX_METADATA_BYTES})"
                    ),
                ));
            }
            let metadata_end = metadata_start + metadata_len as usize;
            let Some(metadata) = bytes.get(metadata_start..metadata_end) else {
                return Err(self.fail(
                    start,
                    format!("input ends inside a message header of {metadata_len} bytes"),
                ));
            };
            let message = arrow_ipc::root_as_message(metadata)
                .map_err(|e| self.fail(start, format!("malformed message header: {e}")))?;
            let body_len = usize::try_from(message.bodyLength())
                .map_err(|_| self.fail(start, format!("body length {}", message.bodyLength())))?;
            if bytes.len() - metadata_end < body_len {
                return Err(self.fail(
                    start,
                    format!("input ends inside a message body of {body_len} bytes"),
                ));
            }
            let body = self.data.slice_with_length(metadata_end, body_len);
            self.offset = metadata_end + body_len;
            match message.header_type() {
                MessageHeader::Schema => {
                    let ipc = message
                        .header_as_schema()
                        .ok_or_else(|| self.fail(start, "a schema message without a schema"))?;
                    // arrow-ipc panics on some malformed schemas (a bad integer width).
                    let schema = guarded(|| Ok(arrow_ipc::convert::fb_to_schema(ipc)))
                        .map_err(|e| self.fail(start, format!("malformed schema: {e}")))?;
                    let schema = Arc::new(schema);
                    self.stream = Some(self.start_stream(schema, ipc, message.version(), start)?);
                }
                MessageHeader::DictionaryBatch => {
                    let batch = message
                        .header_as_dictionary_batch()
                        .ok_or_else(|| self.fail(start, "a dictionary message without a batch"))?;
                    let rows = self.rows;
                    let Some(stream) = &mut self.stream else {
                        return Err(error(
                            Some(start as u64),
                            Some(rows),
                            "a dictionary before the stream's schema",
                        ));
                    };
                    if stream.wanted.contains(&batch.id()) {
                        let schema = stream.schema.clone();
                        let dictionaries = &mut stream.dictionaries;
                        guarded(|| {
                            arrow_ipc::reader::read_dictionary(
                                &body,
                                batch,
                                &schema,
                                dictionaries,
                                &stream.version,
                            )
                        })
                        .map_err(|e| {
                            error(Some(start as u64), Some(rows), format!("dictionary: {e}"))
                        })?;
                    }
                }
                MessageHeader::RecordBatch => {
                    let batch = message.header_as_record_batch().ok_or_else(|| {
                        self.fail(start, "a record batch message without a batch")
                    })?;
                    let rows = self.rows;
                    let Some(stream) = &self.stream else {
                        return Err(error(
                            Some(start as u64),
                            Some(rows),
                            "a record batch before the stream's schema",
                        ));
                    };
                    let decoded = guarded(|| {
                        arrow_ipc::reader::read_record_batch(
                            &body,
                            batch,
                            stream.schema.clone(),
                            &stream.dictionaries,
                            Some(&stream.columns),
                            &stream.version,
                        )
                    })
                    .map_err(|e| error(Some(start as u64), Some(rows), e.to_string()))?;
                    self.rows += decoded.num_rows() as u64;
                    return Ok(Some((stream.table_index, decoded)));
                }
                other => {
                    return Err(self.fail(start, format!("unexpected {other:?} message")));
                }
            }
        }
    }

    /// The state of a stream that starts with `schema` (its message at `at`): its table
    /// (from the schema's table index), checked against it, and the projected columns.
    fn start_stream(
        &self,
        schema: SchemaRef,
        ipc: arrow_ipc::Schema<'_>,
        version: MetadataVersion,
        at: usize,
    ) -> Result<Stream, FormatError> {
        let table_index = match schema.metadata().get(TABLE_INDEX_KEY) {
            None => 0,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| self.fail(at, format!("bad {TABLE_INDEX_KEY} {text:?}")))?,
        };
        let table = self.schemas.get(table_index).ok_or_else(|| {
            self.fail(
                at,
                format!(
                    "table index {table_index} but the stream has {} tables",
                    self.schemas.len()
                ),
            )
        })?;
        let layout =
            Layout::new(table, &schema, table_index).map_err(|e| self.fail(at, e.message))?;
        let columns = self
            .projection
            .iter()
            .map(|&c| {
                layout.columns.get(c).copied().ok_or_else(|| {
                    self.fail(
                        at,
                        format!("column {c} of a table of {} columns", table.columns.len()),
                    )
                })
            })
            .collect::<Result<Vec<usize>, FormatError>>()?;
        let mut wanted = HashSet::new();
        if let Some(fields) = ipc.fields() {
            for &c in &columns {
                if c < fields.len() {
                    dictionary_ids(fields.get(c), &mut wanted);
                }
            }
        }
        Ok(Stream {
            schema,
            table_index,
            columns,
            wanted,
            dictionaries: HashMap::new(),
            version,
        })
    }
}

/// The dictionary ids a field and its children use.
fn dictionary_ids(field: arrow_ipc::Field<'_>, into: &mut HashSet<i64>) {
    if let Some(dictionary) = field.dictionary() {
        into.insert(dictionary.id());
    }
    if let Some(children) = field.children() {
        for child in children {
            dictionary_ids(child, into);
        }
    }
}
