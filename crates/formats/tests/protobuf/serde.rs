//! The typed path (`dynamic::RowCodec::serialize` / `deserialize`): a program's own serde
//! types as row messages. Properties: the bytes are `encode_row`'s for the same row, they
//! read back to the same value and `decode_row` reads them to the same row; messages in any
//! field order protobuf allows read as the row codec reads them (merge rules included);
//! every cut or corrupted message is an error and never a panic; what does not fit is
//! refused with where.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::protobuf::dynamic::RowCodec;
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

use crate::serde_record::{opt, p, record, row, schema, serde_bytes_free, st, Record};

fn codec() -> RowCodec {
    RowCodec::new(&schema())
}

/// One field of a message: its number and its bytes (tag included).
fn fields(message: &[u8]) -> Vec<(u64, Vec<u8>)> {
    fn varint(bytes: &[u8], at: &mut usize) -> u64 {
        let mut v = 0;
        for shift in (0..64).step_by(7) {
            let byte = bytes[*at];
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
        }
        v
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < message.len() {
        let start = at;
        let tag = varint(message, &mut at);
        match tag & 7 {
            0 => drop(varint(message, &mut at)),
            1 => at += 8,
            2 => at += varint(message, &mut at) as usize,
            5 => at += 4,
            other => panic!("wire type {other}"),
        }
        out.push((tag >> 3, message[start..at].to_vec()));
    }
    out
}

/// `message` with its fields stably sorted by descending number: every field out of order,
/// a repeated field's occurrences still in their order.
fn reversed(message: &[u8]) -> Vec<u8> {
    let mut fields = fields(message);
    fields.sort_by_key(|(number, _)| std::cmp::Reverse(*number));
    fields.into_iter().flat_map(|(_, bytes)| bytes).collect()
}

/// The length-delimited field `number` holding `body`.
fn len_field(number: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |mut v: u64| loop {
        if v < 0x80 {
            out.push(v as u8);
            break;
        }
        out.push((v as u8) | 0x80);
        v >>= 7;
    };
    put(number << 3 | 2);
    put(body.len() as u64);
    out.extend_from_slice(body);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn typed_bytes_are_the_rows_and_read_back(record in record()) {
        let codec = codec();
        let mut typed = Vec::new();
        codec.serialize(&record, &mut typed).expect("serializes");
        let mut rows = Vec::new();
        codec.encode_row(&row(&record), &mut rows).expect("encodes");
        prop_assert_eq!(&typed, &rows);
        let back: Record = codec.deserialize(&typed).expect("deserializes");
        prop_assert_eq!(&back, &record);
        prop_assert_eq!(codec.decode_row(&typed).expect("decodes"), row(&record));
    }

    #[test]
    fn fields_in_any_order_read_as_the_row_codec_reads_them(record in record()) {
        let codec = codec();
        let mut bytes = Vec::new();
        codec.serialize(&record, &mut bytes).expect("serializes");
        // Both columns' messages reversed inside, and the columns reversed.
        let shuffled: Vec<u8> = fields(&bytes)
            .iter()
            .rev()
            .flat_map(|(number, field)| {
                let body = &field[field.len() - body_len(field)..];
                len_field(*number, &reversed(body))
            })
            .collect();
        prop_assert_eq!(codec.decode_row(&shuffled).expect("decodes"), row(&record));
        let back: Record = codec.deserialize(&shuffled).expect("deserializes");
        prop_assert_eq!(&back, &record);

        // The message twice: each column's last occurrence is its value, as the row codec
        // reads it.
        let mut twice = bytes.clone();
        twice.extend_from_slice(&bytes);
        let back: Record = codec.deserialize(&twice).expect("deserializes");
        prop_assert_eq!(row(&back), codec.decode_row(&twice).expect("decodes"));
        prop_assert_eq!(&back, &record);
    }

    #[test]
    fn cut_or_corrupt_messages_are_errors_not_panics(
        record in record(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let codec = codec();
        let mut bytes = Vec::new();
        codec.serialize(&record, &mut bytes).expect("serializes");
        let cut = cut.index(bytes.len());
        let error = codec
            .deserialize::<Record>(&bytes[..cut])
            .expect_err("a cut message is an error");
        prop_assert!(error.offset().is_none_or(|o| o <= cut), "{error}");
        prop_assert_eq!(error.format(), "protobuf");
        let mut corrupt = bytes.clone();
        for (at, mask) in &flips {
            let at = at.index(corrupt.len());
            corrupt[at] ^= mask;
        }
        // Any outcome but a panic; a success must be what the row codec reads, as the Rust
        // type holds it (a corrupted dict key can break the order of the keys or repeat one,
        // which a BTreeMap sorts or merges): the row codec's row, written in order and read
        // into the type, is the same value.
        if let Ok(value) = codec.deserialize::<Record>(&corrupt) {
            let decoded = codec.decode_row(&corrupt).map_err(|e| e.to_string());
            prop_assert!(decoded.is_ok(), "read as a Record, refused by decode_row: {decoded:?}");
            let mut in_order = Vec::new();
            codec.encode_row(&decoded.unwrap(), &mut in_order).expect("re-encodes");
            let held = codec.deserialize::<Record>(&in_order).map_err(|e| e.to_string());
            prop_assert_eq!(Ok(value), held);
        }
    }

    #[test]
    fn random_bytes_are_errors_not_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = codec().deserialize::<Record>(&bytes);
    }
}

/// The length of the body of the length-delimited field `field` (tag and length included).
fn body_len(field: &[u8]) -> usize {
    let mut at = 0;
    while field[at] >= 0x80 {
        at += 1;
    }
    at += 1;
    let mut len = 0usize;
    let mut shift = 0;
    loop {
        let byte = field[at];
        at += 1;
        len |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte < 0x80 {
            break;
        }
    }
    assert_eq!(at + len, field.len());
    len
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct One<T> {
    value: T,
}

fn one_codec(ty: Type) -> RowCodec {
    RowCodec::new(&TableSchema::new(vec![ColumnSchema::new("value", ty)]))
}

#[test]
fn values_that_do_not_fit_are_refused_with_the_member() {
    let codec = one_codec(p(P::Uint8));
    let error = codec
        .serialize(&One { value: 300u16 }, &mut Vec::new())
        .expect_err("300 is not a uint8");
    assert_eq!(error.path(), "value");
    assert!(error.message().contains("uint8"), "{error}");
    let error = one_codec(p(P::Float))
        .serialize(&One { value: 1e300f64 }, &mut Vec::new())
        .expect_err("1e300 is no float");
    assert!(error.message().contains("float"), "{error}");
    let error = one_codec(p(P::Utf8))
        .serialize(
            &One {
                value: None::<String>,
            },
            &mut Vec::new(),
        )
        .expect_err("None for a required utf8");
    assert!(error.message().contains("no value"), "{error}");
    let error = one_codec(st(&[("a", p(P::Int32)), ("b", p(P::Int32))]))
        .serialize(&One { value: (1,) }, &mut Vec::new())
        .expect_err("one member of two");
    assert!(error.message().contains("1 members"), "{error}");
}

#[test]
fn float_columns_read_as_their_f32_into_any_float_type() {
    // A `float` column holds an f32: an f32 target gets its bits (signed NaN payloads and
    // -0.0 included), an f64 target the same value widened exactly, whether the value is a
    // field, a packed item or absent (0.0).
    let values = [
        0.1f32,
        -0.0,
        f32::from_bits(0xffc0_0001),
        f32::MAX,
        f32::MIN_POSITIVE / 2.0,
    ];
    let codec = one_codec(p(P::Float));
    for v in values {
        let mut bytes = Vec::new();
        codec.serialize(&One { value: v }, &mut bytes).unwrap();
        let as_f32: One<f32> = codec.deserialize(&bytes).unwrap();
        assert_eq!(as_f32.value.to_bits(), v.to_bits(), "{v:e}");
        let as_f64: One<f64> = codec.deserialize(&bytes).unwrap();
        assert_eq!(as_f64.value.to_bits(), f64::from(v).to_bits(), "{v:e}");
    }
    let absent: One<f64> = codec.deserialize(&[]).unwrap();
    assert_eq!(absent.value.to_bits(), 0.0f64.to_bits());

    let list = one_codec(Type::list(p(P::Float)));
    let mut bytes = Vec::new();
    list.serialize(
        &One {
            value: values.to_vec(),
        },
        &mut bytes,
    )
    .unwrap();
    let as_f32: One<Vec<f32>> = list.deserialize(&bytes).unwrap();
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&as_f32.value), bits(&values));
    let as_f64: One<Vec<f64>> = list.deserialize(&bytes).unwrap();
    let widened: Vec<u64> = values.iter().map(|v| f64::from(*v).to_bits()).collect();
    let got: Vec<u64> = as_f64.value.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, widened);
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Pair<A, B> {
    a: A,
    b: B,
}

