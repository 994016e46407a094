//! Skiff round trips: hand-derived byte vectors for every wire type, system fields, several
//! tables, the stream reader against the slice reader, and property tests over random table
//! schemas and values.

use std::io::Read;

use proptest::prelude::*;
use shapeshift_formats::skiff::{
    Codec, FieldRef, MappingOptions, OwnedRow, SkiffFormat, SkiffSchema, SystemFields, WireType,
};
use shapeshift_types::testing::{arb_schema, arb_value};
use shapeshift_types::{
    ColumnSchema, Node, PrimitiveType as P, TableSchema, Type, Value, ValueRef,
};

fn simple(w: WireType) -> SkiffSchema {
    SkiffSchema::simple(w)
}

fn codec_of(children: Vec<SkiffSchema>) -> Codec {
    Codec::new(&SkiffFormat::new(vec![SkiffSchema::tuple(children)])).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    clean
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// Writes `values` as one row of table 0, checks the bytes, reads them back to the same values.
fn check_vector(codec: &Codec, values: Vec<Value>, expected_hex: &str) {
    let mut out = Vec::new();
    codec
        .encode_row(0, &values, &SystemFields::default(), &mut out)
        .unwrap();
    assert_eq!(hex(&out), hex(&unhex(expected_hex)));
    let rows = codec.decode_rows(&out).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].values, values);
}

#[test]
fn every_fixed_width_wire_type_is_little_endian() {
    let children = vec![
        simple(WireType::Int8).named("i8"),
        simple(WireType::Int16).named("i16"),
        simple(WireType::Int32).named("i32"),
        simple(WireType::Int64).named("i64"),
        simple(WireType::Uint8).named("u8"),
        simple(WireType::Uint16).named("u16"),
        simple(WireType::Uint32).named("u32"),
        simple(WireType::Uint64).named("u64"),
        simple(WireType::Double).named("d"),
        simple(WireType::Boolean).named("b"),
        simple(WireType::Nothing).named("n"),
    ];
    let codec = codec_of(children);
    check_vector(
        &codec,
        vec![
            Value::Int64(-2),
            Value::Int64(-300),
            Value::Int64(0x1234_5678),
            Value::Int64(-0x1234_5678_9abc_def0),
            Value::Uint64(200),
            Value::Uint64(0xfedc),
            Value::Uint64(0x8765_4321),
            Value::Uint64(u64::MAX - 1),
            Value::Double(1.5),
            Value::Bool(true),
            Value::Null,
        ],
        "0000 fe d4fe 78563412 1021436587a9cbed c8 dcfe 21436587 feffffffffffffff 000000000000f83f 01",
    );
    assert_eq!(
        codec.table(0).unwrap().fixed_row_size(),
        Some(2 + 1 + 2 + 4 + 8 + 1 + 2 + 4 + 8 + 8 + 1)
    );
}

