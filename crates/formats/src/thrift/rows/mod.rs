//! Thrift rows through the common interface: one row struct per frame of YT's framing.

use std::io::{Read, Write};
use std::sync::Arc;

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::framing::{FrameReader, FrameWriter};
use crate::table::row_arena::{check_row, RowArena};
use crate::table::values::{value_from_ref, ColumnCheck};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource, SourceInput};
use crate::thrift::{format_name, Protocol, RowCodec};

/// Every table's row codec, schema and column checks, compiled once and shared by the
/// sources and sinks opened over them.
pub(crate) struct ThriftTables {
    codecs: Vec<RowCodec>,
    /// Per table, each column's compiled check of the values a sink is given.
    checks: Vec<Vec<ColumnCheck>>,
    schemas: Vec<TableSchema>,
    format: &'static str,
}

/// Compiles the tables of `schemas` in `protocol`.
///
/// # Errors
/// When a table has more columns than a Thrift struct has fields.
pub(crate) fn compile(
    schemas: &[TableSchema],
    protocol: Protocol,
) -> Result<Arc<ThriftTables>, FormatError> {
    let format = format_name(protocol);
    Ok(Arc::new(ThriftTables {
        codecs: schemas
            .iter()
            .map(|schema| RowCodec::new(schema, protocol))
            .collect::<Result<_, _>>()
            .map_err(|e| FormatError::new(format, e))?,
        checks: schemas
            .iter()
            .map(|s| s.columns.iter().map(|c| ColumnCheck::new(&c.ty)).collect())
            .collect(),
        schemas: schemas.to_vec(),
        format,
    }))
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
    Ok(source_over(compile(schemas, protocol)?, input.into()))
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
    Ok(sink_over(compile(schemas, protocol)?, output))
}

/// [`source`] over tables compiled once.
pub(crate) fn source_over(tables: Arc<ThriftTables>, input: SourceInput) -> Box<dyn RowSource> {
    Box::new(ThriftSource {
        frames: FrameReader::new(input, tables.format, tables.schemas.len()),
        tables,
        row: RowArena::default(),
    })
}

/// [`sink`] over tables compiled once.
pub(crate) fn sink_over(tables: Arc<ThriftTables>, output: Box<dyn Write>) -> Box<dyn RowSink> {
    Box::new(ThriftSink {
        frames: FrameWriter::new(output, tables.format, tables.schemas.len()),
        tables,
    })
}

struct ThriftSource {
    frames: FrameReader,
    tables: Arc<ThriftTables>,
    row: RowArena,
}

impl RowSource for ThriftSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        let Some(position) = self.frames.next_message()? else {
            return Ok(None);
        };
        let row = self.frames.rows() - 1;
        let format = self.tables.format;
        let codec = &self.tables.codecs[position.table_index];
        let checks = &self.tables.checks[position.table_index];
        self.row.clear();
        if codec
            .decode_into(self.frames.message(), checks, &mut self.row)
            .is_some()
        {
            return Ok(Some(RowRef {
                position,
                values: self.row.views(),
            }));
        }
        // Another field order, or bytes that do not fit: the general way.
        let values = codec.decode(self.frames.message()).map_err(|e| {
            FormatError::new(format, e.message)
                .at(self.frames.message_offset + e.offset as u64)
                .in_row(row)
        })?;
        self.row.clear();
        for (value, column) in values
            .iter()
            .zip(&self.tables.schemas[position.table_index].columns)
        {
            self.row
                .push_value(value, &column.ty, format)
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
    tables: Arc<ThriftTables>,
}

impl RowSink for ThriftSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let tables = &self.tables;
        let (codec, schema, checks) = (
            tables.codecs.get(position.table_index),
            tables.schemas.get(position.table_index),
            tables.checks.get(position.table_index),
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
        let tables = &self.tables;
        let (codec, schema, checks) = (
            tables.codecs.get(position.table_index),
            tables.schemas.get(position.table_index),
            tables.checks.get(position.table_index),
        );
        let format = tables.format;
        self.frames
            .write_row(position, |out| match (codec, schema, checks) {
                (Some(codec), Some(schema), Some(checks)) => {
                    if values.len() != schema.columns.len() {
                        // Its message for a row of another width.
                        return check_row(values, schema, format).map_err(|e| e.message);
                    }
                    // Scalars by the columns' compiled rules, composites by `check_value`.
                    for ((value, column), check) in values.iter().zip(&schema.columns).zip(checks) {
                        check
                            .write_owned(value, &column.ty)
                            .map_err(|e| format!("column \"{}\": {e}", column.name))?;
                    }
                    codec.encode(values, out)
                }
                _ => Ok(()),
            })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}
