//! The typed fast path (`msgpack::to_vec` / `from_slice`, and CBOR's through the shared tree
//! code): round trips of every serde shape, the row mapping's bytes, the crates users pick
//! read both ways where the mapping agrees, and hostile bytes as errors with their offset.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::{cbor, msgpack};
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Dot,
    Circle(f64),
    Segment(i32, i32),
    Box { width: u16, label: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Meters(f32);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Zoo {
    flag: bool,
    small: i8,
    big: i64,
    unsigned: u64,
    ratio: f32,
    exact: f64,
    letter: char,
    name: String,
    #[serde(with = "serde_bytes_like")]
    blob: Vec<u8>,
    missing: Option<String>,
    present: Option<Vec<u32>>,
    unit: (),
    unit_struct: Unit,
    newtype: Meters,
    pair: (u8, String),
    shapes: Vec<Shape>,
    index: BTreeMap<String, i32>,
}

/// `Vec<u8>` as serde bytes (a byte string item), not a sequence of integers.
mod serde_bytes_like {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

fn zoo() -> Zoo {
    Zoo {
        flag: true,
        small: -100,
        big: i64::MIN,
        unsigned: u64::MAX,
        ratio: 1.5e-3,
        exact: -0.0,
        letter: 'ж',
        name: "shapeshift".into(),
        blob: vec![0, 255, 7],
        missing: None,
        present: Some(vec![1, 70_000, u32::MAX]),
        unit: (),
        unit_struct: Unit,
        newtype: Meters(2.25),
        pair: (9, "nine".into()),
        shapes: vec![
            Shape::Dot,
            Shape::Circle(f64::MAX),
            Shape::Segment(-1, 1),
            Shape::Box {
                width: 640,
                label: "frame".into(),
            },
        ],
        index: [("a".to_string(), 1), ("b".to_string(), -2)].into(),
    }
}

type Encode = fn(&Zoo) -> Vec<u8>;
type Decode = fn(&[u8]) -> Result<Zoo, String>;

fn formats() -> [(&'static str, Encode, Decode); 2] {
    [
        (
            "msgpack",
            |v| msgpack::to_vec(v).unwrap(),
            |b| msgpack::from_slice(b).map_err(|e| e.to_string()),
        ),
        (
            "cbor",
            |v| cbor::to_vec(v).unwrap(),
            |b| cbor::from_slice(b).map_err(|e| e.to_string()),
        ),
    ]
}

#[test]
fn every_serde_shape_round_trips_in_both_formats() {
    let value = zoo();
    for (name, encode, decode) in formats() {
        let bytes = encode(&value);
        let back = decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back, value, "{name}");
        assert_eq!(
            back.exact.to_bits(),
            (-0.0f64).to_bits(),
            "{name}: -0.0 kept"
        );
    }
}

#[test]
fn a_struct_is_the_row_mapping_s_row() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Hit {
        id: i64,
        page: String,
        score: Option<f64>,
        tags: Vec<u32>,
    }
    let hit = Hit {
        id: -7,
        page: "/index".into(),
        score: None,
        tags: vec![3, 4],
    };
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        ColumnSchema::new("page", Type::Primitive(PrimitiveType::Utf8)),
        ColumnSchema::new(
            "score",
            Type::Optional(Box::new(Type::Primitive(PrimitiveType::Double))),
        ),
        ColumnSchema::new(
            "tags",
            Type::List(Box::new(Type::Primitive(PrimitiveType::Uint32))),
        ),
    ]);
    let expected = vec![
        Value::Int64(-7),
        Value::String(b"/index".to_vec()),
        Value::Null,
        Value::List(vec![Value::Uint64(3), Value::Uint64(4)]),
    ];
    // Our bytes are a row of the table; the row codec's row is our struct.
    let bytes = msgpack::to_vec(&hit).unwrap();
    let schemas = [schema.clone()];
    let mut reader = msgpack::RowReader::new(&schemas, &bytes);
    let mut row = Vec::new();
    assert!(reader.next_row(&mut row).unwrap().is_some());
    assert_eq!(row, expected);
    let mut encoded = Vec::new();
    msgpack::encode_row(&schema, &expected, &mut encoded).unwrap();
    assert_eq!(encoded, bytes, "the row codec writes the same bytes");
    assert_eq!(msgpack::from_slice::<Hit>(&encoded).unwrap(), hit);
    let mut encoded = Vec::new();
    cbor::encode_row(&schema, &expected, &mut encoded).unwrap();
    assert_eq!(encoded, cbor::to_vec(&hit).unwrap());
}