#[test]
fn wide_integers_decimals_and_uuids() {
    // Raw int128/uint256: the wire bytes themselves; plain integers are sign-extended.
    let codec = codec_of(vec![
        simple(WireType::Int128).named("a"),
        simple(WireType::Uint256).named("b"),
    ]);
    let mut out = Vec::new();
    codec
        .encode_row(
            0,
            &[Value::Int64(-1), Value::Uint64(7)],
            &SystemFields::default(),
            &mut out,
        )
        .unwrap();
    assert_eq!(out[2..18], [0xff; 16]);
    assert_eq!(out[18], 7);
    assert_eq!(out[19..50], [0; 31]);
    let rows = codec.decode_rows(&out).unwrap();
    assert_eq!(rows[0].values[0], Value::String(vec![0xff; 16]));

    // decimal(10, 2) -> int64 on the wire, YT's big-endian sign-flipped bytes as the value.
    let schema = TableSchema::new(vec![
        ColumnSchema::new(
            "d",
            Type::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        ColumnSchema::new("u", P::Uuid.into()),
    ]);
    let format = SkiffFormat::new(vec![SkiffSchema::tuple(vec![
        simple(WireType::Int64).named("d"),
        simple(WireType::Uint128).named("u"),
    ])]);
    let codec = Codec::with_table_schemas(&format, &[schema]).unwrap();
    let decimal_minus_one = vec![0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let uuid: Vec<u8> = (0u8..16).collect();
    let reversed: String = (0u8..16).rev().map(|b| format!("{b:02x}")).collect();
    check_vector(
        &codec,
        vec![Value::String(decimal_minus_one), Value::String(uuid)],
        &format!("0000 ffffffffffffffff {reversed}"),
    );
}

#[test]
fn strings_optionals_variants_lists_and_yson() {
    let codec = codec_of(vec![
        simple(WireType::String32).named("s"),
        SkiffSchema::optional(simple(WireType::Int32)).named("o"),
        SkiffSchema::composite(
            WireType::Variant16,
            vec![simple(WireType::Boolean), simple(WireType::String32)],
        )
        .named("v"),
        SkiffSchema::composite(WireType::RepeatedVariant8, vec![simple(WireType::Int16)])
            .named("l"),
        SkiffSchema::composite(
            WireType::RepeatedVariant16,
            vec![simple(WireType::Uint8), simple(WireType::Nothing)],
        )
        .named("rv"),
        simple(WireType::Yson32).named("y"),
    ]);
    check_vector(
        &codec,
        vec![
            Value::String(b"abc".to_vec()),
            Value::Int64(5),
            Value::Variant(1, Box::new(Value::String(b"x".to_vec()))),
            Value::List(vec![Value::Int64(1), Value::Int64(-1)]),
            Value::List(vec![
                Value::Variant(0, Box::new(Value::Uint64(9))),
                Value::Variant(1, Box::new(Value::Null)),
            ]),
            Value::Any(Node::int64(5)),
        ],
        "0000 03000000616263 01 05000000 0100 0100000078 00 0100 00 ffff ff 0000 09 0100 ffff 02000000 020a",
    );
    check_vector(
        &codec,
        vec![
            Value::String(vec![]),
            Value::Null,
            Value::Variant(0, Box::new(Value::Bool(false))),
            Value::List(vec![]),
            Value::List(vec![]),
            Value::Any(Node::entity()),
        ],
        "0000 00000000 00 0000 00 ff ffff 01000000 23",
    );
}

#[test]
fn nullable_optionals_and_dicts_take_their_column_shapes() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("oo", Type::optional(Type::optional(P::Int64.into()))),
        ColumnSchema::new("d", Type::dict(P::String.into(), P::Double.into())),
    ]);
    let codec = Codec::for_table_schemas(&[schema], &MappingOptions::default()).unwrap();
    check_vector(
        &codec,
        vec![
            Value::Some(Box::new(Value::Null)),
            Value::Dict(vec![(Value::String(b"k".to_vec()), Value::Double(2.0))]),
        ],
        "0000 01 00 00 010000006b 0000000000000040 ff",
    );
    check_vector(
        &codec,
        vec![Value::Some(Box::new(Value::Int64(3))), Value::Dict(vec![])],
        "0000 01 01 0300000000000000 ff",
    );
}

