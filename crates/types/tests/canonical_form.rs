//! The type_v3 canonical YSON form: round trips, agreement with YT's Python client
//! (yt.type_info), the non-canonical inputs YT accepts, legacy types, and errors with paths.

mod common;

use common::{normalized, yson};
use proptest::prelude::*;
use shapeshift_types::testing::{arb_node, arb_type};
use shapeshift_types::{
    ColumnSchema, LegacyType, Member, Node, PrimitiveType, SortOrder, TableSchema, Type,
    MAX_TYPE_DEPTH,
};

#[allow(dead_code)]
mod peer {
    use super::*;
    include!("data/peer_vectors.rs");
}

fn err(node: &str) -> String {
    Type::from_node(&yson(node)).unwrap_err().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_types_round_trip_through_the_canonical_form(ty in arb_type(4)) {
        prop_assert_eq!(ty.validate(), Ok(()));
        let node = ty.to_node();
        prop_assert_eq!(Type::from_node(&node), Ok(ty.clone()));
    }

    #[test]
    fn legacy_form_round_trips_exactly_when_it_says_so(ty in arb_type(2)) {
        let legacy = ty.to_legacy();
        let back = Type::from_legacy(legacy.name, legacy.required);
        prop_assert_eq!(ty.is_legacy_exact(), back.as_ref() == Ok(&ty));
    }

    /// Arbitrary nodes are not types, mostly: whatever happens, no panic, and an error
    /// always says something.
    #[test]
    fn arbitrary_nodes_never_panic(node in arb_node(4)) {
        if let Err(e) = Type::from_node(&node) {
            prop_assert!(!e.message.is_empty());
        }
    }
}

#[test]
fn canonical_form_matches_the_peer() {
    for (ty, text) in peer::peer_types() {
        let peer_node = yson(text);
        assert_eq!(
            normalized(&ty.to_node()),
            normalized(&peer_node),
            "{ty}: ours vs yt.type_info"
        );
        assert_eq!(Type::from_node(&peer_node), Ok(ty.clone()), "{text}");
    }
}

#[test]
fn primitives_are_bare_strings_and_composites_maps() {
    assert_eq!(
        Type::Primitive(PrimitiveType::Int64).to_node(),
        Node::string("int64")
    );
    assert_eq!(
        Type::optional(PrimitiveType::Bool.into()).to_node(),
        yson("{type_name=optional; item=bool}")
    );
}

#[test]
fn peer_types_we_do_not_model_are_reported_as_unknown() {
    for text in peer::peer_unsupported_types() {
        let e = Type::from_node(&yson(text)).unwrap_err();
        assert!(e.message.starts_with("unknown type \"tz_"), "{e}");
    }
}

#[test]
fn accepts_the_non_canonical_forms_yt_accepts() {
    // A primitive as a map.
    assert_eq!(
        Type::from_node(&yson("{type_name=int64}")),
        Ok(PrimitiveType::Int64.into())
    );
    // Unknown keys are ignored, at every level, and so are attributes.
    assert_eq!(
        Type::from_node(&yson(
            "<comment=x>{type_name=list; item={type_name=utf8; extra=1}; note=\"n\"}"
        )),
        Ok(Type::list(PrimitiveType::Utf8.into()))
    );
    assert_eq!(
        Type::from_node(&yson(
            "{type_name=struct; members=[{name=a; type=int8; doc=\"d\"}]}"
        )),
        Ok(Type::Struct(vec![Member::new(
            "a",
            PrimitiveType::Int8.into()
        )]))
    );
    // Precision and scale as unsigned integers.
    assert_eq!(
        Type::from_node(&yson("{type_name=decimal; precision=10u; scale=2u}")),
        Ok(Type::Decimal {
            precision: 10,
            scale: 2
        })
    );
    // Printing is canonical again.
    assert_eq!(
        Type::from_node(&yson("{type_name=int64}"))
            .unwrap()
            .to_node(),
        Node::string("int64")
    );
}