#[test]
fn the_crates_users_pick_read_ours_and_we_read_theirs() {
    let value = zoo();
    // rmp-serde writes structs as arrays too, and its enums as {name: value} or a name.
    let theirs = rmp_serde::to_vec(&value).unwrap();
    assert_eq!(msgpack::from_slice::<Zoo>(&theirs).unwrap(), value);
    let theirs = rmp_serde::to_vec_named(&value).unwrap();
    assert_eq!(
        msgpack::from_slice::<Zoo>(&theirs).unwrap(),
        value,
        "structs as maps"
    );
    // rmp-serde reads our bytes, unit variants (an index) included; it has no reader for the
    // row mapping's [index, value] of a variant with data (docs/formats/msgpack.md).
    let units = Zoo {
        shapes: vec![Shape::Dot, Shape::Dot],
        ..value.clone()
    };
    let ours = msgpack::to_vec(&units).unwrap();
    assert_eq!(rmp_serde::from_slice::<Zoo>(&ours).unwrap(), units);
    assert!(rmp_serde::from_slice::<Zoo>(&msgpack::to_vec(&value).unwrap()).is_err());
    // ciborium writes structs as maps of field names.
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Plain {
        id: u32,
        name: String,
        shape: Shape,
        scores: Vec<f64>,
    }
    let plain = Plain {
        id: 3,
        name: "x".into(),
        shape: Shape::Segment(1, 2),
        scores: vec![0.5, -1.0],
    };
    let mut theirs = Vec::new();
    ciborium::into_writer(&plain, &mut theirs).unwrap();
    assert_eq!(cbor::from_slice::<Plain>(&theirs).unwrap(), plain);
    // ciborium writes 0.5 as a half-precision float: read as the double it is.
    for (bits, value) in [
        (0x3c00u16, 1.0),
        (0xc000, -2.0),
        (0x0001, 2f64.powi(-24)),
        (0x7c00, f64::INFINITY),
    ] {
        let [hi, lo] = bits.to_be_bytes();
        assert_eq!(
            cbor::from_slice::<f64>(&[0xf9, hi, lo]).unwrap(),
            value,
            "{bits:#06x}"
        );
    }
    assert!(cbor::from_slice::<f64>(&[0xf9, 0x7e, 0x00])
        .unwrap()
        .is_nan());
}

#[test]
fn what_the_mapping_cannot_carry_is_refused_when_written() {
    let nested: Option<Option<i32>> = Some(None);
    let err = msgpack::to_vec(&nested).unwrap_err();
    assert!(err.to_string().contains("would read back as None"), "{err}");
    assert!(cbor::to_vec(&Some(())).is_err());
    assert_eq!(
        msgpack::from_slice::<Option<Option<i32>>>(&msgpack::to_vec(&Some(Some(4))).unwrap())
            .unwrap(),
        Some(Some(4))
    );
    #[derive(Serialize)]
    struct Sparse {
        a: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<i32>,
        c: i32,
    }
    let err = msgpack::to_vec(&Sparse {
        a: 1,
        b: None,
        c: 2,
    })
    .unwrap_err();
    assert!(err.to_string().contains("\"b\" is skipped"), "{err}");
    assert!(msgpack::to_vec(&Sparse {
        a: 1,
        b: Some(5),
        c: 2
    })
    .is_ok());
    assert!(msgpack::to_vec(&(u128::MAX)).is_err());
    let wide = msgpack::to_vec(&-5i128).unwrap();
    assert_eq!(msgpack::from_slice::<i128>(&wide).unwrap(), -5);
}