#[test]
fn system_fields_and_several_tables() {
    let t0 = SkiffSchema::tuple(vec![
        simple(WireType::Int64).named("a"),
        simple(WireType::Boolean).named("$key_switch"),
        SkiffSchema::composite(
            WireType::Variant8,
            vec![
                simple(WireType::Nothing),
                simple(WireType::Int64),
                simple(WireType::Nothing),
            ],
        )
        .named("$row_index"),
        SkiffSchema::optional(simple(WireType::Int64)).named("$range_index"),
        SkiffSchema::composite(
            WireType::RepeatedVariant16,
            vec![
                simple(WireType::Int64).named("x"),
                simple(WireType::String32).named("y"),
            ],
        )
        .named("$sparse_columns"),
        simple(WireType::Yson32).named("$other_columns"),
    ]);
    let t1 = SkiffSchema::tuple(vec![simple(WireType::String32).named("s")]);
    let codec = Codec::new(&SkiffFormat::new(vec![t0, t1])).unwrap();
    let rows = vec![
        OwnedRow {
            table_index: 0,
            values: vec![Value::Int64(1)],
            system: SystemFields {
                key_switch: true,
                row_index: Some(10),
                range_index: Some(2),
                sparse: vec![(1, Value::String(b"q".to_vec()))],
                other_columns: Some(b"{}".to_vec()),
            },
        },
        OwnedRow {
            table_index: 0,
            values: vec![Value::Int64(2)],
            system: SystemFields {
                row_index: Some(11),
                other_columns: Some(b"{}".to_vec()),
                ..SystemFields::default()
            },
        },
        OwnedRow {
            table_index: 1,
            values: vec![Value::String(b"t1".to_vec())],
            system: SystemFields::default(),
        },
        OwnedRow {
            table_index: 0,
            values: vec![Value::Int64(3)],
            system: SystemFields {
                row_index: None,
                sparse: vec![(0, Value::Int64(-1)), (1, Value::String(vec![]))],
                other_columns: Some(b"{}".to_vec()),
                ..SystemFields::default()
            },
        },
    ];
    let bytes = codec.encode_rows(&rows).unwrap();
    // Row 1's row index is row 0's + 1: written as tag 0, read back resolved.
    let expected_row1 = "0000 0200000000000000 00 00 00 ffff 020000007b7d";
    assert!(
        hex(&bytes).contains(&hex(&unhex(expected_row1))),
        "{}",
        hex(&bytes)
    );
    assert_eq!(codec.decode_rows(&bytes).unwrap(), rows);

    let mut reader = codec.reader(&bytes);
    let first = reader.next_row().unwrap().unwrap();
    assert!(first.key_switch());
    assert_eq!(first.row_index(), Some(10));
    assert_eq!(first.range_index(), Some(2));
    assert_eq!(first.other_columns(), Some(&b"{}"[..]));
    let sparse: Vec<_> = first
        .sparse()
        .map(|(tag, name, _)| (tag, name.to_owned()))
        .collect();
    assert_eq!(sparse, vec![(1, "y".to_owned())]);
}

#[test]
fn row_views_borrow_and_lazy_fields_walk_composites() {
    let codec = codec_of(vec![
        simple(WireType::String32).named("s"),
        SkiffSchema::composite(WireType::RepeatedVariant8, vec![simple(WireType::Double)])
            .named("l"),
        SkiffSchema::tuple(vec![
            simple(WireType::Int32).named("foo"),
            simple(WireType::String32).named("bar"),
        ])
        .named("st"),
    ]);
    let values = vec![
        Value::String(b"hello".to_vec()),
        Value::List(vec![Value::Double(1.0), Value::Double(2.5)]),
        Value::Tuple(vec![Value::Int64(7), Value::String(b"z".to_vec())]),
    ];
    let mut bytes = Vec::new();
    codec
        .encode_row(0, &values, &SystemFields::default(), &mut bytes)
        .unwrap();
    let mut reader = codec.reader(&bytes);
    let row = reader.next_row().unwrap().unwrap();
    assert_eq!(row.value_ref(0), Some(ValueRef::String(b"hello")));
    let FieldRef::Lazy(list) = row.get(1).unwrap() else {
        panic!("list is lazy")
    };
    let items: Vec<_> = list
        .repeated()
        .map(|(tag, f)| (tag, f.as_value_ref().unwrap()))
        .collect();
    assert_eq!(
        items,
        vec![(0, ValueRef::Double(1.0)), (0, ValueRef::Double(2.5))]
    );
    assert_eq!(list.bytes(), &bytes[11..11 + 19]);
    let FieldRef::Lazy(st) = row.get_by_name("st").unwrap() else {
        panic!("struct is lazy")
    };
    let members: Vec<_> = st
        .tuple_fields()
        .map(|f| f.as_value_ref().unwrap())
        .collect();
    assert_eq!(members, vec![ValueRef::Int64(7), ValueRef::String(b"z")]);
    assert_eq!(row.to_values().unwrap(), values);
    assert_eq!(row.raw(), &bytes[..]);
}

