//! The serde path (`RowCodec::serialize` / `deserialize`): a program's own types written to
//! the datum `encode_row` writes for the same data (byte for byte), read back, hostile bytes
//! as errors with their offset, values that do not fit refused by name, and apache-avro's
//! serde reading ours and writing what we read.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use shapeshift_formats::avro::{RowCodec, SerdeError};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type, Value};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Dot,
    Circle(f64),
    Segment(i32, i32),
    Box { width: u16, label: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Inner {
    a: i32,
    b: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Meters(f64);

/// One field per plan kind, in the column order of [`schema`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Zoo {
    tiny: i8,
    short: i16,
    byte: u8,
    word: u16,
    int: i32,
    long: i64,
    uint: u32,
    big: u64,
    day: u32,
    ratio: f32,
    exact: Meters,
    flag: bool,
    text: String,
    raw: String,
    blob: Vec<u8>,
    maybe: Option<String>,
    nested_option: Option<Option<i32>>,
    list: Vec<i64>,
    inner: Inner,
    pair: (i32, String),
    color: Color,
    shape: Shape,
    by_name: BTreeMap<String, i32>,
    by_number: BTreeMap<i64, String>,
    id: [u8; 16],
    price: Vec<u8>,
    any: Vec<u8>,
    nothing: (),
    shapes: Vec<Option<Shape>>,
}

fn p(p: P) -> Type {
    Type::Primitive(p)
}

fn schema() -> TableSchema {
    let shape = Type::VariantStruct(vec![
        Member::new("Dot", p(P::Null)),
        Member::new("Circle", p(P::Double)),
        Member::new("Segment", Type::Tuple(vec![p(P::Int32), p(P::Int32)])),
        Member::new(
            "Box",
            Type::Struct(vec![
                Member::new("width", p(P::Uint16)),
                Member::new("label", p(P::Utf8)),
            ]),
        ),
    ]);
    let columns = vec![
        ("tiny", p(P::Int8)),
        ("short", p(P::Int16)),
        ("byte", p(P::Uint8)),
        ("word", p(P::Uint16)),
        ("int", p(P::Int32)),
        ("long", p(P::Int64)),
        ("uint", p(P::Uint32)),
        ("big", p(P::Uint64)),
        ("day", p(P::Date)),
        ("ratio", p(P::Float)),
        ("exact", p(P::Double)),
        ("flag", p(P::Bool)),
        ("text", p(P::Utf8)),
        ("raw", p(P::String)),
        ("blob", p(P::String)),
        ("maybe", Type::optional(p(P::Utf8))),
        ("nested_option", Type::optional(Type::optional(p(P::Int32)))),
        ("list", Type::list(p(P::Int64))),
        (
            "inner",
            Type::Struct(vec![
                Member::new("a", p(P::Int32)),
                Member::new("b", Type::optional(p(P::Utf8))),
            ]),
        ),
        ("pair", Type::Tuple(vec![p(P::Int32), p(P::Utf8)])),
        ("color", p(P::Int32)),
        ("shape", shape.clone()),
        ("by_name", Type::dict(p(P::Utf8), p(P::Int32))),
        ("by_number", Type::dict(p(P::Int64), p(P::Utf8))),
        ("id", p(P::Uuid)),
        (
            "price",
            Type::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        ("any", p(P::Yson)),
        ("nothing", p(P::Null)),
        ("shapes", Type::list(Type::optional(shape))),
    ];
    TableSchema::new(
        columns
            .into_iter()
            .map(|(name, ty)| ColumnSchema::new(name, ty))
            .collect(),
    )
}

fn text(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

fn shape_value(shape: &Shape) -> Value {
    let (index, value) = match shape {
        Shape::Dot => (0, Value::Null),
        Shape::Circle(r) => (1, Value::Double(*r)),
        Shape::Segment(a, b) => (
            2,
            Value::Tuple(vec![Value::Int64((*a).into()), Value::Int64((*b).into())]),
        ),
        Shape::Box { width, label } => (
            3,
            Value::Tuple(vec![Value::Uint64((*width).into()), text(label)]),
        ),
    };
    Value::Variant(index, Box::new(value))
}

/// The same data as a row, for `encode_row`.
fn row(zoo: &Zoo) -> Vec<Value> {
    let optional_text = |v: &Option<String>| v.as_deref().map_or(Value::Null, text);
    vec![
        Value::Int64(zoo.tiny.into()),
        Value::Int64(zoo.short.into()),
        Value::Uint64(zoo.byte.into()),
        Value::Uint64(zoo.word.into()),
        Value::Int64(zoo.int.into()),
        Value::Int64(zoo.long),
        Value::Uint64(zoo.uint.into()),
        Value::Uint64(zoo.big),
        Value::Uint64(zoo.day.into()),
        Value::Double(zoo.ratio.into()),
        Value::Double(zoo.exact.0),
        Value::Bool(zoo.flag),
        text(&zoo.text),
        text(&zoo.raw),
        Value::String(zoo.blob.clone()),
        optional_text(&zoo.maybe),
        match zoo.nested_option {
            None => Value::Null,
            Some(None) => Value::Some(Box::new(Value::Null)),
            Some(Some(v)) => Value::Some(Box::new(Value::Int64(v.into()))),
        },
        Value::List(zoo.list.iter().map(|v| Value::Int64(*v)).collect()),
        Value::Tuple(vec![
            Value::Int64(zoo.inner.a.into()),
            optional_text(&zoo.inner.b),
        ]),
        Value::Tuple(vec![Value::Int64(zoo.pair.0.into()), text(&zoo.pair.1)]),
        Value::Int64(zoo.color as i64),
        shape_value(&zoo.shape),
        Value::Dict(
            zoo.by_name
                .iter()
                .map(|(k, v)| (text(k), Value::Int64((*v).into())))
                .collect(),
        ),
        Value::Dict(
            zoo.by_number
                .iter()
                .map(|(k, v)| (Value::Int64(*k), text(v)))
                .collect(),
        ),
        Value::String(zoo.id.to_vec()),
        Value::String(zoo.price.clone()),
        Value::Any(yson::from_slice(&zoo.any).unwrap()),
        Value::Null,
        Value::List(
            zoo.shapes
                .iter()
                .map(|s| s.as_ref().map_or(Value::Null, shape_value))
                .collect(),
        ),
    ]
}

fn decimal(cents: i64) -> Vec<u8> {
    let text = format!("{}.{:02}", cents / 100, (cents % 100).abs());
    let text = if cents < 0 && cents > -100 {
        format!("-{}", &text)
    } else {
        text
    };
    shapeshift_types::decimal_text_to_binary(&text, 10, 2).unwrap()
}

fn yson_of(text: &str) -> Vec<u8> {
    yson::to_vec(
        &yson::from_slice(text.as_bytes()).unwrap(),
        YsonFormat::Binary,
    )
}

fn sample() -> Zoo {
    Zoo {
        tiny: -128,
        short: 300,
        byte: 255,
        word: 65535,
        int: i32::MIN,
        long: i64::MAX,
        uint: u32::MAX,
        big: u64::MAX,
        day: 49672,
        ratio: 1.5,
        exact: Meters(-0.25),
        flag: true,
        text: "héllo".into(),
        raw: "raw".into(),
        blob: vec![0, 255, 7],
        maybe: Some("here".into()),
        nested_option: Some(None),
        list: vec![1, -2, 3],
        inner: Inner { a: 7, b: None },
        pair: (-1, "one".into()),
        color: Color::Blue,
        shape: Shape::Box {
            width: 3,
            label: "box".into(),
        },
        by_name: [("a".into(), 1), ("b".into(), -2)].into(),
        by_number: [(-5, "minus five".into()), (9, "nine".into())].into(),
        id: *b"0123456789abcdef",
        price: decimal(-12345),
        any: yson_of("{a=[1;2u;%true]}"),
        nothing: (),
        shapes: vec![
            Some(Shape::Dot),
            None,
            Some(Shape::Circle(2.0)),
            Some(Shape::Segment(1, -1)),
        ],
    }
}

fn encoded(codec: &RowCodec, zoo: &Zoo) -> Vec<u8> {
    let mut expected = Vec::new();
    codec.encode_row(&row(zoo), &mut expected).unwrap();
    expected
}

#[test]
fn every_plan_kind_writes_encode_rows_bytes_and_reads_back() {
    let codec = RowCodec::new(&schema());
    for zoo in [sample(), {
        let mut z = sample();
        z.maybe = None;
        z.nested_option = Some(Some(-3));
        z.list.clear();
        z.by_name.clear();
        z.shapes.clear();
        z.shape = Shape::Dot;
        z.color = Color::Red;
        z
    }] {
        let mut out = vec![0xAA];
        codec.serialize(&zoo, &mut out).unwrap();
        assert_eq!(out[1..], encoded(&codec, &zoo)[..]);
        assert_eq!(codec.decode_row(&out[1..]).unwrap(), row(&zoo));
        let back: Zoo = codec.deserialize(&out[1..]).unwrap();
        assert_eq!(back, zoo);
    }
}

/// Borrowed strings and bytes, and sequences with no length up front (an iterator).
#[test]
fn borrowed_reads_and_unannounced_lengths() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Borrowed<'a> {
        #[serde(borrow)]
        name: &'a str,
        #[serde(borrow)]
        raw: &'a [u8],
    }
    let schema = TableSchema::new(vec![
        ColumnSchema::new("name", p(P::Utf8)),
        ColumnSchema::new("raw", p(P::String)),
    ]);
    let codec = RowCodec::new(&schema);
    let mut out = Vec::new();
    let value = Borrowed {
        name: "ünïcode",
        raw: b"\x00\xff",
    };
    codec.serialize(&value, &mut out).unwrap();
    let back: Borrowed<'_> = codec.deserialize(&out).unwrap();
    assert_eq!(back, value);

    struct Unsized(Vec<i64>, Vec<u8>);
    impl Serialize for Unsized {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeTuple;
            struct Iter<'a, T>(&'a [T]);
            impl<T: Serialize> Serialize for Iter<'_, T> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.collect_seq(self.0.iter().filter(|_| true))
                }
            }
            let mut t = s.serialize_tuple(2)?;
            t.serialize_element(&Iter(&self.0))?;
            t.serialize_element(&Iter(&self.1))?;
            t.end()
        }
    }
    let schema = TableSchema::new(vec![
        ColumnSchema::new("list", Type::list(p(P::Int64))),
        ColumnSchema::new("raw", p(P::String)),
    ]);
    let codec = RowCodec::new(&schema);
    let list: Vec<i64> = (0..300).map(|i| i * 1_000_000).collect();
    let raw: Vec<u8> = (0..200).map(|i| i as u8).collect();
    let mut out = Vec::new();
    codec
        .serialize(&Unsized(list.clone(), raw.clone()), &mut out)
        .unwrap();
    let row = vec![
        Value::List(list.iter().map(|v| Value::Int64(*v)).collect()),
        Value::String(raw.clone()),
    ];
    let mut expected = Vec::new();
    codec.encode_row(&row, &mut expected).unwrap();
    assert_eq!(out, expected);
    let back: (Vec<i64>, Vec<u8>) = codec.deserialize(&out).unwrap();
    assert_eq!(back, (list, raw));
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Dot),
        any::<f64>()
            .prop_filter("NaN != NaN", |f| !f.is_nan())
            .prop_map(Shape::Circle),
        (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Shape::Segment(a, b)),
        (any::<u16>(), ".{0,6}").prop_map(|(width, label)| Shape::Box { width, label }),
    ]
}

