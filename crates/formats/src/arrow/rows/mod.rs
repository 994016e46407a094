//! Arrow rows through the common interface, and rows to and from record batches.
//!
//! [`BatchReader`] and [`BatchWriter`] are both the columnar fast path (batch by batch) and
//! the row interface ([`crate::table::RowSource`] / [`crate::table::RowSink`]): rows are
//! views of the current batch (`views.rs`), composite values transcoded to binary YSON;
//! rows are written through per-column builders (`builders.rs`). [`ProjectedReader`] decodes
//! only some columns of streams held in memory (`projected.rs`).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Schema};
use shapeshift_types::{TableSchema, Value};

use crate::table::row_arena::check_row;
use crate::table::{FormatError, RowPosition, RowSink, RowSource};

use super::{
    arrow_schema, columns, error, strip_dictionary, FORMAT, KEY_SWITCH, RANGE_INDEX, ROW_INDEX,
};

mod builders;
mod projected;
mod reader;
mod row_batches;
mod views;
mod writer;

pub use projected::ProjectedReader;
pub use reader::BatchReader;
pub use row_batches::RowBatchBuilder;
pub use writer::BatchWriter;

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

/// Where a table's columns and the system columns are in a stream's batches.
#[derive(Clone, Debug)]
struct Layout {
    table_index: usize,
    columns: Vec<usize>,
    row_index: Option<usize>,
    range_index: Option<usize>,
    key_switch: Option<usize>,
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
