//! Table schemas as YSON: agreement with YT's Python client (yt.wrapper.schema), the three
//! written forms, legacy columns, YT's table rules, and errors with paths.

mod common;

use common::{normalized, yson};
use proptest::prelude::*;
use shapeshift_types::testing::{arb_node, arb_schema};
use shapeshift_types::{
    ColumnSchema, Member, PrimitiveType, SchemaForm, SortOrder, TableSchema, Type,
};

#[allow(dead_code)]
mod peer {
    use super::*;
    include!("data/peer_vectors.rs");
}

fn err(text: &str) -> String {
    TableSchema::from_node(&yson(text)).unwrap_err().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_schemas_round_trip_in_every_form(schema in arb_schema()) {
        prop_assert_eq!(schema.validate(), Ok(()));
        for form in [SchemaForm::TypeV3, SchemaForm::Legacy, SchemaForm::Both] {
            let node = schema.to_node(form);
            prop_assert_eq!(TableSchema::from_node(&node), Ok(schema.clone()), "{:?}", form);
        }
    }

    #[test]
    fn arbitrary_nodes_never_panic(node in arb_node(4)) {
        let _ = TableSchema::from_node(&node);
        let _ = ColumnSchema::from_node(&node);
    }
}

#[test]
fn type_v3_form_matches_the_peer() {
    for (schema, text) in peer::peer_schemas() {
        let peer_node = yson(text);
        assert_eq!(
            normalized(&schema.to_node(SchemaForm::TypeV3)),
            normalized(&peer_node),
            "ours vs yt.wrapper.schema"
        );
        assert_eq!(TableSchema::from_node(&peer_node), Ok(schema));
    }
}

#[test]
fn both_form_is_what_yt_writes() {
    let schema = TableSchema {
        columns: vec![
            ColumnSchema::new("id", PrimitiveType::Int64.into()).sorted(SortOrder::Ascending),
            ColumnSchema::new("name", Type::optional(PrimitiveType::Utf8.into())),
            ColumnSchema::new("tags", Type::list(PrimitiveType::String.into())),
            ColumnSchema::new("flag", Type::optional(PrimitiveType::Bool.into())),
        ],
        strict: false,
        unique_keys: true,
    };
    assert_eq!(
        normalized(&schema.to_node(SchemaForm::Both)),
        normalized(&yson(
            "<strict=%false; unique_keys=%true>[
                {name=id; type=int64; required=%true; type_v3=int64; sort_order=ascending};
                {name=name; type=utf8; required=%false; type_v3={type_name=optional; item=utf8}};
                {name=tags; type=any; required=%true; type_v3={type_name=list; item=string}};
                {name=flag; type=boolean; required=%false; type_v3={type_name=optional; item=bool}};
            ]"
        ))
    );
    // Legacy form: the pair alone where it is exact, all three attributes elsewhere.
    assert_eq!(
        normalized(&schema.to_node(SchemaForm::Legacy)),
        normalized(&yson(
            "<strict=%false; unique_keys=%true>[
                {name=id; type=int64; required=%true; sort_order=ascending};
                {name=name; type=utf8; required=%false};
                {name=tags; type=any; required=%true; type_v3={type_name=list; item=string}};
                {name=flag; type=boolean; required=%false};
            ]"
        ))
    );
}

