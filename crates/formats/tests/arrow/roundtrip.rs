//! Arrow IPC: every value of random deep schemas survives rows -> stream -> rows, through the
//! row interface and the columnar one; dictionaries, table switches and positions.

use crate::support;

use std::sync::Arc;

use arrow_schema::DataType;
use proptest::prelude::*;
use shapeshift_formats::arrow::rows::{batch_to_rows, rows_to_batch, BatchReader, BatchWriter};
use shapeshift_formats::arrow::{self, arrow_schema};
use shapeshift_formats::table::{RowPosition, RowSink, SharedOutput};
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

fn small_batches(
    schemas: &[TableSchema],
    output: Box<dyn std::io::Write>,
) -> Result<Box<dyn RowSink>, shapeshift_formats::table::FormatError> {
    Ok(Box::new(
        BatchWriter::new(schemas, output).with_batch_rows(2),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn rows_round_trip((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        for sink in [arrow::rows::sink as SinkFn, small_batches as SinkFn] {
            let bytes = write_owned(sink, &schemas, &rows).unwrap();
            let back = read_all(arrow::rows::source, &schemas, bytes.clone()).unwrap();
            prop_assert_eq!(&back, &rows);
            let again = copy_through_views(arrow::rows::source, sink, &schemas, bytes.clone()).unwrap();
            prop_assert_eq!(read_all(arrow::rows::source, &schemas, again).unwrap(), rows.clone());
        }
    }

    #[test]
    fn streams_describe_their_tables((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let bytes = write_owned(arrow::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        let tables = arrow::stream_tables(&bytes).unwrap();
        prop_assert_eq!(tables, vec![(0, schemas[0].clone())]);
    }

    /// The row writer builds lists, structs, tuples and dicts with builders of their own,
    /// the columnar path from owned values: both must make the same arrays.
    #[test]
    fn row_writer_builds_the_columnar_arrays((schema, rows) in schema_with_rows()) {
        let expected = rows_to_batch(&schema, &rows).unwrap();
        let schemas = [schema];
        let bytes = write_owned(arrow::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        let mut reader = BatchReader::new(&schemas, Box::new(std::io::Cursor::new(bytes)));
        let mut at = 0;
        while let Some((_, batch)) = reader.next_batch().unwrap() {
            for (c, column) in batch.columns().iter().enumerate() {
                if matches!(column.data_type(), DataType::Dictionary(..)) {
                    continue;
                }
                let want = expected.column(c).slice(at, batch.num_rows());
                prop_assert_eq!(column.to_data(), want.to_data(), "column {}", c);
            }
            at += batch.num_rows();
        }
        prop_assert_eq!(at, expected.num_rows());
    }

    #[test]
    fn batches_round_trip((schema, rows) in schema_with_rows()) {
        let batch = rows_to_batch(&schema, &rows).unwrap();
        prop_assert_eq!(batch.num_rows(), rows.len());
        let batch_schema = batch.schema();
        prop_assert_eq!(batch_schema.as_ref(), &arrow_schema(&schema));
        prop_assert_eq!(batch_to_rows(&schema, &batch).unwrap(), rows);
    }
}

fn strings(name: &str, ty: PrimitiveType) -> ColumnSchema {
    ColumnSchema::new(name, Type::optional(Type::Primitive(ty)))
}

#[test]
fn low_cardinality_strings_become_dictionaries() {
    let schema = TableSchema::new(vec![
        strings("country", PrimitiveType::Utf8),
        strings("id", PrimitiveType::String),
    ]);
    let rows: Vec<Row> = (0..100)
        .map(|i| {
            let country = if i % 7 == 0 {
                Value::Null
            } else {
                Value::String(format!("c{}", i % 5).into_bytes())
            };
            (
                RowPosition::default(),
                vec![country, Value::String(format!("id{i}").into_bytes())],
            )
        })
        .collect();
    let schemas = [schema];
    let bytes = write_owned(arrow::rows::sink, &schemas, &rows).unwrap();
    let mut reader = BatchReader::new(&schemas, Box::new(std::io::Cursor::new(bytes.clone())));
    let (table, batch) = reader.next_batch().unwrap().unwrap();
    assert_eq!(table, 0);
    assert!(
        matches!(batch.column(0).data_type(), DataType::Dictionary(..)),
        "{:?}",
        batch.schema()
    );
    assert_eq!(batch.column(1).data_type(), &DataType::Binary);
    assert_eq!(
        read_all(arrow::rows::source, &schemas, bytes).unwrap(),
        rows
    );
}

#[test]
fn table_switches_start_new_streams_and_positions_survive() {
    let a = TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let b = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::Utf8),
    )]);
    let schemas = [a, b];
    let at = |table_index, row_index, range_index, key_switch| RowPosition {
        table_index,
        row_index,
        range_index,
        key_switch,
    };
    let rows = vec![
        (at(0, None, None, false), vec![Value::Int64(1)]),
        (at(1, None, None, false), vec![Value::String(b"x".to_vec())]),
        (
            at(1, Some(5), Some(1), true),
            vec![Value::String(b"y".to_vec())],
        ),
        (at(0, Some(10), None, false), vec![Value::Int64(2)]),
        (at(0, Some(11), None, false), vec![Value::Int64(3)]),
    ];
    let bytes = write_owned(arrow::rows::sink, &schemas, &rows).unwrap();
    assert_eq!(
        read_all(arrow::rows::source, &schemas, bytes.clone()).unwrap(),
        rows
    );
    let streams = |bytes: &[u8]| {
        let mut reader = BatchReader::new(&schemas, Box::new(std::io::Cursor::new(bytes.to_vec())));
        let mut tables = Vec::new();
        while let Some((table, batch)) = reader.next_batch().unwrap() {
            tables.push((table, batch.num_columns()));
        }
        tables
    };
    // One stream per run of a table; system columns only where the first batch needs them.
    assert_eq!(streams(&bytes), vec![(0, 1), (1, 4), (0, 4)]);
    // With one-row batches, a batch needing system columns restarts the stream.
    let one_row = |s: &[TableSchema],
                   o: Box<dyn std::io::Write>|
     -> Result<Box<dyn RowSink>, shapeshift_formats::table::FormatError> {
        Ok(Box::new(BatchWriter::new(s, o).with_batch_rows(1)))
    };
    let single = write_owned(one_row, &schemas, &rows).unwrap();
    assert_eq!(
        streams(&single),
        vec![(0, 1), (1, 1), (1, 4), (0, 4), (0, 4)]
    );
    assert_eq!(
        read_all(arrow::rows::source, &schemas, single).unwrap(),
        rows
    );
    // The first stream is a standard one: arrow-rs reads it alone.
    let first =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    let batches: Vec<_> = first.collect::<Result<_, _>>().unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(
        batches[0]
            .schema()
            .metadata()
            .get("yt.table_index")
            .map(String::as_str),
        Some("0")
    );
}

#[test]
fn type_mapping_uses_arrow_types_and_extensions() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("u", Type::Primitive(PrimitiveType::Uuid)),
        ColumnSchema::new("j", Type::Primitive(PrimitiveType::Json)),
        ColumnSchema::new("t", Type::Primitive(PrimitiveType::Timestamp)),
        ColumnSchema::new(
            "d",
            Type::Decimal {
                precision: 40,
                scale: 2,
            },
        ),
        ColumnSchema::new(
            "v",
            Type::VariantTuple(vec![
                Type::Primitive(PrimitiveType::Int8),
                Type::Primitive(PrimitiveType::Utf8),
            ]),
        ),
        ColumnSchema::new(
            "m",
            Type::dict(
                Type::Primitive(PrimitiveType::Utf8),
                Type::Primitive(PrimitiveType::Double),
            ),
        ),
        ColumnSchema::new("y", Type::optional(Type::Primitive(PrimitiveType::Yson))),
    ]);
    let arrow = Arc::new(arrow_schema(&schema));
    let f = |i: usize| arrow.field(i).clone();
    assert_eq!(f(0).data_type(), &DataType::FixedSizeBinary(16));
    assert_eq!(
        f(0).metadata().get("ARROW:extension:name").unwrap(),
        "arrow.uuid"
    );
    assert_eq!(
        f(1).metadata().get("ARROW:extension:name").unwrap(),
        "arrow.json"
    );
    assert_eq!(
        f(2).data_type(),
        &DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None)
    );
    assert_eq!(f(3).data_type(), &DataType::Decimal256(40, 2));
    assert!(matches!(
        f(4).data_type(),
        DataType::Union(_, arrow_schema::UnionMode::Dense)
    ));
    assert!(matches!(f(5).data_type(), DataType::Map(..)));
    assert_eq!(
        f(6).metadata().get("ARROW:extension:name").unwrap(),
        "yt.yson"
    );
    assert!(f(6).is_nullable());
    assert_eq!(f(2).metadata().get("yt.type_v3").unwrap(), "\"timestamp\"");
}

