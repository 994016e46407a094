//! MessagePack and CBOR sources read their input through a window that is refilled between
//! (and, for a record cut by the window's end, within) rows: how the reader hands out the
//! bytes must change nothing. Every property compares a read through a reader that returns
//! a few bytes at a time (and is sometimes interrupted) with a read of the same bytes in
//! one piece: the same rows, positions and other columns (compared as the bytes a sink
//! writes for them), the same errors at the same offsets.

use shapeshift_formats::table::SharedOutput;
use std::io::{Cursor, Read};

use proptest::prelude::*;
use proptest::sample::select;
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{copy_rows, FormatError, RowPosition};
use shapeshift_types::testing::{arb_type, arb_value};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

const TREE_FORMATS: [FormatKind; 2] = [FormatKind::Msgpack, FormatKind::Cbor];

/// A reader that hands out its bytes in the chunk sizes given (cycled), failing with
/// `Interrupted` before every chunk of size 0.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.turn % self.sizes.len()];
        self.turn += 1;
        if size == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "try again",
            ));
        }
        let n = size.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn write(kind: FormatKind, schemas: &[TableSchema], rows: &[(RowPosition, Vec<Value>)]) -> Vec<u8> {
    let buffer = SharedOutput::default();
    let mut sink = open_sink(kind, schemas, Box::new(buffer.clone())).unwrap();
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    let bytes = buffer.take();
    bytes
}

/// Reads every row from `input` and writes it (with its other columns) to a sink of the
/// same format: the bytes written, or the first error.
fn copy(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Vec<u8>, FormatError> {
    let mut source = open_source(kind, schemas, input)?;
    let buffer = SharedOutput::default();
    let mut sink = open_sink(kind, schemas, Box::new(buffer.clone()))?;
    copy_rows(source.as_mut(), sink.as_mut())?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

/// Reads every row, keeping only the error (or the row count).
fn read_all(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<usize, FormatError> {
    let mut source = open_source(kind, schemas, input)?;
    let mut rows = 0;
    while source.next_row_with_other_columns()?.is_some() {
        rows += 1;
    }
    Ok(rows)
}

fn chunked(data: &[u8], sizes: &[usize]) -> Box<dyn Read> {
    Box::new(Chunked {
        data: data.to_vec(),
        at: 0,
        sizes: sizes.to_vec(),
        turn: 0,
    })
}

fn arb_table() -> impl Strategy<Value = TableSchema> {
    (
        prop::collection::vec((select(vec!["c", "é", "x y"]), arb_type(3)), 1..5),
        any::<bool>(),
    )
        .prop_map(|(columns, strict)| TableSchema {
            columns: columns
                .into_iter()
                .enumerate()
                .map(|(i, (prefix, ty))| ColumnSchema::new(format!("{prefix}{i}"), ty))
                .collect(),
            strict,
            unique_keys: false,
        })
}

type Rows = Vec<(RowPosition, Vec<Value>)>;

/// One or two tables and rows of them, with table switches, row and range indexes and key
/// switches.
fn arb_stream() -> impl Strategy<Value = (Vec<TableSchema>, Rows)> {
    prop::collection::vec(arb_table(), 1..3).prop_flat_map(|schemas| {
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
                prop::option::of(0i64..1000),
                prop::option::of(0i64..3),
                any::<bool>(),
            )
        });
        let rows = prop::collection::vec(row, 0..8).prop_map(|rows| {
            rows.into_iter()
                .map(|(table, values, row_index, range_index, key_switch)| {
                    let position = RowPosition {
                        table_index: table,
                        row_index,
                        range_index,
                        key_switch,
                    };
                    (position, values)
                })
                .collect()
        });
        (Just(schemas), rows)
    })
}