#[test]
fn row_buffers_patch_in_place_and_append() {
    let codec = codec_of(vec![
        simple(WireType::Int32).named("n"),
        simple(WireType::String32).named("s"),
        simple(WireType::Double).named("x"),
    ]);
    let mut bytes = Vec::new();
    let values = [
        Value::Int64(1),
        Value::String(b"ab".to_vec()),
        Value::Double(0.5),
    ];
    codec
        .encode_row(0, &values, &SystemFields::default(), &mut bytes)
        .unwrap();
    let mut reader = codec.reader(&bytes);
    let row = reader.next_row().unwrap().unwrap();
    let table = row.table();
    let mut buffer = row.to_buffer();
    buffer.patch(table, 0, &Value::Int64(41)).unwrap();
    buffer.patch(table, 2, &Value::Double(-3.0)).unwrap();
    assert!(
        buffer
            .patch(table, 1, &Value::String(b"x".to_vec()))
            .is_err(),
        "strings are not fixed-size"
    );
    assert!(
        buffer.patch(table, 0, &Value::Int64(1 << 40)).is_err(),
        "out of int32 range"
    );

    let extended = codec_of(vec![
        simple(WireType::Int32).named("n"),
        simple(WireType::String32).named("s"),
        simple(WireType::Double).named("x"),
        simple(WireType::Uint8).named("added"),
    ]);
    buffer
        .append(extended.table(0).unwrap().column_plan(3), &Value::Uint64(9))
        .unwrap();
    let rows = extended.decode_rows(buffer.as_bytes()).unwrap();
    // Reusing a buffer for the next row gives the same bytes as a fresh copy.
    let mut reused = buffer.clone();
    row.copy_into(&mut reused);
    assert_eq!(reused, row.to_buffer());
    assert_eq!(reused.as_bytes(), &bytes[..]);
    assert_eq!(
        rows[0].values,
        vec![
            Value::Int64(41),
            Value::String(b"ab".to_vec()),
            Value::Double(-3.0),
            Value::Uint64(9)
        ]
    );
}

#[test]
fn writer_rejects_values_that_do_not_fit() {
    let codec = codec_of(vec![
        simple(WireType::Int8).named("i8"),
        simple(WireType::Uint16).named("u16"),
        SkiffSchema::composite(WireType::Variant8, vec![simple(WireType::Int64)]).named("v"),
    ]);
    let mut out = Vec::new();
    let cases = [
        (
            vec![
                Value::Int64(128),
                Value::Uint64(0),
                Value::Variant(0, Box::new(Value::Int64(0))),
            ],
            "i8",
            "out of range",
        ),
        (
            vec![
                Value::Int64(0),
                Value::Int64(-1),
                Value::Variant(0, Box::new(Value::Int64(0))),
            ],
            "u16",
            "unsigned",
        ),
        (
            vec![
                Value::Int64(0),
                Value::Uint64(70000),
                Value::Variant(0, Box::new(Value::Int64(0))),
            ],
            "u16",
            "out of range",
        ),
        (
            vec![
                Value::Int64(0),
                Value::Uint64(0),
                Value::Variant(3, Box::new(Value::Int64(0))),
            ],
            "v",
            "tag 3",
        ),
        (
            vec![Value::Int64(0), Value::Uint64(0), Value::Double(1.0)],
            "v",
            "expected a variant",
        ),
    ];
    for (values, column, message) in cases {
        let error = codec
            .encode_row(0, &values, &SystemFields::default(), &mut out)
            .unwrap_err();
        assert_eq!(error.column.as_deref(), Some(column), "{error}");
        assert!(error.to_string().contains(message), "{error}");
        assert!(out.is_empty(), "a failed row leaves nothing behind");
    }
    assert!(codec
        .encode_row(3, &[], &SystemFields::default(), &mut out)
        .is_err());
    assert!(codec
        .encode_row(0, &[Value::Int64(0)], &SystemFields::default(), &mut out)
        .is_err());
}

