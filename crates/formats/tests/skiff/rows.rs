//! Skiff through the common interface when the input arrives in tiny pieces: the row source
//! scans rows in place in the stream reader's refilled buffer, so a row split across reads
//! (at any byte) must come back exactly as from one whole read, positions included, and a
//! truncated stream must fail at the same byte offset and row either way.

use shapeshift_formats::table::SharedOutput;
use std::io::{Cursor, Read};

use proptest::prelude::*;
use proptest::sample::select;
use shapeshift_formats::registry::{open_sink_with, open_source_with, FormatKind, FormatOptions};
use shapeshift_formats::table::{value_from_ref, FormatError, RowPosition, RowSource};
use shapeshift_types::testing::{arb_type, arb_value};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

/// A reader that hands out at most `chunk` bytes per call.
struct Trickle {
    data: Vec<u8>,
    at: usize,
    chunk: usize,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

type Rows = Vec<(RowPosition, Vec<Value>)>;

fn options() -> FormatOptions {
    FormatOptions {
        skiff_system_columns: true,
        ..FormatOptions::default()
    }
}

/// Scalar-only tables (every column borrowable: the source's fast path) and tables with
/// composite columns (the scratch path).
fn arb_table() -> impl Strategy<Value = TableSchema> {
    let scalar = select(vec![
        Type::Primitive(P::Int64),
        Type::Primitive(P::Uint32),
        Type::Primitive(P::String),
        Type::Primitive(P::Double),
        Type::Primitive(P::Bool),
        Type::optional(Type::Primitive(P::Utf8)),
        Type::optional(Type::Primitive(P::Int8)),
    ]);
    let column = prop_oneof![3 => scalar.boxed(), 1 => arb_type(2)];
    prop::collection::vec(column, 1..5).prop_map(|types| {
        TableSchema::new(
            types
                .into_iter()
                .enumerate()
                .map(|(i, ty)| ColumnSchema::new(format!("c{i}"), ty))
                .collect(),
        )
    })
}

fn arb_case() -> impl Strategy<Value = (Vec<TableSchema>, Rows)> {
    prop::collection::vec(arb_table(), 1..3).prop_flat_map(|schemas| {
        let tables = schemas.len();
        let for_rows = schemas.clone();
        let row = (0..tables).prop_flat_map(move |table| {
            let values: Vec<BoxedStrategy<Value>> = for_rows[table]
                .columns
                .iter()
                .map(|c| arb_value(&c.ty))
                .collect();
            (Just(table), values, 0i64..3, any::<bool>(), any::<bool>())
        });
        let rows = prop::collection::vec(row, 0..8).prop_map(|rows| {
            let mut next_index = 0i64;
            rows.into_iter()
                .map(|(table, values, jump, range, key_switch)| {
                    next_index += jump;
                    let position = RowPosition {
                        table_index: table,
                        row_index: Some(next_index),
                        range_index: Some(i64::from(range)),
                        key_switch,
                    };
                    next_index += 1;
                    (position, values)
                })
                .collect::<Rows>()
        });
        (Just(schemas), rows)
    })
}

fn write(schemas: &[TableSchema], rows: &Rows) -> Vec<u8> {
    let buffer = SharedOutput::default();
    let mut sink = open_sink_with(
        FormatKind::Skiff,
        schemas,
        Box::new(buffer.clone()),
        &options(),
    )
    .unwrap();
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    buffer.take()
}

/// Every row of `source` (through `next_row`, or `next_row_with_other_columns`), owned.
fn read_all(
    schemas: &[TableSchema],
    source: &mut dyn RowSource,
    with_others: bool,
) -> Result<Rows, FormatError> {
    let mut rows = Vec::new();
    loop {
        let row = if with_others {
            source.next_row_with_other_columns()?.map(|(row, others)| {
                assert!(others.is_none(), "no other columns were written");
                row
            })
        } else {
            source.next_row()?
        };
        let Some(row) = row else {
            return Ok(rows);
        };
        let values = row
            .values
            .iter()
            .zip(&schemas[row.position.table_index].columns)
            .map(|(v, c)| value_from_ref(*v, &c.ty).unwrap())
            .collect();
        rows.push((row.position, values));
    }
}

fn open(schemas: &[TableSchema], input: Box<dyn Read>) -> Box<dyn RowSource> {
    open_source_with(FormatKind::Skiff, schemas, input, &options()).unwrap()
}

/// Rows compare by their debug text, so that a NaN equals the NaN it was written as.
fn comparable(rows: &Rows) -> String {
    format!("{rows:?}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn rows_are_the_same_when_the_input_arrives_in_tiny_chunks(
        (schemas, rows) in arb_case(),
        chunk in 1usize..9,
        with_others in any::<bool>(),
    ) {
        let bytes = write(&schemas, &rows);
        let whole = read_all(&schemas, open(&schemas, Box::new(Cursor::new(bytes.clone()))).as_mut(), with_others).unwrap();
        prop_assert_eq!(comparable(&whole), comparable(&rows));
        let trickled = read_all(
            &schemas,
            open(&schemas, Box::new(Trickle { data: bytes, at: 0, chunk })).as_mut(),
            with_others,
        ).unwrap();
        prop_assert_eq!(comparable(&trickled), comparable(&rows));
    }

    #[test]
    fn a_truncated_stream_fails_at_the_same_place_in_tiny_chunks(
        (schemas, rows) in arb_case(),
        cut in any::<prop::sample::Index>(),
        chunk in 1usize..9,
    ) {
        let bytes = write(&schemas, &rows);
        prop_assume!(!bytes.is_empty());
        let cut = cut.index(bytes.len());
        let truncated = bytes[..cut].to_vec();
        let whole = read_all(&schemas, open(&schemas, Box::new(Cursor::new(truncated.clone()))).as_mut(), false);
        let trickled = read_all(
            &schemas,
            open(&schemas, Box::new(Trickle { data: truncated, at: 0, chunk })).as_mut(),
            false,
        );
        match (whole, trickled) {
            // A cut between rows: the rows before it, the same either way.
            (Ok(a), Ok(b)) => prop_assert_eq!(comparable(&a), comparable(&b)),
            (Err(a), Err(b)) => {
                prop_assert!(a.offset.is_some_and(|o| o <= cut as u64), "{}", a);
                prop_assert_eq!(a.offset, b.offset);
                prop_assert_eq!(a.row, b.row);
                prop_assert_eq!(a.message, b.message);
            }
            (a, b) => prop_assert!(false, "whole {:?} vs trickled {:?}", a.map(|r| r.len()), b.map(|r| r.len())),
        }
    }
}