/// Chunk sizes: mostly 1..8 bytes, sometimes an interruption (0); at least one is not 0.
fn arb_sizes() -> impl Strategy<Value = Vec<usize>> {
    (prop::collection::vec(0usize..8, 0..6), 1usize..8).prop_map(|(mut sizes, last)| {
        sizes.push(last);
        sizes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Rows, positions and other columns come out the same however the input is split.
    #[test]
    fn rows_do_not_depend_on_how_the_input_is_split(
        (schemas, rows) in arb_stream(),
        sizes in arb_sizes(),
        kind in select(TREE_FORMATS.to_vec()),
    ) {
        let bytes = write(kind, &schemas, &rows);
        let whole = copy(kind, &schemas, Box::new(Cursor::new(bytes.clone()))).unwrap();
        let split = copy(kind, &schemas, chunked(&bytes, &sizes)).unwrap();
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(read_all(kind, &schemas, chunked(&bytes, &sizes)).unwrap(), rows.len());
    }

    /// A stream cut anywhere, or with a byte changed, fails (or reads) the same way however
    /// it is split: same message, offset and row.
    #[test]
    fn errors_do_not_depend_on_how_the_input_is_split(
        (schemas, rows) in arb_stream(),
        sizes in arb_sizes(),
        kind in select(TREE_FORMATS.to_vec()),
        cut in any::<prop::sample::Index>(),
        flip in prop::option::of((any::<prop::sample::Index>(), 1u8..=255)),
    ) {
        let mut bytes = write(kind, &schemas, &rows);
        prop_assume!(!bytes.is_empty());
        if let Some((at, mask)) = flip {
            let at = at.index(bytes.len());
            bytes[at] ^= mask;
        } else {
            bytes.truncate(cut.index(bytes.len()));
        }
        let whole = read_all(kind, &schemas, Box::new(Cursor::new(bytes.clone())));
        let split = read_all(kind, &schemas, chunked(&bytes, &sizes));
        prop_assert_eq!(&whole, &split);
        if let Err(e) = whole {
            prop_assert!(e.offset.is_some_and(|o| o <= bytes.len() as u64), "{}", e);
        }
    }
}

/// A row larger than the source's read buffer (256 KiB) grows the buffer and reads back
/// whole, from a reader that returns 64 KiB at a time and from one that returns 3 bytes.
#[test]
fn rows_larger_than_the_read_buffer_read_back_whole() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(P::Int64)),
        ColumnSchema::new("blob", Type::Primitive(P::String)),
        ColumnSchema::new("items", Type::list(Type::Primitive(P::Utf8))),
    ]);
    let big = |seed: u8, len: usize| -> Vec<u8> {
        (0..len)
            .map(|i| seed.wrapping_add((i % 251) as u8))
            .collect()
    };
    let rows: Rows = (0..4)
        .map(|i| {
            let items = (0..(20_000 * i))
                .map(|j| Value::String(format!("item {j}").into_bytes()))
                .collect();
            (
                RowPosition::default(),
                vec![
                    Value::Int64(i as i64),
                    Value::String(big(i as u8, 300_000 * i + 5)),
                    Value::List(items),
                ],
            )
        })
        .collect();
    for kind in TREE_FORMATS {
        let schemas = std::slice::from_ref(&schema);
        let bytes = write(kind, schemas, &rows);
        assert!(bytes.len() > 1 << 20, "{}", bytes.len());
        let whole = copy(kind, schemas, Box::new(Cursor::new(bytes.clone()))).unwrap();
        assert_eq!(whole, bytes, "{kind}: a copy writes the same bytes");
        for sizes in [vec![64 << 10], vec![3]] {
            let split = copy(kind, schemas, chunked(&bytes, &sizes)).unwrap();
            assert!(
                split == bytes,
                "{kind}: chunks of {sizes:?} change the rows"
            );
        }
    }
}

/// A truncated stream names the offset where the cut record starts, also when the record
/// was cut in the window and refilled first; a read error of the reader is reported.
#[test]
fn truncation_and_read_errors_name_their_offsets() {
    let schema = TableSchema::new(vec![ColumnSchema::new("s", Type::Primitive(P::String))]);
    let rows: Rows = (0..1000)
        .map(|i| {
            (
                RowPosition::default(),
                vec![Value::String(vec![b'x'; 1000 + i])],
            )
        })
        .collect();
    for kind in TREE_FORMATS {
        let schemas = std::slice::from_ref(&schema);
        let bytes = write(kind, schemas, &rows);
        let cut = bytes.len() - 10;
        let e = read_all(kind, schemas, chunked(&bytes[..cut], &[4096])).unwrap_err();
        assert_eq!(e.row, Some(999), "{e}");
        let last_row_start = bytes.len() - (1000 + 999) - 4;
        assert!(
            e.offset
                .is_some_and(|o| o >= last_row_start as u64 && o < cut as u64),
            "{kind}: {e}"
        );
        assert!(!e.message.contains("position"), "{kind}: {e}");

        /// Serves a row whose string claims 4 GiB, then fails.
        struct Failing(Vec<u8>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Err(std::io::Error::other("disk on fire"));
                }
                let n = buf.len().min(self.0.len()).min(5);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0.drain(..n);
                Ok(n)
            }
        }
        let head = match kind {
            FormatKind::Msgpack => vec![0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, b'a'],
            _ => vec![0x81, 0x5a, 0xff, 0xff, 0xff, 0xff, b'a'],
        };
        let e = read_all(kind, schemas, Box::new(Failing(head))).unwrap_err();
        assert!(e.message.contains("disk on fire"), "{kind}: {e}");
    }
}