/// A reader that hands out at most `chunk` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn column_values(schema: &TableSchema) -> BoxedStrategy<Vec<Value>> {
    schema
        .columns
        .iter()
        .map(|c| arb_value(&c.ty))
        .collect::<Vec<_>>()
        .prop_map(|v| v)
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_table_schemas_and_values_round_trip(
        (schema, rows) in arb_schema().prop_flat_map(|schema| {
            let rows = proptest::collection::vec(column_values(&schema), 0..4);
            (Just(schema), rows)
        }),
        widen in any::<bool>(),
        chunk in 1usize..64,
    ) {
        prop_assume!(schema.columns.iter().all(|c| !c.name.starts_with('$')));
        let options = MappingOptions { row_index: true, widen_integers: widen, ..MappingOptions::default() };
        let codec = Codec::for_table_schemas(std::slice::from_ref(&schema), &options).unwrap();
        let owned: Vec<OwnedRow> = rows
            .iter()
            .enumerate()
            .map(|(i, values)| OwnedRow {
                table_index: 0,
                values: values.clone(),
                system: SystemFields {
                    row_index: Some(100 + i as i64),
                    other_columns: codec.table(0).unwrap().has_other_columns().then(|| b"{}".to_vec()),
                    ..SystemFields::default()
                },
            })
            .collect();
        let bytes = codec.encode_rows(&owned).unwrap();
        prop_assert_eq!(&codec.decode_rows(&bytes).unwrap(), &owned);
        let streamed = codec.stream_reader(Trickle { data: &bytes, chunk }).read_all().unwrap();
        prop_assert_eq!(&streamed, &owned);
        // Borrowed views agree with owned decoding field by field.
        let mut reader = codec.reader(&bytes);
        let mut index = 0;
        while let Some(row) = reader.next_row().unwrap() {
            let mut borrowed = Vec::new();
            for (column, field) in row.fields().enumerate() {
                prop_assert_eq!(&field.to_value().unwrap(), &owned[index].values[column]);
                prop_assert_eq!(row.value_ref(column), field.as_value_ref());
                if let Some(value) = field.as_value_ref() {
                    borrowed.push((column, value));
                }
            }
            let mut visited = Vec::new();
            row.for_each_value(|column, value| visited.push((column, value)));
            prop_assert_eq!(visited, borrowed);
            index += 1;
        }
    }
}

/// Random Skiff schema nodes (no column types): every wire type, nested up to `depth`.
fn arb_skiff_node(depth: u32) -> BoxedStrategy<SkiffSchema> {
    let leaf = proptest::sample::select(
        WireType::ALL
            .iter()
            .copied()
            .filter(|w| !w.is_composite())
            .collect::<Vec<_>>(),
    )
    .prop_map(SkiffSchema::simple);
    leaf.prop_recursive(depth, 24, 4, |inner| {
        let children = proptest::collection::vec(inner, 1..4);
        (
            proptest::sample::select(vec![
                WireType::Tuple,
                WireType::Variant8,
                WireType::Variant16,
                WireType::RepeatedVariant8,
                WireType::RepeatedVariant16,
            ]),
            children,
            any::<bool>(),
        )
            .prop_map(|(wire, mut children, optional_form)| {
                if wire == WireType::Variant8 && optional_form {
                    // The optional shape: variant8<nothing; T>.
                    children.truncate(1);
                    children.insert(0, SkiffSchema::simple(WireType::Nothing));
                }
                SkiffSchema::composite(wire, children)
            })
    })
    .boxed()
}

/// Whether values of `schema` (read without types) can be null.
fn nullable(schema: &SkiffSchema) -> bool {
    schema.wire_type == WireType::Nothing || is_optional_form(schema)
}

fn is_optional_form(schema: &SkiffSchema) -> bool {
    schema.wire_type == WireType::Variant8
        && schema.children.len() == 2
        && schema.children[0].wire_type == WireType::Nothing
}

