//! Thrift: every value of random deep schemas survives rows -> stream -> rows in both
//! protocols, through owned values and through views (byte for byte), with positions.

use proptest::prelude::*;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::table::RowPosition;
use shapeshift_formats::thrift::{Protocol, RowCodec};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

use super::{ends, PROTOCOLS};
use crate::support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn rows_round_trip((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        for protocol in PROTOCOLS {
            let (sink, source) = ends(protocol);
            let bytes = write_owned(sink, &schemas, &rows).unwrap();
            prop_assert_eq!(&read_all(source, &schemas, bytes.clone()).unwrap(), &rows, "{:?}", protocol);
            let again = copy_through_views(source, sink, &schemas, bytes.clone()).unwrap();
            prop_assert_eq!(again, bytes, "{:?}", protocol);
        }
    }

    #[test]
    fn row_structs_round_trip((schema, rows) in schema_with_rows()) {
        for protocol in PROTOCOLS {
            let codec = RowCodec::new(&schema, protocol).unwrap();
            for row in &rows {
                let mut bytes = Vec::new();
                codec.encode(row, &mut bytes).unwrap();
                prop_assert_eq!(&codec.decode(&bytes).unwrap(), row);
            }
        }
    }
}

#[test]
fn positions_and_table_switches_survive() {
    let a = TableSchema::new(vec![ColumnSchema::new("x", Type::Primitive(P::Int64))]);
    let b = TableSchema::new(vec![ColumnSchema::new("s", Type::Primitive(P::Utf8))]);
    let schemas = [a, b];
    let at = |table_index, row_index, range_index, key_switch| RowPosition {
        table_index,
        row_index,
        range_index,
        key_switch,
    };
    let rows = vec![
        (at(0, None, None, false), vec![Value::Int64(1)]),
        (at(1, None, None, false), vec![Value::String(b"x".to_vec())]),
        (
            at(1, Some(5), Some(1), true),
            vec![Value::String(b"y".to_vec())],
        ),
        (
            at(1, Some(6), Some(1), false),
            vec![Value::String(b"z".to_vec())],
        ),
        (at(0, None, None, false), vec![Value::Int64(2)]),
    ];
    for protocol in PROTOCOLS {
        let (sink, source) = ends(protocol);
        let bytes = write_owned(sink, &schemas, &rows).unwrap();
        assert_eq!(
            read_all(source, &schemas, bytes).unwrap(),
            rows,
            "{protocol:?}"
        );
    }
}

/// The documented wire form of a small row, byte by byte, in both protocols.
#[test]
fn a_row_is_the_documented_struct() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(P::Int32)),
        ColumnSchema::new("name", Type::optional(Type::Primitive(P::Utf8))),
        ColumnSchema::new("flag", Type::Primitive(P::Bool)),
        ColumnSchema::new("big", Type::Primitive(P::Uint64)),
    ]);
    let row = [
        Value::Int64(-2),
        Value::Null,
        Value::Bool(true),
        Value::Uint64(u64::MAX),
    ];
    let encode = |protocol| {
        let mut out = Vec::new();
        RowCodec::new(&schema, protocol)
            .unwrap()
            .encode(&row, &mut out)
            .unwrap();
        out
    };
    // Field 1 i32 -2; field 2 left out; field 3 bool true; field 4 i64 -1 (uint64 bits); stop.
    let mut binary = vec![8, 0, 1, 0xff, 0xff, 0xff, 0xfe, 2, 0, 3, 1, 10, 0, 4];
    binary.extend([0xff; 8]);
    binary.push(0);
    assert_eq!(encode(Protocol::Binary), binary);
    // Compact: delta 1 i32 zigzag(-2) = 3; delta 2 bool true in the nibble; delta 1 i64 zigzag(-1) = 1.
    assert_eq!(encode(Protocol::Compact), vec![0x15, 3, 0x21, 0x16, 1, 0]);
}

#[test]
fn dict_order_and_duplicates_are_kept() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "d",
        Type::dict(
            Type::Primitive(P::Utf8),
            Type::optional(Type::Primitive(P::Int64)),
        ),
    )]);
    let row = vec![Value::Dict(vec![
        (Value::String(b"b".to_vec()), Value::Int64(1)),
        (Value::String(b"a".to_vec()), Value::Null),
        (Value::String(b"b".to_vec()), Value::Int64(3)),
    ])];
    for protocol in PROTOCOLS {
        let codec = RowCodec::new(&schema, protocol).unwrap();
        let mut bytes = Vec::new();
        codec.encode(&row, &mut bytes).unwrap();
        assert_eq!(codec.decode(&bytes).unwrap(), row);
    }
}