/// A row as comparable text: its position and the debug form of its values (borrowed rows
/// of the same bytes decode alike, so their debug forms compare; NaN equals NaN this way).
fn comparable(position: RowPosition, values: &[shapeshift_types::ValueRef<'_>]) -> String {
    format!("{position:?} {values:?}")
}

/// Every row by `next_row`: the rows and the error (message, offset, row) that ended them.
fn rows_one_by_one(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> (Vec<String>, Option<String>) {
    let mut source = open_source(kind, schemas, input).unwrap();
    let mut rows = Vec::new();
    loop {
        match source.next_row() {
            Ok(Some(row)) => rows.push(comparable(row.position, row.values)),
            Ok(None) => return (rows, None),
            Err(e) => return (rows, Some(format!("{e:?}"))),
        }
    }
}

/// Every row by `next_rows` blocks (with `mixed`, every third call by `next_row`), checking
/// each block's shape and that its rows count on from its first.
fn rows_by_blocks(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    mixed: bool,
) -> (Vec<String>, Option<String>) {
    let mut source = open_source(kind, schemas, input).unwrap();
    let mut rows = Vec::new();
    for call in 1usize.. {
        if mixed && call % 3 == 0 {
            match source.next_row() {
                Ok(Some(row)) => rows.push(comparable(row.position, row.values)),
                Ok(None) => return (rows, None),
                Err(e) => return (rows, Some(format!("{e:?}"))),
            }
            continue;
        }
        match source.next_rows() {
            Ok(Some(block)) => {
                assert!(block.rows >= 1, "{kind}: an empty block");
                assert_eq!(block.values.len(), block.rows * block.columns, "{kind}");
                for (i, row) in block.iter().enumerate() {
                    if i > 0 {
                        assert!(
                            !row.position.key_switch,
                            "{kind}: key switch inside a block"
                        );
                    }
                    rows.push(comparable(row.position, row.values));
                }
            }
            Ok(None) => return (rows, None),
            Err(e) => return (rows, Some(format!("{e:?}"))),
        }
    }
    unreachable!()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Blocks (`next_rows`, alone or mixed with `next_row`) give the rows, positions and
    /// failure of single reads, for a stream intact, cut or with a byte changed, read in one
    /// piece or a few bytes at a time: a block ends before a bad record, whose error comes
    /// on the next call, as row by row.
    #[test]
    fn blocks_give_the_rows_and_errors_of_single_reads(
        (schemas, rows) in arb_stream(),
        sizes in arb_sizes(),
        kind in select(TREE_FORMATS.to_vec()),
        damage in prop::option::of((any::<prop::sample::Index>(), prop::option::of(1u8..=255))),
        mixed in any::<bool>(),
    ) {
        // More rows than one block holds: the rows repeated.
        let rows: Rows = rows.iter().cycle().take(rows.len() * 40).cloned().collect();
        let mut bytes = write(kind, &schemas, &rows);
        match damage {
            Some((at, Some(mask))) if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] ^= mask;
            }
            Some((cut, None)) if !bytes.is_empty() => bytes.truncate(cut.index(bytes.len())),
            _ => {}
        }
        let single = rows_one_by_one(kind, &schemas, Box::new(Cursor::new(bytes.clone())));
        let blocks = rows_by_blocks(kind, &schemas, Box::new(Cursor::new(bytes.clone())), mixed);
        prop_assert_eq!(&single, &blocks);
        let split = rows_by_blocks(kind, &schemas, chunked(&bytes, &sizes), mixed);
        prop_assert_eq!(&single, &split);
    }
}

/// Blocks stop at table switches and at row index jumps, and run on otherwise: the block
/// boundaries of a stream with two tables, and of one long plain run.
#[test]
fn blocks_break_at_position_changes_only() {
    let schema =
        |name: &str| TableSchema::new(vec![ColumnSchema::new(name, Type::Primitive(P::Int64))]);
    let schemas = [schema("a"), schema("b")];
    let at = |table_index: usize, row_index: i64| RowPosition {
        table_index,
        row_index: Some(row_index),
        ..RowPosition::default()
    };
    let mut rows: Rows = Vec::new();
    rows.extend((0..5).map(|i| (at(0, i), vec![Value::Int64(i)])));
    rows.extend((0..3).map(|i| (at(1, 100 + i), vec![Value::Int64(i)])));
    rows.extend((0..4).map(|i| (at(1, 200 + i), vec![Value::Int64(i)])));
    rows.extend((0..3000).map(|i| (at(0, 1000 + i), vec![Value::Int64(i)])));
    for kind in TREE_FORMATS {
        let bytes = write(kind, &schemas, &rows);
        let mut source = open_source(kind, &schemas, Box::new(Cursor::new(bytes))).unwrap();
        let mut blocks = Vec::new();
        while let Some(block) = source.next_rows().unwrap() {
            blocks.push((block.first.table_index, block.first.row_index, block.rows));
        }
        let (head, tail) = blocks.split_at(3);
        assert_eq!(
            head,
            [(0, Some(0), 5), (1, Some(100), 3), (1, Some(200), 4)],
            "{kind}"
        );
        assert!(tail.len() >= 2, "{kind}: 3000 rows in one block");
        assert_eq!(tail.iter().map(|b| b.2).sum::<usize>(), 3000, "{kind}");
        assert_eq!(tail[0].1, Some(1000), "{kind}");
    }
}