#[test]
fn errors_name_the_path_inside_the_type() {
    assert_eq!(
        err(
            "{type_name=struct; members=[{name=a; type=int8}; {name=b; type=string}; \
             {name=c; type={type_name=optional; item=int65}}]}"
        ),
        "members[2].type.item: unknown type \"int65\""
    );
    assert_eq!(
        err("{type_name=dict; key=string; value={type_name=tuple; elements=[{type=int8}; {}]}}"),
        "value.elements[1]: missing \"type\""
    );
    assert_eq!(err("int65"), "unknown type \"int65\"");
    assert_eq!(
        err("boolean"),
        "unknown type \"boolean\" (a legacy name; type_v3 calls it \"bool\")"
    );
    assert_eq!(
        err("list"),
        "type \"list\" must be written as a map with \"type_name\" and its parameters"
    );
    assert_eq!(err("{item=int8}"), "missing \"type_name\"");
    assert_eq!(
        err("{type_name=list}"),
        "missing \"item\", required for \"list\""
    );
    assert_eq!(
        err("[int8]"),
        "expected a type: a type name string or a map with \"type_name\", found list"
    );
    assert_eq!(
        err("{type_name=variant; members=[]; elements=[]}"),
        "a variant has either \"members\" (named) or \"elements\" (unnamed), not both"
    );
    assert_eq!(
        err("{type_name=variant}"),
        "a variant needs \"members\" or \"elements\""
    );
    assert_eq!(
        err("{type_name=tuple; elements={type=int8}}"),
        "elements: expected a list, found map"
    );
    assert_eq!(
        err("{type_name=struct; members=[int8]}"),
        "members[0]: expected a map {name=...; type=...}, found string"
    );
    assert_eq!(
        err("{type_name=decimal; precision=10; scale=%true}"),
        "scale: expected an integer, found boolean"
    );
    assert_eq!(
        err("{type_name=decimal; precision=-1; scale=0}"),
        "precision: -1 is out of range"
    );
}

#[test]
fn yt_rules_are_enforced() {
    assert_eq!(
        err("{type_name=decimal; precision=77; scale=0}"),
        "decimal precision 77 is not in 1..=76"
    );
    assert_eq!(
        err("{type_name=decimal; precision=0; scale=0}"),
        "decimal precision 0 is not in 1..=76"
    );
    assert_eq!(
        err("{type_name=list; item={type_name=decimal; precision=5; scale=6}}"),
        "item: decimal scale 6 exceeds precision 5"
    );
    assert!(Type::from_node(&yson("{type_name=decimal; precision=76; scale=76}")).is_ok());
    assert_eq!(
        err("{type_name=struct; members=[{name=a; type=int8}; {name=a; type=int16}]}"),
        "members[1].name: member name \"a\" is used twice"
    );
    assert_eq!(
        err("{type_name=variant; members=[{name=\"\"; type=int8}]}"),
        "members[0].name: member name is empty"
    );
    assert_eq!(
        err("{type_name=tagged; tag=\"\"; item=int8}"),
        "tag: tag is empty"
    );
    let long = "x".repeat(257);
    let e = Type::Struct(vec![Member::new(long, PrimitiveType::Int8.into())])
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "members[0].name");
    // yson only directly inside optional.
    assert_eq!(
        err("yson"),
        "type \"yson\" is allowed only as the item of an optional (write optional<yson>)"
    );
    assert_eq!(
        err("{type_name=list; item=yson}").split(':').next(),
        Some("item")
    );
    assert_eq!(
        err("{type_name=optional; item={type_name=tagged; tag=t; item=yson}}")
            .split(':')
            .next(),
        Some("item.item")
    );
    // No yson or json anywhere in a dict key.
    assert_eq!(
        err("{type_name=dict; key={type_name=tuple; elements=[{type=int8}; {type=json}]}; value=int8}"),
        "key.elements[1].type: type \"json\" is not allowed in a dict key"
    );
    assert_eq!(
        err("{type_name=dict; key={type_name=optional; item=yson}; value=int8}"),
        "key.item: type \"yson\" is not allowed in a dict key"
    );
}

