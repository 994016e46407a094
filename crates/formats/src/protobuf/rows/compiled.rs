//! The common interface's rows of the lab's tables: each table's compiled
//! [`MessageCodec`] first, the general field table of the dynamic codec for what the
//! compiled codec refuses.
//!
//! Invariants:
//! - the output bytes and the views are the general table's in every case (the compiled
//!   codecs accept only inputs on which they agree with it, see `message_codecs.rs`), so
//!   a stream has one encoding whichever codec wrote it, and errors are the general
//!   table's, with their byte offsets;
//! - the general table of a table is built on its first use (a 1000-column table costs
//!   more to compile than its rows take to encode, and well-formed rows never need it);
//! - after a refused decode, the row's views, arena and composite spans are cleared before
//!   the general table decodes the same message, so nothing of the attempt survives.

use std::cell::OnceCell;
use std::io::Write;
use std::ops::Range;

use shapeshift_types::{TableSchema, Value, ValueRef};

use super::message_codecs::MessageCodec;
use crate::protobuf::dynamic::field_table::{FieldTable, ReadState};
use crate::protobuf::StaticMessage;
use crate::table::framing::{FrameReader, FrameWriter};
use crate::table::row_refs::RefsBuffer;
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource, SourceInput};

/// One table of a stream: its compiled codec and, once needed, its general table.
struct Table {
    codec: MessageCodec,
    schema: TableSchema,
    general: OnceCell<FieldTable>,
}

impl Table {
    fn new(message: StaticMessage, schema: &TableSchema) -> Table {
        Table {
            codec: MessageCodec::new(message, schema),
            schema: schema.clone(),
            general: OnceCell::new(),
        }
    }

    #[cold]
    fn general(&self) -> &FieldTable {
        self.general.get_or_init(|| FieldTable::new(&self.schema))
    }
}

fn tables(schemas: &[TableSchema], messages: &[StaticMessage]) -> Vec<Table> {
    schemas
        .iter()
        .zip(messages)
        .map(|(schema, message)| Table::new(*message, schema))
        .collect()
}

/// Reads framed rows of `schemas`, the tables of the compiled `messages`.
pub(crate) fn source(
    schemas: &[TableSchema],
    messages: &[StaticMessage],
    input: impl Into<SourceInput>,
    format: &'static str,
) -> Box<dyn RowSource> {
    Box::new(TableSource {
        frames: FrameReader::new(input, format, schemas.len()),
        tables: tables(schemas, messages),
        format,
        state: Vec::new(),
        arena: Vec::new(),
        composites: Vec::new(),
        refs: RefsBuffer::default(),
    })
}

/// Writes framed rows of `schemas`, the tables of the compiled `messages`.
pub(crate) fn sink(
    schemas: &[TableSchema],
    messages: &[StaticMessage],
    output: Box<dyn Write>,
    format: &'static str,
) -> Box<dyn RowSink> {
    Box::new(TableSink {
        frames: FrameWriter::new(output, format, schemas.len()),
        tables: tables(schemas, messages),
    })
}

struct TableSource {
    frames: FrameReader,
    tables: Vec<Table>,
    format: &'static str,
    /// The general tables' scratch, one per table (created on first use).
    state: Vec<ReadState>,
    arena: Vec<u8>,
    /// Composite columns of the row and their binary YSON in `arena`.
    composites: Vec<(usize, Range<usize>)>,
    refs: RefsBuffer,
}

impl RowSource for TableSource {
    #[inline]
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        let Some(position) = self.frames.next_message()? else {
            return Ok(None);
        };
        let TableSource {
            frames,
            tables,
            format,
            state,
            arena,
            composites,
            refs,
        } = self;
        let table = &tables[position.table_index];
        let message = frames.message();
        let refs = refs.loan();
        arena.clear();
        composites.clear();
        if table.codec.decode(message, refs, arena, composites) {
            let arena: &Vec<u8> = arena;
            for (column, span) in composites.iter() {
                refs[*column] = ValueRef::Composite(&arena[span.clone()]);
            }
        } else {
            refs.clear();
            arena.clear();
            if state.len() < tables.len() {
                state.resize_with(tables.len(), ReadState::default);
            }
            let result = table.general().read_row(
                message,
                frames.message_offset,
                &mut state[position.table_index],
                arena,
                refs,
            );
            if let Err(e) = result {
                return Err(FormatError {
                    format,
                    offset: Some(e.offset),
                    row: Some(frames.rows() - 1),
                    message: e.message,
                });
            }
        }
        Ok(Some(RowRef {
            position,
            values: refs,
        }))
    }
}

struct TableSink {
    frames: FrameWriter,
    tables: Vec<Table>,
}

impl RowSink for TableSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = self.tables.get(position.table_index);
        self.frames.write_row(position, |out| match table {
            Some(table) if table.codec.encode(values, out) => Ok(()),
            Some(table) => table.general().write_views(values, out),
            // The frame writer refuses the position before encoding.
            None => Ok(()),
        })
    }

    #[inline]
    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let table = self.tables.get(position.table_index);
        self.frames.write_row(position, |out| match table {
            Some(table) if table.codec.encode(values, out) => Ok(()),
            Some(table) => table.general().write_owned(values, out),
            None => Ok(()),
        })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}