#[test]
fn empty_stream_still_has_a_schema() {
    let schemas = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )])];
    let bytes = write_owned(arrow::rows::sink, &schemas, &[]).unwrap();
    assert!(!bytes.is_empty());
    assert_eq!(
        read_all(arrow::rows::source, &schemas, bytes).unwrap(),
        vec![]
    );
}

/// A row refused halfway through a composite value leaves nothing behind: not in the
/// columns before it, not in the children of the column that failed.
#[test]
fn a_refused_composite_row_leaves_no_trace() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        ColumnSchema::new(
            "items",
            Type::list(Type::Struct(vec![
                shapeshift_types::Member::new("a", Type::Primitive(PrimitiveType::Int32)),
                shapeshift_types::Member::new(
                    "b",
                    Type::list(Type::Primitive(PrimitiveType::Double)),
                ),
            ])),
        ),
        ColumnSchema::new(
            "dict",
            Type::dict(
                Type::Primitive(PrimitiveType::Int64),
                Type::Primitive(PrimitiveType::Utf8),
            ),
        ),
    ]);
    let item = |a: i64, b: Vec<f64>| {
        Value::Tuple(vec![
            Value::Int64(a),
            Value::List(b.into_iter().map(Value::Double).collect()),
        ])
    };
    let good = |id: i64| {
        vec![
            Value::Int64(id),
            Value::List(vec![item(id, vec![1.5, 2.5]), item(-1, vec![])]),
            Value::Dict(vec![(Value::Int64(id), Value::String(b"x".to_vec()))]),
        ]
    };
    let refused = [
        // The second item's list holds a string.
        vec![
            Value::Int64(7),
            Value::List(vec![
                item(1, vec![3.0]),
                Value::Tuple(vec![
                    Value::Int64(2),
                    Value::List(vec![Value::Double(4.0), Value::String(b"no".to_vec())]),
                ]),
            ]),
            Value::Dict(vec![]),
        ],
        // int32 out of range after a good item.
        vec![
            Value::Int64(8),
            Value::List(vec![item(1, vec![3.0]), item(1 << 40, vec![])]),
            Value::Dict(vec![]),
        ],
        // The dict's second value is not UTF-8, after the list column was appended.
        vec![
            Value::Int64(9),
            Value::List(vec![item(1, vec![3.0])]),
            Value::Dict(vec![
                (Value::Int64(1), Value::String(b"ok".to_vec())),
                (Value::Int64(2), Value::String(vec![0xFF])),
            ]),
        ],
    ];
    let schemas = [schema];
    let mut out = Vec::new();
    {
        let buffer = SharedOutput::default();
        let mut sink = arrow::rows::sink(&schemas, Box::new(buffer.clone())).unwrap();
        let position = RowPosition::default();
        sink.write_owned_row(&position, &good(1)).unwrap();
        for row in &refused {
            let e = sink.write_owned_row(&position, row).unwrap_err();
            assert!(e.message.contains("column"), "{e}");
        }
        sink.write_owned_row(&position, &good(2)).unwrap();
        sink.finish().unwrap();
        out.extend_from_slice(&buffer.take());
    }
    let rows: Vec<Row> = [good(1), good(2)]
        .into_iter()
        .map(|r| (RowPosition::default(), r))
        .collect();
    assert_eq!(read_all(arrow::rows::source, &schemas, out).unwrap(), rows);
}
