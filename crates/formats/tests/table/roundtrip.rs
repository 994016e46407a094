//! Round trips through the common interface: every format gives back the rows it was given,
//! and rows carried A -> B -> A through any two formats come back unchanged.
//!
//! Schemas are random (every type of the model, nesting 3 deep, odd column names), rows
//! random values of them, spread over one or two tables. Doubles compare bit for bit, except
//! that every NaN equals every NaN (JSON spells NaN as "nan", dropping the payload).

use shapeshift_formats::table::SharedOutput;
use std::io::Cursor;

use proptest::prelude::*;
use proptest::sample::select;
use shapeshift_formats::registry::{
    open_sink, open_source, FormatKind, FormatOptions, PreparedFormat,
};
use shapeshift_formats::table::{value_from_ref, FormatError, RowPosition};
use shapeshift_types::testing::{arb_type, arb_value};
use shapeshift_types::{ColumnSchema, Node, NodeValue, TableSchema, Type, Value};

/// Formats this crate's table layer implements itself: they must take every schema.
const OWN: [FormatKind; 6] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Skiff,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
];

/// Formats that carry row and range indexes and key switches between rows.
const WITH_CONTROLS: [FormatKind; 5] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
];

type Rows = Vec<(RowPosition, Vec<Value>)>;

fn write(kind: FormatKind, schemas: &[TableSchema], rows: &Rows) -> Result<Vec<u8>, FormatError> {
    let buffer = SharedOutput::default();
    let mut sink = open_sink(kind, schemas, Box::new(buffer.clone()))?;
    for (position, values) in rows {
        sink.write_owned_row(position, values)?;
    }
    sink.finish()?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

fn read(kind: FormatKind, schemas: &[TableSchema], bytes: Vec<u8>) -> Result<Rows, FormatError> {
    let mut source = open_source(kind, schemas, Box::new(Cursor::new(bytes)))?;
    let mut rows = Vec::new();
    while let Some(row) = source.next_row()? {
        let schema = &schemas[row.position.table_index];
        let values = row
            .values
            .iter()
            .zip(&schema.columns)
            .map(|(v, c)| {
                value_from_ref(*v, &c.ty).map_err(|e| FormatError::new(kind.name(), e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push((row.position, values));
    }
    Ok(rows)
}

/// Reads `bytes` of `from` and writes the rows to `to` through borrowed rows.
fn convert(
    from: FormatKind,
    to: FormatKind,
    schemas: &[TableSchema],
    bytes: Vec<u8>,
) -> Result<Vec<u8>, FormatError> {
    let mut source = open_source(from, schemas, Box::new(Cursor::new(bytes)))?;
    let buffer = SharedOutput::default();
    let mut sink = open_sink(to, schemas, Box::new(buffer.clone()))?;
    shapeshift_formats::table::copy_rows(source.as_mut(), sink.as_mut())?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

/// Doubles as their bits (every NaN the same), so `==` compares them exactly.
fn comparable(value: &Value) -> Value {
    match value {
        Value::Double(v) => Value::String(double_key(*v)),
        Value::Some(v) => Value::Some(Box::new(comparable(v))),
        Value::List(items) => Value::List(items.iter().map(comparable).collect()),
        Value::Tuple(items) => Value::Tuple(items.iter().map(comparable).collect()),
        Value::Variant(i, v) => Value::Variant(*i, Box::new(comparable(v))),
        Value::Dict(pairs) => Value::Dict(
            pairs
                .iter()
                .map(|(k, v)| (comparable(k), comparable(v)))
                .collect(),
        ),
        Value::Any(node) => Value::Any(comparable_node(node)),
        other => other.clone(),
    }
}

fn double_key(v: f64) -> Vec<u8> {
    let bits = if v.is_nan() { u64::MAX } else { v.to_bits() };
    bits.to_le_bytes().to_vec()
}

fn comparable_node(node: &Node) -> Node {
    Node {
        attributes: node
            .attributes
            .iter()
            .map(|(k, v)| (k.clone(), comparable_node(v)))
            .collect(),
        value: match &node.value {
            NodeValue::Double(v) => NodeValue::String(double_key(*v)),
            NodeValue::List(items) => NodeValue::List(items.iter().map(comparable_node).collect()),
            NodeValue::Map(entries) => NodeValue::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), comparable_node(v)))
                    .collect(),
            ),
            other => other.clone(),
        },
    }
}

fn comparable_rows(rows: &Rows, with_positions: bool) -> Vec<(RowPosition, Vec<Value>)> {
    rows.iter()
        .map(|(p, values)| {
            let position = if with_positions {
                *p
            } else {
                RowPosition {
                    table_index: p.table_index,
                    ..RowPosition::default()
                }
            };
            (position, values.iter().map(comparable).collect())
        })
        .collect()
}

fn arb_table() -> impl Strategy<Value = TableSchema> {
    (
        prop::collection::vec(
            (select(vec!["c", "$c", "é", "x y", "value"]), arb_type(3)),
            1..5,
        ),
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

fn arb_rows(schemas: Vec<TableSchema>, positions: bool) -> impl Strategy<Value = Rows> {
    let tables = schemas.len();
    let row = (0..tables).prop_flat_map(move |table| {
        let values: Vec<BoxedStrategy<Value>> = schemas[table]
            .columns
            .iter()
            .map(|c| arb_value(&c.ty))
            .collect();
        (Just(table), values, 0i64..4, any::<bool>(), any::<bool>())
    });
    prop::collection::vec(row, 0..6).prop_map(move |rows| {
        let mut next_index = 0i64;
        rows.into_iter()
            .map(|(table, values, jump, has_range, key_switch)| {
                let position = if positions {
                    next_index += jump;
                    let p = RowPosition {
                        table_index: table,
                        row_index: Some(next_index),
                        range_index: Some(i64::from(has_range)),
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
                (position, values)
            })
            .collect()
    })
}

fn arb_case(positions: bool) -> impl Strategy<Value = (Vec<TableSchema>, Rows)> {
    prop::collection::vec(arb_table(), 1..3).prop_flat_map(move |schemas| {
        let rows = arb_rows(schemas.clone(), positions);
        (Just(schemas), rows)
    })
}

/// Every format whose constructors accept `schemas`; the table layer's own must.
fn formats_for(schemas: &[TableSchema]) -> Vec<FormatKind> {
    FormatKind::ALL
        .into_iter()
        .filter(|&kind| {
            let result = open_sink(kind, schemas, Box::new(std::io::sink()));
            match result {
                Ok(_) => true,
                // Skiff reserves names starting with `$` for its system fields, as YT does.
                Err(e) if kind == FormatKind::Skiff && e.message.contains("reserves") => false,
                Err(e) if OWN.contains(&kind) => panic!("{kind} refused a schema: {e}"),
                Err(_) => false,
            }
        })
        .collect()
}

/// Positions, where compared, are generated with a row and range index on every row: a stream
/// of control records cannot say "no row index" after rows with one.
fn assert_same(
    kind: &str,
    expected: &Rows,
    actual: &Rows,
    with_positions: bool,
) -> Result<(), TestCaseError> {
    let expected = comparable_rows(expected, with_positions);
    let actual = comparable_rows(actual, with_positions);
    prop_assert_eq!(expected.len(), actual.len(), "{}: row count", kind);
    for (i, (e, a)) in expected.iter().zip(&actual).enumerate() {
        prop_assert_eq!(e, a, "{}: row {}", kind, i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_format_gives_back_its_rows((schemas, rows) in arb_case(false)) {
        for kind in formats_for(&schemas) {
            let bytes = write(kind, &schemas, &rows).map_err(|e| TestCaseError::fail(format!("{kind}: writing: {e}")))?;
            let back = read(kind, &schemas, bytes).map_err(|e| TestCaseError::fail(format!("{kind}: reading: {e}")))?;
            assert_same(kind.name(), &rows, &back, false)?;
        }
    }

    #[test]
    fn positions_survive_formats_that_carry_them((schemas, rows) in arb_case(true)) {
        for kind in WITH_CONTROLS {
            let bytes = write(kind, &schemas, &rows).map_err(|e| TestCaseError::fail(format!("{kind}: writing: {e}")))?;
            let back = read(kind, &schemas, bytes).map_err(|e| TestCaseError::fail(format!("{kind}: reading: {e}")))?;
            assert_same(kind.name(), &rows, &back, true)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn rows_survive_a_to_b_to_a_for_every_pair((schemas, rows) in arb_case(false)) {
        let formats = formats_for(&schemas);
        for &a in &formats {
            let original = write(a, &schemas, &rows).map_err(|e| TestCaseError::fail(format!("{a}: writing: {e}")))?;
            for &b in &formats {
                let there = convert(a, b, &schemas, original.clone())
                    .map_err(|e| TestCaseError::fail(format!("{a} -> {b}: {e}")))?;
                let back = convert(b, a, &schemas, there)
                    .map_err(|e| TestCaseError::fail(format!("{a} -> {b} -> {a}: {e}")))?;
                let rows_back = read(a, &schemas, back).map_err(|e| TestCaseError::fail(format!("{a} -> {b} -> {a}: reading: {e}")))?;
                assert_same(&format!("{a} -> {b} -> {a}"), &rows, &rows_back, false)?;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A format prepared once writes, stream after stream, the bytes its one-off sink
    /// writes, and reads them back as its one-off source does, from bytes in memory or from
    /// a stream: its compiled tables are shared, not consumed or changed by a stream.
    #[test]
    fn a_prepared_format_reads_and_writes_as_a_fresh_one((schemas, rows) in arb_case(false)) {
        for kind in formats_for(&schemas) {
            let fresh = write(kind, &schemas, &rows).map_err(|e| TestCaseError::fail(format!("{kind}: writing: {e}")))?;
            let prepared = PreparedFormat::new(kind, schemas.clone(), FormatOptions::default())
                .map_err(|e| TestCaseError::fail(format!("{kind}: preparing: {e}")))?;
            for stream in 0..2 {
                let buffer = SharedOutput::default();
                let mut sink = prepared.open_sink(Box::new(buffer.clone()))
                    .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
                for (position, values) in &rows {
                    sink.write_owned_row(position, values)
                        .map_err(|e| TestCaseError::fail(format!("{kind}: writing: {e}")))?;
                }
                sink.finish().map_err(|e| TestCaseError::fail(format!("{kind}: finishing: {e}")))?;
                drop(sink);
                let bytes = buffer.take();
                prop_assert!(bytes == fresh, "{}: stream {} differs from a fresh sink's", kind, stream);
                // The first stream is read from bytes in memory, the second as a stream.
                let mut source = if stream == 0 {
                    prepared.open_source(bytes)
                } else {
                    prepared.open_source(Box::new(Cursor::new(bytes)) as Box<dyn std::io::Read>)
                }
                .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
                let mut count = 0;
                while let Some(row) = source.next_row().map_err(|e| TestCaseError::fail(format!("{kind}: reading: {e}")))? {
                    let schema = &schemas[row.position.table_index];
                    let values = row.values.iter().zip(&schema.columns)
                        .map(|(v, c)| value_from_ref(*v, &c.ty))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
                    prop_assert_eq!(comparable_rows(&vec![(row.position, values)], false),
                        comparable_rows(&rows[count..count + 1].to_vec(), false), "{}: row {}", kind, count);
                    count += 1;
                }
                prop_assert_eq!(count, rows.len(), "{}: row count", kind);
            }
        }
    }
}

/// Every row (as comparable values) of `input` read by `prepared`, or the first error's
/// offset and message.
fn read_prepared(
    prepared: &PreparedFormat,
    input: shapeshift_formats::table::SourceInput,
) -> Result<Rows, (Option<u64>, String)> {
    let fail = |e: FormatError| (e.offset, without_metadata(&e.message));
    let mut source = prepared.open_source(input).map_err(fail)?;
    let mut rows = Vec::new();
    while let Some(row) = source.next_row().map_err(fail)? {
        let schema = &prepared.schemas()[row.position.table_index];
        let values = row
            .values
            .iter()
            .zip(&schema.columns)
            .map(|(v, c)| value_from_ref(*v, &c.ty).map_err(|e| (None, e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        rows.push((row.position, values));
    }
    Ok(rows)
}

/// `message` without the `metadata: {...}` maps arrow-rs prints in its errors' data types:
/// they are hash maps, printed in no fixed order, so two reads of the same bytes can word the
/// same error differently.
fn without_metadata(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("metadata: {") {
        out.push_str(&rest[..at]);
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[at..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Bytes cut anywhere, or with a byte changed, read the same from memory as from a
    /// stream: the same rows, or the same error at the same offset.
    #[test]
    fn bytes_in_memory_read_as_a_stream(
        (schemas, rows) in arb_case(false),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        with in any::<u8>(),
    ) {
        for kind in formats_for(&schemas) {
            let bytes = write(kind, &schemas, &rows).map_err(|e| TestCaseError::fail(format!("{kind}: writing: {e}")))?;
            if bytes.is_empty() {
                continue;
            }
            let prepared = PreparedFormat::new(kind, schemas.clone(), FormatOptions::default())
                .map_err(|e| TestCaseError::fail(format!("{kind}: preparing: {e}")))?;
            let mut changed = bytes.clone();
            changed[flip.index(bytes.len())] ^= with;
            for damaged in [bytes[..cut.index(bytes.len())].to_vec(), changed] {
                let stream: Box<dyn std::io::Read> = Box::new(Cursor::new(damaged.clone()));
                let from_stream = read_prepared(&prepared, stream.into());
                let from_memory = read_prepared(&prepared, damaged.into());
                prop_assert_eq!(
                    from_memory.map(|r| comparable_rows(&r, false)),
                    from_stream.map(|r| comparable_rows(&r, false)),
                    "{}", kind
                );
            }
        }
    }
}

/// A prepared format fails as its one-off streams do, naming the same format: other columns
/// given to a format that holds only the schema's, and a stream cut short (read from bytes in
/// memory and from a stream).
#[test]
fn a_prepared_format_fails_as_a_fresh_one() {
    let schemas = vec![TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(shapeshift_types::PrimitiveType::Int64),
    )])];
    let rows: Rows = (0..3)
        .map(|i| (RowPosition::default(), vec![Value::Int64(i)]))
        .collect();
    let others = shapeshift_formats::yson::to_vec(
        &shapeshift_formats::yson::from_slice(b"{y=1}").unwrap(),
        shapeshift_formats::yson::YsonFormat::Binary,
    );
    let described = |e: FormatError| (e.format, e.offset, e.row, e.message);
    for kind in FormatKind::ALL {
        let prepared =
            PreparedFormat::new(kind, schemas.clone(), FormatOptions::default()).unwrap();
        let with_others = |mut sink: Box<dyn shapeshift_formats::table::RowSink>| {
            sink.write_row_with_other_columns(
                &RowPosition::default(),
                &[shapeshift_types::ValueRef::Int64(1)],
                Some(&others),
            )
            .map_err(described)
        };
        let fresh = with_others(open_sink(kind, &schemas, Box::new(std::io::sink())).unwrap());
        let again = with_others(prepared.open_sink(Box::new(std::io::sink())).unwrap());
        assert_eq!(fresh, again, "{kind}: other columns");

        let mut bytes = write(kind, &schemas, &rows).unwrap();
        bytes.pop();
        let fresh = read(kind, &schemas, bytes.clone()).map_err(described);
        let stream: Box<dyn std::io::Read> = Box::new(Cursor::new(bytes.clone()));
        let inputs: [shapeshift_formats::table::SourceInput; 2] =
            [stream.into(), bytes.clone().into()];
        for input in inputs {
            let mut source = match prepared.open_source(input) {
                Ok(source) => source,
                Err(e) => {
                    assert_eq!(fresh, Err(described(e)), "{kind}: a cut stream, at open");
                    continue;
                }
            };
            let mut read_rows = 0;
            let result = loop {
                match source.next_row() {
                    Ok(Some(_)) => read_rows += 1,
                    Ok(None) => break Ok(read_rows),
                    Err(e) => break Err(described(e)),
                }
            };
            assert_eq!(
                fresh.as_ref().map(Vec::len).map_err(Clone::clone),
                result,
                "{kind}: a cut stream"
            );
        }
    }
}

/// Rows with every position field through the control-record formats, A -> B -> A.
#[test]
fn positions_survive_conversion_between_control_formats() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(shapeshift_types::PrimitiveType::Int64),
    )]);
    let schemas = vec![schema.clone(), schema];
    let rows: Rows = vec![
        (
            RowPosition {
                table_index: 0,
                row_index: Some(5),
                range_index: Some(1),
                key_switch: false,
            },
            vec![Value::Int64(1)],
        ),
        (
            RowPosition {
                table_index: 0,
                row_index: Some(6),
                range_index: Some(1),
                key_switch: true,
            },
            vec![Value::Int64(2)],
        ),
        (
            RowPosition {
                table_index: 1,
                row_index: Some(0),
                range_index: None,
                key_switch: false,
            },
            vec![Value::Int64(3)],
        ),
        (
            RowPosition {
                table_index: 1,
                row_index: Some(9),
                range_index: Some(2),
                key_switch: false,
            },
            vec![Value::Int64(4)],
        ),
        (
            RowPosition {
                table_index: 0,
                row_index: Some(7),
                range_index: Some(1),
                key_switch: false,
            },
            vec![Value::Int64(5)],
        ),
    ];
    for a in WITH_CONTROLS {
        for b in WITH_CONTROLS {
            let original = write(a, &schemas, &rows).unwrap();
            let there = convert(a, b, &schemas, original).unwrap();
            let back = read(a, &schemas, convert(b, a, &schemas, there).unwrap()).unwrap();
            assert_eq!(
                comparable_rows(&back, true),
                comparable_rows(&rows, true),
                "{a} -> {b} -> {a}"
            );
        }
    }
}

/// Avro's raw datums through the registry: the bytes of `avro::rows::datum_sink`, read back
/// from bytes in memory and from a stream; asked of another format, with a block codec or
/// for several tables, the option is refused, not ignored.
#[test]
fn avro_datums_through_the_registry_are_the_datum_streams_and_refused_where_they_cannot_apply() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::optional(shapeshift_types::PrimitiveType::Utf8.into()),
    )]);
    let rows: Rows = ["a", "", "é"]
        .iter()
        .map(|s| {
            (
                RowPosition::default(),
                vec![Value::String(s.as_bytes().to_vec())],
            )
        })
        .chain(std::iter::once((RowPosition::default(), vec![Value::Null])))
        .collect();
    let datums = FormatOptions {
        avro_datums: true,
        ..FormatOptions::default()
    };
    let schemas = vec![schema.clone()];
    let prepared = PreparedFormat::new(FormatKind::Avro, schemas.clone(), datums).unwrap();
    let expected = {
        let buffer = SharedOutput::default();
        let mut sink =
            shapeshift_formats::avro::rows::datum_sink(&schemas, Box::new(buffer.clone())).unwrap();
        for (position, values) in &rows {
            sink.write_owned_row(position, values).unwrap();
        }
        sink.finish().unwrap();
        drop(sink);
        buffer.take()
    };
    let buffer = SharedOutput::default();
    let mut sink = prepared.open_sink(Box::new(buffer.clone())).unwrap();
    for (position, values) in &rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    let bytes = buffer.take();
    assert_eq!(bytes, expected);
    assert!(!bytes.starts_with(b"Obj\x01"), "no container header");
    let stream: Box<dyn std::io::Read> = Box::new(Cursor::new(bytes.clone()));
    let inputs: [shapeshift_formats::table::SourceInput; 2] = [bytes.clone().into(), stream.into()];
    for input in inputs {
        let mut source = prepared.open_source(input).unwrap();
        let mut read_rows = Vec::new();
        while let Some(row) = source.next_row().unwrap() {
            read_rows.push(value_from_ref(row.values[0], &schema.columns[0].ty).unwrap());
        }
        let written: Vec<Value> = rows.iter().map(|(_, values)| values[0].clone()).collect();
        assert_eq!(read_rows, written);
    }
    let refused = |kind: FormatKind, schemas: Vec<TableSchema>, options: FormatOptions| {
        let error = PreparedFormat::new(kind, schemas, options)
            .err()
            .expect("refused");
        assert!(
            error.message.contains("avro_datums"),
            "{kind}: {}",
            error.message
        );
    };
    refused(FormatKind::Msgpack, schemas.clone(), datums);
    refused(FormatKind::Json, schemas.clone(), datums);
    let compressed = FormatOptions {
        avro_codec: shapeshift_formats::avro::BlockCodec::Snappy,
        ..datums
    };
    refused(FormatKind::Avro, schemas.clone(), compressed);
    refused(FormatKind::Avro, vec![schema.clone(), schema], datums);
}
