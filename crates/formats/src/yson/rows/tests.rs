//! The in-place reader against buffer boundaries: the same stream read whole through a large
//! buffer and through tiny buffers fed in random chunks must give the same rows (and the same
//! error, for damaged input), and the rows must be the ones written.

use crate::table::SharedOutput;
use std::io::Read;

use proptest::prelude::*;
use shapeshift_types::{
    ColumnSchema, Member, Node, NodeValue, PrimitiveType, TableSchema, Type, Value,
};

use super::{sink, YsonRowSource};
use crate::table::{value_from_ref, FormatError, RowPosition, RowSource};

/// Gives its bytes in chunks of the given sizes (cycled), like a pipe.
struct Chunked {
    bytes: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let n = size.min(buf.len()).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A read row: its position and each value's debug spelling (borrowed bytes included).
type ReadRow = (RowPosition, Vec<String>);

fn read_all(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    buffer: usize,
    limit: usize,
) -> Result<Vec<ReadRow>, FormatError> {
    read_all_with(schemas, input, buffer, limit, true)
}

/// `scan_rows: false` reads every row through the parser path (the reader before the fast
/// path), for comparison.
fn read_all_with(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    buffer: usize,
    limit: usize,
    scan_rows: bool,
) -> Result<Vec<ReadRow>, FormatError> {
    let mut source = YsonRowSource::new(schemas, input, buffer, limit);
    source.scan_rows = scan_rows;
    let mut rows = Vec::new();
    while let Some((row, others)) = source.next_row_with_other_columns()? {
        let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
        values.push(format!("{others:?}"));
        rows.push((row.position, values));
    }
    Ok(rows)
}

fn arb_type() -> impl Strategy<Value = Type> {
    let p = Type::Primitive;
    prop_oneof![
        Just(p(PrimitiveType::Int64)),
        Just(p(PrimitiveType::Uint8)),
        Just(p(PrimitiveType::Int16)),
        Just(p(PrimitiveType::Double)),
        Just(p(PrimitiveType::Bool)),
        Just(p(PrimitiveType::String)),
        Just(p(PrimitiveType::Utf8)),
        Just(Type::optional(p(PrimitiveType::String))),
        Just(Type::optional(p(PrimitiveType::Int64))),
        Just(Type::list(p(PrimitiveType::Int64))),
        Just(Type::optional(Type::list(p(PrimitiveType::String)))),
        Just(Type::Struct(vec![
            Member::new("a", p(PrimitiveType::Int32)),
            Member::new("b", Type::optional(p(PrimitiveType::String))),
        ])),
        Just(Type::dict(
            p(PrimitiveType::String),
            p(PrimitiveType::Double)
        )),
        Just(p(PrimitiveType::Yson)),
    ]
}

fn arb_string() -> impl Strategy<Value = Vec<u8>> {
    // Escapes and quotes in text, lengths around varint and buffer edges.
    prop_oneof![
        "[a-z\"\\\\\n ]{0,12}".prop_map(String::into_bytes),
        "[a-z]{100,300}".prop_map(String::into_bytes),
    ]
}

fn arb_value(ty: &Type) -> BoxedStrategy<Value> {
    use PrimitiveType as P;
    match ty {
        Type::Primitive(P::Int64) => any::<i64>().prop_map(Value::Int64).boxed(),
        Type::Primitive(P::Int32) => any::<i32>().prop_map(|v| Value::Int64(v.into())).boxed(),
        Type::Primitive(P::Int16) => any::<i16>().prop_map(|v| Value::Int64(v.into())).boxed(),
        Type::Primitive(P::Uint8) => any::<u8>().prop_map(|v| Value::Uint64(v.into())).boxed(),
        Type::Primitive(P::Double) => (-1e9f64..1e9).prop_map(Value::Double).boxed(),
        Type::Primitive(P::Bool) => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Primitive(P::String) => arb_string().prop_map(Value::String).boxed(),
        Type::Primitive(P::Utf8) => "[a-zé\"]{0,20}"
            .prop_map(|s| Value::String(s.into_bytes()))
            .boxed(),
        Type::Primitive(P::Yson) => arb_node().prop_map(Value::Any).boxed(),
        Type::Optional(item) => prop_oneof![Just(Value::Null), arb_value(item)].boxed(),
        Type::List(item) => proptest::collection::vec(arb_value(item), 0..4)
            .prop_map(Value::List)
            .boxed(),
        Type::Struct(members) => {
            let members: Vec<_> = members.iter().map(|m| arb_value(&m.ty)).collect();
            members.prop_map(Value::Tuple).boxed()
        }
        Type::Dict { key, value } => {
            proptest::collection::vec((arb_value(key), arb_value(value)), 0..3)
                .prop_map(Value::Dict)
                .boxed()
        }
        other => panic!("no generator for {other:?}"),
    }
}

/// A node with attributes now and then, nested a few levels.
fn arb_node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        Just(Node::entity()),
        any::<i64>().prop_map(Node::int64),
        any::<u64>().prop_map(Node::uint64),
        any::<bool>().prop_map(|v| Node::new(NodeValue::Bool(v))),
        (-1e6f64..1e6).prop_map(|v| Node::new(NodeValue::Double(v))),
        arb_string().prop_map(Node::string),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        let entries = proptest::collection::vec(("[a-z\"]{1,4}", inner.clone()), 0..3);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Node::list),
            entries.clone().prop_map(Node::map),
            (entries, inner).prop_map(|(attributes, node)| {
                let mut node = node;
                node.attributes = attributes
                    .into_iter()
                    .map(|(k, v)| (k.into_bytes(), v))
                    .collect();
                node
            }),
        ]
    })
}

