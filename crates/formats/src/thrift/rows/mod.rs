//! Thrift rows through the common interface: one row struct per frame of YT's framing.

use std::io::{Read, Write};

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::framing::{FrameReader, FrameWriter};
use crate::table::row_arena::{check_row, RowArena};
use crate::table::values::{value_from_ref, ColumnCheck};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};
use crate::thrift::{format_name, Protocol, RowCodec};

fn codecs(schemas: &[TableSchema], protocol: Protocol) -> Result<Vec<RowCodec>, FormatError> {
    schemas
        .iter()
        .map(|schema| RowCodec::new(schema, protocol))
        .collect::<Result<_, _>>()
        .map_err(|e| FormatError::new(format_name(protocol), e))
}

/// Reads framed row structs of `schemas` in `protocol`.
///
/// # Errors
/// When a table has more columns than a Thrift struct has fields.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    protocol: Protocol,
) -> Result<Box<dyn RowSource>, FormatError> {
    let format = format_name(protocol);
    Ok(Box::new(ThriftSource {
        frames: FrameReader::new(input, format, schemas.len()),
        codecs: codecs(schemas, protocol)?,
        schemas: schemas.to_vec(),
        format,
        row: RowArena::default(),
    }))
}

/// Writes framed row structs of `schemas` in `protocol`.
///
/// # Errors
/// When a table has more columns than a Thrift struct has fields.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    protocol: Protocol,
) -> Result<Box<dyn RowSink>, FormatError> {
    let format = format_name(protocol);
    Ok(Box::new(ThriftSink {
        frames: FrameWriter::new(output, format, schemas.len()),
        codecs: codecs(schemas, protocol)?,
        checks: schemas
            .iter()
            .map(|s| s.columns.iter().map(|c| ColumnCheck::new(&c.ty)).collect())
            .collect(),
        schemas: schemas.to_vec(),
        format,
    }))
}

struct ThriftSource {
    frames: FrameReader,
    codecs: Vec<RowCodec>,
    schemas: Vec<TableSchema>,
    format: &'static str,
    row: RowArena,
}

impl RowSource for ThriftSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        let Some(position) = self.frames.next_message()? else {
            return Ok(None);
        };
        let row = self.frames.rows() - 1;
        let values = self.codecs[position.table_index]
            .decode(self.frames.message())
            .map_err(|e| {
                FormatError::new(self.format, e.message)
                    .at(self.frames.message_offset + e.offset as u64)
                    .in_row(row)
            })?;
        self.row.clear();
        for (value, column) in values
            .iter()
            .zip(&self.schemas[position.table_index].columns)
        {
            self.row
                .push_value(value, &column.ty, self.format)
                .map_err(|e| e.in_row(row))?;
        }
        Ok(Some(RowRef {
            position,
            values: self.row.views(),
        }))
    }
}

struct ThriftSink {
    frames: FrameWriter,
    codecs: Vec<RowCodec>,
    /// Per table, each column's compiled check of the values it is given.
    checks: Vec<Vec<ColumnCheck>>,
    schemas: Vec<TableSchema>,
    format: &'static str,
}

impl RowSink for ThriftSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let (codec, schema, checks) = (
            self.codecs.get(position.table_index),
            self.schemas.get(position.table_index),
            self.checks.get(position.table_index),
        );
        self.frames
            .write_row(position, |out| match (codec, schema, checks) {
                (Some(codec), Some(schema), Some(checks)) => {
                    // Scalars are checked here and written as they are; composites are
                    // checked by being decoded, which `encode_refs` asks for.
                    for ((value, column), check) in values.iter().zip(&schema.columns).zip(checks) {
                        if !matches!(value, ValueRef::Composite(_) | ValueRef::Any(_)) {
                            check
                                .write(*value, &column.ty)
                                .map_err(|e| format!("column \"{}\": {e}", column.name))?;
                        }
                    }
                    let owned = |i: usize, value: ValueRef<'_>| {
                        let column = &schema.columns[i];
                        value_from_ref(value, &column.ty)
                            .map_err(|e| format!("column \"{}\": {e}", column.name))
                    };
                    codec.encode_refs(values, owned, out)
                }
                _ => Ok(()),
            })
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let (codec, schema) = (
            self.codecs.get(position.table_index),
            self.schemas.get(position.table_index),
        );
        let format = self.format;
        self.frames
            .write_row(position, |out| match (codec, schema) {
                (Some(codec), Some(schema)) => {
                    check_row(values, schema, format).map_err(|e| e.message)?;
                    codec.encode(values, out)
                }
                _ => Ok(()),
            })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}