#[test]
fn nested_structs_write_inline_and_refuse_with_the_member() {
    // A nested struct of floats (the writer's inline path), one of 128 bytes or more (its
    // length no longer fits the placeholder), and fields numbered 16 and up (two-byte tags).
    let inner = st(&[("a", p(P::Float)), ("b", p(P::Double))]);
    let codec = one_codec(inner.clone());
    let value = One {
        value: Pair {
            a: 1.5f32,
            b: -0.0f64,
        },
    };
    let mut bytes = Vec::new();
    codec
        .serialize(&value, &mut bytes)
        .expect("a nested struct of floats");
    let mut expected = vec![0x0a, 14, 0x0d];
    expected.extend_from_slice(&1.5f32.to_le_bytes());
    expected.push(0x11);
    expected.extend_from_slice(&(-0.0f64).to_le_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(
        codec.deserialize::<One<Pair<f32, f64>>>(&bytes).unwrap(),
        value
    );

    let long = one_codec(st(&[("a", p(P::Float)), ("b", p(P::String))]));
    let value = One {
        value: Pair {
            a: 2.0f32,
            b: "x".repeat(200),
        },
    };
    let mut bytes = Vec::new();
    long.serialize(&value, &mut bytes)
        .expect("a long nested struct");
    assert_eq!(
        &bytes[..3],
        &[0x0a, 0xd0, 0x01],
        "tag, then 208 as a two-byte varint"
    );
    assert_eq!(
        long.deserialize::<One<Pair<f32, String>>>(&bytes).unwrap(),
        value
    );

    let members: Vec<(String, Type)> = (1..=17).map(|i| (format!("m{i}"), p(P::Float))).collect();
    let wide = TableSchema::new(
        members
            .iter()
            .map(|(n, t)| ColumnSchema::new(n, t.clone()))
            .collect(),
    );
    let row: Vec<f32> = (1..=17).map(|i| i as f32).collect();
    let mut bytes = Vec::new();
    RowCodec::new(&wide)
        .serialize(&row, &mut bytes)
        .expect("seventeen floats as a tuple row");
    assert_eq!(
        &bytes[bytes.len() - 6..bytes.len() - 4],
        &[0x8d, 0x01],
        "field 17's tag"
    );

    let error = codec
        .serialize(
            &One {
                value: Pair { a: 1.5f32, b: "no" },
            },
            &mut Vec::new(),
        )
        .expect_err("a string for a double");
    assert_eq!(error.path(), "value.b");
    let error = codec
        .serialize(
            &One {
                value: One { value: 1.5f32 },
            },
            &mut Vec::new(),
        )
        .expect_err("one member of two");
    assert!(
        error.message().contains("1 members for a struct of 2"),
        "{error}"
    );
}

#[test]
fn reading_says_where_and_what() {
    // A uint16 column read into a u8 that cannot hold it.
    let codec = one_codec(p(P::Uint16));
    let mut bytes = Vec::new();
    codec
        .serialize(&One { value: 1000u16 }, &mut bytes)
        .expect("fits");
    let error = codec
        .deserialize::<One<u8>>(&bytes)
        .expect_err("1000 is no u8");
    assert_eq!(error.path(), "value");
    assert_eq!(error.format(), "protobuf");
    // A uint8 column holding 1000 on the wire: out of its type's range, with the offset.
    let error = one_codec(p(P::Uint8))
        .deserialize::<One<u16>>(&bytes)
        .expect_err("1000 is no uint8");
    assert!(
        error.message().contains("out of range for uint8"),
        "{error}"
    );
    assert!(error.offset().is_some(), "{error}");
    // Bytes that are not UTF-8 in a utf8 column, or read as a Rust string.
    let mut bad = Vec::new();
    let string = one_codec(p(P::String));
    string
        .encode_row(&[Value::String(vec![b'a', 0xFF])], &mut bad)
        .expect("bytes");
    assert!(string.deserialize::<One<String>>(&bad).is_err());
    let error = one_codec(p(P::Utf8))
        .deserialize::<One<Vec<u8>>>(&bad)
        .expect_err("not UTF-8");
    assert!(error.message().contains("UTF-8"), "{error}");
    // A wrong wire type is the row codec's error, at its value's byte.
    let error = one_codec(p(P::Int64))
        .deserialize::<One<i64>>(&bad)
        .expect_err("bytes for an int64");
    assert_eq!(error.offset(), Some(1), "{error}");
    assert!(error.message().contains("wire type"), "{error}");
}

#[test]
fn absent_members_read_as_proto3_defaults() {
    #[derive(Debug, PartialEq, Deserialize)]
    struct Defaults {
        number: i32,
        text: String,
        maybe: Option<u8>,
        items: Vec<i64>,
        pair: (bool, f64),
    }
    let codec = RowCodec::new(&TableSchema::new(vec![
        ColumnSchema::new("number", p(P::Int32)),
        ColumnSchema::new("text", p(P::Utf8)),
        ColumnSchema::new("maybe", opt(p(P::Uint8))),
        ColumnSchema::new("items", Type::list(p(P::Int64))),
        ColumnSchema::new("pair", Type::Tuple(vec![p(P::Bool), p(P::Double)])),
    ]));
    let empty: Defaults = codec.deserialize(&[]).expect("an empty message");
    assert_eq!(
        empty,
        Defaults {
            number: 0,
            text: String::new(),
            maybe: None,
            items: vec![],
            pair: (false, 0.0),
        }
    );
    // A default that is no value of its type is refused, as the row codec refuses it.
    let uuid = one_codec(p(P::Uuid));
    assert!(uuid.decode_row(&[]).is_err());
    let error = uuid
        .deserialize::<One<serde_bytes_free::Bytes>>(&[])
        .expect_err("an empty uuid");
    assert!(error.message().contains("uuid"), "{error}");
}

#[test]
fn proto3_defaults_are_left_out_and_presence_kept() {
    #[derive(Serialize)]
    struct Row {
        zero: i64,
        empty: String,
        some_zero: Option<i64>,
        float_zero: f32,
        nested: Option<Option<i64>>,
    }
    let codec = RowCodec::new(&TableSchema::new(vec![
        ColumnSchema::new("zero", p(P::Int64)),
        ColumnSchema::new("empty", p(P::String)),
        ColumnSchema::new("some_zero", opt(p(P::Int64))),
        ColumnSchema::new("float_zero", p(P::Float)),
        ColumnSchema::new("nested", opt(opt(p(P::Int64)))),
    ]));
    let mut bytes = Vec::new();
    let value = Row {
        zero: 0,
        empty: String::new(),
        some_zero: Some(0),
        float_zero: 0.0,
        nested: Some(None),
    };
    codec.serialize(&value, &mut bytes).expect("serializes");
    // field 3 = 0 (presence), field 4 = 0.0f32, field 5 = an empty wrapper.
    assert_eq!(bytes, [0x18, 0, 0x25, 0, 0, 0, 0, 0x2a, 0]);
}

#[test]
fn unit_enums_read_from_integer_columns_by_index_and_refuse_what_is_no_variant() {
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    enum Player {
        Java,
        Flash,
    }
    let plain = one_codec(p(P::Int8));
    let optional = one_codec(opt(p(P::Int32)));
    // field 1, varint `v`, as a one-field message.
    let message = |v: u64| {
        let mut bytes = vec![0x08];
        put_varint(v, &mut bytes);
        bytes
    };
    for (v, want) in [(0, Player::Java), (1, Player::Flash)] {
        let read: One<Player> = plain.deserialize(&message(v)).unwrap();
        assert_eq!(read.value, want);
        let read: One<Option<Player>> = optional.deserialize(&message(v)).unwrap();
        assert_eq!(read.value, Some(want));
    }
    // Absent: proto3's default (the first variant), or no value for an optional.
    let read: One<Player> = plain.deserialize(&[]).unwrap();
    assert_eq!(read.value, Player::Java);
    let read: One<Option<Player>> = optional.deserialize(&[]).unwrap();
    assert_eq!(read.value, None);
    // No such variant, out of the column's range, or negative: refused, with the member.
    let error = plain.deserialize::<One<Player>>(&message(2)).unwrap_err();
    assert_eq!(error.path(), "value", "{error}");
    let error = plain.deserialize::<One<Player>>(&message(300)).unwrap_err();
    assert!(error.message().contains("int8"), "{error}");
    let error = optional
        .deserialize::<One<Option<Player>>>(&message(u64::MAX))
        .unwrap_err();
    assert!(error.message().contains("enum"), "{error}");
}

/// A varint as protobuf writes it.
fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[test]
fn members_past_field_15_have_two_byte_tags_and_read_back() {
    // Field numbers from 16 on take two bytes of tag whose first byte, read alone, names a
    // field below 32: a one-byte shortcut must not take it for one. A row of 19 members:
    // fields 16 (a scalar), 17 (a list of messages), 18 (an optional), 19 (a packed run).
    let mut columns: Vec<ColumnSchema> = (1..=15)
        .map(|i| ColumnSchema::new(format!("h{i}").as_str(), p(P::Int64)))
        .collect();
    columns.push(ColumnSchema::new("sixteen", p(P::Uint32)));
    columns.push(ColumnSchema::new(
        "seventeen",
        Type::list(Type::Tuple(vec![p(P::Int32), p(P::Utf8)])),
    ));
    columns.push(ColumnSchema::new("eighteen", opt(p(P::Uint16))));
    columns.push(ColumnSchema::new("nineteen", Type::list(p(P::Uint8))));
    let codec = RowCodec::new(&TableSchema::new(columns));
    #[rustfmt::skip]
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Wide(
        i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64,
        u32, Vec<(i32, String)>, Option<u16>, Vec<u8>,
    );
    for sixteen in [0, 1, 16, 300, u32::MAX] {
        #[rustfmt::skip]
        let wide = Wide(
            1, 0, 3, 0, 5, 6, 0, 8, 9, 10, 0, 12, 13, 14, 15,
            sixteen,
            vec![(1, "a".into()), (0, String::new()), (-7, "long".repeat(40))],
            Some(0),
            vec![0, 200, 1],
        );
        let mut bytes = Vec::new();
        codec.serialize(&wide, &mut bytes).unwrap();
        let back: Wide = codec.deserialize(&bytes).unwrap();
        assert_eq!(back, wide);
        // The row codec reads the same message and writes it back byte for byte.
        let mut again = Vec::new();
        codec
            .encode_row(&codec.decode_row(&bytes).unwrap(), &mut again)
            .unwrap();
        assert_eq!(again, bytes);
    }
}
