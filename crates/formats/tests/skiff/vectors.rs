//! Conformance vectors written by the peer (yt_yson_bindings' `dump_skiff`, see
//! python/tools/gen_skiff_vectors.py): we read its bytes to the values it was given, and where
//! no yson32 payload is involved (the peer's YSON spelling is its own) we write those values
//! back to the very same bytes.

use std::path::Path;

use shapeshift_formats::skiff::{Codec, OwnedRow, SkiffFormat, SystemFields};
use shapeshift_formats::yson;
use shapeshift_types::{Node, NodeValue, Value};

fn vectors_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/skiff"))
}

fn value_to_node(value: &Value) -> Node {
    match value {
        Value::Null => Node::entity(),
        Value::Bool(b) => Node::new(NodeValue::Bool(*b)),
        Value::Int64(v) => Node::int64(*v),
        Value::Uint64(v) => Node::uint64(*v),
        Value::Double(v) => Node::new(NodeValue::Double(*v)),
        Value::String(s) => Node::string(s.clone()),
        Value::Any(node) => node.clone(),
        other => panic!("the vectors hold no composite values, got {other:?}"),
    }
}

fn node_to_value(node: &Node) -> Value {
    match &node.value {
        NodeValue::Entity => Value::Null,
        NodeValue::Bool(b) => Value::Bool(*b),
        NodeValue::Int64(v) => Value::Int64(*v),
        NodeValue::Uint64(v) => Value::Uint64(*v),
        NodeValue::Double(v) => Value::Double(*v),
        NodeValue::String(s) => Value::String(s.clone()),
        _ => Value::Any(node.clone()),
    }
}

fn entry<'n>(row: &'n Node, key: &str) -> Option<&'n Node> {
    row.get(key.as_bytes())
        .filter(|n| n.value != NodeValue::Entity)
}

fn check_case(case: &str, canonical: bool) {
    let bytes = std::fs::read(vectors_dir().join(format!("{case}.skiff"))).unwrap();
    let expected =
        yson::from_slice(&std::fs::read(vectors_dir().join(format!("{case}.yson"))).unwrap())
            .unwrap();
    let format = SkiffFormat::from_node(expected.get(b"format").unwrap()).unwrap();
    let codec = Codec::new(&format).unwrap();
    let table = codec.table(0).unwrap();
    let NodeValue::List(expected_rows) = &expected.get(b"rows").unwrap().value else {
        panic!()
    };

    let rows = codec.decode_rows(&bytes).unwrap();
    assert_eq!(rows.len(), expected_rows.len());
    let mut rebuilt = Vec::new();
    for (number, (row, want)) in rows.iter().zip(expected_rows).enumerate() {
        let mut values = Vec::new();
        for column in 0..table.column_count() {
            let name = table.column_name(column);
            let want_value = entry(want, name).cloned().unwrap_or_else(Node::entity);
            assert_eq!(
                value_to_node(&row.values[column]),
                want_value,
                "{case} row {number} column {name}"
            );
            values.push(node_to_value(&want_value));
        }
        let system = SystemFields {
            key_switch: entry(want, "$key_switch")
                .is_some_and(|n| n.value == NodeValue::Bool(true)),
            row_index: entry(want, "$row_index").map(|n| match n.value {
                NodeValue::Int64(v) => v,
                _ => panic!(),
            }),
            range_index: entry(want, "$range_index").map(|n| match n.value {
                NodeValue::Int64(v) => v,
                _ => panic!(),
            }),
            sparse: vec![],
            other_columns: row.system.other_columns.clone(),
        };
        if table.has_key_switch() {
            assert_eq!(
                row.system.key_switch, system.key_switch,
                "{case} row {number}"
            );
        }
        if table.has_row_index() {
            assert_eq!(
                row.system.row_index, system.row_index,
                "{case} row {number}"
            );
        }
        if table.has_range_index() {
            assert_eq!(
                row.system.range_index, system.range_index,
                "{case} row {number}"
            );
        }
        if table.has_other_columns() {
            let other = yson::from_slice(row.system.other_columns.as_deref().unwrap()).unwrap();
            let NodeValue::Map(entries) = &other.value else {
                panic!("other columns are a map")
            };
            let NodeValue::Map(want_entries) = &want.value else {
                panic!()
            };
            let want_other: Vec<_> = want_entries
                .iter()
                .filter(|(k, _)| {
                    table
                        .column_index(std::str::from_utf8(k).unwrap())
                        .is_none()
                })
                .cloned()
                .collect();
            assert_eq!(entries, &want_other, "{case} row {number} other columns");
        }
        rebuilt.push(OwnedRow {
            table_index: 0,
            values,
            system,
        });
    }
    if canonical {
        assert_eq!(
            codec.encode_rows(&rebuilt).unwrap(),
            bytes,
            "{case}: we write the peer's bytes"
        );
    }
}

#[test]
fn peer_scalars_and_optionals() {
    check_case("scalars", true);
}

#[test]
fn peer_system_fields() {
    check_case("system", true);
}

#[test]
fn peer_yson_payloads_and_other_columns() {
    check_case("yson", false);
}
