//! Raw datum streams: datums of the first table back to back, no header, no positions.

use std::io::{Read, Write};
use std::sync::Arc;

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::row_arena::{owned_value, RowArena};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource, SourceInput};

use crate::avro::codec::Reader;
use crate::avro::{error, RowCodec, FORMAT};

struct DatumSource {
    input: Option<Box<dyn Read>>,
    bytes: Vec<u8>,
    pos: usize,
    codec: Arc<RowCodec>,
    rows: u64,
    row: RowArena,
}

impl RowSource for DatumSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if let Some(mut input) = self.input.take() {
            input
                .read_to_end(&mut self.bytes)
                .map_err(|e| error(Some(self.bytes.len() as u64), None, format!("read: {e}")))?;
        }
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let mut reader = Reader::new(&self.bytes[self.pos..], self.pos as u64);
        let (values, _) = self
            .codec
            .decode(&mut reader)
            .map_err(|e| error(Some(e.offset), Some(self.rows), e.message))?;
        if reader.pos == 0 {
            // A schema whose datums take no bytes cannot tell rows apart.
            return Err(error(
                Some(self.pos as u64),
                Some(self.rows),
                "datums of this schema take no bytes",
            ));
        }
        self.pos += reader.pos;
        self.row.clear();
        for (value, column) in values.iter().zip(&self.codec.schema.columns) {
            self.row.push_value(value, &column.ty, FORMAT)?;
        }
        self.rows += 1;
        Ok(Some(RowRef {
            position: RowPosition::default(),
            values: self.row.views(),
        }))
    }
}

struct DatumSink {
    output: Box<dyn Write>,
    codec: Arc<RowCodec>,
    buffer: Vec<u8>,
    rows: u64,
}

impl DatumSink {
    fn write_buffer(&mut self) -> Result<(), FormatError> {
        let result = self.output.write_all(&self.buffer);
        result.map_err(|e| error(None, Some(self.rows), format!("write: {e}")))?;
        self.buffer.clear();
        self.rows += 1;
        Ok(())
    }

    fn check_table(&self, position: &RowPosition) -> Result<(), FormatError> {
        if position.table_index != 0 {
            return Err(error(
                None,
                Some(self.rows),
                "raw Avro datum streams carry one table only",
            ));
        }
        Ok(())
    }
}

impl RowSink for DatumSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.check_table(position)?;
        if values.len() != self.codec.schema.columns.len() {
            return Err(error(
                None,
                Some(self.rows),
                "row length differs from the schema",
            ));
        }
        let owned = values
            .iter()
            .zip(&self.codec.schema.columns)
            .map(|(v, c)| owned_value(v, &c.ty, FORMAT))
            .collect::<Result<Vec<_>, _>>()?;
        self.buffer.clear();
        self.codec.encode_row(&owned, &mut self.buffer)?;
        self.write_buffer()
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.check_table(position)?;
        self.buffer.clear();
        self.codec.encode_row(values, &mut self.buffer)?;
        self.write_buffer()
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.output
            .flush()
            .map_err(|e| error(None, Some(self.rows), format!("write: {e}")))
    }
}

/// Reads raw Avro datums back to back (no header) of the first table. The input is read
/// whole.
///
/// # Errors
/// A [`FormatError`] when `schemas` is empty.
pub fn datum_source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(PreparedDatums::new(schemas)?.open_source(input))
}

/// Writes raw Avro datums back to back (no header) of the first table; positions are
/// not carried.
///
/// # Errors
/// A [`FormatError`] when `schemas` is empty.
pub fn datum_sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(PreparedDatums::new(schemas)?.open_sink(output))
}

/// The first table's codec compiled once, for many raw datum streams: a server reading one
/// message per stream pays the compile once (as the registry's `PreparedFormat` does for
/// the other formats).
#[derive(Clone)]
pub struct PreparedDatums {
    codec: Arc<RowCodec>,
}

impl PreparedDatums {
    /// Compiles the first of `schemas`.
    ///
    /// # Errors
    /// A [`FormatError`] when `schemas` is empty.
    pub fn new(schemas: &[TableSchema]) -> Result<PreparedDatums, FormatError> {
        let table = schemas
            .first()
            .ok_or_else(|| error(None, None, "no table schema given"))?;
        Ok(PreparedDatums {
            codec: Arc::new(RowCodec::new(table)),
        })
    }

    /// A reader of the datums in `input` (bytes in memory are taken as they are, a stream is
    /// read whole at the first row).
    pub fn open_source(&self, input: impl Into<SourceInput>) -> Box<dyn RowSource> {
        let (input, bytes) = match input.into() {
            SourceInput::Stream(reader) => (Some(reader), Vec::new()),
            SourceInput::Bytes(bytes) => (None, bytes),
        };
        Box::new(DatumSource {
            input,
            bytes,
            pos: 0,
            codec: Arc::clone(&self.codec),
            rows: 0,
            row: RowArena::default(),
        })
    }

    /// A writer of datums into `output`.
    pub fn open_sink(&self, output: Box<dyn Write>) -> Box<dyn RowSink> {
        Box::new(DatumSink {
            output,
            codec: Arc::clone(&self.codec),
            buffer: Vec::new(),
            rows: 0,
        })
    }
}
