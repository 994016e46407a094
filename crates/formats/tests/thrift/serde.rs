//! The typed path (`RowCodec::serialize` / `deserialize`): a program's own serde types as row
//! structs. Properties: the bytes are `encode`'s for the same row in both protocols, they read
//! back to the same value (and `encode`'s bytes read as the type), every cut or corrupted
//! struct is an error and never a panic; values that do not fit are refused with where.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::thrift::{Protocol, RowCodec};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

use super::PROTOCOLS;
use crate::serde_record::{opt, p, record, row, schema, serde_bytes_free, st, Record};

fn codecs() -> Vec<RowCodec> {
    PROTOCOLS
        .iter()
        .map(|p| RowCodec::new(&schema(), *p).expect("the schema fits Thrift"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn typed_bytes_are_the_rows_and_read_back(record in record()) {
        for codec in codecs() {
            let mut typed = Vec::new();
            codec.serialize(&record, &mut typed).expect("serializes");
            let mut rows = Vec::new();
            codec.encode(&row(&record), &mut rows).expect("encodes");
            prop_assert_eq!(&typed, &rows, "{:?}", codec.protocol());
            let back: Record = codec.deserialize(&typed).expect("deserializes");
            prop_assert_eq!(&back, &record);
            // The row codec reads the typed bytes to the same row.
            prop_assert_eq!(codec.decode(&typed).expect("decodes"), row(&record));
        }
    }

    #[test]
    fn cut_or_corrupt_structs_are_errors_not_panics(
        record in record(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        for codec in codecs() {
            let mut bytes = Vec::new();
            codec.serialize(&record, &mut bytes).expect("serializes");
            let cut = cut.index(bytes.len());
            let result = codec.deserialize::<Record>(&bytes[..cut]);
            let error = result.expect_err("a cut struct is an error");
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
    }

    #[test]
    fn random_bytes_are_errors_not_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for codec in codecs() {
            let _ = codec.deserialize::<Record>(&bytes);
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Narrow {
    value: u16,
}

fn narrow_codec(ty: Type, protocol: Protocol) -> RowCodec {
    let schema = TableSchema::new(vec![ColumnSchema::new("value", ty)]);
    RowCodec::new(&schema, protocol).expect("fits")
}

#[test]
fn values_that_do_not_fit_are_refused_with_the_member() {
    for protocol in PROTOCOLS {
        let codec = narrow_codec(p(P::Uint8), protocol);
        let mut out = b"kept".to_vec();
        let error = codec
            .serialize(&Narrow { value: 300 }, &mut out)
            .expect_err("300 is not a uint8");
        assert_eq!(error.path(), "value");
        assert!(error.message().contains("300"), "{error}");
        assert!(error.message().contains("uint8"), "{error}");
        assert_eq!(out, b"kept", "a failed write leaves the buffer as it was");
        codec
            .serialize(&Narrow { value: 255 }, &mut out)
            .expect("255 is a uint8");
        let one_row = out.len();
        codec
            .serialize(&Narrow { value: 256 }, &mut out)
            .expect_err("256 is not a uint8");
        assert_eq!(out.len(), one_row, "a failed second row leaves the first");

        // A struct with fewer members than the type, and None where a value is required.
        let pair = narrow_codec(st(&[("a", p(P::Int32)), ("b", p(P::Int32))]), protocol);
        #[derive(Serialize)]
        struct One {
            value: (i32,),
        }
        let error = pair
            .serialize(&One { value: (1,) }, &mut Vec::new())
            .expect_err("one member of two");
        assert!(error.message().contains("1 members"), "{error}");
        let required = narrow_codec(p(P::Utf8), protocol);
        #[derive(Serialize)]
        struct Missing {
            value: Option<String>,
        }
        let error = required
            .serialize(&Missing { value: None }, &mut Vec::new())
            .expect_err("None for a required utf8");
        assert!(error.message().contains("no value"), "{error}");
    }
}

#[test]
fn reading_says_where_and_what() {
    for protocol in PROTOCOLS {
        // A uint16 column read into a u8 that cannot hold it.
        let codec = narrow_codec(p(P::Uint16), protocol);
        let mut bytes = Vec::new();
        codec
            .serialize(&Narrow { value: 1000 }, &mut bytes)
            .expect("fits");
        #[derive(Debug, Deserialize)]
        struct Byte {
            #[allow(dead_code)]
            value: u8,
        }
        let error = codec
            .deserialize::<Byte>(&bytes)
            .expect_err("1000 is no u8");
        assert_eq!(error.path(), "value");
        assert!(error.offset().is_some(), "{error}");
        assert_eq!(
            error.format(),
            shapeshift_formats::thrift::format_name(protocol)
        );

        // Trailing bytes, and bytes that are not UTF-8 read as a Rust string.
        bytes.push(0);
        let error = codec
            .deserialize::<Narrow>(&bytes)
            .expect_err("trailing byte");
        assert!(error.message().contains("after the row struct"), "{error}");
        let mut bad = Vec::new();
        let string = narrow_codec(p(P::String), protocol);
        string
            .encode(&[Value::String(vec![b'a', 0xFF])], &mut bad)
            .expect("bytes");
        #[derive(Debug, Deserialize)]
        struct Text {
            #[allow(dead_code)]
            value: String,
        }
        let error = string.deserialize::<Text>(&bad).expect_err("not UTF-8");
        assert!(error.message().contains("UTF-8"), "{error}");
    }
}

#[test]
fn a_missing_required_field_is_named() {
    for protocol in PROTOCOLS {
        let both = TableSchema::new(vec![
            ColumnSchema::new("a", opt(p(P::Int32))),
            ColumnSchema::new("b", opt(p(P::Int32))),
        ]);
        let codec = RowCodec::new(&both, protocol).expect("fits");
        let mut bytes = Vec::new();
        codec
            .encode(&[Value::Int64(1), Value::Null], &mut bytes)
            .expect("encodes");
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Required {
            a: i32,
            b: i32,
        }
        let error = codec
            .deserialize::<Required>(&bytes)
            .expect_err("b is left out");
        assert_eq!(error.path(), "b");
        assert!(error.message().contains("missing"), "{error}");
        #[derive(Debug, Deserialize, PartialEq)]
        struct Optional {
            a: Option<i32>,
            b: Option<i32>,
        }
        assert_eq!(
            codec.deserialize::<Optional>(&bytes).expect("reads"),
            Optional {
                a: Some(1),
                b: None
            }
        );
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct One<T> {
    value: T,
}

#[test]
fn checks_the_row_decoder_makes_are_made_both_ways() {
    for protocol in PROTOCOLS {
        // A float column holds f32's range; a double column the rest.
        let float = narrow_codec(p(P::Float), protocol);
        let error = float
            .serialize(&One { value: 1e300f64 }, &mut Vec::new())
            .expect_err("1e300 is no float");
        assert!(error.message().contains("float"), "{error}");
        let mut big = Vec::new();
        narrow_codec(p(P::Double), protocol)
            .serialize(&One { value: 1e300f64 }, &mut big)
            .expect("a double");
        assert!(float.deserialize::<One<f64>>(&big).is_err());
        assert!(
            float.decode(&big).is_err(),
            "the row decoder refuses it too"
        );

        // Bytes of a uuid, a decimal and a yson column are checked when read.
        let mut three = Vec::new();
        narrow_codec(p(P::String), protocol)
            .encode(&[Value::String(vec![1, 2, 3])], &mut three)
            .expect("bytes");
        for ty in [
            p(P::Uuid),
            Type::Decimal {
                precision: 9,
                scale: 2,
            },
        ] {
            let codec = narrow_codec(ty, protocol);
            assert!(codec.decode(&three).is_err());
            let error = codec
                .deserialize::<One<serde_bytes_free::Bytes>>(&three)
                .expect_err("3 bytes do not fit");
            assert!(error.offset().is_some(), "{error}");
        }

        // A yson value given as text is written as binary YSON, as the row codec writes it.
        let yson = narrow_codec(p(P::Yson), protocol);
        let mut typed = Vec::new();
        yson.serialize(&One { value: "{a=1}" }, &mut typed)
            .expect("text YSON");
        let node = shapeshift_formats::yson::from_slice(b"{a=1}").expect("parses");
        let mut rows = Vec::new();
        yson.encode(&[Value::Any(node)], &mut rows)
            .expect("encodes");
        assert_eq!(typed, rows);
    }
}

#[test]
fn nothing_read_is_dropped_and_null_items_read_as_units() {
    for protocol in PROTOCOLS {
        let string = narrow_codec(p(P::String), protocol);
        let mut ten = Vec::new();
        string
            .serialize(
                &One {
                    value: vec![7u8; 10],
                },
                &mut ten,
            )
            .expect("bytes");
        let error = string
            .deserialize::<One<[u8; 4]>>(&ten)
            .expect_err("4 of 10 bytes");
        assert!(error.message().contains("6 more bytes"), "{error}");
        let whole: One<Vec<u8>> = string.deserialize(&ten).expect("all 10");
        assert_eq!(whole.value, vec![7u8; 10]);

        let nulls = narrow_codec(Type::list(p(P::Null)), protocol);
        let mut bytes = Vec::new();
        nulls
            .serialize(
                &One {
                    value: vec![(), ()],
                },
                &mut bytes,
            )
            .expect("units");
        let mut rows = Vec::new();
        nulls
            .encode(&[Value::List(vec![Value::Null, Value::Null])], &mut rows)
            .expect("encodes");
        assert_eq!(bytes, rows);
        let back: One<Vec<()>> = nulls.deserialize(&bytes).expect("units back");
        assert_eq!(back.value.len(), 2);
    }
}