/// A schema, rows with positions (row indexes now and then: control entities), and whether
/// the stream is text.
fn arb_case() -> impl Strategy<Value = (TableSchema, Vec<(RowPosition, Vec<Value>)>, bool)> {
    proptest::collection::vec(arb_type(), 1..6).prop_flat_map(|types| {
        let schema = TableSchema::new(
            types
                .iter()
                .enumerate()
                .map(|(i, ty)| ColumnSchema::new(format!("c{i}"), ty.clone()))
                .collect(),
        );
        let row: Vec<_> = types.iter().map(arb_value).collect();
        let rows =
            proptest::collection::vec((row, proptest::option::weighted(0.2, 0..1000i64)), 0..12)
                .prop_map(|rows| {
                    rows.into_iter()
                        .map(|(values, row_index)| {
                            (
                                RowPosition {
                                    row_index,
                                    ..RowPosition::default()
                                },
                                values,
                            )
                        })
                        .collect::<Vec<_>>()
                });
        (Just(schema), rows, any::<bool>())
    })
}

fn write(schema: &TableSchema, rows: &[(RowPosition, Vec<Value>)], text: bool) -> Vec<u8> {
    let out = SharedOutput::default();
    let mut sink = sink(std::slice::from_ref(schema), Box::new(out.clone()), text).unwrap();
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    out.take()
}

fn chunked(bytes: &[u8], sizes: &[usize]) -> Box<dyn Read> {
    Box::new(Chunked {
        bytes: bytes.to_vec(),
        at: 0,
        sizes: sizes.to_vec(),
        turn: 0,
    })
}