#[test]
fn nesting_beyond_the_limit_is_an_error_not_a_stack_overflow() {
    let mut ok = Type::Primitive(PrimitiveType::Int8);
    for _ in 0..MAX_TYPE_DEPTH {
        ok = Type::list(ok);
    }
    assert_eq!(Type::from_node(&ok.to_node()), Ok(ok.clone()));
    let too_deep = Type::list(ok);
    let e = Type::from_node(&too_deep.to_node()).unwrap_err();
    assert!(e.message.contains("depth limit"), "{e}");
    assert!(too_deep.validate().is_err());

    // A hostile description far deeper than any stack allows.
    let mut node = Node::string("int8");
    for _ in 0..100_000 {
        node = Node::map([("type_name", Node::string("list")), ("item", node)]);
    }
    assert!(Type::from_node(&node).is_err());
    // Dropping a 100 000-deep Node recurses; leak it rather than risk the test's stack.
    std::mem::forget(node);
}

#[test]
fn legacy_types_read_like_the_peer() {
    for (name, required, expected) in peer::peer_legacy() {
        let ours = Type::from_legacy(name, required);
        // Where the Python client is more lenient than YT's server, we follow the server:
        // an `any` column cannot be required, nor a `null`/`void` one.
        if required && matches!(name, "any" | "null" | "void") {
            assert!(ours.is_err(), "{name} required");
            continue;
        }
        assert_eq!(ours, Ok(expected), "{name} required={required}");
    }
    assert!(Type::from_legacy("bool", true).is_err());
    assert!(Type::from_legacy("yson", false).is_err());
}

#[test]
fn to_legacy_is_yts_cast_to_v1() {
    let cases = [
        ("int64", PrimitiveType::Int64.into(), "int64", true),
        (
            "optional<bool>",
            Type::optional(PrimitiveType::Bool.into()),
            "boolean",
            false,
        ),
        (
            "optional<yson>",
            Type::optional(PrimitiveType::Yson.into()),
            "any",
            false,
        ),
        ("null", PrimitiveType::Null.into(), "null", false),
        (
            "optional<null>",
            Type::optional(PrimitiveType::Null.into()),
            "any",
            false,
        ),
        (
            "optional<optional<int8>>",
            Type::optional(Type::optional(PrimitiveType::Int8.into())),
            "any",
            false,
        ),
        (
            "decimal",
            Type::Decimal {
                precision: 5,
                scale: 2,
            },
            "string",
            true,
        ),
        (
            "optional<decimal>",
            Type::optional(Type::Decimal {
                precision: 5,
                scale: 2,
            }),
            "string",
            false,
        ),
        ("list", Type::list(PrimitiveType::Int8.into()), "any", true),
        (
            "optional<list>",
            Type::optional(Type::list(PrimitiveType::Int8.into())),
            "any",
            false,
        ),
        (
            "tagged<optional<utf8>>",
            Type::tagged("t", Type::optional(PrimitiveType::Utf8.into())),
            "utf8",
            false,
        ),
    ];
    for (what, ty, name, required) in cases {
        assert_eq!(ty.to_legacy(), LegacyType { name, required }, "{what}");
    }
    assert!(Type::optional(PrimitiveType::Int64.into()).is_legacy_exact());
    assert!(!Type::tagged("t", PrimitiveType::Int64.into()).is_legacy_exact());
    assert!(!Type::Decimal {
        precision: 5,
        scale: 2
    }
    .is_legacy_exact());
}

#[test]
fn display_is_yts_text_form() {
    let ty = Type::Struct(vec![
        Member::new("a", Type::optional(PrimitiveType::Int64.into())),
        Member::new(
            "b",
            Type::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        Member::new(
            "c",
            Type::VariantStruct(vec![Member::new("x", PrimitiveType::Utf8.into())]),
        ),
        Member::new("d", Type::tagged("t", PrimitiveType::Bool.into())),
    ]);
    assert_eq!(
        ty.to_string(),
        "struct<a=optional<int64>;b=decimal(10,2);c=named_variant<x=utf8>;d=tagged<\"t\";bool>>"
    );
}

// Keeps the schema types in scope for the included peer file (which defines all vectors).
#[allow(dead_code)]
fn _uses(_: ColumnSchema, _: SortOrder, _: TableSchema) {}
