//! [`BatchWriter`]: rows buffered into record batches and written as Arrow IPC streams.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::{FormatError, RowPosition, RowSink};

use super::super::{
    arrow_schema, error, DEFAULT_BATCH_ROWS, KEY_SWITCH, RANGE_INDEX, ROW_INDEX, TABLE_INDEX_KEY,
};
use super::builders::ColumnBuilder;
use super::row_batches::RowBatchBuilder;
use super::{build_columns, Layout};
use crate::arrow::columns;

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
    /// The table the builder is for.
    pending_table: usize,
    /// The rows of `pending_table` not yet written, reused from batch to batch.
    pending: Option<RowBatchBuilder>,
    /// Positions of the rows in the builders, kept only once one of them has a row index,
    /// range index or key switch (empty while every row has none, so a row of a plain
    /// table costs no 48-byte store).
    positions: Vec<RowPosition>,
    rows: u64,
    finished: bool,
}

/// Rows the builders of a table's first batch have room for before they grow.
const FIRST_BATCH_CAPACITY: usize = 16;

impl BatchWriter {
    pub fn new(schemas: &[TableSchema], output: Box<dyn Write>) -> BatchWriter {
        BatchWriter {
            schemas: schemas.to_vec(),
            output: Some(output),
            segment: None,
            batch_rows: DEFAULT_BATCH_ROWS,
            pending_table: usize::MAX,
            pending: None,
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
        // The first batch of a table grows from a few rows (a stream of one small message
        // allocated a whole batch per column: 1.3 MB for MediaContent); the builders keep
        // the first batch's size for the next ones.
        let capacity = self.batch_rows.min(FIRST_BATCH_CAPACITY);
        self.pending = Some(RowBatchBuilder::new(table, capacity));
        self.pending_table = table_index;
        Ok(())
    }

    fn pending_rows(&self) -> usize {
        self.pending.as_ref().map_or(0, RowBatchBuilder::len)
    }

    /// Appends one row through `append(builder, column)`, all or nothing.
    fn append_row(
        &mut self,
        position: &RowPosition,
        width: usize,
        append: impl FnMut(&mut ColumnBuilder, usize) -> Result<(), String>,
    ) -> Result<(), FormatError> {
        self.switch_builders(position.table_index)?;
        let Some(pending) = self.pending.as_mut() else {
            unreachable!("switch_builders made the builder")
        };
        if let Err(message) = pending.append_with(width, append) {
            return Err(self.fail(message));
        }
        if position.row_index.is_some() || position.range_index.is_some() || position.key_switch {
            self.keep_position(position);
        } else if !self.positions.is_empty() {
            self.positions.push(*position);
        }
        self.rows += 1;
        if self.pending_rows() >= self.batch_rows {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// Keeps `position` for the row just appended (the last in the builder), with the plain
    /// positions of the rows before it.
    #[cold]
    fn keep_position(&mut self, position: &RowPosition) {
        if self.positions.is_empty() {
            let plain = RowPosition {
                table_index: position.table_index,
                ..RowPosition::default()
            };
            self.positions.resize(self.pending_rows() - 1, plain);
        }
        self.positions.push(*position);
    }

    fn flush_pending(&mut self) -> Result<(), FormatError> {
        let rows = self.pending_rows();
        let Some(pending) = self.pending.as_mut().filter(|_| rows > 0) else {
            return Ok(());
        };
        let arrays = pending.cut_columns()?;
        let positions = std::mem::take(&mut self.positions);
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