const LIMIT: usize = 1 << 20;

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn tiny_buffers_and_random_chunks_give_the_rows_written(
        (schema, rows, text) in arb_case(),
        buffer in 1usize..48,
        sizes in proptest::collection::vec(1usize..40, 1..6),
    ) {
        let bytes = write(&schema, &rows, text);
        let schemas = std::slice::from_ref(&schema);
        let whole = read_all(schemas, Box::new(std::io::Cursor::new(bytes.clone())), 1 << 16, LIMIT).unwrap();
        let tiny = read_all(schemas, chunked(&bytes, &sizes), buffer, LIMIT).unwrap();
        prop_assert_eq!(&whole, &tiny);
        // The parser path alone gives the same rows. (Composites of text input are re-spelled
        // as binary YSON by both paths, binary ones are the input's bytes in both.)
        let parsed = read_all_with(schemas, chunked(&bytes, &sizes), buffer, LIMIT, false).unwrap();
        prop_assert_eq!(&whole, &parsed);
        // And they are the rows written.
        let mut source = YsonRowSource::new(schemas, chunked(&bytes, &sizes), buffer, LIMIT);
        for (position, values) in &rows {
            let row = source.next_row().unwrap().unwrap();
            // A row without its own index continues the previous one's.
            if position.row_index.is_some() {
                prop_assert_eq!(row.position.row_index, position.row_index);
            }
            for ((value, column), expected) in row.values.iter().zip(&schema.columns).zip(values) {
                prop_assert_eq!(&value_from_ref(*value, &column.ty).unwrap(), expected);
            }
        }
        prop_assert!(source.next_row().unwrap().is_none());
    }

    #[test]
    fn damaged_streams_read_the_same_through_tiny_buffers(
        (schema, rows, text) in arb_case(),
        buffer in 1usize..48,
        sizes in proptest::collection::vec(1usize..40, 1..6),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = write(&schema, &rows, text);
        prop_assume!(!bytes.is_empty());
        for (at, byte) in damage {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let schemas = std::slice::from_ref(&schema);
        let whole = read_all(schemas, Box::new(std::io::Cursor::new(bytes.clone())), 1 << 16, LIMIT);
        let tiny = read_all(schemas, chunked(&bytes, &sizes), buffer, LIMIT);
        let parsed = read_all_with(schemas, chunked(&bytes, &sizes), buffer, LIMIT, false);
        for (whole, tiny) in [(whole.clone(), tiny), (whole, parsed)] {
        match (whole, tiny) {
            (Ok(whole), Ok(tiny)) => prop_assert_eq!(whole, tiny),
            (Err(whole), Err(tiny)) => {
                prop_assert_eq!(&whole.message, &tiny.message);
                prop_assert_eq!(whole.row, tiny.row);
                // Errors found between events are placed where the parser stands, which is
                // before or after the separator (and the newline after it) depending on
                // whether the separator was buffered when the previous event was read.
                let (a, b) = (whole.offset.unwrap_or(0), tiny.offset.unwrap_or(0));
                prop_assert!(a.abs_diff(b) <= 2, "{} vs {}", whole, tiny);
            }
            (whole, tiny) => prop_assert!(false, "{:?} vs {:?}", whole, tiny),
        }
        }
    }
}

/// The text rows as the YSON module's event writer spells them (the text sink's reference):
/// control entities as their own items, then the row map, values through nodes.
fn written_by_events(schema: &TableSchema, rows: &[(RowPosition, Vec<Value>)]) -> Vec<u8> {
    use crate::table::position::{Control, PositionWriter};
    use crate::yson::{Writer, YsonFormat, YsonType};
    use shapeshift_types::{value_to_node, StructForm};
    let mut writer = Writer::new(Vec::new(), YsonFormat::Text, YsonType::ListFragment);
    let mut positions = PositionWriter::default();
    for (position, values) in rows {
        positions
            .controls(position, |control| {
                writer.begin_attributes()?;
                match control {
                    Control::TableIndex(i) => {
                        writer.key(b"table_index")?;
                        writer.int64(i as i64)?;
                    }
                    Control::RowIndex(i) => {
                        writer.key(b"row_index")?;
                        writer.int64(i)?;
                    }
                    Control::RangeIndex(i) => {
                        writer.key(b"range_index")?;
                        writer.int64(i)?;
                    }
                    Control::KeySwitch => {
                        writer.key(b"key_switch")?;
                        writer.bool(true)?;
                    }
                }
                writer.end_attributes()?;
                writer.entity()
            })
            .unwrap();
        writer.begin_map().unwrap();
        for (value, column) in values.iter().zip(&schema.columns) {
            writer.key(column.name.as_bytes()).unwrap();
            let node = value_to_node(value, &column.ty, StructForm::Named).unwrap();
            writer.write_node(&node).unwrap();
        }
        writer.end_map().unwrap();
    }
    writer.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_text_sink_spells_rows_as_the_event_writer_does(
        (schema, rows, _) in arb_case(),
        key_switch in any::<bool>(),
        range in proptest::option::of(0..3i64),
    ) {
        let mut rows = rows;
        if let Some(first) = rows.first_mut() {
            first.0.key_switch = key_switch;
            first.0.range_index = range;
        }
        let reference = written_by_events(&schema, &rows);
        let written = write(&schema, &rows, true);
        prop_assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&reference)
        );
    }
}