#[test]
fn bad_input_is_an_error_that_says_where() {
    let value = zoo();
    for (name, encode, decode) in formats() {
        let bytes = encode(&value);
        for cut in 0..bytes.len() {
            let err = decode(&bytes[..cut]).unwrap_err();
            assert!(err.contains("at byte"), "{name} cut at {cut}: {err}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let err = decode(&longer).unwrap_err();
        assert!(
            err.contains(&format!("at byte {}: 1 bytes after the value", bytes.len())),
            "{name}: {err}"
        );
    }
    // A wrong type names the item's offset: field `small` (i8) given 300.
    let mut bytes = msgpack::to_vec(&zoo()).unwrap();
    let at = 4; // array header (3 bytes for 17 fields), `true`, then `small`
    assert_eq!(bytes[at], 0xd0, "int8 -100");
    bytes.splice(at..at + 2, [0xcd, 0x01, 0x2c]);
    let err = msgpack::from_slice::<Zoo>(&bytes).unwrap_err();
    assert_eq!(err.offset(), Some(at), "{err}");
    assert!(err.message().contains("300"), "{err}");
    // A unit variant is its index; a variant with data given as an index alone is an error.
    assert_eq!(msgpack::from_slice::<Shape>(&[0x00]).unwrap(), Shape::Dot);
    assert_eq!(cbor::from_slice::<Shape>(&[0x00]).unwrap(), Shape::Dot);
    assert!(msgpack::from_slice::<Shape>(&[0x01]).is_err());
    assert!(cbor::from_slice::<Shape>(&[0x01]).is_err());
    assert!(
        msgpack::from_slice::<Shape>(&[0x07]).is_err(),
        "no variant 7"
    );
    // Text that is not UTF-8.
    let err = msgpack::from_slice::<String>(&[0xa2, 0xff, 0xfe]).unwrap_err();
    assert!(err.message().contains("not UTF-8"), "{err}");
}

#[test]
fn hostile_lengths_and_nesting_are_bounded() {
    // An array announcing 2^32 - 1 entries in 5 bytes: refused before any allocation.
    let err = msgpack::from_slice::<Vec<u8>>(&[0xdd, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
    assert!(err.message().contains("entries announced"), "{err}");
    let err =
        cbor::from_slice::<BTreeMap<String, u8>>(&[0xbb, 0, 0, 0, 1, 0, 0, 0, 0]).unwrap_err();
    assert!(err.message().contains("entries announced"), "{err}");
    // 100,000 nested one-item arrays, read into a self-describing value.
    let mut deep = vec![0x91; 100_000];
    deep.push(0xc0);
    let err = msgpack::from_slice::<serde_json::Value>(&deep).unwrap_err();
    assert!(err.message().contains("nested deeper than"), "{err}");
    let mut deep = vec![0x81; 1000];
    deep.extend([0xf6]);
    assert!(cbor::from_slice::<serde_json::Value>(&deep).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = msgpack::from_slice::<Zoo>(&bytes);
        let _ = cbor::from_slice::<Zoo>(&bytes);
        let _ = msgpack::from_slice::<serde_json::Value>(&bytes);
        let _ = cbor::from_slice::<serde_json::Value>(&bytes);
    }

    #[test]
    fn one_flipped_bit_never_panics(at in 0usize..200, bit in 0u8..8) {
        for (_, encode, decode) in formats() {
            let mut bytes = encode(&zoo());
            let at = at % bytes.len();
            bytes[at] ^= 1 << bit;
            let _ = decode(&bytes);
        }
    }
}

/// Every integer width, read from the one-byte forms and the longer ones alike.
type Integers = (i8, u8, i16, u16, i32, u32, i64, u64, bool, (bool, u8));

proptest! {
    #[test]
    fn integers_and_booleans_read_back_at_every_width(
        small in -300i64..300,
        value in any::<Integers>(),
    ) {
        // One-byte forms are rare among arbitrary integers: the small ones fill in for them.
        let s = small;
        let tiny: Integers = (
            s as i8, s as u8, s as i16, s as u16, s as i32, s as u32, s, s as u64, s % 2 == 0,
            (s < 0, s as u8),
        );
        for value in [value, tiny] {
            let ours = msgpack::to_vec(&value).unwrap();
            prop_assert_eq!(msgpack::from_slice::<Integers>(&ours).unwrap(), value);
            prop_assert_eq!(rmp_serde::from_slice::<Integers>(&ours).unwrap(), value);
            let theirs = rmp_serde::to_vec(&value).unwrap();
            prop_assert_eq!(msgpack::from_slice::<Integers>(&theirs).unwrap(), value);
            let cbor_bytes = cbor::to_vec(&value).unwrap();
            prop_assert_eq!(cbor::from_slice::<Integers>(&cbor_bytes).unwrap(), value);
        }
    }

    #[test]
    fn an_integer_out_of_the_target_s_range_is_an_error(
        v in prop_oneof![-300i64..300, any::<i64>()],
    ) {
        for (bytes, name) in [(msgpack::to_vec(&v).unwrap(), "msgpack"), (cbor::to_vec(&v).unwrap(), "cbor")] {
            let read = |ok: bool, result: Result<(), String>| match ok {
                true => result.is_ok(),
                false => result.is_err(),
            };
            let as_u8 = msgpack_or_cbor::<u8>(name, &bytes);
            prop_assert!(read(u8::try_from(v).is_ok(), as_u8.map(drop)));
            let as_i8 = msgpack_or_cbor::<i8>(name, &bytes);
            prop_assert!(read(i8::try_from(v).is_ok(), as_i8.map(drop)));
            let as_u32 = msgpack_or_cbor::<u32>(name, &bytes);
            prop_assert!(read(u32::try_from(v).is_ok(), as_u32.map(drop)));
            // An integer is no boolean, however small.
            prop_assert!(msgpack_or_cbor::<bool>(name, &bytes).is_err());
        }
    }
}

fn msgpack_or_cbor<T: serde::de::DeserializeOwned>(
    format: &str,
    bytes: &[u8],
) -> Result<T, String> {
    match format {
        "msgpack" => msgpack::from_slice(bytes).map_err(|e| e.to_string()),
        _ => cbor::from_slice(bytes).map_err(|e| e.to_string()),
    }
}
