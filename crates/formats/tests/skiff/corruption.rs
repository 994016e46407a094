//! Bad input: truncations, bad tags and booleans, lengths past the end, garbage. Every case is
//! an error naming the byte offset, row and column — never a panic or a huge allocation.

use proptest::prelude::*;
use shapeshift_formats::skiff::{
    Codec, SkiffErrorKind, SkiffFormat, SkiffSchema, SystemFields, WireType,
};
use shapeshift_types::{Node, Value};

fn simple(w: WireType) -> SkiffSchema {
    SkiffSchema::simple(w)
}

/// A schema touching every wire type, and one row of it.
fn rich_codec() -> Codec {
    let table = SkiffSchema::tuple(vec![
        simple(WireType::Int32).named("i"),
        simple(WireType::Boolean).named("b"),
        SkiffSchema::optional(simple(WireType::String32)).named("x"),
        SkiffSchema::composite(WireType::RepeatedVariant8, vec![simple(WireType::Int16)])
            .named("l"),
        SkiffSchema::composite(
            WireType::Variant16,
            vec![simple(WireType::Uint128), simple(WireType::Double)],
        )
        .named("v"),
        SkiffSchema::tuple(vec![simple(WireType::Boolean), simple(WireType::Yson32)]).named("t"),
        SkiffSchema::composite(
            WireType::RepeatedVariant16,
            vec![simple(WireType::Int256), simple(WireType::Nothing)],
        )
        .named("rv"),
    ]);
    Codec::new(&SkiffFormat::new(vec![
        table,
        SkiffSchema::tuple(vec![simple(WireType::Uint8).named("u")]),
    ]))
    .unwrap()
}

fn rich_rows(codec: &Codec) -> Vec<u8> {
    let row = vec![
        Value::Int64(-7),
        Value::Bool(true),
        Value::String(b"hello".to_vec()),
        Value::List(vec![Value::Int64(1), Value::Int64(2)]),
        Value::Variant(1, Box::new(Value::Double(0.25))),
        Value::Tuple(vec![Value::Bool(false), Value::Any(Node::int64(1))]),
        Value::List(vec![
            Value::Variant(0, Box::new(Value::Int64(-2))),
            Value::Variant(1, Box::new(Value::Null)),
        ]),
    ];
    let mut bytes = Vec::new();
    codec
        .encode_row(0, &row, &SystemFields::default(), &mut bytes)
        .unwrap();
    codec
        .encode_row(1, &[Value::Uint64(3)], &SystemFields::default(), &mut bytes)
        .unwrap();
    codec
        .encode_row(0, &row, &SystemFields::default(), &mut bytes)
        .unwrap();
    bytes
}

#[test]
fn every_truncation_is_an_error_with_an_offset() {
    let codec = rich_codec();
    let bytes = rich_rows(&codec);
    let row_ends = {
        let mut reader = codec.reader(&bytes);
        let mut ends = vec![];
        while reader.next_row().unwrap().is_some() {
            ends.push(reader.position());
        }
        ends
    };
    for cut in 1..bytes.len() {
        let prefix = &bytes[..cut];
        let slice_result = codec.decode_rows(prefix);
        let stream_result = codec.stream_reader(prefix).read_all();
        if row_ends.contains(&cut) {
            assert!(slice_result.is_ok(), "cut at a row end {cut} reads fine");
            assert!(stream_result.is_ok());
            continue;
        }
        let error = slice_result.unwrap_err();
        assert_eq!(error.kind, SkiffErrorKind::Truncated, "cut {cut}: {error}");
        assert!(
            error.offset.is_some_and(|o| o <= cut as u64),
            "cut {cut}: {error}"
        );
        assert!(error.row.is_some());
        assert_eq!(
            stream_result.unwrap_err(),
            error,
            "both readers report the same"
        );
    }
}