#[test]
fn other_columns_and_values_that_do_not_fit_are_refused() {
    let schema = TableSchema::new(vec![ColumnSchema::new("x", Type::Primitive(P::Int8))]);
    for kind in [FormatKind::Thrift, FormatKind::ThriftCompact] {
        let mut sink = open_sink(kind, &[schema.clone()], Box::new(std::io::sink())).unwrap();
        let e = sink
            .write_owned_row(&RowPosition::default(), &[Value::Int64(300)])
            .unwrap_err();
        assert_eq!(e.format, kind.name());
        assert_eq!(e.row, Some(0));
        let other = shapeshift_formats::yson::to_vec(
            &shapeshift_formats::yson::from_slice(b"{y=1}").unwrap(),
            shapeshift_formats::yson::YsonFormat::Binary,
        );
        let e = sink
            .write_row_with_other_columns(
                &RowPosition::default(),
                &[shapeshift_types::ValueRef::Int64(1)],
                Some(&other),
            )
            .unwrap_err();
        assert!(
            e.to_string().contains(kind.name()) && e.message.contains('y'),
            "{e}"
        );
    }
}

#[test]
fn the_row_interface_reads_any_field_order_as_the_codec_does() {
    // The reader takes the common shape (fields in id order) straight into its row; any other
    // shape the codec reads must read the same through the interface.
    let schema = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(P::Int64)),
        ColumnSchema::new("b", Type::optional(Type::Primitive(P::Utf8))),
        ColumnSchema::new("c", Type::list(Type::Primitive(P::Int32))),
        ColumnSchema::new("d", Type::Primitive(P::Bool)),
    ]);
    let i64_field = |id: u8, v: i64| [&[10, 0, id][..], &v.to_be_bytes()].concat();
    let list_field = [15, 0, 3, 8, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 6].to_vec();
    let string_field = [11, 0, 2, 0, 0, 0, 2, b'h', b'i'].to_vec();
    let bool_field = [2, 0, 4, 1].to_vec();
    let unknown_field = [8, 0, 9, 0, 0, 0, 1].to_vec();
    let messages = [
        // Reversed.
        [
            &bool_field,
            &list_field,
            &string_field,
            &i64_field(1, 7)[..],
            &[0],
        ]
        .concat(),
        // In order.
        [
            &i64_field(1, 7)[..],
            &string_field,
            &list_field,
            &bool_field,
            &[0],
        ]
        .concat(),
        // The optional left out, an unknown field in the middle.
        [
            &i64_field(1, 8)[..],
            &unknown_field,
            &list_field,
            &bool_field,
            &[0],
        ]
        .concat(),
        // In order but for the last two.
        [
            &i64_field(1, 9)[..],
            &string_field,
            &bool_field,
            &list_field,
            &[0],
        ]
        .concat(),
    ];
    let codec = RowCodec::new(&schema, Protocol::Binary).unwrap();
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    for message in &messages {
        stream.extend_from_slice(&(message.len() as u32).to_le_bytes());
        stream.extend_from_slice(message);
        expected.push(codec.decode(message).unwrap());
    }
    assert_eq!(expected[0], expected[1]);
    assert_eq!(expected[2][1], Value::Null);
    let schemas = [schema];
    let (_, source) = ends(Protocol::Binary);
    let read: Vec<Vec<Value>> = read_all(source, &schemas, stream)
        .unwrap()
        .into_iter()
        .map(|row| row.1)
        .collect();
    assert_eq!(read, expected);
}

#[test]
fn the_row_interface_refuses_values_out_of_their_type() {
    // uint8 travels as an i16: 300 reads from the wire but is no uint8.
    let schemas = [TableSchema::new(vec![ColumnSchema::new(
        "u",
        Type::Primitive(P::Uint8),
    )])];
    let message = [6, 0, 1, 0x01, 0x2c, 0];
    let mut stream = (message.len() as u32).to_le_bytes().to_vec();
    stream.extend_from_slice(&message);
    let (_, source) = ends(Protocol::Binary);
    let error = read_all(source, &schemas, stream).unwrap_err().to_string();
    assert!(error.contains("300"), "{error}");
}
