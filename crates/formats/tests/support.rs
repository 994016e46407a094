//! Helpers shared by the Protobuf, Arrow and Avro tests: in-memory streams, random schemas
//! with deep nesting, and owned rows from views.

#![allow(dead_code)]

use shapeshift_formats::table::SharedOutput;
use std::io::Write;

use proptest::collection::vec;
use proptest::prelude::*;
use shapeshift_formats::table::{FormatError, RowPosition, RowSink, RowSource};
use shapeshift_formats::yson;
use shapeshift_types::testing::{arb_type, arb_value};
use shapeshift_types::{value_from_node, ColumnSchema, TableSchema, Value, ValueRef};

pub type SinkFn = fn(&[TableSchema], Box<dyn Write>) -> Result<Box<dyn RowSink>, FormatError>;
pub type SourceFn =
    fn(&[TableSchema], Box<dyn std::io::Read>) -> Result<Box<dyn RowSource>, FormatError>;

pub type Row = (RowPosition, Vec<Value>);

/// Writes owned rows through a sink; returns the bytes.
pub fn write_owned(
    sink: SinkFn,
    schemas: &[TableSchema],
    rows: &[Row],
) -> Result<Vec<u8>, FormatError> {
    let buffer = SharedOutput::default();
    let mut sink = sink(schemas, Box::new(buffer.clone()))?;
    for (position, values) in rows {
        sink.write_owned_row(position, values)?;
    }
    sink.finish()?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

/// The owned value of a view of a column of type `ty`.
pub fn owned(view: &ValueRef<'_>, ty: &shapeshift_types::Type) -> Value {
    match view {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(v) => Value::Bool(*v),
        ValueRef::Int64(v) => Value::Int64(*v),
        ValueRef::Uint64(v) => Value::Uint64(*v),
        ValueRef::Double(v) => Value::Double(*v),
        ValueRef::String(s) => Value::String(s.to_vec()),
        ValueRef::Composite(b) | ValueRef::Any(b) => {
            let node = yson::from_slice(b).expect("a source gives valid YSON");
            value_from_node(&node, ty).expect("a source gives values of the column type")
        }
    }
}

/// Reads every row of a stream as owned values.
pub fn read_all(
    source: SourceFn,
    schemas: &[TableSchema],
    bytes: Vec<u8>,
) -> Result<Vec<Row>, FormatError> {
    let mut source = source(schemas, Box::new(std::io::Cursor::new(bytes)))?;
    let mut rows = Vec::new();
    while let Some(row) = source.next_row()? {
        let schema = &schemas[row.position.table_index];
        assert_eq!(row.values.len(), schema.columns.len());
        let values = row
            .values
            .iter()
            .zip(&schema.columns)
            .map(|(v, c)| owned(v, &c.ty))
            .collect();
        rows.push((row.position, values));
    }
    Ok(rows)
}

/// Reads a stream and writes every row again from its views (the `write_row` path).
pub fn copy_through_views(
    source: SourceFn,
    sink: SinkFn,
    schemas: &[TableSchema],
    bytes: Vec<u8>,
) -> Result<Vec<u8>, FormatError> {
    let mut source = source(schemas, Box::new(std::io::Cursor::new(bytes)))?;
    let buffer = SharedOutput::default();
    let mut sink = sink(schemas, Box::new(buffer.clone()))?;
    while let Some(row) = source.next_row()? {
        sink.write_row(&row.position, row.values)?;
    }
    sink.finish()?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

/// Schemas of 1..5 uniquely named columns whose types nest up to three levels.
pub fn deep_schema() -> BoxedStrategy<TableSchema> {
    vec(arb_type(3), 1..5)
        .prop_map(|types| {
            TableSchema::new(
                types
                    .into_iter()
                    .enumerate()
                    .map(|(i, ty)| ColumnSchema::new(format!("col_{i}"), ty))
                    .collect(),
            )
        })
        .boxed()
}

/// Rows of `schema`.
pub fn rows_of(
    schema: &TableSchema,
    count: std::ops::Range<usize>,
) -> BoxedStrategy<Vec<Vec<Value>>> {
    let row: Vec<BoxedStrategy<Value>> = schema.columns.iter().map(|c| arb_value(&c.ty)).collect();
    vec(row, count).boxed()
}

/// A schema with 0..6 rows of it (table 0, no positions).
pub fn schema_with_rows() -> BoxedStrategy<(TableSchema, Vec<Vec<Value>>)> {
    deep_schema()
        .prop_flat_map(|schema| {
            let rows = rows_of(&schema, 0..6);
            (Just(schema), rows)
        })
        .boxed()
}

pub fn plain_rows(rows: Vec<Vec<Value>>) -> Vec<Row> {
    rows.into_iter()
        .map(|v| (RowPosition::default(), v))
        .collect()
}