prop_compose! {
    fn zoo_strategy()(
        ints in (any::<i8>(), any::<i16>(), any::<u8>(), any::<u16>(), any::<i32>(), any::<i64>(), any::<u32>(), any::<u64>(), 0u32..49673),
        floats in (any::<f32>().prop_filter("NaN", |f| !f.is_nan()), any::<f64>().prop_filter("NaN", |f| !f.is_nan()), any::<bool>()),
        strings in (".{0,8}", ".{0,8}", proptest::collection::vec(any::<u8>(), 0..20), proptest::option::of(".{0,5}")),
        nested_option in proptest::option::of(proptest::option::of(any::<i32>())),
        list in proptest::collection::vec(any::<i64>(), 0..6),
        inner in (any::<i32>(), proptest::option::of(".{0,4}")),
        pair in (any::<i32>(), ".{0,4}"),
        color in prop_oneof![Just(Color::Red), Just(Color::Green), Just(Color::Blue)],
        shape in shape_strategy(),
        by_name in proptest::collection::btree_map(".{0,4}", any::<i32>(), 0..4),
        by_number in proptest::collection::btree_map(any::<i64>(), ".{0,4}", 0..4),
        id in any::<[u8; 16]>(),
        cents in -9_999_999_999i64..9_999_999_999,
        any_int in any::<i64>(),
        shapes in proptest::collection::vec(proptest::option::of(shape_strategy()), 0..4),
    ) -> Zoo {
        Zoo {
            tiny: ints.0, short: ints.1, byte: ints.2, word: ints.3, int: ints.4, long: ints.5,
            uint: ints.6, big: ints.7, day: ints.8,
            ratio: floats.0, exact: Meters(floats.1), flag: floats.2,
            text: strings.0, raw: strings.1, blob: strings.2, maybe: strings.3,
            nested_option, list,
            inner: Inner { a: inner.0, b: inner.1 },
            pair, color, shape, by_name, by_number, id,
            price: decimal(cents),
            any: yson_of(&format!("[{any_int}; {{k=\"v\"}}]")),
            nothing: (),
            shapes,
        }
    }
}