#[test]
fn a_text_row_that_fails_its_check_leaves_no_bytes_and_no_position() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(PrimitiveType::Int8)),
        ColumnSchema::new("b", Type::list(Type::Primitive(PrimitiveType::Int64))),
    ]);
    let good = |row_index| {
        (
            RowPosition {
                row_index: Some(row_index),
                ..RowPosition::default()
            },
            vec![Value::Int64(1), Value::List(vec![Value::Int64(2)])],
        )
    };
    let out = SharedOutput::default();
    let mut sink = sink(std::slice::from_ref(&schema), Box::new(out.clone()), true).unwrap();
    let (position, values) = good(5);
    sink.write_owned_row(&position, &values).unwrap();
    // A value out of int8's range, then a list item of the wrong kind: both refused, with
    // the row and column named, and the next good row follows on as if they were never sent.
    let bad_positions = RowPosition {
        row_index: Some(40),
        key_switch: true,
        ..RowPosition::default()
    };
    let error = sink
        .write_owned_row(&bad_positions, &[Value::Int64(300), Value::List(vec![])])
        .unwrap_err();
    assert_eq!(error.row, Some(1));
    assert!(error.message.contains("column \"a\""), "{error}");
    let error = sink
        .write_owned_row(
            &bad_positions,
            &[
                Value::Int64(1),
                Value::List(vec![Value::String(b"x".to_vec())]),
            ],
        )
        .unwrap_err();
    assert!(error.message.contains("column \"b\""), "{error}");
    let (position, values) = good(6);
    sink.write_owned_row(&position, &values).unwrap();
    sink.finish().unwrap();
    drop(sink);
    let written = out.take();
    assert_eq!(written, written_by_events(&schema, &[good(5), good(6)]));
}

/// An output that takes `room` bytes, part of a write if need be, then fails every write.
#[derive(Clone)]
struct FailingOutput {
    taken: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
    room: usize,
}

impl std::io::Write for FailingOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut taken = self.taken.borrow_mut();
        let n = buf.len().min(self.room - taken.len());
        if n == 0 {
            return Err(std::io::Error::other("disk full"));
        }
        taken.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_sink_whose_output_fails_takes_nothing_more_and_repeats_no_byte() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::String),
    )]);
    let row = vec![Value::String(vec![b'x'; 1000])];
    let rows: Vec<_> = (0..200)
        .map(|_| (RowPosition::default(), row.clone()))
        .collect();
    for text in [true, false] {
        let out = FailingOutput {
            taken: Default::default(),
            room: 100_000,
        };
        let mut sink = sink(std::slice::from_ref(&schema), Box::new(out.clone()), text).unwrap();
        let mut error = None;
        for _ in 0..1000 {
            if let Err(e) = sink.write_owned_row(&RowPosition::default(), &row) {
                error = Some(e);
                break;
            }
        }
        let error = error.expect("the output fills up within 1000 rows of 1 KB");
        assert!(error.message.contains("disk full"), "text {text}: {error}");
        let after = sink
            .write_owned_row(&RowPosition::default(), &row)
            .unwrap_err();
        assert!(
            after.message.contains("earlier write"),
            "text {text}: {after}"
        );
        assert!(
            sink.finish().is_err(),
            "text {text}: finish reports the failure"
        );
        // What reached the output is a prefix of the rows as written, never a byte twice.
        let taken = out.taken.borrow().clone();
        assert_eq!(taken.len(), out.room, "text {text}");
        let whole = if text {
            written_by_events(&schema, &rows)
        } else {
            write(&schema, &rows, false)
        };
        assert_eq!(&taken[..], &whole[..taken.len()], "text {text}");
    }
}

