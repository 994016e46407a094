//! Skiff schemas and format descriptions: YSON in and out, registry references, validation,
//! and the table-schema mapping.

use shapeshift_formats::skiff::{
    skiff_schema_for_table, skiff_schema_for_type, Codec, MappingOptions, SkiffErrorKind,
    SkiffFormat, SkiffSchema, WireType,
};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type};

fn node(text: &str) -> shapeshift_types::Node {
    yson::from_slice(text.as_bytes()).expect("test YSON parses")
}

fn simple(w: WireType) -> SkiffSchema {
    SkiffSchema::simple(w)
}

#[test]
fn every_wire_type_name_round_trips() {
    for wire in WireType::ALL {
        assert_eq!(WireType::from_name(wire.name()), Some(wire));
    }
    assert_eq!(
        WireType::from_name("float"),
        None,
        "Skiff has no float wire type"
    );
}

#[test]
fn parses_and_prints_an_inline_format() {
    let text = "<table_skiff_schemas=[{wire_type=tuple;children=[{wire_type=int64;name=a};\
                {wire_type=variant8;name=b;children=[{wire_type=nothing};{wire_type=string32}]}]}]>skiff";
    let format = SkiffFormat::from_node(&node(text)).unwrap();
    let expected = SkiffSchema::tuple(vec![
        simple(WireType::Int64).named("a"),
        SkiffSchema::optional(simple(WireType::String32)).named("b"),
    ]);
    assert_eq!(format.tables, vec![expected]);
    let printed = yson::to_vec(&format.to_node(), YsonFormat::Text);
    let reparsed = SkiffFormat::from_node(&yson::from_slice(&printed).unwrap()).unwrap();
    assert_eq!(reparsed, format);
    let with_registry = SkiffFormat::from_node(&format.to_node_with_registry()).unwrap();
    assert_eq!(with_registry, format);
}

#[test]
fn resolves_registry_references_at_any_depth() {
    let text = r#"<table_skiff_schemas=["$row";"$row"];
        skiff_schema_registry={row={wire_type=tuple;children=["$id";{wire_type=repeated_variant8;name=tags;children=["$str"]}]};
        id={wire_type=uint64;name=id};str={wire_type=string32}}>skiff"#;
    let format = SkiffFormat::from_node(&node(text)).unwrap();
    assert_eq!(format.tables.len(), 2);
    assert_eq!(format.tables[0], format.tables[1]);
    assert_eq!(
        format.tables[0].children[0],
        simple(WireType::Uint64).named("id")
    );
    assert_eq!(
        format.tables[0].children[1].children[0],
        simple(WireType::String32)
    );
}

