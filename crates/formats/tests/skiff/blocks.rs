//! Skiff read by blocks (`RowSource::next_rows`) gives exactly what reading row by row gives:
//! the same rows, the same positions (table switches, row and range indexes, key switches),
//! whole or with the input in tiny chunks, mixed with `next_row` calls; on a cut-off or
//! corrupt tail the same good rows before the same error (offset, row, message); and a row
//! whose composite value cannot be decoded is reported after the good rows of its block,
//! with the rows after it still read.

use shapeshift_formats::table::SharedOutput;
use std::io::{Cursor, Read};

use proptest::prelude::*;
use proptest::sample::select;
use shapeshift_formats::registry::{open_sink_with, open_source_with, FormatKind, FormatOptions};
use shapeshift_formats::table::{value_from_ref, FormatError, RowPosition, RowSource};
use shapeshift_types::testing::{arb_type, arb_value};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value, ValueRef};

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

/// What a read gave: rows (as comparable text) and errors, in order.
#[derive(Debug, PartialEq)]
enum Event {
    Row(String),
    Error(Option<u64>, Option<u64>, String),
}

fn options(system_columns: bool) -> FormatOptions {
    FormatOptions {
        skiff_system_columns: system_columns,
        ..FormatOptions::default()
    }
}

/// Scalar-only tables (the borrowed path) and tables with composite columns (the scratch
/// path).
fn arb_table() -> impl Strategy<Value = TableSchema> {
    let scalar = select(vec![
        Type::Primitive(P::Int64),
        Type::Primitive(P::Uint32),
        Type::Primitive(P::String),
        Type::Primitive(P::Double),
        Type::Primitive(P::Bool),
        Type::optional(Type::Primitive(P::Utf8)),
        Type::optional(Type::Primitive(P::Int8)),
        Type::Primitive(P::Int16),
        Type::Primitive(P::Uint8),
        Type::Primitive(P::Uint16),
        Type::Primitive(P::Yson),
        Type::optional(Type::Primitive(P::Double)),
        Type::optional(Type::Primitive(P::Bool)),
        Type::optional(Type::Primitive(P::Uint64)),
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

/// Schemas and rows; with system columns, positions that switch tables, jump row indexes,
/// change ranges and switch keys (runs of one table are likely, so blocks form).
fn arb_case() -> impl Strategy<Value = (Vec<TableSchema>, Rows, bool)> {
    (prop::collection::vec(arb_table(), 1..3), any::<bool>()).prop_flat_map(|(schemas, system)| {
        let tables = schemas.len();
        let for_rows = schemas.clone();
        let row = (0..tables).prop_flat_map(move |table| {
            let values: Vec<BoxedStrategy<Value>> = for_rows[table]
                .columns
                .iter()
                .map(|c| arb_value(&c.ty))
                .collect();
            (
                Just(table),
                values,
                prop_oneof![4 => Just(0i64), 1 => 1i64..3],
                prop_oneof![4 => Just(0i64), 1 => 1i64..3],
                prop_oneof![4 => Just(false), 1 => Just(true)],
            )
        });
        let rows = prop::collection::vec(row, 0..24).prop_map(move |rows| {
            let mut next_index = 0i64;
            rows.into_iter()
                .map(|(table, values, jump, range, key_switch)| {
                    next_index += jump;
                    let position = if system {
                        RowPosition {
                            table_index: table,
                            row_index: Some(next_index),
                            range_index: Some(range),
                            key_switch,
                        }
                    } else {
                        RowPosition {
                            table_index: table,
                            ..RowPosition::default()
                        }
                    };
                    next_index += 1;
                    (position, values)
                })
                .collect::<Rows>()
        });
        (Just(schemas), rows, Just(system))
    })
}

fn write(schemas: &[TableSchema], rows: &Rows, system: bool) -> Vec<u8> {
    let buffer = SharedOutput::default();
    let mut sink = open_sink_with(
        FormatKind::Skiff,
        schemas,
        Box::new(buffer.clone()),
        &options(system),
    )
    .unwrap();
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    buffer.take()
}

fn row_event(schemas: &[TableSchema], position: RowPosition, values: &[ValueRef<'_>]) -> Event {
    let schema = &schemas[position.table_index];
    assert_eq!(values.len(), schema.columns.len(), "one value per column");
    // A corrupt tail can read as a row whose value is out of its type's range: both ways
    // must give the same, so it is described, not refused.
    let owned = values
        .iter()
        .zip(&schema.columns)
        .map(|(v, c)| value_from_ref(*v, &c.ty).map_err(|e| e.to_string()));
    Event::Row(describe(position, owned))
}

/// A row as comparable text: debug forms (a NaN equals the NaN it was written as).
fn describe(position: RowPosition, values: impl Iterator<Item = Result<Value, String>>) -> String {
    let values: Vec<String> = values
        .map(|v| match v {
            Ok(value) => format!("{value:?}"),
            Err(error) => format!("invalid ({error})"),
        })
        .collect();
    format!("{position:?} {values:?}")
}

fn error_event(error: FormatError) -> Event {
    Event::Error(error.offset, error.row, error.message)
}

/// How to read: row by row, by blocks, or alternating.
#[derive(Clone, Copy, Debug)]
enum Way {
    Rows,
    Blocks,
    Mixed,
}

/// Reads everything `way`, going on after an error (up to `errors` of them, then stops);
/// also returns the largest block seen.
fn read(
    schemas: &[TableSchema],
    source: &mut dyn RowSource,
    way: Way,
    errors: usize,
) -> (Vec<Event>, usize) {
    let mut events = Vec::new();
    let mut largest = 0;
    let mut seen_errors = 0;
    let mut call = 0usize;
    loop {
        call += 1;
        let by_row = match way {
            Way::Rows => true,
            Way::Blocks => false,
            Way::Mixed => call % 2 == 0,
        };
        let result = if by_row {
            source.next_row().map(|row| {
                row.map(|row| {
                    events.push(row_event(schemas, row.position, row.values));
                })
            })
        } else {
            source.next_rows().map(|block| {
                block.map(|block| {
                    assert!(block.rows >= 1, "a block has a row");
                    assert_eq!(block.values.len(), block.rows * block.columns);
                    largest = largest.max(block.rows);
                    for row in block.iter() {
                        events.push(row_event(schemas, row.position, row.values));
                    }
                })
            })
        };
        match result {
            Ok(Some(())) => {}
            Ok(None) => return (events, largest),
            Err(error) => {
                events.push(error_event(error));
                seen_errors += 1;
                if seen_errors >= errors {
                    return (events, largest);
                }
            }
        }
    }
}

fn open(schemas: &[TableSchema], input: Box<dyn Read>, system: bool) -> Box<dyn RowSource> {
    open_source_with(FormatKind::Skiff, schemas, input, &options(system)).unwrap()
}

fn read_bytes(
    schemas: &[TableSchema],
    bytes: &[u8],
    system: bool,
    way: Way,
    chunk: Option<usize>,
    errors: usize,
) -> (Vec<Event>, usize) {
    let input: Box<dyn Read> = match chunk {
        Some(chunk) => Box::new(Trickle {
            data: bytes.to_vec(),
            at: 0,
            chunk,
        }),
        None => Box::new(Cursor::new(bytes.to_vec())),
    };
    read(schemas, open(schemas, input, system).as_mut(), way, errors)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn blocks_give_the_rows_and_positions_of_row_by_row_reading(
        (schemas, rows, system) in arb_case(),
        chunk in prop::option::of(1usize..9),
    ) {
        let bytes = write(&schemas, &rows, system);
        let expected: Vec<Event> = rows
            .iter()
            .map(|(position, values)| {
                Event::Row(describe(*position, values.iter().cloned().map(Ok)))
            })
            .collect();
        let (by_rows, _) = read_bytes(&schemas, &bytes, system, Way::Rows, chunk, 1);
        prop_assert_eq!(&by_rows, &expected);
        for way in [Way::Blocks, Way::Mixed] {
            let (by_blocks, _) = read_bytes(&schemas, &bytes, system, way, chunk, 1);
            prop_assert_eq!(&by_blocks, &expected, "{:?}", way);
        }
    }

    #[test]
    fn a_cut_or_corrupt_tail_gives_the_same_rows_then_the_same_error(
        (schemas, rows, system) in arb_case(),
        cut in any::<prop::sample::Index>(),
        garbage in prop::collection::vec(any::<u8>(), 0..6),
        chunk in prop::option::of(1usize..9),
    ) {
        let mut bytes = write(&schemas, &rows, system);
        let cut = cut.index(bytes.len() + 1);
        bytes.truncate(cut);
        bytes.extend_from_slice(&garbage);
        let (by_rows, _) = read_bytes(&schemas, &bytes, system, Way::Rows, chunk, 1);
        for way in [Way::Blocks, Way::Mixed] {
            let (by_blocks, _) = read_bytes(&schemas, &bytes, system, way, chunk, 1);
            prop_assert_eq!(&by_blocks, &by_rows, "{:?}", way);
        }
    }

    /// Blocks of borrowed values are scanned and read in one pass (a block scan compiled per
    /// table), rows one by one by the general scanner: the two must accept exactly the same
    /// bytes. One byte changed anywhere (a length, an optional's tag, a boolean, a table
    /// index, inside `$other_columns` of a non-strict table) gives the same good rows, then
    /// the same error (offset, row, message), and the same rows after it where the reader
    /// goes on.
    #[test]
    fn a_corrupt_byte_anywhere_gives_the_same_rows_then_the_same_error(
        (schemas, rows, system) in arb_case(),
        strict in any::<bool>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        chunk in prop::option::of(1usize..9),
    ) {
        let schemas: Vec<TableSchema> = schemas
            .into_iter()
            .map(|mut schema| {
                schema.strict = strict;
                schema
            })
            .collect();
        let mut bytes = write(&schemas, &rows, system);
        if !bytes.is_empty() {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        let (by_rows, _) = read_bytes(&schemas, &bytes, system, Way::Rows, chunk, 1);
        for way in [Way::Blocks, Way::Mixed] {
            let (by_blocks, _) = read_bytes(&schemas, &bytes, system, way, chunk, 1);
            prop_assert_eq!(&by_blocks, &by_rows, "{:?}", way);
        }
    }
}

fn table(columns: &[(&str, Type)]) -> TableSchema {
    TableSchema::new(
        columns
            .iter()
            .map(|(name, ty)| ColumnSchema::new(*name, ty.clone()))
            .collect(),
    )
}

#[test]
fn blocks_hold_many_rows_and_are_cut_at_every_position_change() {
    let schemas = vec![
        table(&[
            ("id", Type::Primitive(P::Uint32)),
            ("data", Type::Primitive(P::String)),
        ]),
        table(&[("values", Type::list(Type::Primitive(P::Double)))]),
    ];
    let mut rows = Rows::new();
    let mut index = 0;
    let mut push = |table: usize, jump: i64, range: i64, key_switch: bool, rows: &mut Rows| {
        index += jump;
        let values = if table == 0 {
            vec![Value::Uint64(index as u64), Value::String(b"abc".to_vec())]
        } else {
            vec![Value::List(vec![Value::Double(index as f64)])]
        };
        rows.push((
            RowPosition {
                table_index: table,
                row_index: Some(index),
                range_index: Some(range),
                key_switch,
            },
            values,
        ));
        index += 1;
    };
    for _ in 0..100 {
        push(0, 0, 0, false, &mut rows);
    }
    push(1, 0, 0, false, &mut rows); // table switch
    push(1, 0, 0, false, &mut rows);
    push(1, 5, 0, false, &mut rows); // row index jump
    push(1, 0, 1, false, &mut rows); // range switch
    push(1, 0, 1, true, &mut rows); // key switch
    push(1, 0, 1, false, &mut rows);
    let bytes = write(&schemas, &rows, true);
    let mut source = open(&schemas, Box::new(Cursor::new(bytes)), true);
    let mut sizes = Vec::new();
    while let Some(block) = source.next_rows().unwrap() {
        sizes.push(block.rows);
    }
    assert_eq!(sizes, vec![100, 2, 1, 1, 2]);
}

/// A stream of `list<yson>` rows written by hand, the third with a yson payload that is not
/// YSON: the scan accepts it (a yson32 is any bytes), decoding it into the row fails.
#[test]
fn an_undecodable_row_comes_after_the_good_rows_of_its_block_and_reading_goes_on() {
    let schemas = vec![table(&[("items", Type::list(Type::Primitive(P::Yson)))])];
    let row = |payload: &[u8]| {
        let mut bytes = vec![0, 0, 0];
        bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        bytes.extend_from_slice(payload);
        bytes.push(0xFF);
        bytes
    };
    let mut bytes = Vec::new();
    for payload in [&b"1"[..], b"2", b"{", b"3", b"4"] {
        bytes.extend(row(payload));
    }
    let (by_rows, _) = read_bytes(&schemas, &bytes, false, Way::Rows, None, 3);
    assert_eq!(by_rows.len(), 5, "{by_rows:?}");
    let Event::Error(offset, row_number, message) = &by_rows[2] else {
        panic!("the third row fails: {by_rows:?}");
    };
    assert_eq!(*row_number, Some(2));
    assert_eq!(
        *offset,
        Some(2 * 9),
        "the row starts after two rows of 9 bytes"
    );
    assert!(message.contains("items"), "{message}");
    for way in [Way::Blocks, Way::Mixed] {
        let (by_blocks, largest) = read_bytes(&schemas, &bytes, false, way, None, 3);
        assert_eq!(by_blocks, by_rows, "{way:?}");
        if matches!(way, Way::Blocks) {
            assert_eq!(
                largest, 2,
                "the good rows before the bad one come as one block"
            );
        }
    }
}
