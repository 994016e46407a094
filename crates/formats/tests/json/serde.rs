//! The typed path (`json::RowCodec::serialize` / `deserialize`): a program's own serde types
//! as JSON rows. Properties: the bytes are `encode_row`'s for the same row, they read back to
//! the same value, the row reader reads them to the same row; every cut or corrupted row is
//! an error and never a panic; what YT's JSON allows without loss reads (keys in any order,
//! whitespace, escapes, missing nullable members); what does not fit is refused with where.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::json::{encode_row, RowCodec, RowReader};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

use crate::serde_record::{opt, p, record, row, schema, st, Record};

fn codec() -> RowCodec {
    RowCodec::new(&schema())
}

/// The rows the row reader reads from `bytes`.
fn read_rows(schema: &TableSchema, bytes: &[u8]) -> Vec<Vec<Value>> {
    let mut reader = RowReader::new(std::slice::from_ref(schema), bytes);
    let mut rows = Vec::new();
    let mut values = Vec::new();
    while reader
        .next_row(&mut values)
        .expect("the row reader reads it")
        .is_some()
    {
        rows.push(std::mem::take(&mut values));
    }
    rows
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn typed_bytes_are_the_rows_and_read_back(record in record()) {
        let codec = codec();
        let mut typed = Vec::new();
        codec.serialize(&record, &mut typed).expect("serializes");
        let mut rows = Vec::new();
        encode_row(&schema(), &row(&record), &mut rows).expect("encodes");
        prop_assert_eq!(String::from_utf8_lossy(&typed), String::from_utf8_lossy(&rows));
        let back: Record = codec.deserialize(&typed).expect("deserializes");
        prop_assert_eq!(&back, &record);
        prop_assert_eq!(read_rows(&schema(), &typed), vec![row(&record)]);
    }

    #[test]
    fn cut_or_corrupt_rows_are_errors_not_panics(
        record in record(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let codec = codec();
        let mut bytes = Vec::new();
        codec.serialize(&record, &mut bytes).expect("serializes");
        // Every cut before the closing brace (the line's newline is optional).
        let cut = cut.index(bytes.len() - 1);
        let error = codec.deserialize::<Record>(&bytes[..cut]).expect_err("a cut row is an error");
        prop_assert!(error.offset().is_some_and(|o| o <= cut), "{error}");
        let mut corrupt = bytes.clone();
        for (at, mask) in &flips {
            let at = at.index(corrupt.len());
            corrupt[at] ^= mask;
        }
        // Any outcome but a panic; a success must be a value that writes back.
        if let Ok(value) = codec.deserialize::<Record>(&corrupt) {
            let mut again = Vec::new();
            codec.serialize(&value, &mut again).expect("a value read writes back");
        }
    }

    #[test]
    fn random_bytes_are_errors_not_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = codec().deserialize::<Record>(&bytes);
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Person {
    name: String,
    age: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nick: Option<String>,
    tags: Vec<u8>,
}

fn person_schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("name", p(P::Utf8)),
        ColumnSchema::new("age", opt(p(P::Uint8))),
        ColumnSchema::new("nick", opt(p(P::Utf8))),
        ColumnSchema::new("tags", p(P::String)),
    ])
}

#[test]
fn strings_are_bytes_as_code_points_both_ways() {
    let codec = RowCodec::new(&person_schema());
    let person = Person {
        name: "Zoë \"Z\"\n".into(),
        age: Some(7),
        nick: None,
        tags: vec![0, 0x7f, 0xff, b'a'],
    };
    let mut out = Vec::new();
    codec.serialize(&person, &mut out).expect("serializes");
    let text = String::from_utf8(out.clone()).expect("JSON is UTF-8");
    // é's two UTF-8 bytes are two code points; a skipped nullable field is null.
    assert_eq!(
        text,
        "{\"name\":\"Zo\u{c3}\u{ab} \\\"Z\\\"\\n\",\"age\":7,\"nick\":null,\
         \"tags\":\"\\u0000\\u007f\u{ff}a\"}\n"
    );
    assert_eq!(codec.deserialize::<Person>(&out).expect("reads"), person);
}

