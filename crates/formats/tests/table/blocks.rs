//! Reading by blocks (`RowSource::next_rows`) gives exactly what reading row by row gives, in
//! every format: the same rows, the same positions (table switches, row and range indexes,
//! key switches), and on a cut-off stream the same good rows before the same failure.

use crate::support as row_formats_support;

use std::io::Cursor;

use proptest::prelude::*;
use row_formats_support::{deep_schema, owned, rows_of, Row};
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::SharedOutput;
use shapeshift_formats::table::{RowPosition, RowSource};
use shapeshift_types::{TableSchema, Value, ValueRef};

/// Formats that carry row and range indexes and key switches between rows.
const WITH_CONTROLS: [FormatKind; 5] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
];

/// Formats this crate's table layer implements itself: they take every schema.
const OWN: [FormatKind; 6] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Skiff,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
];

/// How a stream ended after its rows: cleanly, or with an error.
type Outcome = (Vec<(RowPosition, String)>, bool);

/// A row as comparable text: its position and the debug form of its owned values (NaN equals
/// NaN this way, and both readers decode the same bytes).
fn comparable(
    schemas: &[TableSchema],
    position: RowPosition,
    values: &[ValueRef<'_>],
) -> (RowPosition, String) {
    let schema = &schemas[position.table_index];
    assert_eq!(values.len(), schema.columns.len(), "one value per column");
    let owned: Vec<_> = values
        .iter()
        .zip(&schema.columns)
        .map(|(v, c)| owned(v, &c.ty))
        .collect();
    (position, format!("{owned:?}"))
}

fn source(kind: FormatKind, schemas: &[TableSchema], bytes: &[u8]) -> Option<Box<dyn RowSource>> {
    // A stream cut inside its header (Arrow, Avro) fails at opening, the same for both ways.
    open_source(kind, schemas, Box::new(Cursor::new(bytes.to_vec()))).ok()
}

fn by_rows(kind: FormatKind, schemas: &[TableSchema], bytes: &[u8]) -> Option<Outcome> {
    let mut source = source(kind, schemas, bytes)?;
    let mut rows = Vec::new();
    loop {
        match source.next_row() {
            Ok(Some(row)) => rows.push(comparable(schemas, row.position, row.values)),
            Ok(None) => return Some((rows, false)),
            Err(_) => return Some((rows, true)),
        }
    }
}

/// Reads by blocks; with `mixed`, every other call reads a single row instead.
fn by_blocks(
    kind: FormatKind,
    schemas: &[TableSchema],
    bytes: &[u8],
    mixed: bool,
) -> Option<Outcome> {
    let mut source = source(kind, schemas, bytes)?;
    let mut rows = Vec::new();
    let mut call = 0usize;
    loop {
        call += 1;
        if mixed && call % 2 == 0 {
            match source.next_row() {
                Ok(Some(row)) => rows.push(comparable(schemas, row.position, row.values)),
                Ok(None) => return Some((rows, false)),
                Err(_) => return Some((rows, true)),
            }
            continue;
        }
        match source.next_rows() {
            Ok(Some(block)) => {
                assert!(block.rows >= 1, "{kind}: an empty block");
                assert_eq!(
                    block.values.len(),
                    block.rows * block.columns,
                    "{kind}: block shape"
                );
                for i in 0..block.rows {
                    let position = block.position(i);
                    assert_eq!(
                        position.table_index, block.first.table_index,
                        "{kind}: block spans tables"
                    );
                    rows.push(comparable(schemas, position, block.values_of(i)));
                }
            }
            Ok(None) => return Some((rows, false)),
            Err(_) => return Some((rows, true)),
        }
    }
}

fn write(kind: FormatKind, schemas: &[TableSchema], rows: &[Row]) -> Option<Vec<u8>> {
    let buffer = SharedOutput::default();
    // Not every format takes every schema (Protobuf, Arrow, Avro have limits of their own).
    let mut sink = open_sink(kind, schemas, Box::new(buffer.clone())).ok()?;
    for (position, values) in rows {
        sink.write_owned_row(position, values)
            .expect("writing generated rows");
    }
    sink.finish().expect("finishing");
    drop(sink);
    let bytes = buffer.take();
    Some(bytes)
}

/// Per row: flip the table (1), jump the row index by, start a new range when jumping (1),
/// key switch.
type Mark = (usize, i64, i64, bool);

/// Two tables and up to 120 rows spread over them in runs, with row indexes that mostly count
/// on (so blocks form) and sometimes jump, range switches and key switches.
fn case() -> impl Strategy<
    Value = (
        Vec<TableSchema>,
        Vec<Mark>,
        Vec<Vec<Value>>,
        Vec<Vec<Value>>,
    ),
> {
    (deep_schema(), deep_schema()).prop_flat_map(|(a, b)| {
        let marks = prop::collection::vec(
            (
                prop::sample::select(vec![0usize, 0, 0, 0, 0, 0, 0, 1]),
                prop::sample::select(vec![0i64, 0, 0, 0, 0, 0, 3]),
                0i64..2,
                prop::sample::select(vec![false, false, false, false, false, false, false, true]),
            ),
            0..120,
        );
        let rows_a = rows_of(&a, 120..121);
        let rows_b = rows_of(&b, 120..121);
        (Just(vec![a, b]), marks, rows_a, rows_b)
    })
}

/// The rows of a case: a table switch mark flips the current table.
fn rows_of_case(marks: &[Mark], rows: [&[Vec<Value>]; 2], positions: bool) -> Vec<Row> {
    let mut table = 0usize;
    let mut next_index = 0i64;
    let mut range = 0i64;
    marks
        .iter()
        .enumerate()
        .map(|(i, &(switch, jump, range_switch, key_switch))| {
            table ^= switch;
            let position = if positions {
                next_index += jump;
                if range_switch == 1 && jump > 0 {
                    range += 1;
                }
                let p = RowPosition {
                    table_index: table,
                    row_index: Some(next_index),
                    range_index: Some(range),
                    key_switch,
                };
                next_index += 1;
                p
            } else {
                RowPosition {
                    table_index: table,
                    ..RowPosition::default()
                }
            };
            (position, rows[table][i].clone())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn blocks_give_the_rows_and_positions_of_single_reads(
        (schemas, marks, rows_a, rows_b) in case(),
        cut in 0.0f64..1.0,
    ) {
        for kind in FormatKind::ALL {
            let positions = WITH_CONTROLS.contains(&kind);
            let rows = rows_of_case(&marks, [&rows_a, &rows_b], positions);
            let Some(bytes) = write(kind, &schemas, &rows) else {
                // The table layer's own formats take every schema; the others have limits.
                prop_assert!(!OWN.contains(&kind), "{} refused the schemas", kind);
                continue;
            };
            let whole = by_rows(kind, &schemas, &bytes).expect("a whole stream opens");
            prop_assert!(!whole.1, "{}: the whole stream fails", kind);
            prop_assert_eq!(whole.0.len(), rows.len(), "{}: row count", kind);
            for mixed in [false, true] {
                let blocks = by_blocks(kind, &schemas, &bytes, mixed).expect("a whole stream opens");
                prop_assert_eq!(&blocks, &whole, "{}: whole stream, mixed {}", kind, mixed);
            }
            // The same stream cut short: the same good rows, then the same failure (or end).
            let truncated = &bytes[..(bytes.len() as f64 * cut) as usize];
            let single = by_rows(kind, &schemas, truncated);
            let blocks = by_blocks(kind, &schemas, truncated, false);
            prop_assert_eq!(&blocks, &single, "{}: cut at {} of {}", kind, truncated.len(), bytes.len());
        }
    }
}
