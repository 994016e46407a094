//! Avro: truncated, corrupt or hostile input gives a FormatError naming the format and the
//! byte offset, never a panic, hang or unchecked allocation.

use crate::support;

use proptest::prelude::*;
use shapeshift_formats::avro::{self, RowCodec};
use shapeshift_formats::table::FormatError;
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

fn read_count(
    source: SourceFn,
    schemas: &[TableSchema],
    bytes: &[u8],
) -> Result<usize, FormatError> {
    read_all(source, schemas, bytes.to_vec()).map(|rows| rows.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn truncations_are_errors_with_offsets((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let bytes = write_owned(avro::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        for cut in 0..bytes.len() {
            if let Err(e) = read_count(avro::rows::source, &schemas, &bytes[..cut]) {
                prop_assert_eq!(e.format, "avro");
                prop_assert!(e.offset.is_some_and(|o| o <= cut as u64), "{}", e);
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic((schema, rows) in schema_with_rows(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let schemas = [schema];
        for (sink, source) in [(avro::rows::sink as SinkFn, avro::rows::source as SourceFn), (avro::rows::datum_sink as SinkFn, avro::rows::datum_source as SourceFn)] {
            let mut bytes = write_owned(sink, &schemas, &plain_rows(rows.clone())).unwrap();
            if bytes.is_empty() { continue; }
            for (index, value) in &flips {
                let i = index.index(bytes.len());
                bytes[i] ^= value;
            }
            if let Err(e) = read_count(source, &schemas, &bytes) {
                prop_assert_eq!(e.format, "avro");
                prop_assert!(e.offset.is_some());
            }
        }
    }

    #[test]
    fn random_datums_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), column in shapeshift_types::testing::arb_type(3)) {
        let codec = RowCodec::new(&TableSchema::new(vec![ColumnSchema::new("c", column)]));
        let _ = codec.decode_row(&bytes);
    }
}

#[test]
fn hostile_counts_are_refused_without_allocating() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "l",
        Type::list(Type::Primitive(PrimitiveType::Null)),
    )]);
    let codec = RowCodec::new(&schema);
    // An array of nulls claiming 2^40 items: each takes no bytes, so a decoder must cap it.
    let mut datum = Vec::new();
    let z = (1u64 << 40) << 1;
    let mut v = z;
    while v >= 0x80 {
        datum.push((v as u8) | 0x80);
        v >>= 7;
    }
    datum.push(v as u8);
    datum.push(0);
    let e = codec.decode_row(&datum).unwrap_err();
    assert_eq!(e.offset, Some(0), "{e}");
    // A string field claiming more bytes than there are.
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::String),
    )]);
    let e = RowCodec::new(&schema)
        .decode_row(&[0xfe, 0xff, 0xff, 0xff, 0x0f, b'a'])
        .unwrap_err();
    assert!(e.message.contains("bytes needed"), "{e}");
    // A block claiming 1 GiB in a 40-byte file.
    let schemas = [schema];
    let mut bytes = write_owned(
        avro::rows::sink,
        &schemas,
        &plain_rows(vec![vec![Value::String(b"x".to_vec())]]),
    )
    .unwrap();
    let header_end = bytes.len() - 20; // count, size, datum ("x": length + byte), sync
    bytes.truncate(header_end);
    bytes.extend_from_slice(&[0x02, 0x80, 0x80, 0x80, 0x80, 0x08]);
    let e = read_count(avro::rows::source, &schemas, &bytes).unwrap_err();
    assert!(e.message.contains("input ends inside a field"), "{e}");
}

#[test]
fn foreign_schemas_and_codecs_are_refused() {
    let written = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )])];
    let expected = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Utf8),
    )])];
    let bytes = write_owned(
        avro::rows::sink,
        &written,
        &plain_rows(vec![vec![Value::Int64(1)]]),
    )
    .unwrap();
    let e = read_count(avro::rows::source, &expected, &bytes).unwrap_err();
    assert!(e.message.contains("schema differs"), "{e}");
    let e = read_count(avro::rows::source, &written, b"not avro").unwrap_err();
    assert_eq!(e.offset, Some(0));
    let e = read_count(avro::rows::source, &written, b"").unwrap_err();
    assert!(e.message.contains("empty"), "{e}");
}
