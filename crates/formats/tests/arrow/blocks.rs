//! Arrow: reading by blocks (`RowSource::next_rows`, a transposed chunk at once) gives the
//! rows and positions reading by `next_row` gives, for narrow tables (viewed a row at a time
//! by `next_row`) and wide ones (chunked both ways), across batches, chunks and table
//! switches, with positions carried as system columns, and on bad input the same good rows
//! before the same error.

use crate::support;

use std::io::Cursor;

use proptest::prelude::*;
use shapeshift_formats::arrow::rows::BatchWriter;
use shapeshift_formats::arrow::{self};
use shapeshift_formats::table::SharedOutput;
use shapeshift_formats::table::{RowPosition, RowSink, RowSource};
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value, ValueRef};
use support::owned;

/// A table of `width` columns cycling through int64, string, optional<double>, bool and
/// list<int32> (the last has a per-batch YSON plan, so composites are in the chunks too).
fn table(width: usize, name: &str, non_null_first: bool) -> TableSchema {
    let p = Type::Primitive;
    TableSchema::new(
        (0..width)
            .map(|c| {
                let ty = match c % 5 {
                    0 if non_null_first => p(PrimitiveType::Int64),
                    0 => Type::optional(p(PrimitiveType::Int64)),
                    1 => p(PrimitiveType::String),
                    2 => Type::optional(p(PrimitiveType::Double)),
                    3 => p(PrimitiveType::Bool),
                    _ => Type::list(p(PrimitiveType::Int32)),
                };
                ColumnSchema::new(format!("{name}{c}"), ty)
            })
            .collect(),
    )
}

fn value(column: usize, row: usize, nulls_at: &[usize]) -> Value {
    match column % 5 {
        0 if nulls_at.contains(&row) => Value::Null,
        0 => Value::Int64(row as i64 * 7 - column as i64),
        1 => Value::String(format!("r{row}c{column}").into_bytes()),
        2 if (row + column) % 3 == 0 => Value::Null,
        2 => Value::Double(row as f64 / 4.0),
        3 => Value::Bool((row ^ column) & 1 == 1),
        _ => Value::List(
            (0..(row + column) % 4)
                .map(|k| Value::Int64(k as i64 - 1))
                .collect(),
        ),
    }
}

/// One stretch of rows of one table, with or without positions.
struct Stretch {
    table_index: usize,
    rows: usize,
    positioned: bool,
}

/// Writes the stretches (small batches, so there are many) and returns the bytes.
fn write(schemas: &[TableSchema], stretches: &[Stretch], nulls_at: &[usize]) -> Vec<u8> {
    let buffer = SharedOutput::default();
    let mut sink = BatchWriter::new(schemas, Box::new(buffer.clone())).with_batch_rows(600);
    let mut n = 0usize;
    for stretch in stretches {
        let width = schemas[stretch.table_index].columns.len();
        for r in 0..stretch.rows {
            let position = RowPosition {
                table_index: stretch.table_index,
                // Row indexes with a jump every 50 rows, range switches every 200 rows, a key
                // switch every 70: blocks must be cut at each.
                row_index: stretch
                    .positioned
                    .then(|| (r + r / 50 * 3) as i64)
                    .filter(|_| r % 97 != 96),
                range_index: stretch.positioned.then_some((r / 200) as i64),
                key_switch: stretch.positioned && r % 70 == 69,
            };
            let row: Vec<Value> = (0..width).map(|c| value(c, n, nulls_at)).collect();
            sink.write_owned_row(&position, &row).unwrap();
            n += 1;
        }
    }
    sink.finish().unwrap();
    drop(sink);
    let bytes = buffer.take();
    bytes
}

/// What a read gave: each row's position and owned values, and whether it ended in an error
/// (with the error's row).
type Outcome = (Vec<(RowPosition, Vec<Value>)>, Option<Option<u64>>);

fn open(schemas: &[TableSchema], bytes: &[u8]) -> Box<dyn RowSource> {
    arrow::rows::source(schemas, Box::new(Cursor::new(bytes.to_vec()))).unwrap()
}