fn expect_error<T>(result: Result<T, SerdeError>, what: &str) -> SerdeError {
    match result {
        Ok(_) => panic!("{what}: no error"),
        Err(e) => {
            assert_eq!(e.format(), "avro", "{e}");
            e
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_values_round_trip_as_encode_row_writes_them(zoo in zoo_strategy()) {
        let codec = RowCodec::new(&schema());
        let mut out = Vec::new();
        codec.serialize(&zoo, &mut out).unwrap();
        prop_assert_eq!(&out, &encoded(&codec, &zoo));
        let back: Zoo = codec.deserialize(&out).unwrap();
        prop_assert_eq!(back, zoo);
    }

    #[test]
    fn truncations_and_flipped_bytes_are_errors_not_panics(
        zoo in zoo_strategy(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let codec = RowCodec::new(&schema());
        let mut out = Vec::new();
        codec.serialize(&zoo, &mut out).unwrap();
        for cut in 0..out.len() {
            let e = expect_error(codec.deserialize::<Zoo>(&out[..cut]), "a truncated datum");
            prop_assert!(e.offset().is_some_and(|o| o <= cut), "{}", e);
        }
        let mut longer = out.clone();
        longer.push(0);
        let e = expect_error(codec.deserialize::<Zoo>(&longer), "a trailing byte");
        prop_assert_eq!(e.offset(), Some(out.len()));
        for (at, byte) in flips {
            let i = at.index(out.len());
            out[i] ^= byte | 1;
        }
        if let Err(e) = codec.deserialize::<Zoo>(&out) {
            prop_assert_eq!(e.format(), "avro");
            prop_assert!(e.offset().is_some_and(|o| o <= out.len()), "{}", e);
        }
        // The row decoder and the serde path agree on what is a datum of the schema.
        let row_ok = codec.decode_row(&out).is_ok();
        let serde_ok = codec.deserialize::<serde::de::IgnoredAny>(&out).is_ok();
        prop_assert_eq!(row_ok, serde_ok);
    }

    #[test]
    fn random_bytes_are_errors_not_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let codec = RowCodec::new(&schema());
        if let Err(e) = codec.deserialize::<Zoo>(&bytes) {
            prop_assert_eq!(e.format(), "avro");
            prop_assert!(e.offset().is_some_and(|o| o <= bytes.len()), "{}", e);
        }
        let _ = codec.deserialize::<serde::de::IgnoredAny>(&bytes);
    }
}

fn one_column(ty: Type) -> RowCodec {
    RowCodec::new(&TableSchema::new(vec![ColumnSchema::new("c", ty)]))
}

fn write_error<T: Serialize>(codec: &RowCodec, value: &T) -> String {
    let mut out = vec![1, 2, 3];
    let e = expect_error(
        codec.serialize(value, &mut out),
        "a value that does not fit",
    );
    assert_eq!(out, [1, 2, 3], "a failed write leaves the output as it was");
    e.to_string()
}

#[test]
fn values_that_do_not_fit_are_refused_by_name() {
    let uint8 = one_column(p(P::Uint8));
    let message = write_error(&uint8, &(300u16,));
    assert!(
        message.contains("300 is out of range for uint8"),
        "{message}"
    );
    assert!(write_error(&uint8, &(-1i8,)).contains("uint8"));
    assert!(write_error(&uint8, &(256u128,)).contains("out of range"));
    assert!(write_error(&one_column(p(P::Int8)), &(128i64,)).contains("int8"));
    assert!(write_error(&one_column(p(P::Date)), &(49673u32,)).contains("date"));
    assert!(write_error(&one_column(p(P::Int64)), &(u64::MAX,)).contains("int64"));
    let message = write_error(&uint8, &("text",));
    assert!(
        message.contains("a string does not fit") && message.contains("uint8"),
        "{message}"
    );
    assert!(write_error(&one_column(p(P::Float)), &(1e300f64,)).contains("float"));
    assert!(write_error(&one_column(p(P::Utf8)), &(serde_bytes_like(b"\xff"),)).contains("UTF-8"));
    assert!(write_error(&one_column(p(P::Uuid)), &(vec![1u8; 15],)).contains("15 bytes"));
    assert!(write_error(&one_column(p(P::Yson)), &(serde_bytes_like(b"{"),)).contains("YSON"));
    assert!(write_error(&one_column(p(P::Int32)), &(None::<i32>,)).contains("None"));
    assert!(write_error(&one_column(p(P::String)), &(vec![1u16, 256],)).contains("256"));

    #[derive(Serialize)]
    struct Two {
        a: i32,
        b: i32,
    }
    let record = one_column(Type::Struct(vec![
        Member::new("a", p(P::Int32)),
        Member::new("b", p(P::Int32)),
        Member::new("c", p(P::Int32)),
    ]));
    let message = write_error(&record, &(Two { a: 1, b: 2 },));
    assert!(message.contains("2 fields into a record of 3"), "{message}");
    let message = write_error(&record, &((1, 2, 3, 4),));
    assert!(message.contains("4 items into a record of 3"), "{message}");
    let message = write_error(&one_column(p(P::Int32)), &Two { a: 1, b: 2 });
    assert!(message.contains("into a record of 1"), "{message}");

    #[derive(Serialize)]
    struct Skips {
        #[serde(skip_serializing_if = "Option::is_none")]
        a: Option<i32>,
    }
    let message = write_error(&one_column(Type::optional(p(P::Int32))), &Skips { a: None });
    assert!(message.contains("skipped"), "{message}");
    // A nested field's error names the field.
    let message = write_error(&record, &((1, 300i64 << 32, 3),));
    assert!(
        message.contains("field 1") && message.contains("int32"),
        "{message}"
    );
    let variant = one_column(Type::VariantTuple(vec![p(P::Int32)]));
    let message = write_error(&variant, &(Shape::Circle(1.0),));
    assert!(
        message.contains("Circle") && message.contains("1 alternatives"),
        "{message}"
    );
}

fn serde_bytes_like(bytes: &[u8]) -> impl Serialize + '_ {
    struct B<'a>(&'a [u8]);
    impl Serialize for B<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    B(bytes)
}

