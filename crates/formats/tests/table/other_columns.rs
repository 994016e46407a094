//! Columns outside a non-strict schema ("other columns") are never silently lost: formats
//! that can carry them (YSON, JSON, MessagePack, CBOR, Skiff's `$other_columns`) keep them
//! through conversions, and every other sink refuses the row, naming the column.

use shapeshift_formats::table::SharedOutput;
use std::io::Cursor;

use proptest::prelude::*;
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{copy_rows, RowPosition};
use shapeshift_formats::yson;
use shapeshift_types::{
    ColumnSchema, Node, NodeValue, PrimitiveType as P, TableSchema, Type, Value,
};

/// The formats with a place for other columns.
const CARRYING: [FormatKind; 6] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
    FormatKind::Skiff,
];

/// The formats whose rows hold only the schema's columns.
const SCHEMA_ONLY: [FormatKind; 6] = [
    FormatKind::Protobuf,
    FormatKind::ProtobufDynamic,
    FormatKind::Arrow,
    FormatKind::Avro,
    FormatKind::Thrift,
    FormatKind::ThriftCompact,
];

fn schema(strict: bool) -> TableSchema {
    let mut schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(P::Int64)),
        ColumnSchema::new("name", Type::optional(Type::Primitive(P::Utf8))),
    ]);
    schema.strict = strict;
    schema
}

/// Converts `input` of format `from` into format `to` with `copy_rows`.
fn convert(
    from: FormatKind,
    to: FormatKind,
    schemas: &[TableSchema],
    input: Vec<u8>,
) -> Result<Vec<u8>, String> {
    let output = SharedOutput::default();
    let mut source =
        open_source(from, schemas, Box::new(Cursor::new(input))).map_err(|e| e.to_string())?;
    let mut sink = open_sink(to, schemas, Box::new(output.clone())).map_err(|e| e.to_string())?;
    copy_rows(source.as_mut(), sink.as_mut()).map_err(|e| e.to_string())?;
    drop(sink);
    let bytes = output.take();
    Ok(bytes)
}

/// Each row's values (owned) and other columns (parsed), in order.
fn rows_of(
    kind: FormatKind,
    schemas: &[TableSchema],
    bytes: Vec<u8>,
) -> Vec<(Vec<Value>, Option<Node>)> {
    let mut source = open_source(kind, schemas, Box::new(Cursor::new(bytes))).unwrap();
    let mut rows = Vec::new();
    while let Some((row, others)) = source.next_row_with_other_columns().unwrap() {
        let schema = &schemas[row.position.table_index];
        let values = row
            .values
            .iter()
            .zip(&schema.columns)
            .map(|(v, c)| shapeshift_formats::table::value_from_ref(*v, &c.ty).unwrap())
            .collect();
        rows.push((values, others.map(|bytes| yson::from_slice(bytes).unwrap())));
    }
    rows
}

/// Text YSON rows of the non-strict schema with other columns of several kinds.
fn yson_input() -> Vec<u8> {
    br#"{id=1;name="a";extra=5u;nested={k=[1;#;%true]};};
{id=2;name=#;};
{zz=<a=1>"x";id=3;};
"#
    .to_vec()
}

fn map(entries: Vec<(&str, Node)>) -> Node {
    Node::new(NodeValue::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v))
            .collect(),
    ))
}

fn expected_others() -> Vec<Option<Node>> {
    let nested = map(vec![(
        "k",
        Node::new(NodeValue::List(vec![
            Node::new(NodeValue::Int64(1)),
            Node::entity(),
            Node::new(NodeValue::Bool(true)),
        ])),
    )]);
    let mut x = Node::new(NodeValue::String(b"x".to_vec()));
    x.attributes
        .push((b"a".to_vec(), Node::new(NodeValue::Int64(1))));
    vec![
        Some(map(vec![
            ("extra", Node::new(NodeValue::Uint64(5))),
            ("nested", nested),
        ])),
        None,
        Some(map(vec![("zz", x)])),
    ]
}

