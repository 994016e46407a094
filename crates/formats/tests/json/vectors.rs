//! JSON spelled as YT's `json` format spells it (docs/formats/json.md): exact bytes for one row
//! of each convention, written through the registry and read back to the same values.

use std::io::Cursor;

use shapeshift_formats::json::{encode_row, RowReader};
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{RowPosition, SharedOutput};
use shapeshift_types::{
    ColumnSchema, Member, Node, NodeValue, PrimitiveType as P, TableSchema, Type, Value,
};

fn column(name: &str, ty: Type) -> TableSchema {
    TableSchema::new(vec![ColumnSchema::new(name, ty)])
}

/// The line `encode_row` writes for `value` in a one-column table, without its newline.
fn spelled(schema: &TableSchema, value: Value) -> String {
    let mut out = Vec::new();
    encode_row(schema, &[value], &mut out).expect("the value fits its column");
    assert_eq!(out.pop(), Some(b'\n'), "a row ends its line");
    String::from_utf8(out).expect("JSON is ASCII here")
}

/// `line` read back as the one value of its row.
fn read_back(schema: &TableSchema, line: &str) -> Value {
    let input = format!("{line}\n");
    let mut reader = RowReader::new(std::slice::from_ref(schema), input.as_bytes());
    let mut values = Vec::new();
    reader
        .next_row(&mut values)
        .expect("the line reads")
        .expect("one row");
    values.pop().expect("one value")
}

/// `value` is spelled `expected` and reads back as itself.
fn check(schema: &TableSchema, value: Value, expected: &str) {
    assert_eq!(spelled(schema, value.clone()), expected);
    assert_eq!(read_back(schema, expected), value, "{expected}");
}

#[test]
fn scalars_are_numbers_and_strings_are_bytes_as_code_points() {
    check(
        &column("i", Type::Primitive(P::Int64)),
        Value::Int64(-5),
        r#"{"i":-5}"#,
    );
    check(
        &column("u", Type::Primitive(P::Uint64)),
        Value::Uint64(u64::MAX),
        r#"{"u":18446744073709551615}"#,
    );
    check(
        &column("b", Type::Primitive(P::Bool)),
        Value::Bool(true),
        r#"{"b":true}"#,
    );
    check(
        &column("s", Type::Primitive(P::String)),
        Value::String(vec![b'a', 0xff]),
        "{\"s\":\"a\u{ff}\"}",
    );
    // An escaped code point reads the same.
    assert_eq!(
        read_back(
            &column("s", Type::Primitive(P::String)),
            r#"{"s":"a\u00ff"}"#
        ),
        Value::String(vec![b'a', 0xff])
    );
    // UTF-8 text appears as its bytes: "é" is 0xc3 0xa9, spelled as two code points.
    let utf8 = column("t", Type::Primitive(P::Utf8));
    let line = spelled(&utf8, Value::String("é".as_bytes().to_vec()));
    let text: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(text["t"], serde_json::json!("Ã©"));
}