/// Reads by blocks (`next_rows`), one block in `every` read by `next_row` instead; the rows
/// as `read_all_with` gives them (other columns left out, as blocks leave them out).
fn read_blocks(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    buffer: usize,
    every: usize,
) -> Result<Vec<ReadRow>, FormatError> {
    let mut source = YsonRowSource::new(schemas, input, buffer, LIMIT);
    let mut rows = Vec::new();
    for turn in 0.. {
        if turn % every == every - 1 {
            let Some(row) = source.next_row()? else { break };
            let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
            values.push("None".to_owned());
            rows.push((row.position, values));
            continue;
        }
        let Some(block) = source.next_rows()? else {
            break;
        };
        assert!(block.rows >= 1 && block.values.len() == block.rows * block.columns);
        for row in block.iter() {
            let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
            values.push("None".to_owned());
            rows.push((row.position, values));
        }
    }
    Ok(rows)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn blocks_give_the_rows_and_positions_of_row_by_row_reads(
        (schema, rows, text) in arb_case(),
        buffer in prop_oneof![1usize..48, Just(1usize << 16)],
        sizes in proptest::collection::vec(1usize..400, 1..6),
        every in 1usize..4,
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = write(&schema, &rows, text);
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        let schemas = std::slice::from_ref(&schema);
        let mut by_rows = Vec::new();
        let mut source = YsonRowSource::new(schemas, chunked(&bytes, &sizes), buffer, LIMIT);
        let row_end = loop {
            match source.next_row() {
                Ok(Some(row)) => {
                    let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
                    values.push("None".to_owned());
                    by_rows.push((row.position, values));
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        // Blocks stop at the fault: read them up to it, then expect the same error.
        let mut source = YsonRowSource::new(schemas, chunked(&bytes, &sizes), buffer, LIMIT);
        let mut by_blocks = Vec::new();
        let mut turn = 0;
        let block_end = loop {
            turn += 1;
            if turn % every == 0 {
                match source.next_row() {
                    Ok(Some(row)) => {
                        let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
                        values.push("None".to_owned());
                        by_blocks.push((row.position, values));
                    }
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
                continue;
            }
            match source.next_rows() {
                Ok(Some(block)) => {
                    for row in block.iter() {
                        let mut values: Vec<String> = row.values.iter().map(|v| format!("{v:?}")).collect();
                        values.push("None".to_owned());
                        by_blocks.push((row.position, values));
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        prop_assert_eq!(&by_rows, &by_blocks);
        prop_assert_eq!(
            row_end.map(|e| (e.message, e.row)),
            block_end.map(|e| (e.message, e.row))
        );
        if cut.is_none() {
            let blocks = read_blocks(schemas, chunked(&bytes, &sizes), buffer, every + 1).unwrap();
            prop_assert_eq!(&blocks, &by_rows);
        }
    }
}

#[test]
fn a_block_holds_the_rows_buffered_and_ends_at_a_table_switch() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(PrimitiveType::Int64)),
        ColumnSchema::new("b", Type::Primitive(PrimitiveType::String)),
    ]);
    let schemas = [schema.clone(), schema.clone()];
    let mut rows = Vec::new();
    for i in 0..10 {
        rows.push((
            RowPosition {
                table_index: usize::from(i >= 6),
                ..RowPosition::default()
            },
            vec![
                Value::Int64(i),
                Value::String(format!("row {i}").into_bytes()),
            ],
        ));
    }
    for text in [false, true] {
        let out = SharedOutput::default();
        let mut sink = sink(&schemas, Box::new(out.clone()), text).unwrap();
        for (position, values) in &rows {
            sink.write_owned_row(position, values).unwrap();
        }
        sink.finish().unwrap();
        drop(sink);
        let bytes = out.take();
        let mut source = YsonRowSource::new(
            &schemas,
            Box::new(std::io::Cursor::new(bytes)),
            1 << 16,
            LIMIT,
        );
        let block = source.next_rows().unwrap().unwrap();
        assert_eq!(
            (block.rows, block.columns, block.first.table_index),
            (6, 2, 0)
        );
        assert_eq!(
            block.row(5).values[1],
            shapeshift_types::ValueRef::String(b"row 5")
        );
        // The switch is a control entity: the parser path reads it with the next row.
        let block = source.next_rows().unwrap().unwrap();
        assert_eq!((block.rows, block.first.table_index), (1, 1));
        let block = source.next_rows().unwrap().unwrap();
        assert_eq!((block.rows, block.first.table_index), (3, 1));
        assert!(source.next_rows().unwrap().is_none());
    }
}

#[test]
fn a_row_longer_than_the_limit_is_an_error_naming_its_first_byte() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::String),
    )]);
    let rows = vec![
        (
            RowPosition::default(),
            vec![Value::String(b"short".to_vec())],
        ),
        (
            RowPosition::default(),
            vec![Value::String(vec![b'x'; 5000])],
        ),
    ];
    for text in [false, true] {
        let bytes = write(&schema, &rows, text);
        let schemas = std::slice::from_ref(&schema);
        // Room for the long row: the buffer grows from 8 bytes.
        let read = read_all(schemas, chunked(&bytes, &[7]), 8, 8192).unwrap();
        assert_eq!(read.len(), 2);
        let error = read_all(schemas, chunked(&bytes, &[7]), 8, 1024).unwrap_err();
        let first_row_length = bytes.windows(2).position(|w| w == b"};").unwrap() + 2;
        let second_row_start = first_row_length
            + bytes[first_row_length..]
                .iter()
                .position(|&b| b == b'{')
                .unwrap();
        assert!(error.message.contains("limit of 1024 bytes"), "{error}");
        assert_eq!(error.offset, Some(second_row_start as u64), "{error}");
        assert_eq!(error.row, Some(1), "{error}");
    }
}