#[test]
fn the_yson_source_surfaces_other_columns_and_next_row_still_gives_the_schema_columns() {
    let schemas = [schema(false)];
    let rows = rows_of(FormatKind::Yson, &schemas, yson_input());
    let others: Vec<_> = rows.iter().map(|(_, o)| o.clone()).collect();
    assert_eq!(others, expected_others());
    assert_eq!(
        rows[0].0,
        vec![Value::Int64(1), Value::String(b"a".to_vec())]
    );
    assert_eq!(rows[2].0, vec![Value::Int64(3), Value::Null]);
}

#[test]
fn yson_to_json_to_yson_keeps_other_columns() {
    let schemas = [schema(false)];
    let json = convert(
        FormatKind::YsonText,
        FormatKind::Json,
        &schemas,
        yson_input(),
    )
    .unwrap();
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(text.contains("\"extra\""), "{text}");
    let back = convert(FormatKind::Json, FormatKind::Yson, &schemas, json).unwrap();
    let rows = rows_of(FormatKind::Yson, &schemas, back);
    let others: Vec<_> = rows.into_iter().map(|(_, o)| o).collect();
    assert_eq!(others, expected_others());
}

#[test]
fn every_carrying_format_keeps_other_columns_both_ways() {
    let schemas = [schema(false)];
    let original = convert(
        FormatKind::YsonText,
        FormatKind::Yson,
        &schemas,
        yson_input(),
    )
    .unwrap();
    for via in CARRYING {
        let there = convert(FormatKind::Yson, via, &schemas, original.clone())
            .unwrap_or_else(|e| panic!("yson -> {via}: {e}"));
        let back = convert(via, FormatKind::Yson, &schemas, there)
            .unwrap_or_else(|e| panic!("{via} -> yson: {e}"));
        let rows = rows_of(FormatKind::Yson, &schemas, back);
        let others: Vec<_> = rows.iter().map(|(_, o)| o.clone()).collect();
        assert_eq!(others, expected_others(), "yson -> {via} -> yson");
        assert_eq!(
            rows[0].0,
            vec![Value::Int64(1), Value::String(b"a".to_vec())],
            "{via}"
        );
    }
}

#[test]
fn a_format_without_a_place_for_them_fails_naming_the_column() {
    let schemas = [schema(false)];
    for to in SCHEMA_ONLY {
        let error = match convert(FormatKind::YsonText, to, &schemas, yson_input()) {
            Ok(_) => panic!("{to} dropped the other columns"),
            Err(e) => e,
        };
        assert!(error.contains("\"extra\""), "{to}: {error}");
        assert!(error.contains(to.name()), "{to}: {error}");
    }
}

#[test]
fn rows_without_other_columns_still_convert_to_schema_only_formats() {
    let schemas = [schema(false)];
    let input = b"{id=1;name=\"a\";};{id=2;};".to_vec();
    for to in SCHEMA_ONLY {
        convert(FormatKind::YsonText, to, &schemas, input.clone())
            .unwrap_or_else(|e| panic!("{to}: {e}"));
    }
}

#[test]
fn sinks_refuse_other_columns_for_a_strict_schema_or_naming_a_schema_column() {
    let strict = [schema(true)];
    let loose = [schema(false)];
    let values = [
        shapeshift_types::ValueRef::Int64(1),
        shapeshift_types::ValueRef::Null,
    ];
    let others = yson::to_vec(
        &map(vec![("extra", Node::new(NodeValue::Int64(1)))]),
        yson::YsonFormat::Binary,
    );
    let clash = yson::to_vec(
        &map(vec![("id", Node::new(NodeValue::Int64(1)))]),
        yson::YsonFormat::Binary,
    );
    let position = RowPosition::default();
    for kind in CARRYING {
        let mut sink = open_sink(kind, &strict, Box::new(std::io::sink())).unwrap();
        let error = sink
            .write_row_with_other_columns(&position, &values, Some(&others))
            .expect_err(kind.name());
        assert!(error.message.contains("\"extra\""), "{kind}: {error}");
        let mut sink = open_sink(kind, &loose, Box::new(std::io::sink())).unwrap();
        let error = sink
            .write_row_with_other_columns(&position, &values, Some(&clash))
            .expect_err(kind.name());
        assert!(error.message.contains("\"id\""), "{kind}: {error}");
        sink.write_row_with_other_columns(&position, &values, Some(b"{}"))
            .unwrap_or_else(|e| panic!("{kind}: an empty map is no other columns: {e}"));
    }
}