/// Values of an untyped Skiff schema node, in the shapes the reader infers.
fn arb_skiff_value(schema: &SkiffSchema) -> BoxedStrategy<Value> {
    use proptest::collection::vec;
    let children: Vec<SkiffSchema> = schema.children.clone();
    match schema.wire_type {
        WireType::Nothing => Just(Value::Null).boxed(),
        WireType::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        WireType::Int8 => any::<i8>().prop_map(|v| Value::Int64(v.into())).boxed(),
        WireType::Int16 => any::<i16>().prop_map(|v| Value::Int64(v.into())).boxed(),
        WireType::Int32 => any::<i32>().prop_map(|v| Value::Int64(v.into())).boxed(),
        WireType::Int64 => any::<i64>().prop_map(Value::Int64).boxed(),
        WireType::Uint8 => any::<u8>().prop_map(|v| Value::Uint64(v.into())).boxed(),
        WireType::Uint16 => any::<u16>().prop_map(|v| Value::Uint64(v.into())).boxed(),
        WireType::Uint32 => any::<u32>().prop_map(|v| Value::Uint64(v.into())).boxed(),
        WireType::Uint64 => any::<u64>().prop_map(Value::Uint64).boxed(),
        WireType::Int128 | WireType::Uint128 => {
            vec(any::<u8>(), 16).prop_map(Value::String).boxed()
        }
        WireType::Int256 | WireType::Uint256 => {
            vec(any::<u8>(), 32).prop_map(Value::String).boxed()
        }
        WireType::Double => any::<f64>()
            .prop_filter("NaN != NaN", |v| !v.is_nan())
            .prop_map(Value::Double)
            .boxed(),
        WireType::String32 => vec(any::<u8>(), 0..12).prop_map(Value::String).boxed(),
        WireType::Yson32 => shapeshift_types::testing::arb_node(2)
            .prop_map(Value::Any)
            .boxed(),
        WireType::Tuple => children
            .iter()
            .map(arb_skiff_value)
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
        WireType::Variant8 if is_optional_form(schema) => {
            let item = children[1].clone();
            let wrap = nullable(&item);
            prop_oneof![
                Just(Value::Null),
                arb_skiff_value(&item).prop_map(move |v| if wrap {
                    Value::Some(Box::new(v))
                } else {
                    v
                }),
            ]
            .boxed()
        }
        WireType::Variant8 | WireType::Variant16 => {
            let alternatives: Vec<BoxedStrategy<Value>> = children
                .iter()
                .enumerate()
                .map(|(tag, child)| {
                    arb_skiff_value(child)
                        .prop_map(move |v| Value::Variant(tag as u32, Box::new(v)))
                        .boxed()
                })
                .collect();
            proptest::strategy::Union::new(alternatives).boxed()
        }
        WireType::RepeatedVariant8 | WireType::RepeatedVariant16 => {
            let single = children.len() == 1;
            let items: Vec<BoxedStrategy<Value>> = children
                .iter()
                .enumerate()
                .map(|(tag, child)| {
                    arb_skiff_value(child)
                        .prop_map(move |v| {
                            if single {
                                v
                            } else {
                                Value::Variant(tag as u32, Box::new(v))
                            }
                        })
                        .boxed()
                })
                .collect();
            vec(proptest::strategy::Union::new(items), 0..4)
                .prop_map(Value::List)
                .boxed()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_skiff_schemas_and_values_round_trip(
        (format, rows) in proptest::collection::vec(arb_skiff_node(3), 1..5).prop_flat_map(|columns| {
            let table = SkiffSchema::tuple(
                columns.into_iter().enumerate().map(|(i, c)| c.named(format!("c{i}"))).collect(),
            );
            let row = table.children.iter().map(arb_skiff_value).collect::<Vec<_>>();
            (Just(SkiffFormat::new(vec![table])), proptest::collection::vec(row, 1..4))
        }),
        chunk in 1usize..32,
    ) {
        let codec = Codec::new(&format).unwrap();
        let owned: Vec<OwnedRow> = rows
            .into_iter()
            .map(|values| OwnedRow { table_index: 0, values, system: SystemFields::default() })
            .collect();
        let bytes = codec.encode_rows(&owned).unwrap();
        prop_assert_eq!(&codec.decode_rows(&bytes).unwrap(), &owned);
        let streamed = codec.stream_reader(Trickle { data: &bytes, chunk }).read_all().unwrap();
        prop_assert_eq!(&streamed, &owned);
        // Every strict prefix that does not end on a row boundary is a truncation error.
        let cut = bytes.len() / 2;
        if let Err(error) = codec.decode_rows(&bytes[..cut]) {
            prop_assert_eq!(error.kind, shapeshift_formats::skiff::SkiffErrorKind::Truncated);
        }
    }
}