#[test]
fn reads_that_do_not_fit_name_the_offset_and_what() {
    let uint8 = one_column(p(P::Uint16));
    let mut out = Vec::new();
    uint8.encode_row(&[Value::Uint64(300)], &mut out).unwrap();
    let e = expect_error(uint8.deserialize::<(u8,)>(&out), "300 into a u8");
    assert_eq!(e.offset(), Some(0), "{e}");
    assert!(e.message().contains("300"), "{e}");
    let e = expect_error(uint8.deserialize::<(i32, i32)>(&out), "two fields of one");
    assert!(e.message().contains("2"), "{e}");
    // A wire value outside the YT type, as decode_row refuses it.
    let int8 = one_column(p(P::Int8));
    let e = expect_error(int8.deserialize::<(i64,)>(&[0x80, 0x04]), "256 in int8");
    assert!(e.message().contains("out of range for int8"), "{e}");
    // An optional column read as a plain value: present is fine, null is refused.
    let optional = one_column(Type::optional(p(P::Int32)));
    assert_eq!(optional.deserialize::<(i32,)>(&[2, 4]).unwrap(), (2,));
    let e = expect_error(optional.deserialize::<(i32,)>(&[0]), "null as i32");
    assert!(e.message().contains("null"), "{e}");
    // Unit enums from an int column by index; an index the enum lacks is an error.
    let int32 = one_column(p(P::Int32));
    assert_eq!(
        int32.deserialize::<(Color,)>(&[2]).unwrap(),
        (Color::Green,)
    );
    expect_error(int32.deserialize::<(Color,)>(&[6]), "variant 3 of 3");
    // Items left unread are refused: an array of 3 read as [i64; 2].
    let list = one_column(Type::list(p(P::Int64)));
    let mut out = Vec::new();
    list.serialize(&(vec![1i64, 2, 3],), &mut out).unwrap();
    expect_error(list.deserialize::<([i64; 2],)>(&out), "unread items");
    assert_eq!(list.deserialize::<([i64; 3],)>(&out).unwrap(), ([1, 2, 3],));
}

