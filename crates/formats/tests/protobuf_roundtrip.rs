//! Protobuf (static and dynamic): every value of random deep schemas survives
//! rows -> bytes -> rows; static and dynamic codecs read each other and write the same bytes.

#[path = "row_formats_support/mod.rs"]
mod support;

use proptest::prelude::*;
use shapeshift_formats::protobuf::{self, StaticMessage};
use shapeshift_formats::protobuf_dynamic::{self, proto_schema, RowCodec};
use shapeshift_formats::table::RowPosition;
use shapeshift_types::testing::arb_schema;
use shapeshift_types::{PrimitiveType, TableSchema, Type, Value};
use support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn dynamic_rows_round_trip((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        let bytes = write_owned(protobuf_dynamic::sink, &schemas, &rows).unwrap();
        let back = read_all(protobuf_dynamic::source, &schemas, bytes.clone()).unwrap();
        prop_assert_eq!(&back, &rows);
        // Writing the views read back gives the same bytes.
        let again = copy_through_views(protobuf_dynamic::source, protobuf_dynamic::sink, &schemas, bytes.clone()).unwrap();
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn dynamic_codec_round_trips_single_messages((schema, rows) in schema_with_rows()) {
        let codec = RowCodec::new(&schema);
        for row in rows {
            let mut message = Vec::new();
            codec.encode_row(&row, &mut message).unwrap();
            prop_assert_eq!(codec.decode_row(&message).unwrap(), row);
        }
    }

    #[test]
    fn arbitrary_names_and_flags_round_trip(schema in arb_schema()) {
        // Names of any UTF-8 do not matter to the wire layout: only field numbers do.
        let rows: Vec<Vec<Value>> = Vec::new();
        let schemas = [schema];
        let bytes = write_owned(protobuf_dynamic::sink, &schemas, &plain_rows(rows)).unwrap();
        prop_assert_eq!(read_all(protobuf_dynamic::source, &schemas, bytes).unwrap(), vec![]);
        let text = proto_schema(&schemas[0], "Row");
        prop_assert!(text.starts_with("syntax = \"proto3\";"));
    }

    #[test]
    fn static_messages_round_trip_and_match_dynamic_bytes(
        (which, rows) in proptest::sample::select(StaticMessage::ALL.to_vec())
            .prop_flat_map(|which| (Just(which), rows_of(&which.schema(), 0..5)))
    ) {
        let schemas = [which.schema()];
        let rows = plain_rows(rows);
        let static_bytes = write_owned(protobuf::sink, &schemas, &rows).unwrap();
        let dynamic_bytes = write_owned(protobuf_dynamic::sink, &schemas, &rows).unwrap();
        // The compiled messages follow the dynamic layout rules byte for byte.
        prop_assert_eq!(&static_bytes, &dynamic_bytes);
        prop_assert_eq!(&read_all(protobuf::source, &schemas, static_bytes.clone()).unwrap(), &rows);
        prop_assert_eq!(&read_all(protobuf_dynamic::source, &schemas, static_bytes.clone()).unwrap(), &rows);
        let again = copy_through_views(protobuf::source, protobuf::sink, &schemas, static_bytes.clone()).unwrap();
        prop_assert_eq!(again, static_bytes);
    }
}

#[test]
fn lab_schemas_select_their_compiled_messages() {
    for which in StaticMessage::ALL {
        assert_eq!(StaticMessage::for_schema(&which.schema()), Some(which));
    }
    let other = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    assert_eq!(StaticMessage::for_schema(&other), None);
}

#[test]
fn positions_survive_the_framing() {
    let a = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let b = StaticMessage::Bm2.schema();
    let schemas = [a, b];
    let at = |table_index, row_index, range_index, key_switch| RowPosition {
        table_index,
        row_index,
        range_index,
        key_switch,
    };
    let rows = vec![
        (at(0, None, None, false), vec![Value::Int64(1)]),
        (at(0, Some(10), Some(2), false), vec![Value::Int64(2)]),
        (at(0, Some(11), Some(2), true), vec![Value::Int64(3)]),
        (
            at(1, Some(0), None, false),
            vec![Value::Uint64(7), Value::String(b"x".to_vec())],
        ),
        (
            at(1, Some(5), Some(1), false),
            vec![Value::Uint64(8), Value::String(Vec::new())],
        ),
        (at(0, None, None, false), vec![Value::Int64(-4)]),
    ];
    for (sink, source) in [
        (
            protobuf_dynamic::sink as SinkFn,
            protobuf_dynamic::source as SourceFn,
        ),
        (protobuf::sink as SinkFn, protobuf::source as SourceFn),
    ] {
        let bytes = write_owned(sink, &schemas, &rows).unwrap();
        assert_eq!(read_all(source, &schemas, bytes).unwrap(), rows);
    }
}

#[test]
fn framing_matches_the_reference_layout() {
    let schema = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let schemas = [schema.clone(), schema];
    let rows = vec![(
        RowPosition {
            table_index: 1,
            row_index: Some(3),
            range_index: Some(2),
            key_switch: true,
        },
        vec![Value::Int64(150)],
    )];
    let bytes = write_owned(protobuf_dynamic::sink, &schemas, &rows).unwrap();
    let mut expected = Vec::new();
    expected.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0]); // table 1
    expected.extend_from_slice(&[0xFD, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0]); // range 2
    expected.extend_from_slice(&[0xFC, 0xFF, 0xFF, 0xFF, 3, 0, 0, 0, 0, 0, 0, 0]); // row 3
    expected.extend_from_slice(&[0xFE, 0xFF, 0xFF, 0xFF]); // key switch
    expected.extend_from_slice(&[3, 0, 0, 0, 0x08, 0x96, 0x01]); // field 1 = 150
    expected.extend_from_slice(&[0xFB, 0xFF, 0xFF, 0xFF]); // end of stream
    assert_eq!(bytes, expected);
}

#[test]
fn proto_schema_spells_the_layout() {
    let schema = TableSchema::new(vec![
        shapeshift_types::ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        shapeshift_types::ColumnSchema::new(
            "maybe",
            Type::optional(Type::Primitive(PrimitiveType::Utf8)),
        ),
        shapeshift_types::ColumnSchema::new(
            "tags",
            Type::list(Type::optional(Type::Primitive(PrimitiveType::String))),
        ),
        shapeshift_types::ColumnSchema::new("nothing", Type::Primitive(PrimitiveType::Null)),
    ]);
    let text = proto_schema(&schema, "Row");
    assert!(text.contains("  int64 id = 1;"), "{text}");
    assert!(text.contains("  optional string maybe = 2;"), "{text}");
    assert!(text.contains("  repeated Row_1 tags = 3;"), "{text}");
    assert!(text.contains("reserved 4;"), "{text}");
    assert!(
        text.contains("message Row_1 {\n  optional bytes value = 1;\n}"),
        "{text}"
    );
}