#[test]
fn bad_tags_booleans_and_table_indexes_name_the_place() {
    let codec = rich_codec();
    let good = rich_rows(&codec);

    let mut bad_bool = good.clone();
    bad_bool[6] = 2; // row 0, column 'b'
    let error = codec.decode_rows(&bad_bool).unwrap_err();
    assert_eq!(
        error.to_string(),
        "skiff: at byte 6, row 0, column 'b': expected boolean 0 or 1, got 2"
    );

    let mut bad_optional = good.clone();
    bad_optional[7] = 5;
    let error = codec.decode_rows(&bad_optional).unwrap_err();
    assert_eq!(
        error.to_string(),
        "skiff: at byte 7, row 0, column 'x': expected variant8 tag 0..1, got 5"
    );

    let mut bad_table = good.clone();
    bad_table[0] = 9;
    let error = codec.decode_rows(&bad_table).unwrap_err();
    assert_eq!(error.kind, SkiffErrorKind::Corrupt);
    assert_eq!(
        error.to_string(),
        "skiff: at byte 0, row 0: expected table index 0..1, got 9"
    );

    // The list 'l' starts after i(4) b(1) x(1+4+5): byte 17; its first tag is 0, make it 3.
    let mut bad_list = good.clone();
    assert_eq!(bad_list[17], 0);
    bad_list[17] = 3;
    let error = codec.decode_rows(&bad_list).unwrap_err();
    assert_eq!(
        error.to_string(),
        "skiff: at byte 17, row 0, column 'l': expected repeated_variant8 tag 0..0, got 3"
    );

    // Second table-0 row: the error carries row 2 and an offset past the first two rows.
    let second_start = good.len() / 2 + 1 + 1;
    let mut late = good.clone();
    late[second_start + 6] = 7;
    let error = codec.decode_rows(&late).unwrap_err();
    assert_eq!(error.row, Some(2));
    assert_eq!(error.offset, Some(second_start as u64 + 6));
}

#[test]
fn huge_lengths_are_refused_without_allocating() {
    let codec = Codec::new(&SkiffFormat::new(vec![SkiffSchema::tuple(vec![simple(
        WireType::String32,
    )
    .named("s")])]))
    .unwrap();
    let bytes = [0, 0, 0xff, 0xff, 0xff, 0xff, b'a', b'b'];
    let error = codec.decode_rows(&bytes).unwrap_err();
    assert_eq!(
        error.to_string(),
        "skiff: at byte 6, row 0, column 's': input ends inside string32 bytes: expected 4294967295 bytes, 2 left"
    );
    let error = codec.stream_reader(&bytes[..]).read_all().unwrap_err();
    assert_eq!(error.kind, SkiffErrorKind::Truncated);
}

#[test]
fn bad_yson_in_yson32_is_an_error_when_decoded() {
    let codec = Codec::new(&SkiffFormat::new(vec![SkiffSchema::tuple(vec![simple(
        WireType::Yson32,
    )
    .named("y")])]))
    .unwrap();
    let bytes = [0, 0, 2, 0, 0, 0, b'{', b'{'];
    let mut reader = codec.reader(&bytes);
    let row = reader.next_row().unwrap().unwrap();
    assert!(
        row.get(0).unwrap().as_value_ref().is_some(),
        "raw yson bytes are still readable"
    );
    let error = row.to_values().unwrap_err();
    assert_eq!(error.column.as_deref(), Some("y"));
    assert!(error.to_string().contains("bad YSON"), "{error}");
}

#[test]
fn deeply_nested_repeated_data_does_not_recurse_per_item() {
    // 100k list items: iteration, not recursion.
    let codec = Codec::new(&SkiffFormat::new(vec![SkiffSchema::tuple(vec![
        SkiffSchema::composite(WireType::RepeatedVariant8, vec![simple(WireType::Nothing)])
            .named("l"),
    ])]))
    .unwrap();
    let mut bytes = vec![0, 0];
    bytes.extend(std::iter::repeat_n(0u8, 100_000));
    bytes.push(0xff);
    let rows = codec.decode_rows(&bytes).unwrap();
    let Value::List(items) = &rows[0].values[0] else {
        panic!()
    };
    assert_eq!(items.len(), 100_000);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn garbage_never_panics(garbage in proptest::collection::vec(any::<u8>(), 0..256)) {
        let codec = rich_codec();
        let slice = codec.decode_rows(&garbage);
        let stream = codec.stream_reader(&garbage[..]).read_all();
        prop_assert_eq!(slice.is_ok(), stream.is_ok());
        if let Err(error) = slice {
            prop_assert!(error.offset.is_some());
            prop_assert!(error.offset.unwrap() <= garbage.len() as u64);
        }
    }

    #[test]
    fn flipped_bytes_never_panic(position in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let codec = rich_codec();
        let mut bytes = rich_rows(&codec);
        let at = position.index(bytes.len());
        bytes[at] = byte;
        let mut reader = codec.reader(&bytes);
        while let Ok(Some(row)) = reader.next_row() {
            let _ = row.to_owned_row();
            for field in row.fields() {
                let _ = field.to_value();
            }
        }
    }
}