#[test]
fn reports_missing_and_cyclic_references() {
    let missing =
        SkiffFormat::from_node(&node(r#"<table_skiff_schemas=["$nope"]>skiff"#)).unwrap_err();
    assert_eq!(missing.kind, SkiffErrorKind::Schema);
    assert!(
        missing.to_string().contains("\"$nope\" names no entry"),
        "{missing}"
    );

    let cyclic = SkiffFormat::from_node(&node(
        r#"<table_skiff_schemas=["$a"]; skiff_schema_registry={
            a={wire_type=tuple;children=["$b"]}; b={wire_type=repeated_variant8;children=["$a"]}}>skiff"#,
    ))
    .unwrap_err();
    assert!(
        cyclic
            .to_string()
            .contains("cyclic registry reference: $a -> $b -> $a"),
        "{cyclic}"
    );

    let self_cycle = SkiffFormat::from_node(&node(
        r#"<table_skiff_schemas=["$a"]; skiff_schema_registry={a="$a"}>skiff"#,
    ))
    .unwrap_err();
    assert!(self_cycle.to_string().contains("$a -> $a"), "{self_cycle}");
}

#[test]
fn rejects_malformed_schema_nodes() {
    let cases = [
        (
            "<table_skiff_schemas=[{wire_type=int9}]>skiff",
            "unknown wire type \"int9\"",
        ),
        ("<table_skiff_schemas=[{name=x}]>skiff", "no \"wire_type\""),
        (
            "<table_skiff_schemas=[{wire_type=tuple}]>skiff",
            "needs \"children\"",
        ),
        (
            "<table_skiff_schemas=[{wire_type=int64;children=[{wire_type=int64}]}]>skiff",
            "cannot have children",
        ),
        (
            "<table_skiff_schemas=[abc]>skiff",
            "must be a \"$name\" registry reference",
        ),
        ("<table_skiff_schemas=[]>yson", "expected \"skiff\""),
        ("<table_skiff_schemas={}>skiff", "must be a list"),
    ];
    for (text, expected) in cases {
        let error = SkiffFormat::from_node(&node(text)).unwrap_err();
        assert!(error.to_string().contains(expected), "{text}: {error}");
    }
}

#[test]
fn rejects_too_many_alternatives_and_deep_nesting() {
    let many = SkiffSchema::composite(
        WireType::RepeatedVariant8,
        vec![simple(WireType::Int64); 256],
    );
    assert!(many
        .validate()
        .unwrap_err()
        .to_string()
        .contains("at most 255"));
    let mut deep = simple(WireType::Int64);
    for _ in 0..200 {
        deep = SkiffSchema::tuple(vec![deep]);
    }
    assert!(deep
        .validate()
        .unwrap_err()
        .to_string()
        .contains("deeper than"));
}

#[test]
fn misplaced_system_fields_are_schema_errors() {
    let other_not_last = SkiffSchema::tuple(vec![
        simple(WireType::Yson32).named("$other_columns"),
        simple(WireType::Int64).named("a"),
    ]);
    let error = Codec::new(&SkiffFormat::new(vec![other_not_last])).unwrap_err();
    assert!(
        error.to_string().contains("must be the last child"),
        "{error}"
    );
    let bad_key_switch = SkiffSchema::tuple(vec![simple(WireType::Int64).named("$key_switch")]);
    assert!(Codec::new(&SkiffFormat::new(vec![bad_key_switch])).is_err());
    let not_tuple = simple(WireType::Int64);
    assert!(Codec::new(&SkiffFormat::new(vec![not_tuple])).is_err());
}

#[test]
fn maps_primitive_types_like_yt() {
    let narrow = MappingOptions::default();
    let cases = [
        (P::Int8, WireType::Int8),
        (P::Int16, WireType::Int16),
        (P::Int32, WireType::Int32),
        (P::Int64, WireType::Int64),
        (P::Uint8, WireType::Uint8),
        (P::Uint16, WireType::Uint16),
        (P::Uint32, WireType::Uint32),
        (P::Uint64, WireType::Uint64),
        (P::Float, WireType::Double),
        (P::Double, WireType::Double),
        (P::Bool, WireType::Boolean),
        (P::String, WireType::String32),
        (P::Utf8, WireType::String32),
        (P::Json, WireType::String32),
        (P::Uuid, WireType::String32),
        (P::Date, WireType::Uint16),
        (P::Datetime, WireType::Uint32),
        (P::Timestamp, WireType::Uint64),
        (P::Interval, WireType::Int64),
        (P::Date32, WireType::Int32),
        (P::Datetime64, WireType::Int64),
        (P::Timestamp64, WireType::Int64),
        (P::Interval64, WireType::Int64),
        (P::Yson, WireType::Yson32),
        (P::Null, WireType::Nothing),
        (P::Void, WireType::Nothing),
    ];
    for (primitive, wire) in cases {
        let schema = skiff_schema_for_type(&Type::Primitive(primitive), &narrow).unwrap();
        assert_eq!(schema, simple(wire), "{primitive:?}");
    }
    let wide = MappingOptions {
        widen_integers: true,
        ..MappingOptions::default()
    };
    assert_eq!(
        skiff_schema_for_type(&P::Int8.into(), &wide).unwrap(),
        simple(WireType::Int64)
    );
    assert_eq!(
        skiff_schema_for_type(&P::Uint16.into(), &wide).unwrap(),
        simple(WireType::Uint64)
    );
}

#[test]
fn maps_composite_types_like_yt() {
    let o = MappingOptions::default();
    let map = |t: Type| skiff_schema_for_type(&t, &o).unwrap();
    assert_eq!(
        map(Type::optional(P::Int64.into())),
        SkiffSchema::optional(simple(WireType::Int64))
    );
    assert_eq!(
        map(Type::list(P::Double.into())),
        SkiffSchema::composite(WireType::RepeatedVariant8, vec![simple(WireType::Double)])
    );
    assert_eq!(
        map(Type::dict(P::String.into(), P::Int32.into())),
        SkiffSchema::composite(
            WireType::RepeatedVariant8,
            vec![SkiffSchema::tuple(vec![
                simple(WireType::String32),
                simple(WireType::Int32)
            ])]
        )
    );
    assert_eq!(
        map(Type::Struct(vec![
            Member::new("foo", P::Int32.into()),
            Member::new("bar", P::String.into())
        ])),
        SkiffSchema::tuple(vec![
            simple(WireType::Int32).named("foo"),
            simple(WireType::String32).named("bar")
        ])
    );
    assert_eq!(
        map(Type::VariantTuple(vec![P::Int8.into(), P::Bool.into()])),
        SkiffSchema::composite(
            WireType::Variant8,
            vec![simple(WireType::Int8), simple(WireType::Boolean)]
        )
    );
    let big_variant = Type::VariantTuple(vec![P::Null.into(); 300]);
    assert_eq!(map(big_variant).wire_type, WireType::Variant16);
    for (precision, wire) in [
        (9, WireType::Int32),
        (18, WireType::Int64),
        (38, WireType::Int128),
        (76, WireType::Int256),
    ] {
        assert_eq!(
            map(Type::Decimal {
                precision,
                scale: 2
            }),
            simple(wire)
        );
    }
    assert_eq!(
        map(Type::tagged("image", P::String.into())),
        simple(WireType::String32)
    );
}

#[test]
fn maps_tables_with_system_fields() {
    let mut schema = TableSchema::new(vec![
        ColumnSchema::new("a", P::Int64.into()),
        ColumnSchema::new("b", Type::optional(P::String.into())),
    ]);
    schema.strict = false;
    let options = MappingOptions {
        key_switch: true,
        row_index: true,
        range_index: true,
        ..MappingOptions::default()
    };
    let skiff = skiff_schema_for_table(&schema, &options).unwrap();
    let names: Vec<&str> = skiff.children.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a",
            "b",
            "$key_switch",
            "$row_index",
            "$range_index",
            "$other_columns"
        ]
    );
    assert_eq!(skiff.children[3].children.len(), 3);
    let codec = Codec::for_table_schemas(&[schema], &options).unwrap();
    let table = codec.table(0).unwrap();
    assert_eq!(table.column_count(), 2);
    assert!(
        table.has_key_switch()
            && table.has_row_index()
            && table.has_range_index()
            && table.has_other_columns()
    );

    let reserved = TableSchema::new(vec![ColumnSchema::new("$x", P::Int64.into())]);
    assert_eq!(
        skiff_schema_for_table(&reserved, &MappingOptions::default())
            .unwrap_err()
            .kind,
        SkiffErrorKind::Mapping
    );
}

#[test]
fn table_types_must_fit_the_wire_types() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "a",
        Type::optional(P::Int64.into()),
    )]);
    let wrong = SkiffFormat::new(vec![SkiffSchema::tuple(vec![
        simple(WireType::Int64).named("a")
    ])]);
    let error = Codec::with_table_schemas(&wrong, &[schema]).unwrap_err();
    assert_eq!(error.kind, SkiffErrorKind::Mapping);
    assert!(
        error.to_string().contains("expected variant8<nothing; T>"),
        "{error}"
    );

    let uuid = TableSchema::new(vec![ColumnSchema::new("u", P::Uuid.into())]);
    let as_uint128 = SkiffFormat::new(vec![SkiffSchema::tuple(vec![
        simple(WireType::Uint128).named("u")
    ])]);
    assert!(
        Codec::with_table_schemas(&as_uint128, &[uuid]).is_ok(),
        "uuid may travel as uint128"
    );

    let required = TableSchema::new(vec![ColumnSchema::new("missing", P::Int64.into())]);
    let empty = SkiffFormat::new(vec![SkiffSchema::tuple(vec![])]);
    assert!(Codec::with_table_schemas(&empty, &[required]).is_err());
}
