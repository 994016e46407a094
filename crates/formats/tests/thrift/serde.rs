//! The typed path (`RowCodec::serialize` / `deserialize`): a program's own serde types as row
//! structs. Properties: the bytes are `encode`'s for the same row in both protocols, they read
//! back to the same value (and `encode`'s bytes read as the type), every cut or corrupted
//! struct is an error and never a panic; values that do not fit are refused with where.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::thrift::{Protocol, RowCodec};
use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type, Value};

use super::PROTOCOLS;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
enum Kind {
    Small,
    Medium,
    Large,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Dot,
    Circle(f64),
    Segment(i32, i32),
    Label { text: String, size: u8 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Inner {
    a: u8,
    b: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Scalars {
    flag: bool,
    small: i8,
    medium: u16,
    big: i64,
    unsigned: u64,
    ratio: f32,
    exact: f64,
    name: String,
    blob: Vec<u8>,
    raw: String,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Composites {
    missing: Option<String>,
    nested: Option<Option<i32>>,
    list: Vec<Option<i16>>,
    flags: Vec<bool>,
    point: (f32, f32),
    quad: [u32; 4],
    shapes: Vec<Shape>,
    index: BTreeMap<String, i64>,
    by_id: BTreeMap<i32, Option<String>>,
    inner: Inner,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Record {
    scalars: Scalars,
    composites: Composites,
}

fn p(p: P) -> Type {
    Type::Primitive(p)
}

fn opt(t: Type) -> Type {
    Type::optional(t)
}

fn st(members: &[(&str, Type)]) -> Type {
    Type::Struct(
        members
            .iter()
            .map(|(name, ty)| Member {
                name: name.to_string(),
                ty: ty.clone(),
            })
            .collect(),
    )
}

fn scalars_type() -> Type {
    st(&[
        ("flag", p(P::Bool)),
        ("small", p(P::Int8)),
        ("medium", p(P::Uint16)),
        ("big", p(P::Int64)),
        ("unsigned", p(P::Uint64)),
        ("ratio", p(P::Float)),
        ("exact", p(P::Double)),
        ("name", p(P::Utf8)),
        ("blob", p(P::String)),
        ("raw", p(P::String)),
        ("kind", p(P::Int32)),
    ])
}

fn composites_type() -> Type {
    let shape = Type::VariantStruct(vec![
        Member {
            name: "dot".into(),
            ty: p(P::Null),
        },
        Member {
            name: "circle".into(),
            ty: p(P::Double),
        },
        Member {
            name: "segment".into(),
            ty: Type::Tuple(vec![p(P::Int32), p(P::Int32)]),
        },
        Member {
            name: "label".into(),
            ty: st(&[("text", p(P::Utf8)), ("size", p(P::Uint8))]),
        },
    ]);
    st(&[
        ("missing", opt(p(P::Utf8))),
        ("nested", opt(opt(p(P::Int32)))),
        ("list", Type::list(opt(p(P::Int16)))),
        ("flags", Type::list(p(P::Bool))),
        ("point", st(&[("x", p(P::Float)), ("y", p(P::Float))])),
        ("quad", Type::list(p(P::Uint32))),
        ("shapes", Type::list(shape)),
        ("index", Type::dict(p(P::Utf8), p(P::Int64))),
        ("by_id", Type::dict(p(P::Int32), opt(p(P::Utf8)))),
        ("inner", st(&[("a", p(P::Uint8)), ("b", opt(p(P::Bool)))])),
    ])
}

/// The table the two halves of a [`Record`] are the columns of.
fn schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("scalars", scalars_type()),
        ColumnSchema::new("composites", composites_type()),
    ])
}

fn text(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

/// The row of `r`, as the row codec takes it.
fn row(r: &Record) -> Vec<Value> {
    let s = &r.scalars;
    let scalars = Value::Tuple(vec![
        Value::Bool(s.flag),
        Value::Int64(s.small.into()),
        Value::Uint64(s.medium.into()),
        Value::Int64(s.big),
        Value::Uint64(s.unsigned),
        Value::Double(s.ratio.into()),
        Value::Double(s.exact),
        text(&s.name),
        Value::String(s.blob.clone()),
        text(&s.raw),
        Value::Int64(s.kind as i64),
    ]);
    let c = &r.composites;
    let shape = |s: &Shape| match s {
        Shape::Dot => Value::Variant(0, Box::new(Value::Null)),
        Shape::Circle(r) => Value::Variant(1, Box::new(Value::Double(*r))),
        Shape::Segment(a, b) => Value::Variant(
            2,
            Box::new(Value::Tuple(vec![
                Value::Int64((*a).into()),
                Value::Int64((*b).into()),
            ])),
        ),
        Shape::Label { text: t, size } => Value::Variant(
            3,
            Box::new(Value::Tuple(vec![text(t), Value::Uint64((*size).into())])),
        ),
    };
    let composites = Value::Tuple(vec![
        c.missing.as_deref().map_or(Value::Null, text),
        match c.nested {
            None => Value::Null,
            Some(None) => Value::Some(Box::new(Value::Null)),
            Some(Some(v)) => Value::Some(Box::new(Value::Int64(v.into()))),
        },
        Value::List(
            c.list
                .iter()
                .map(|v| v.map_or(Value::Null, |v| Value::Int64(v.into())))
                .collect(),
        ),
        Value::List(c.flags.iter().map(|b| Value::Bool(*b)).collect()),
        Value::Tuple(vec![
            Value::Double(c.point.0.into()),
            Value::Double(c.point.1.into()),
        ]),
        Value::List(c.quad.iter().map(|v| Value::Uint64((*v).into())).collect()),
        Value::List(c.shapes.iter().map(shape).collect()),
        Value::Dict(
            c.index
                .iter()
                .map(|(k, v)| (text(k), Value::Int64(*v)))
                .collect(),
        ),
        Value::Dict(
            c.by_id
                .iter()
                .map(|(k, v)| {
                    (
                        Value::Int64((*k).into()),
                        v.as_deref().map_or(Value::Null, text),
                    )
                })
                .collect(),
        ),
        Value::Tuple(vec![
            Value::Uint64(c.inner.a.into()),
            c.inner.b.map_or(Value::Null, Value::Bool),
        ]),
    ]);
    vec![scalars, composites]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Small), Just(Kind::Medium), Just(Kind::Large)]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Dot),
        any::<f64>()
            .prop_filter("not NaN", |v| !v.is_nan())
            .prop_map(Shape::Circle),
        (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Shape::Segment(a, b)),
        (".{0,5}", any::<u8>()).prop_map(|(text, size)| Shape::Label { text, size }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    let finite32 = any::<f32>().prop_filter("not NaN", |v| !v.is_nan());
    let scalars = (
        (
            any::<bool>(),
            any::<i8>(),
            any::<u16>(),
            any::<i64>(),
            any::<u64>(),
        ),
        (
            finite32.clone(),
            any::<f64>().prop_filter("not NaN", |v| !v.is_nan()),
        ),
        (
            ".{0,8}",
            prop::collection::vec(any::<u8>(), 0..40),
            ".{0,4}",
            kind(),
        ),
    )
        .prop_map(
            |((flag, small, medium, big, unsigned), (ratio, exact), (name, blob, raw, kind))| {
                Scalars {
                    flag,
                    small,
                    medium,
                    big,
                    unsigned,
                    ratio,
                    exact,
                    name,
                    blob,
                    raw,
                    kind,
                }
            },
        );
    let composites = (
        (
            prop::option::of(".{0,4}"),
            prop::option::of(prop::option::of(any::<i32>())),
            prop::collection::vec(prop::option::of(any::<i16>()), 0..20),
            prop::collection::vec(any::<bool>(), 0..20),
            (finite32.clone(), finite32),
            any::<[u32; 4]>(),
        ),
        (
            prop::collection::vec(shape(), 0..5),
            prop::collection::btree_map(".{0,3}", any::<i64>(), 0..4),
            prop::collection::btree_map(any::<i32>(), prop::option::of(".{0,3}"), 0..4),
            (any::<u8>(), prop::option::of(any::<bool>())),
        ),
    )
        .prop_map(
            |((missing, nested, list, flags, point, quad), (shapes, index, by_id, (a, b)))| {
                Composites {
                    missing,
                    nested,
                    list,
                    flags,
                    point,
                    quad,
                    shapes,
                    index,
                    by_id,
                    inner: Inner { a, b },
                }
            },
        );
    (scalars, composites).prop_map(|(scalars, composites)| Record {
        scalars,
        composites,
    })
}

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
        let mut out = Vec::new();
        let error = codec
            .serialize(&Narrow { value: 300 }, &mut out)
            .expect_err("300 is not a uint8");
        assert_eq!(error.path(), "value");
        assert!(error.message().contains("300"), "{error}");
        assert!(error.message().contains("uint8"), "{error}");
        codec
            .serialize(&Narrow { value: 255 }, &mut out)
            .expect("255 is a uint8");

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

/// A `Vec<u8>` read as bytes (the visitor of serde's byte buffers).
mod serde_bytes_free {
    #[derive(Debug, PartialEq)]
    pub struct Bytes(pub Vec<u8>);

    impl<'de> serde::Deserialize<'de> for Bytes {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
            struct Visit;
            impl serde::de::Visitor<'_> for Visit {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
            }
            d.deserialize_bytes(Visit)
        }
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