/// A diagnostic probe, not a benchmark of record (the lab's `bench formats` is): BM3-like
/// rows read through the row source and through the pull parser over the slice, alternating.
/// `cargo test --release -p shapeshift-formats --lib probe_in_place_reads -- --ignored --nocapture`
#[test]
#[ignore]
fn probe_in_place_reads() {
    use crate::yson::{Event, PullParser, YsonType};
    let p = Type::Primitive;
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", p(PrimitiveType::Int64)),
        ColumnSchema::new("counter", p(PrimitiveType::Int64)),
        ColumnSchema::new("user", p(PrimitiveType::String)),
        ColumnSchema::new("score", p(PrimitiveType::Double)),
        ColumnSchema::new("active", p(PrimitiveType::Bool)),
        ColumnSchema::new("country", p(PrimitiveType::String)),
        ColumnSchema::new("created", p(PrimitiveType::Timestamp)),
        ColumnSchema::new("code", p(PrimitiveType::Int32)),
        ColumnSchema::new("ratio", p(PrimitiveType::Float)),
        ColumnSchema::new("comment", p(PrimitiveType::Utf8)),
    ]);
    let rows: Vec<_> = (0..200_000i64)
        .map(|i| {
            (
                RowPosition::default(),
                vec![
                    Value::Int64(i),
                    Value::Int64(i * 7 % 1000),
                    Value::String(format!("user{}", i % 5000).into_bytes()),
                    Value::Double(i as f64 * 0.5),
                    Value::Bool(i % 3 == 0),
                    Value::String(b"NL".to_vec()),
                    Value::Uint64(1_700_000_000_000_000 + i as u64),
                    Value::Int64(i % 400),
                    Value::Double(0.25),
                    Value::String(format!("comment number {i} with some text").into_bytes()),
                ],
            )
        })
        .collect();
    // PROBE_TEXT=0 or 1 probes one spelling only.
    let only = std::env::var("PROBE_TEXT").ok();
    for text in [false, true] {
        if only
            .as_deref()
            .is_some_and(|o| o != u8::from(text).to_string())
        {
            continue;
        }
        let bytes: std::rc::Rc<[u8]> = write(&schema, &rows, text).into();
        let schemas = std::slice::from_ref(&schema);
        // PROBE_BUFFER=<bytes> tries another initial buffer size.
        let buffer_size = std::env::var("PROBE_BUFFER")
            .ok()
            .and_then(|b| b.parse().ok())
            .unwrap_or(super::READ_BUFFER_SIZE);
        let interface = || {
            let mut source = YsonRowSource::new(
                schemas,
                Box::new(std::io::Cursor::new(bytes.clone())),
                buffer_size,
                super::MAX_ROW_BYTES,
            );
            let mut sum = 0u64;
            while let Some(row) = source.next_row().unwrap() {
                for v in row.values {
                    sum = sum.wrapping_add(match v {
                        shapeshift_types::ValueRef::Int64(v) => *v as u64,
                        shapeshift_types::ValueRef::String(s) => s.len() as u64,
                        _ => 1,
                    });
                }
            }
            sum
        };
        let own = || {
            let mut parser = PullParser::from_slice(&bytes, YsonType::ListFragment);
            let mut sum = 0u64;
            while let Some(event) = parser.next_event().unwrap() {
                sum = sum.wrapping_add(match event {
                    Event::Int64(v) => v as u64,
                    Event::String(s) => s.len() as u64,
                    Event::Key(_) | Event::BeginMap | Event::EndMap => 0,
                    _ => 1,
                });
            }
            sum
        };
        let copy = || {
            let mut reader = std::io::Cursor::new(bytes.clone());
            let mut buffer = vec![0u8; super::READ_BUFFER_SIZE];
            let mut total = 0u64;
            loop {
                let n = reader.read(&mut buffer).unwrap();
                if n == 0 {
                    break total;
                }
                total += u64::from(buffer[n - 1]) + n as u64;
            }
        };
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..7 {
            for (k, f) in [&interface as &dyn Fn() -> u64, &own, &copy]
                .iter()
                .enumerate()
            {
                let t = std::time::Instant::now();
                std::hint::black_box(f());
                times[k].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        for t in &mut times {
            t.sort_by(f64::total_cmp);
        }
        println!(
            "buffer={buffer_size} text={text} bytes={} interface {:.2} ms, own {:.2} ms, read copy alone {:.2} ms",
            bytes.len(),
            times[0][3],
            times[1][3],
            times[2][3]
        );
    }
}

/// Binary rows that try the fast entry's edges — keys out of order, a column repeated after
/// an in-order prefix, a missing required column, values the column does not take as they
/// are (out of range, the other integer kind, invalid or non-ASCII UTF-8, a null), a key
/// longer than the 16-byte word — read by blocks, row by row, and through the parser path
/// alone: the same rows up to the same error.
#[test]
fn the_binary_fast_entry_agrees_with_the_parser_path_on_its_edges() {
    use crate::table::yson_binary;
    let long = "a_column_name_longer_than_sixteen_bytes";
    let schema = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(PrimitiveType::Int8)),
        ColumnSchema::new("b", Type::optional(Type::Primitive(PrimitiveType::Utf8))),
        ColumnSchema::new("c", Type::optional(Type::Primitive(PrimitiveType::Uint16))),
        ColumnSchema::new(long, Type::optional(Type::Primitive(PrimitiveType::Float))),
    ]);
    enum V<'a> {
        I(i64),
        U(u64),
        D(f64),
        S(&'a [u8]),
        Null,
    }
    let row = |entries: &[(&str, V)]| {
        let mut out = vec![b'{'];
        for (key, value) in entries {
            yson_binary::string(&mut out, key.as_bytes());
            out.push(b'=');
            match value {
                V::I(v) => yson_binary::int64(&mut out, *v),
                V::U(v) => yson_binary::uint64(&mut out, *v),
                V::D(v) => yson_binary::double(&mut out, *v),
                V::S(v) => yson_binary::string(&mut out, v),
                V::Null => out.push(b'#'),
            }
            out.push(b';');
        }
        out.extend_from_slice(b"};");
        out
    };
    let good = row(&[
        ("a", V::I(1)),
        ("b", V::S(b"x")),
        ("c", V::U(3)),
        (long, V::D(0.5)),
    ]);
    let cases: Vec<Vec<u8>> = vec![
        row(&[("b", V::S("é".as_bytes())), ("a", V::I(-2))]),
        row(&[("a", V::I(1)), ("c", V::I(7)), ("b", V::Null)]),
        row(&[("a", V::U(5)), (long, V::D(1e300))]),
        row(&[("a", V::I(1)), ("b", V::S(b"x")), ("a", V::I(2))]),
        row(&[("a", V::I(1)), ("b", V::S(b"x")), ("b", V::S(b"y"))]),
        row(&[("b", V::S(b"x"))]),
        row(&[("a", V::I(300))]),
        row(&[("a", V::I(1)), ("b", V::S(b"\xff"))]),
        row(&[("a", V::I(1)), ("c", V::U(70000))]),
        row(&[("a", V::I(1)), ("d", V::I(1))]),
        row(&[("a", V::I(1)), (long, V::S(b"not a float"))]),
        row(&[("a", V::I(1)), (long, V::Null), ("b", V::S("ü".as_bytes()))]),
    ];
    let schemas = std::slice::from_ref(&schema);
    for case in &cases {
        // Good rows around the case, so that it is also met inside a block.
        let mut bytes = Vec::new();
        for _ in 0..3 {
            bytes.extend_from_slice(&good);
        }
        bytes.extend_from_slice(case);
        bytes.extend_from_slice(&good);
        let read = |scan_rows: bool| {
            read_all_with(
                schemas,
                Box::new(std::io::Cursor::new(bytes.clone())),
                1 << 16,
                LIMIT,
                scan_rows,
            )
            .map_err(|e| e.to_string())
        };
        let by_parser = read(false);
        assert_eq!(read(true), by_parser, "{case:?}");
        for every in [1, 2, 5] {
            let by_blocks = read_blocks(
                schemas,
                Box::new(std::io::Cursor::new(bytes.clone())),
                1 << 16,
                every,
            )
            .map_err(|e| e.to_string());
            match (&by_blocks, &by_parser) {
                (Ok(blocks), Ok(rows)) => assert_eq!(blocks, rows, "{case:?}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{case:?}"),
                _ => panic!("{case:?}: blocks {by_blocks:?}, parser {by_parser:?}"),
            }
        }
    }
}
