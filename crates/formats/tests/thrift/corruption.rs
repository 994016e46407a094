//! Thrift: truncated, corrupt or hostile input gives a FormatError naming the format and the
//! byte offset, never a panic, hang or unchecked allocation.

use proptest::prelude::*;
use shapeshift_formats::thrift::{format_name, Protocol, RowCodec};
use shapeshift_types::testing::arb_type;
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

use super::{ends, PROTOCOLS};
use crate::support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A cut at a frame boundary is a shorter stream (a prefix of the rows); anywhere else
    /// an error at or before the cut.
    #[test]
    fn truncations_are_errors_or_prefixes((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        for protocol in PROTOCOLS {
            let (sink, source) = ends(protocol);
            let bytes = write_owned(sink, &schemas, &rows).unwrap();
            for cut in 0..bytes.len() {
                match read_all(source, &schemas, bytes[..cut].to_vec()) {
                    Ok(read) => prop_assert!(rows.starts_with(&read), "cut {} gave rows not written", cut),
                    Err(e) => {
                        prop_assert_eq!(e.format, format_name(protocol));
                        prop_assert!(e.offset.is_some_and(|o| o <= cut as u64), "{}", e);
                    }
                }
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic((schema, rows) in schema_with_rows(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let schemas = [schema];
        for protocol in PROTOCOLS {
            let (sink, source) = ends(protocol);
            let mut bytes = write_owned(sink, &schemas, &plain_rows(rows.clone())).unwrap();
            for (index, value) in &flips {
                let i = index.index(bytes.len());
                bytes[i] ^= value;
            }
            if let Err(e) = read_all(source, &schemas, bytes) {
                prop_assert_eq!(e.format, format_name(protocol));
                prop_assert!(e.offset.is_some(), "{}", e);
            }
        }
    }

    #[test]
    fn random_structs_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96), column in arb_type(3)) {
        let schema = TableSchema::new(vec![ColumnSchema::new("c", column)]);
        for protocol in PROTOCOLS {
            if let Err(e) = RowCodec::new(&schema, protocol).unwrap().decode(&bytes) {
                prop_assert!(e.offset <= bytes.len(), "{:?}", e);
            }
        }
    }
}

fn codec(ty: Type, protocol: Protocol) -> RowCodec {
    RowCodec::new(
        &TableSchema::new(vec![ColumnSchema::new("c", ty)]),
        protocol,
    )
    .unwrap()
}

#[test]
fn hostile_lengths_are_refused_before_allocating() {
    let list = Type::list(Type::Primitive(P::Bool));
    // Binary: field 1 list, bools, 2^31 - 1 of them, then nothing.
    let e = codec(list.clone(), Protocol::Binary)
        .decode(&[15, 0, 1, 2, 0x7f, 0xff, 0xff, 0xff])
        .unwrap_err();
    assert!(e.message.contains("list count 2147483647"), "{e:?}");
    assert_eq!(e.offset, 4);
    // Compact: the long-form count as a varint of 2^32 - 1.
    let e = codec(list, Protocol::Compact)
        .decode(&[0x19, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x0f])
        .unwrap_err();
    assert!(e.message.contains("out of range"), "{e:?}");
    // A binary value claiming 2 GiB.
    let e = codec(Type::Primitive(P::String), Protocol::Binary)
        .decode(&[11, 0, 1, 0x7f, 0xff, 0xff, 0xff, b'x', 0])
        .unwrap_err();
    assert!(e.message.contains("binary length"), "{e:?}");
    // A negative binary length.
    let e = codec(Type::Primitive(P::String), Protocol::Binary)
        .decode(&[11, 0, 1, 0xff, 0xff, 0xff, 0xff, 0])
        .unwrap_err();
    assert!(e.message.contains("out of range"), "{e:?}");
}

#[test]
fn deeply_nested_unknown_fields_stop_at_the_depth_limit() {
    // Field 2 (unknown to a one-column schema) opens structs inside structs 10,000 deep.
    for protocol in PROTOCOLS {
        let mut bytes = match protocol {
            Protocol::Binary => vec![12, 0, 2],
            Protocol::Compact => vec![0x2c],
        };
        for _ in 0..10_000 {
            bytes.extend_from_slice(match protocol {
                Protocol::Binary => &[12, 0, 1],
                Protocol::Compact => &[0x1c],
            });
        }
        let e = codec(Type::optional(Type::Primitive(P::Int64)), protocol)
            .decode(&bytes)
            .unwrap_err();
        assert!(e.message.contains("nested deeper than 64"), "{e:?}");
    }
}

#[test]
fn wrong_wire_types_duplicates_and_missing_fields_are_named() {
    let c = codec(Type::Primitive(P::Int64), Protocol::Binary);
    // Field 1 as i32 where the schema says i64.
    let e = c.decode(&[8, 0, 1, 0, 0, 0, 1, 0]).unwrap_err();
    assert!(e.message.contains("field 1 is i32, expected i64"), "{e:?}");
    // Field 1 twice.
    let mut twice = vec![10, 0, 1];
    twice.extend([0; 8]);
    twice.extend([10, 0, 1]);
    twice.extend([0; 8]);
    twice.push(0);
    assert!(c
        .decode(&twice)
        .unwrap_err()
        .message
        .contains("appears twice"));
    // No field 1 at all.
    assert!(c
        .decode(&[0])
        .unwrap_err()
        .message
        .contains("required field 1"));
    // Bytes after the stop field.
    assert!(c.decode(&[0, 0]).is_err());
    // An unknown bool byte in a compact list.
    let e = codec(Type::list(Type::Primitive(P::Bool)), Protocol::Compact)
        .decode(&[0x19, 0x11, 7, 0])
        .unwrap_err();
    assert!(e.message.contains("neither true nor false"), "{e:?}");
    // A union with two fields set.
    let variant = Type::VariantTuple(vec![Type::Primitive(P::Int8), Type::Primitive(P::Int8)]);
    let e = codec(variant, Protocol::Binary)
        .decode(&[12, 0, 1, 3, 0, 1, 5, 3, 0, 2, 6, 0, 0])
        .unwrap_err();
    assert!(e.message.contains("more than one field"), "{e:?}");
    // A uint8 read as an i16 outside 0..=255.
    let e = codec(Type::Primitive(P::Uint8), Protocol::Binary)
        .decode(&[6, 0, 1, 1, 0, 0])
        .unwrap_err();
    assert!(e.message.contains("does not fit"), "{e:?}");
}

#[test]
fn unknown_fields_are_skipped_as_thrift_readers_do() {
    // A row written with three columns reads with a schema of its first one.
    let wide = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(P::Int64)),
        ColumnSchema::new(
            "b",
            Type::list(Type::dict(
                Type::Primitive(P::Utf8),
                Type::Primitive(P::Bool),
            )),
        ),
        ColumnSchema::new("c", Type::Primitive(P::Bool)),
    ]);
    let narrow = TableSchema::new(vec![ColumnSchema::new("a", Type::Primitive(P::Int64))]);
    let row = [
        Value::Int64(7),
        Value::List(vec![Value::Dict(vec![(
            Value::String(b"k".to_vec()),
            Value::Bool(false),
        )])]),
        Value::Bool(true),
    ];
    for protocol in PROTOCOLS {
        let mut bytes = Vec::new();
        RowCodec::new(&wide, protocol)
            .unwrap()
            .encode(&row, &mut bytes)
            .unwrap();
        let read = RowCodec::new(&narrow, protocol)
            .unwrap()
            .decode(&bytes)
            .unwrap();
        assert_eq!(read, vec![Value::Int64(7)]);
    }
}
