//! A record of every serde shape the schema formats' typed paths take (scalars, options,
//! lists, tuples, enums of every kind, maps, nested structs), its table schema, its row as
//! the row codecs take it, and proptest strategies: shared by the Thrift, JSON and Protobuf serde tests.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type, Value};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Kind {
    Small,
    Medium,
    Large,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    Dot,
    Circle(f64),
    Segment(i32, i32),
    Label { text: String, size: u8 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inner {
    pub a: u8,
    pub b: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scalars {
    pub flag: bool,
    pub small: i8,
    pub medium: u16,
    pub big: i64,
    pub unsigned: u64,
    pub ratio: f32,
    pub exact: f64,
    pub name: String,
    pub blob: Vec<u8>,
    pub raw: String,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Composites {
    pub missing: Option<String>,
    pub nested: Option<Option<i32>>,
    pub list: Vec<Option<i16>>,
    pub flags: Vec<bool>,
    pub point: (f32, f32),
    pub quad: [u32; 4],
    pub shapes: Vec<Shape>,
    pub index: BTreeMap<String, i64>,
    pub by_id: BTreeMap<i32, Option<String>>,
    pub inner: Inner,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub scalars: Scalars,
    pub composites: Composites,
}

pub fn p(p: P) -> Type {
    Type::Primitive(p)
}

pub fn opt(t: Type) -> Type {
    Type::optional(t)
}

pub fn st(members: &[(&str, Type)]) -> Type {
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

pub fn scalars_type() -> Type {
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

pub fn composites_type() -> Type {
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
pub fn schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("scalars", scalars_type()),
        ColumnSchema::new("composites", composites_type()),
    ])
}

pub fn text(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

/// The row of `r`, as the row codec takes it.
pub fn row(r: &Record) -> Vec<Value> {
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

pub fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Small), Just(Kind::Medium), Just(Kind::Large)]
}

pub fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Dot),
        any::<f64>()
            .prop_filter("not NaN", |v| !v.is_nan())
            .prop_map(Shape::Circle),
        (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Shape::Segment(a, b)),
        (".{0,5}", any::<u8>()).prop_map(|(text, size)| Shape::Label { text, size }),
    ]
}

pub fn record() -> impl Strategy<Value = Record> {
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

/// A `Vec<u8>` read as bytes (the visitor of serde's byte buffers).
pub mod serde_bytes_free {
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