#[test]
fn a_strict_table_refuses_extra_columns_on_reading() {
    let strict = [schema(true)];
    let mut source = open_source(
        FormatKind::YsonText,
        &strict,
        Box::new(Cursor::new(yson_input())),
    )
    .unwrap();
    let error = source.next_row().expect_err("a strict schema");
    assert!(error.message.contains("\"extra\""), "{error}");
}

#[test]
fn a_tree_row_with_a_malformed_other_columns_item_is_an_error_with_its_offset() {
    let schemas = [schema(false)];
    // [1, "a", 7]: three items for two columns, the third not a yson extension.
    let msgpack = vec![0x93, 0x01, 0xa1, b'a', 0x07];
    let mut source = open_source(
        FormatKind::Msgpack,
        &schemas,
        Box::new(Cursor::new(msgpack)),
    )
    .unwrap();
    let error = source.next_row().expect_err("a bad other-columns item");
    assert_eq!(error.offset, Some(4), "{error}");
    // A strict schema has no room for a third item at all.
    let msgpack = vec![0x93, 0x01, 0xa1, b'a', 0x07];
    let mut source = open_source(
        FormatKind::Msgpack,
        &[schema(true)],
        Box::new(Cursor::new(msgpack)),
    )
    .unwrap();
    let error = source.next_row().expect_err("a strict row of three items");
    assert_eq!(error.offset, Some(0), "{error}");
}

fn arb_other_columns() -> impl Strategy<Value = Vec<(String, i64, Vec<u8>)>> {
    prop::collection::vec(
        (
            "[a-z$é ]{1,6}",
            any::<i64>(),
            prop::collection::vec(any::<u8>(), 0..6),
        ),
        0..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn random_other_columns_survive_every_carrying_format(extra in arb_other_columns()) {
        let schemas = [schema(false)];
        let mut entries: Vec<(Vec<u8>, Node)> = Vec::new();
        for (name, number, bytes) in extra {
            // Other columns never repeat a name or name a schema column.
            if name == "id" || name == "name" || entries.iter().any(|(k, _)| k == name.as_bytes()) {
                continue;
            }
            let value = Node::new(NodeValue::List(vec![
                Node::new(NodeValue::Int64(number)),
                Node::new(NodeValue::String(bytes)),
            ]));
            entries.push((name.into_bytes(), value));
        }
        let mut row = Node::new(NodeValue::Map(vec![
            (b"id".to_vec(), Node::new(NodeValue::Int64(7))),
        ]));
        if let NodeValue::Map(row_entries) = &mut row.value {
            row_entries.extend(entries.iter().cloned());
        }
        let input = yson::to_vec(&row, yson::YsonFormat::Binary);
        let expected = (!entries.is_empty()).then(|| Node::new(NodeValue::Map(entries)));
        for via in CARRYING {
            let there = convert(FormatKind::Yson, via, &schemas, input.clone())
                .map_err(|e| TestCaseError::fail(format!("yson -> {via}: {e}")))?;
            let back = convert(via, FormatKind::Yson, &schemas, there)
                .map_err(|e| TestCaseError::fail(format!("{via} -> yson: {e}")))?;
            let rows = rows_of(FormatKind::Yson, &schemas, back);
            prop_assert_eq!(rows.len(), 1);
            prop_assert_eq!(&rows[0].1, &expected, "via {}", via);
        }
    }
}
