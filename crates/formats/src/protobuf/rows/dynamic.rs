//! Rows of any table through the common interface, read and written by the dynamic codec's
//! field tables ([`FieldTable`]) in YT's framing.

use std::io::Write;
use std::sync::Arc;

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::protobuf::dynamic::field_table::{FieldTable, ReadState};
use crate::table::framing::{FrameReader, FrameWriter};
use crate::table::row_refs::RefsBuffer;
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource, SourceInput};

/// Every table's field table, shared by the sources and sinks opened over them.
pub(crate) type FieldTables = Arc<[FieldTable]>;

/// Compiles the field tables of `schemas`.
pub(crate) fn compile(schemas: &[TableSchema]) -> FieldTables {
    schemas.iter().map(FieldTable::new).collect()
}

/// Reads framed rows of `tables`; errors name `format`.
pub(crate) fn source(
    tables: FieldTables,
    input: impl Into<SourceInput>,
    format: &'static str,
) -> Box<dyn RowSource> {
    Box::new(TableSource {
        frames: FrameReader::new(input, format, tables.len()),
        tables,
        format,
        state: Vec::new(),
        arena: Vec::new(),
        refs: RefsBuffer::default(),
    })
}

/// Writes framed rows of `tables`; errors name `format`.
pub(crate) fn sink(
    tables: FieldTables,
    output: Box<dyn Write>,
    format: &'static str,
) -> Box<dyn RowSink> {
    Box::new(TableSink {
        frames: FrameWriter::new(output, format, tables.len()),
        tables,
    })
}

struct TableSource {
    frames: FrameReader,
    tables: FieldTables,
    format: &'static str,
    /// One per table (composite values are per column).
    state: Vec<ReadState>,
    arena: Vec<u8>,
    refs: RefsBuffer,
}

impl RowSource for TableSource {
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
            refs,
        } = self;
        if state.len() < tables.len() {
            state.resize_with(tables.len(), ReadState::default);
        }
        let refs = refs.loan();
        let result = tables[position.table_index].read_row(
            frames.message(),
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
        Ok(Some(RowRef {
            position,
            values: refs,
        }))
    }
}

struct TableSink {
    frames: FrameWriter,
    tables: FieldTables,
}

impl RowSink for TableSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = self.tables.get(position.table_index);
        self.frames.write_row(position, |out| match table {
            Some(table) => table.write_views(values, out),
            None => Ok(()),
        })
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let table = self.tables.get(position.table_index);
        self.frames.write_row(position, |out| match table {
            Some(table) => table.write_owned(values, out),
            None => Ok(()),
        })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}