#[test]
fn doubles_round_trip_and_non_finite_ones_are_strings() {
    let schema = column("d", Type::Primitive(P::Double));
    let line = spelled(&schema, Value::Double(1.0));
    assert!(line == r#"{"d":1.0}"# || line == r#"{"d":1e0}"#, "{line}");
    assert_eq!(read_back(&schema, &line), Value::Double(1.0));
    check(&schema, Value::Double(f64::INFINITY), r#"{"d":"inf"}"#);
    check(&schema, Value::Double(f64::NEG_INFINITY), r#"{"d":"-inf"}"#);
    assert!(spelled(&schema, Value::Double(f64::NAN)) == r#"{"d":"nan"}"#);
    assert!(matches!(read_back(&schema, r#"{"d":"nan"}"#), Value::Double(v) if v.is_nan()));
    // An integer is accepted for a double column, as YT accepts it.
    assert_eq!(read_back(&schema, r#"{"d":3}"#), Value::Double(3.0));
}

#[test]
fn floats_are_the_f32_they_hold() {
    let schema = column("f", Type::Primitive(P::Float));
    // The f32's shortest round trip, not the f64 it widens to ("0.30000001192092896").
    check(&schema, Value::Double(f64::from(0.3f32)), r#"{"f":0.3}"#);
    check(
        &schema,
        Value::Double(f64::from(f32::MAX)),
        r#"{"f":3.4028235e+38}"#,
    );
    check(&schema, Value::Double(f64::INFINITY), r#"{"f":"inf"}"#);
    // A double in a float column is the f32 nearest it, as in every binary format.
    assert_eq!(spelled(&schema, Value::Double(0.1)), r#"{"f":0.1}"#);
    assert_eq!(
        read_back(&schema, r#"{"f":0.1}"#),
        Value::Double(f64::from(0.1f32))
    );
    assert_eq!(
        read_back(&schema, r#"{"f":16777217}"#),
        Value::Double(16777216.0)
    );
    // Beyond f32's range is an error, not infinity.
    let input = "{\"f\":1e39}\n";
    let mut reader = RowReader::new(std::slice::from_ref(&schema), input.as_bytes());
    let error = reader
        .next_row(&mut Vec::new())
        .expect_err("1e39 is no float");
    assert!(
        error.to_string().contains("1e39")
            || error
                .to_string()
                .contains("1000000000000000000000000000000000000000"),
        "{error}"
    );
}

#[test]
fn composites_follow_their_yson_form() {
    let optional_of_optional = column(
        "o",
        Type::optional(Type::optional(Type::Primitive(P::Int64))),
    );
    check(&optional_of_optional, Value::Null, r#"{"o":null}"#);
    check(
        &optional_of_optional,
        Value::Some(Box::new(Value::Null)),
        r#"{"o":[null]}"#,
    );
    let dict = column(
        "m",
        Type::dict(Type::Primitive(P::Int64), Type::Primitive(P::String)),
    );
    check(
        &dict,
        Value::Dict(vec![
            (Value::Int64(2), Value::String(b"b".to_vec())),
            (Value::Int64(1), Value::String(b"a".to_vec())),
        ]),
        r#"{"m":[[2,"b"],[1,"a"]]}"#,
    );
    let pair = column(
        "p",
        Type::Struct(vec![
            Member::new("foo", Type::Primitive(P::Int32)),
            Member::new("bar", Type::Primitive(P::String)),
        ]),
    );
    let value = Value::Tuple(vec![Value::Int64(7), Value::String(b"x".to_vec())]);
    check(&pair, value.clone(), r#"{"p":{"foo":7,"bar":"x"}}"#);
    // Reading also takes a struct as a positional array.
    assert_eq!(read_back(&pair, r#"{"p":[7,"x"]}"#), value);
}

#[test]
fn yson_nodes_keep_their_types_and_attributes() {
    let schema = column("y", Type::Primitive(P::Yson));
    let uint = Node::new(NodeValue::Uint64(5));
    check(
        &schema,
        Value::Any(uint),
        r#"{"y":{"$type":"uint64","$value":"5"}}"#,
    );
    check(&schema, Value::Any(Node::entity()), r#"{"y":null}"#);
}

#[test]
fn control_records_are_entities_with_attributes() {
    let schemas = [
        column("a", Type::Primitive(P::Int64)),
        column("a", Type::Primitive(P::Int64)),
    ];
    let output = SharedOutput::default();
    let mut sink = open_sink(FormatKind::Json, &schemas, Box::new(output.clone())).unwrap();
    let second = RowPosition {
        table_index: 1,
        ..RowPosition::default()
    };
    sink.write_owned_row(&RowPosition::default(), &[Value::Int64(1)])
        .unwrap();
    sink.write_owned_row(&second, &[Value::Int64(2)]).unwrap();
    sink.finish().unwrap();
    drop(sink);
    let bytes = output.take();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert_eq!(
        text,
        "{\"a\":1}\n{\"$value\":null,\"$attributes\":{\"table_index\":1}}\n{\"a\":2}\n"
    );
    let mut source = open_source(FormatKind::Json, &schemas, Box::new(Cursor::new(bytes))).unwrap();
    let mut tables = Vec::new();
    while let Some(row) = source.next_row().unwrap() {
        tables.push(row.position.table_index);
    }
    assert_eq!(tables, [0, 1]);
}