#[test]
fn legacy_columns_are_read_as_yt_reads_them() {
    let schema = TableSchema::from_node(&yson(
        "[{name=a; type=int64}; {name=b; type=boolean; required=%true}; {name=c; type=any};
          {name=d; type=null}; {name=e; type=string; required=%false; sort_order=#}]",
    ))
    .unwrap();
    let types: Vec<Type> = schema.columns.iter().map(|c| c.ty.clone()).collect();
    assert_eq!(
        types,
        vec![
            Type::optional(PrimitiveType::Int64.into()),
            PrimitiveType::Bool.into(),
            Type::optional(PrimitiveType::Yson.into()),
            PrimitiveType::Null.into(),
            Type::optional(PrimitiveType::String.into()),
        ]
    );
    assert!(schema.strict && !schema.unique_keys);
    assert_eq!(schema.columns[4].sort_order, None);
    // Consistent legacy and type_v3 attributes together are fine.
    let column = ColumnSchema::from_node(&yson(
        "{name=x; type=any; required=%false; type_v3={type_name=optional; item={type_name=list; item=int8}}}",
    ))
    .unwrap();
    assert_eq!(
        column.ty,
        Type::optional(Type::list(PrimitiveType::Int8.into()))
    );
    // Ignored attributes YT has and we do not model.
    let column = ColumnSchema::from_node(&yson(
        "{name=x; type_v3=int8; lock=l; group=g; expression=\"1\"}",
    ))
    .unwrap();
    assert_eq!(column, ColumnSchema::new("x", PrimitiveType::Int8.into()));
}

#[test]
fn column_errors_name_the_column_and_attribute() {
    assert_eq!(
        err("[{name=a; type_v3=int8}; {name=b; type_v3={type_name=list; item=int65}}]"),
        "[1].type_v3.item: unknown type \"int65\""
    );
    assert_eq!(
        err("[{name=a; type=int64; required=%true; type_v3={type_name=optional; item=int64}}]"),
        "[0].required: %true does not match type_v3 optional<int64>, which is nullable"
    );
    assert_eq!(
        err("[{name=a; type=string; type_v3=int64}]"),
        "[0].type: \"string\" does not match type_v3 int64, whose legacy type is \"int64\""
    );
    assert_eq!(
        err("[{name=a; type=int65}]"),
        "[0].type: unknown legacy type \"int65\""
    );
    assert_eq!(
        err("[{name=a; type=bool}]"),
        "[0].type: unknown legacy type \"bool\" (the legacy name of \"bool\" is \"boolean\")"
    );
    assert_eq!(
        err("[{name=a; type=any; required=%true}]"),
        "[0].type: a column of type \"any\" cannot be required"
    );
    assert_eq!(
        err("[{name=a; type=null; required=%true}]"),
        "[0].type: a column of type \"null\" cannot be required"
    );
    assert_eq!(
        err("[{name=a; type_v3=yson}]"),
        "[0].type_v3: type \"yson\" is allowed only as the item of an optional (write optional<yson>)"
    );
    assert_eq!(
        err("[{name=a}]"),
        "[0]: column \"a\" has no type: give \"type_v3\" or \"type\""
    );
    assert_eq!(err("[{type_v3=int8}]"), "[0]: missing \"name\"");
    assert_eq!(
        err("[{name=\"\"; type_v3=int8}]"),
        "[0].name: column name is empty"
    );
    assert_eq!(
        err("[{name=a; type_v3=int8; sort_order=up}]"),
        "[0].sort_order: unknown sort order \"up\" (expected \"ascending\" or \"descending\")"
    );
    assert_eq!(
        err("[{name=a; type_v3=int8; required=yes}]"),
        "[0].required: expected a boolean, found string"
    );
    assert_eq!(
        err("[int8]"),
        "[0]: a column is a map {name=...; type_v3=...}, found string"
    );
    assert_eq!(
        err("{name=a}"),
        "a table schema is a list of columns, found map"
    );
    assert_eq!(
        err("<strict=1>[]"),
        "@strict: expected a boolean, found int64"
    );
}

#[test]
fn table_rules_are_yts() {
    assert_eq!(
        err("[{name=a; type_v3=int8}; {name=a; type_v3=int16}]"),
        "[1]: column name \"a\" is used twice"
    );
    assert_eq!(
        err("[{name=a; type_v3=int8; sort_order=ascending}; {name=b; type_v3=int8};
              {name=c; type_v3=int8; sort_order=ascending}]"),
        "[2]: key column \"c\" follows a non-key column: key columns must form a prefix of the schema"
    );
    assert_eq!(
        err("<unique_keys=%true>[{name=a; type_v3=int8}]"),
        "unique_keys is set but the schema has no key columns"
    );
    // YT also accepts "true"/"false" strings for booleans; absent attributes take defaults.
    let schema = TableSchema::from_node(&yson("<strict=\"false\">[]")).unwrap();
    assert!(!schema.strict && !schema.unique_keys);
    let long = "n".repeat(257);
    let e = TableSchema::new(vec![ColumnSchema::new(long, PrimitiveType::Int8.into())])
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "[0].name");
    // A column type built in code is checked too, with the path in the schema.
    let e = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Struct(vec![
            Member::new("x", PrimitiveType::Int8.into()),
            Member::new("x", PrimitiveType::Int8.into()),
        ]),
    )])
    .validate()
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "[0].type_v3.members[1].name: member name \"x\" is used twice"
    );
}