#[test]
fn what_yt_json_allows_reads() {
    let codec = RowCodec::new(&person_schema());
    let expected = Person {
        name: "ab".into(),
        age: None,
        nick: Some("n".into()),
        tags: b"\x01/".to_vec(),
    };
    // Keys out of order, whitespace, escapes, a missing nullable member.
    let text = br#" { "tags" : "\u0001\/", "nick":"n" ,"name":"a\u0062" } "#;
    assert_eq!(codec.deserialize::<Person>(text).expect("reads"), expected);
    // A struct as a positional array.
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "point",
        st(&[("x", p(P::Int32)), ("y", p(P::Double))]),
    )]);
    #[derive(Debug, PartialEq, Deserialize)]
    struct Row {
        point: (i32, f64),
    }
    let codec = RowCodec::new(&schema);
    let row: Row = codec.deserialize(br#"{"point":[1,2]}"#).expect("reads");
    assert_eq!(row, Row { point: (1, 2.0) });
    let row: Row = codec
        .deserialize(br#"{"point":{"x":1,"y":"-inf"}}"#)
        .expect("reads");
    assert_eq!(row.point.1, f64::NEG_INFINITY);
}

#[derive(Debug, Serialize, Deserialize)]
struct One<T> {
    value: T,
}

fn one_column(ty: Type) -> RowCodec {
    RowCodec::new(&TableSchema::new(vec![ColumnSchema::new("value", ty)]))
}

#[test]
fn floats_are_written_and_read_as_f32() {
    let codec = one_column(p(P::Float));
    let mut out = Vec::new();
    codec.serialize(&One { value: 0.3f32 }, &mut out).unwrap();
    assert_eq!(out, b"{\"value\":0.3}\n");
    let mut row = Vec::new();
    encode_row(
        &codec_schema(P::Float),
        &[Value::Double(f64::from(0.3f32))],
        &mut row,
    )
    .unwrap();
    assert_eq!(out, row, "the typed path writes the row codec's bytes");
    // An f64 into a float column is the f32 nearest it; reading gives that f32, as f32 or f64.
    out.clear();
    codec.serialize(&One { value: 0.1f64 }, &mut out).unwrap();
    assert_eq!(out, b"{\"value\":0.1}\n");
    assert_eq!(codec.deserialize::<One<f32>>(&out).unwrap().value, 0.1f32);
    assert_eq!(
        codec.deserialize::<One<f64>>(&out).unwrap().value,
        f64::from(0.1f32)
    );
    let error = codec
        .deserialize::<One<f32>>(br#"{"value":1e39}"#)
        .expect_err("beyond f32's range");
    assert_eq!(error.path(), "value");
    // A double column keeps the f64.
    let double = one_column(p(P::Double));
    out.clear();
    double.serialize(&One { value: 0.1f64 }, &mut out).unwrap();
    assert_eq!(double.deserialize::<One<f64>>(&out).unwrap().value, 0.1);
}

#[test]
fn byte_sequences_into_checked_columns_are_checked_whole() {
    // A `Vec<u8>` is a seq of u8 to serde: gathered, then checked as the column's bytes.
    let utf8 = one_column(p(P::Utf8));
    let mut out = b"kept".to_vec();
    utf8.serialize(
        &One {
            value: "é".as_bytes().to_vec(),
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(out, "kept{\"value\":\"Ã©\"}\n".as_bytes());
    out.truncate(4);
    let error = utf8
        .serialize(
            &One {
                value: vec![b'a', 0xff],
            },
            &mut out,
        )
        .expect_err("not UTF-8");
    assert!(error.message().contains("UTF-8"), "{error}");
    assert_eq!(out, b"kept", "a failed write leaves the buffer as it was");
    let uuid = one_column(p(P::Uuid));
    let mut out = Vec::new();
    uuid.serialize(
        &One {
            value: vec![7u8; 16],
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(out, b"{\"value\":\"\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\\u0007\"}\n");
    let error = uuid
        .serialize(
            &One {
                value: vec![7u8; 15],
            },
            &mut Vec::new(),
        )
        .expect_err("15 bytes");
    assert!(error.message().contains("15 bytes"), "{error}");
}

fn codec_schema(ty: P) -> TableSchema {
    TableSchema::new(vec![ColumnSchema::new("value", p(ty))])
}

#[test]
fn values_that_do_not_fit_are_refused_with_where() {
    let codec = one_column(p(P::Uint8));
    let mut out = b"kept".to_vec();
    let error = codec
        .serialize(&One { value: 300 }, &mut out)
        .expect_err("300 is not a uint8");
    assert_eq!(error.path(), "value");
    assert!(error.message().contains("300"), "{error}");
    assert_eq!(out, b"kept", "a failed write leaves the buffer as it was");
    let error = codec
        .deserialize::<One<u8>>(br#"{"value":256}"#)
        .expect_err("256 is not a uint8");
    assert_eq!(error.offset(), Some(9), "{error}");
    assert_eq!(error.path(), "value");
    let error = codec
        .deserialize::<One<u8>>(br#"{"value":1,"other":2}"#)
        .expect_err("an unknown key");
    assert!(error.message().contains("\"other\""), "{error}");
    assert_eq!(error.offset(), Some(11), "{error}");
    let error = codec
        .deserialize::<One<u8>>(b"{\"value\":1} x")
        .expect_err("trailing bytes");
    assert_eq!(error.offset(), Some(12), "{error}");
    let error = codec
        .serialize(&One { value: None::<u8> }, &mut Vec::new())
        .expect_err("None into a required column");
    assert!(error.message().contains("None"), "{error}");
    let utf8 = one_column(p(P::Utf8));
    let error = utf8
        .deserialize::<One<String>>(b"{\"value\":\"\\u00ff\"}")
        .expect_err("a lone 0xff byte is not UTF-8");
    assert!(error.message().contains("UTF-8"), "{error}");
    let error = utf8
        .deserialize::<One<String>>(b"{\"value\":\"\\u0100\"}")
        .expect_err("a code point above U+00FF");
    assert!(error.message().contains("U+0100"), "{error}");
}
