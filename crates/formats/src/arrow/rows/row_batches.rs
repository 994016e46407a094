//! [`RowBatchBuilder`]: rows of one table appended into per-column builders and cut as
//! record batches of [`arrow_schema`]'s types. The Arrow writer buffers its rows in one; a
//! query engine turns any [`crate::table::RowSource`] into batches with one (optionally
//! keeping only some columns: the others are read by the source but never built).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::FormatError;

use super::super::{arrow_schema, error};
use super::builders::ColumnBuilder;

/// Builds record batches of one table row by row; a refused row leaves no trace.
pub struct RowBatchBuilder {
    /// The table's column names (for errors) and width (rows must have all its columns).
    table: TableSchema,
    /// Table column of each builder, in output order.
    projection: Vec<usize>,
    builders: Vec<ColumnBuilder>,
    schema: SchemaRef,
    rows: usize,
}

impl RowBatchBuilder {
    /// A builder of all of `table`'s columns, sized for `capacity` rows per batch.
    pub fn new(table: &TableSchema, capacity: usize) -> RowBatchBuilder {
        RowBatchBuilder {
            table: table.clone(),
            projection: (0..table.columns.len()).collect(),
            builders: table
                .columns
                .iter()
                .map(|c| ColumnBuilder::new(&c.ty, capacity))
                .collect(),
            schema: Arc::new(arrow_schema(table)),
            rows: 0,
        }
    }

    /// A builder of the columns `projection` (table column indexes, in output order).
    ///
    /// # Errors
    /// When an index is not a column of `table`.
    pub fn projected(
        table: &TableSchema,
        projection: &[usize],
        capacity: usize,
    ) -> Result<RowBatchBuilder, String> {
        let schema = Arc::new(
            arrow_schema(table)
                .project(projection)
                .map_err(|e| e.to_string())?,
        );
        Ok(RowBatchBuilder {
            table: table.clone(),
            projection: projection.to_vec(),
            builders: projection
                .iter()
                .map(|&c| ColumnBuilder::new(&table.columns[c].ty, capacity))
                .collect(),
            schema,
            rows: 0,
        })
    }

    /// The schema of the batches cut.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows appended since the last cut.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Appends a row of the table's columns (all of them, in schema order).
    ///
    /// # Errors
    /// A message naming the column when the row is too short or a value does not fit.
    pub fn append_row(&mut self, values: &[ValueRef<'_>]) -> Result<(), String> {
        self.append_with(values.len(), |builder, c| builder.append_view(&values[c]))
    }

    /// [`RowBatchBuilder::append_row`] of owned values.
    ///
    /// # Errors
    /// As [`RowBatchBuilder::append_row`].
    pub fn append_owned_row(&mut self, values: &[Value]) -> Result<(), String> {
        self.append_with(values.len(), |builder, c| builder.append_owned(&values[c]))
    }

    /// Appends one row through `append(builder, table column)`, all or nothing.
    pub(super) fn append_with(
        &mut self,
        width: usize,
        mut append: impl FnMut(&mut ColumnBuilder, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        if width != self.table.columns.len() {
            return Err(format!(
                "row has {width} values, the schema {} columns",
                self.table.columns.len()
            ));
        }
        for (i, &c) in self.projection.iter().enumerate() {
            if let Err(message) = append(&mut self.builders[i], c) {
                for builder in &mut self.builders[..=i] {
                    builder.truncate(self.rows);
                }
                let name = &self.table.columns[c].name;
                return Err(format!("column {name:?}: {message}"));
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The columns of the rows appended since the last cut; the builder starts empty.
    ///
    /// # Errors
    /// When an owned column's values cannot form its Arrow array.
    pub fn cut_columns(&mut self) -> Result<Vec<ArrayRef>, FormatError> {
        debug_assert!(self.builders.iter().all(|b| b.len() == self.rows));
        self.rows = 0;
        self.builders
            .iter_mut()
            .zip(&self.projection)
            .map(|(builder, &c)| {
                builder.cut().map_err(|e| {
                    error(
                        None,
                        None,
                        format!("column {:?}: {e}", self.table.columns[c].name),
                    )
                })
            })
            .collect()
    }

    /// The record batch of the rows appended since the last cut.
    ///
    /// # Errors
    /// As [`RowBatchBuilder::cut_columns`].
    pub fn cut(&mut self) -> Result<RecordBatch, FormatError> {
        let rows = self.rows;
        let columns = self.cut_columns()?;
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| error(None, None, e.to_string()))
    }
}