fn keep(
    schemas: &[TableSchema],
    position: RowPosition,
    values: &[ValueRef<'_>],
) -> (RowPosition, Vec<Value>) {
    let columns = &schemas[position.table_index].columns;
    assert_eq!(values.len(), columns.len());
    let values = values
        .iter()
        .zip(columns)
        .map(|(v, c)| owned(v, &c.ty))
        .collect();
    (position, values)
}

fn by_rows(schemas: &[TableSchema], bytes: &[u8]) -> Outcome {
    let mut source = open(schemas, bytes);
    let mut rows = Vec::new();
    loop {
        match source.next_row() {
            Ok(Some(row)) => rows.push(keep(schemas, row.position, row.values)),
            Ok(None) => return (rows, None),
            Err(e) => return (rows, Some(e.row)),
        }
    }
}

/// Reads by blocks; with `mixed`, every third call reads one row with `next_row` instead.
fn by_blocks(schemas: &[TableSchema], bytes: &[u8], mixed: bool) -> (Outcome, usize) {
    let mut source = open(schemas, bytes);
    let mut rows = Vec::new();
    let mut calls = 0usize;
    loop {
        calls += 1;
        if mixed && calls % 3 == 0 {
            match source.next_row() {
                Ok(Some(row)) => rows.push(keep(schemas, row.position, row.values)),
                Ok(None) => return ((rows, None), calls),
                Err(e) => return ((rows, Some(e.row)), calls),
            }
            continue;
        }
        match source.next_rows() {
            Ok(Some(block)) => {
                assert!(block.rows >= 1, "a block has rows");
                assert_eq!(block.values.len(), block.rows * block.columns);
                for row in block.iter() {
                    rows.push(keep(schemas, row.position, row.values));
                }
            }
            Ok(None) => return ((rows, None), calls),
            Err(e) => return ((rows, Some(e.row)), calls),
        }
    }
}

fn check_agree(schemas: &[TableSchema], bytes: &[u8]) -> Outcome {
    let single = by_rows(schemas, bytes);
    let (blocks, calls) = by_blocks(schemas, bytes, false);
    assert_eq!(blocks, single, "next_rows and next_row differ");
    let (mixed, _) = by_blocks(schemas, bytes, true);
    assert_eq!(mixed, single, "mixed reads differ");
    assert!(
        calls < single.0.len() / 4 + 10,
        "blocks hold many rows ({calls} calls for {} rows)",
        single.0.len()
    );
    single
}

#[test]
fn blocks_agree_with_rows_on_narrow_and_wide_tables_with_switches_and_positions() {
    for (narrow, wide) in [(3, 40), (7, 64)] {
        let schemas = [table(narrow, "n", false), table(wide, "w", false)];
        let stretches = [
            Stretch {
                table_index: 1,
                rows: 1500,
                positioned: false,
            },
            Stretch {
                table_index: 0,
                rows: 1300,
                positioned: false,
            },
            Stretch {
                table_index: 1,
                rows: 700,
                positioned: true,
            },
            Stretch {
                table_index: 0,
                rows: 650,
                positioned: true,
            },
        ];
        let bytes = write(&schemas, &stretches, &[]);
        let (rows, error) = check_agree(&schemas, &bytes);
        assert_eq!(error, None);
        assert_eq!(rows.len(), 1500 + 1300 + 700 + 650);
        // The positions written come back (the writer's system columns).
        assert_eq!(rows[1500].0.table_index, 0);
        assert_eq!(rows[2800 + 69].0.key_switch, true);
        assert_eq!(rows[2800 + 96].0.row_index, None);
        assert_eq!(rows[2800 + 250].0.range_index, Some(1));
        assert_eq!(rows[2800 + 60].0.row_index, Some(63));
    }
}

#[test]
fn a_bad_value_mid_chunk_comes_after_the_good_rows_both_ways() {
    for width in [4, 45] {
        // Written with nullable int64 columns, read as int64: a null is a bad value.
        let written = [table(width, "c", false)];
        let expected = [table(width, "c", true)];
        let stretches = [Stretch {
            table_index: 0,
            rows: 1000,
            positioned: false,
        }];
        let bytes = write(&written, &stretches, &[777, 900]);
        let (rows, error) = check_agree(&expected, &bytes);
        assert_eq!(rows.len(), 777, "every row before the bad one");
        assert_eq!(error, Some(Some(777)), "the error names the bad row");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Streams cut anywhere: the same good rows, then the same end, both ways.
    #[test]
    fn cut_streams_end_the_same_both_ways(width in 1usize..50, rows in 1usize..900, cut in 0.0f64..1.0, bad in proptest::collection::vec(0usize..900, 0..3)) {
        let written = [table(width, "c", false)];
        let expected = [table(width, "c", true)];
        let stretches = [Stretch { table_index: 0, rows, positioned: rows % 2 == 0 }];
        let bytes = write(&written, &stretches, &bad);
        let at = (bytes.len() as f64 * cut) as usize;
        let single = by_rows(&expected, &bytes[..at]);
        let (blocks, _) = by_blocks(&expected, &bytes[..at], false);
        prop_assert_eq!(&blocks, &single);
        let (mixed, _) = by_blocks(&expected, &bytes[..at], true);
        prop_assert_eq!(&mixed, &single);
    }
}