/// The peer: apache-avro's serde reads our bytes, and we read its `write_avro_datum_ref`.
#[test]
fn apache_avro_reads_ours_and_we_read_its() {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Plain {
        id: i64,
        small: i32,
        name: String,
        score: f64,
        ratio: f32,
        flag: bool,
        tags: Vec<String>,
        maybe: Option<i32>,
        inner: Inner,
        counts: BTreeMap<String, i64>,
    }
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", p(P::Int64)),
        ColumnSchema::new("small", p(P::Int32)),
        ColumnSchema::new("name", p(P::Utf8)),
        ColumnSchema::new("score", p(P::Double)),
        ColumnSchema::new("ratio", p(P::Float)),
        ColumnSchema::new("flag", p(P::Bool)),
        ColumnSchema::new("tags", Type::list(p(P::Utf8))),
        ColumnSchema::new("maybe", Type::optional(p(P::Int32))),
        ColumnSchema::new(
            "inner",
            Type::Struct(vec![
                Member::new("a", p(P::Int32)),
                Member::new("b", Type::optional(p(P::Utf8))),
            ]),
        ),
        ColumnSchema::new("counts", Type::dict(p(P::Utf8), p(P::Int64))),
    ]);
    let codec = RowCodec::new(&schema);
    let avro = apache_avro::Schema::parse_str(&codec.schema_json()).unwrap();
    for i in 0..20i64 {
        let value = Plain {
            id: i * 1_000_003 - 7,
            small: -(i as i32),
            name: format!("name {i}"),
            score: i as f64 / 3.0,
            ratio: i as f32 * 0.5,
            flag: i % 2 == 0,
            tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
            maybe: (i % 3 != 0).then_some(i as i32),
            inner: Inner {
                a: i as i32,
                b: (i % 2 == 1).then(|| "odd".into()),
            },
            counts: (0..i % 3).map(|k| (format!("k{k}"), k * i)).collect(),
        };
        let mut ours = Vec::new();
        codec.serialize(&value, &mut ours).unwrap();
        let mut reader = &ours[..];
        let read = apache_avro::from_avro_datum(&avro, &mut reader, None).unwrap();
        assert!(reader.is_empty());
        assert_eq!(apache_avro::from_value::<Plain>(&read).unwrap(), value);

        let mut theirs = Vec::new();
        apache_avro::write_avro_datum_ref(&avro, &value, &mut theirs).unwrap();
        assert_eq!(codec.deserialize::<Plain>(&theirs).unwrap(), value);
    }
}
