//! Typed values as YSON nodes: round trips for random types and values in both struct
//! forms, YT's representation of each kind, YT's decimal vectors, range checks, and errors
//! (with paths) for nodes and values that do not fit their type.

mod common;

use common::{hex, yson};
use proptest::prelude::*;
use shapeshift_types::testing::{arb_node, arb_type, arb_typed_value};
use shapeshift_types::{
    check_value, decimal_binary_to_text, decimal_text_to_binary, value_from_node, value_to_node,
    Member, Node, NodeValue, PrimitiveType, StructForm, Type, Value,
};

fn p(p: PrimitiveType) -> Type {
    Type::Primitive(p)
}

fn read(text: &str, ty: &Type) -> Result<Value, String> {
    value_from_node(&yson(text), ty).map_err(|e| e.to_string())
}

fn write(value: &Value, ty: &Type, form: StructForm) -> Node {
    value_to_node(value, ty, form).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_values_round_trip_in_both_struct_forms((ty, value) in arb_typed_value(3)) {
        prop_assert_eq!(check_value(&value, &ty), Ok(()));
        for form in [StructForm::Named, StructForm::Positional] {
            let node = value_to_node(&value, &ty, form).unwrap();
            prop_assert_eq!(value_from_node(&node, &ty), Ok(value.clone()), "{:?} {}", form, ty);
        }
    }

    /// Nodes that do not belong to the type: an error or a valid value, never a panic.
    #[test]
    fn arbitrary_nodes_against_arbitrary_types_never_panic(
        ty in arb_type(3),
        node in arb_node(3),
    ) {
        if let Ok(value) = value_from_node(&node, &ty) {
            prop_assert_eq!(check_value(&value, &ty), Ok(()));
        }
    }

    /// Corruption: one subnode of a valid value's node replaced by an arbitrary node. The
    /// result reads as an error or as a valid value, never a panic.
    #[test]
    fn corrupted_value_nodes_are_rejected_or_valid(
        (ty, value) in arb_typed_value(3),
        replacement in arb_node(2),
        position in any::<prop::sample::Index>(),
        positional in any::<bool>(),
    ) {
        let form = if positional { StructForm::Positional } else { StructForm::Named };
        let mut node = value_to_node(&value, &ty, form).unwrap();
        let target = position.index(count_subnodes(&node));
        replace_subnode(&mut node, &mut { target }, &replacement);
        if let Ok(read) = value_from_node(&node, &ty) {
            prop_assert_eq!(check_value(&read, &ty), Ok(()));
        }
    }

    /// A value of one type checked against another: an error or fine, never a panic, and
    /// value_to_node agrees with check_value.
    #[test]
    fn values_against_other_types_agree_with_check_value(
        (_, value) in arb_typed_value(2),
        other in arb_type(2),
    ) {
        let checked = check_value(&value, &other);
        let written = value_to_node(&value, &other, StructForm::Named);
        prop_assert_eq!(checked.is_ok(), written.is_ok());
    }
}

#[test]
fn each_kind_has_yts_representation() {
    let s = Type::Struct(vec![
        Member::new("foo", p(PrimitiveType::Int32)),
        Member::new("bar", p(PrimitiveType::String)),
    ]);
    let v = Value::Tuple(vec![Value::Int64(7), Value::String(b"x".to_vec())]);
    assert_eq!(write(&v, &s, StructForm::Named), yson("{foo=7; bar=x}"));
    assert_eq!(write(&v, &s, StructForm::Positional), yson("[7; x]"));

    let oo = Type::optional(Type::optional(p(PrimitiveType::Int64)));
    assert_eq!(write(&Value::Null, &oo, StructForm::Named), yson("#"));
    assert_eq!(
        write(&Value::Some(Box::new(Value::Null)), &oo, StructForm::Named),
        yson("[#]")
    );
    assert_eq!(
        write(
            &Value::Some(Box::new(Value::Int64(5))),
            &oo,
            StructForm::Named
        ),
        yson("[5]")
    );
    assert_eq!(
        write(
            &Value::Int64(5),
            &Type::optional(p(PrimitiveType::Int64)),
            StructForm::Named
        ),
        yson("5")
    );

    let d = Type::dict(p(PrimitiveType::Utf8), Type::list(p(PrimitiveType::Uint8)));
    let dv = Value::Dict(vec![
        (
            Value::String(b"a".to_vec()),
            Value::List(vec![Value::Uint64(1)]),
        ),
        (Value::String(b"b".to_vec()), Value::List(vec![])),
    ]);
    assert_eq!(
        write(&dv, &d, StructForm::Named),
        yson("[[a; [1u]]; [b; []]]")
    );

    let vs = Type::VariantStruct(vec![
        Member::new("ok", p(PrimitiveType::Int64)),
        Member::new("error", p(PrimitiveType::Utf8)),
    ]);
    let vv = Value::Variant(1, Box::new(Value::String(b"boom".to_vec())));
    assert_eq!(write(&vv, &vs, StructForm::Named), yson("[error; boom]"));
    assert_eq!(write(&vv, &vs, StructForm::Positional), yson("[1; boom]"));
    let vt = Type::VariantTuple(vec![p(PrimitiveType::Bool), p(PrimitiveType::Double)]);
    assert_eq!(
        write(
            &Value::Variant(1, Box::new(Value::Double(1.5))),
            &vt,
            StructForm::Named
        ),
        yson("[1; 1.5]")
    );

    let t = Type::Tuple(vec![p(PrimitiveType::Null), p(PrimitiveType::Bool)]);
    assert_eq!(
        write(
            &Value::Tuple(vec![Value::Null, Value::Bool(true)]),
            &t,
            StructForm::Named
        ),
        yson("[#; %true]")
    );
    let y = Type::optional(p(PrimitiveType::Yson));
    let any = yson("<a=1>{x=[1;2]}");
    assert_eq!(write(&Value::Any(any.clone()), &y, StructForm::Named), any);
    assert_eq!(value_from_node(&any, &y), Ok(Value::Any(any.clone())));
    // The entity is the null of optional<yson>.
    assert_eq!(read("#", &y), Ok(Value::Null));

    let tagged = Type::tagged("t", p(PrimitiveType::Date));
    assert_eq!(
        write(&Value::Uint64(19000), &tagged, StructForm::Named),
        yson("19000u")
    );
    let uuid = Type::Primitive(PrimitiveType::Uuid);
    assert_eq!(
        write(&Value::String(vec![0xAB; 16]), &uuid, StructForm::Named),
        Node::string(vec![0xAB; 16])
    );
}

#[test]
fn reading_is_as_lenient_as_yt() {
    let s = Type::Struct(vec![
        Member::new("a", p(PrimitiveType::Int64)),
        Member::new("b", Type::optional(p(PrimitiveType::String))),
        Member::new("c", p(PrimitiveType::Null)),
    ]);
    let expect = Value::Tuple(vec![Value::Int64(1), Value::Null, Value::Null]);
    // Missing nullable members, in either form; map members in any order.
    assert_eq!(read("{a=1}", &s), Ok(expect.clone()));
    assert_eq!(read("[1]", &s), Ok(expect.clone()));
    assert_eq!(read("{c=#; a=1}", &s), Ok(expect));
    // Variant alternatives by name or by index (signed or unsigned).
    let vs = Type::VariantStruct(vec![
        Member::new("x", p(PrimitiveType::Int8)),
        Member::new("y", p(PrimitiveType::Int8)),
    ]);
    for text in ["[y; 3]", "[1; 3]", "[1u; 3]"] {
        assert_eq!(
            read(text, &vs),
            Ok(Value::Variant(1, Box::new(Value::Int64(3)))),
            "{text}"
        );
    }
    // Integers of the other signedness when in range.
    assert_eq!(read("5", &p(PrimitiveType::Uint16)), Ok(Value::Uint64(5)));
    assert_eq!(read("5u", &p(PrimitiveType::Int8)), Ok(Value::Int64(5)));
}

#[test]
fn decimals_match_yts_own_vectors() {
    // (precision, scale, text, binary) as YT's library/decimal unit tests state them.
    let yt = [
        (3, 2, "3.14", "8000013A"),
        (10, 2, "3.14", "800000000000013A"),
        (35, 2, "3.14", "8000000000000000000000000000013A"),
        (10, 9, "-2.718281828", "7FFFFFFF5DFA4F9C"),
        (35, 9, "-2.718281828", "7FFFFFFFFFFFFFFFFFFFFFFF5DFA4F9C"),
        (3, 2, "nan", "FFFFFFFF"),
        (3, 2, "inf", "FFFFFFFE"),
        (3, 2, "-inf", "00000002"),
        (10, 2, "nan", "FFFFFFFFFFFFFFFF"),
        (10, 2, "-inf", "0000000000000002"),
        (35, 2, "inf", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFE"),
        (
            35,
            0,
            "-60227680402501652580863193008687593",
            "7FF4668BCCE002BD685B3A3811CE3617",
        ),
        (
            35,
            0,
            "-58685702202126332296617139656872032",
            "7FF4B2924D28572FF19525515205AFA0",
        ),
        (
            35,
            0,
            "29836394225258329500167403959807652",
            "8005BF0C3D439F6FFD649D99A704EEA4",
        ),
        (
            35,
            0,
            "61449825198266175750309883089040771",
            "800BD5B5D5F0C73E0C9CD4943298B583",
        ),
        // 128 and 256 bits, computed as hex(2**(bits-1) + value) with Python's big integers.
        (
            38,
            0,
            "-99999999999999999999999999999999999999",
            "34C4B357A5793B85F675DDC000000001",
        ),
        (
            38,
            0,
            "12345678901234567890123456789012345678",
            "8949B0F6F0023313C4499050DE38F34E",
        ),
        (
            76,
            0,
            "-1234567890123456789012345678901234567890123456789012345678901234567890123456",
            "7D454263E297CD4EFCBE6BC97626CF03B5B93490F8462A5807E4A36E8D234540",
        ),
        (
            76,
            0,
            "9999999999999999999999999999999999999999999999999999999999999999999999999999",
            "961BCCA7119915B50764B4ABE86529797775A5F171950FFFFFFFFFFFFFFFFFFF",
        ),
        (
            40,
            0,
            "1",
            "8000000000000000000000000000000000000000000000000000000000000001",
        ),
    ];
    for (precision, scale, text, binary) in yt {
        assert_eq!(
            decimal_text_to_binary(text, precision, scale),
            Ok(hex(binary)),
            "{text} as decimal({precision},{scale})"
        );
        assert_eq!(
            decimal_binary_to_text(&hex(binary), precision, scale).as_deref(),
            Ok(text)
        );
    }
    assert_eq!(decimal_text_to_binary("+inf", 3, 2), Ok(hex("FFFFFFFE")));
    for bad in ["-nan", "infinity", "-infinity", "3.1415"] {
        assert!(decimal_text_to_binary(bad, 10, 3).is_err(), "{bad}");
    }
    assert!(decimal_text_to_binary("314.15", 5, 3).is_err());
    assert_eq!(
        decimal_binary_to_text(&decimal_text_to_binary("-3.14", 10, 3).unwrap(), 10, 3).as_deref(),
        Ok("-3.140")
    );
    // Every precision: the largest magnitude fits, one more does not.
    for precision in 1..=76u8 {
        let nines = "9".repeat(precision.into());
        for text in [nines.clone(), format!("-{nines}")] {
            let bin = decimal_text_to_binary(&text, precision, 0).unwrap();
            assert_eq!(decimal_binary_to_text(&bin, precision, 0), Ok(text.clone()));
        }
        let zillion = format!("1{}", "0".repeat(precision.into()));
        assert!(decimal_text_to_binary(&zillion, precision, 0).is_err());
        // The binary of 10^p - 1 plus one is rejected by the validity check.
        let mut bin = decimal_text_to_binary(&nines, precision, 0).unwrap();
        for byte in bin.iter_mut().rev() {
            *byte = byte.wrapping_add(1);
            if *byte != 0 {
                break;
            }
        }
        assert!(
            decimal_binary_to_text(&bin, precision, 0).is_err(),
            "{precision}"
        );
    }
}

#[test]
fn decimal_values_travel_as_their_binary_form() {
    let ty = Type::Decimal {
        precision: 3,
        scale: 2,
    };
    let value = Value::String(hex("8000013A"));
    assert_eq!(
        write(&value, &ty, StructForm::Named),
        Node::string(hex("8000013A"))
    );
    assert_eq!(
        value_from_node(&Node::string(hex("8000013A")), &ty),
        Ok(value)
    );
    assert_eq!(
        value_from_node(&Node::string(hex("800003E8")), &ty)
            .unwrap_err()
            .to_string(),
        "decimal value does not fit in decimal(3,2)"
    );
    assert!(value_from_node(&Node::string(hex("800001")), &ty).is_err());
}

#[test]
fn ranges_are_yts() {
    let cases: Vec<(PrimitiveType, Value, bool)> = vec![
        (PrimitiveType::Int8, Value::Int64(127), true),
        (PrimitiveType::Int8, Value::Int64(128), false),
        (PrimitiveType::Int8, Value::Int64(-128), true),
        (PrimitiveType::Int16, Value::Int64(-32769), false),
        (PrimitiveType::Uint32, Value::Uint64(u32::MAX.into()), true),
        (PrimitiveType::Uint32, Value::Uint64(1 << 32), false),
        (PrimitiveType::Date, Value::Uint64(49_672), true),
        (PrimitiveType::Date, Value::Uint64(49_673), false),
        (
            PrimitiveType::Datetime,
            Value::Uint64(49_673 * 86_400 - 1),
            true,
        ),
        (
            PrimitiveType::Datetime,
            Value::Uint64(49_673 * 86_400),
            false,
        ),
        (
            PrimitiveType::Timestamp,
            Value::Uint64(49_673 * 86_400 * 1_000_000),
            false,
        ),
        (
            PrimitiveType::Interval,
            Value::Int64(-(49_673 * 86_400 * 1_000_000 - 1)),
            true,
        ),
        (
            PrimitiveType::Interval,
            Value::Int64(49_673 * 86_400 * 1_000_000),
            false,
        ),
        (PrimitiveType::Date32, Value::Int64(-53_375_809), true),
        (PrimitiveType::Date32, Value::Int64(-53_375_810), false),
        (PrimitiveType::Date32, Value::Int64(53_375_807), true),
        (PrimitiveType::Date32, Value::Int64(53_375_808), false),
        (
            PrimitiveType::Datetime64,
            Value::Int64(53_375_808 * 86_400 - 1),
            true,
        ),
        (
            PrimitiveType::Datetime64,
            Value::Int64(53_375_808 * 86_400),
            false,
        ),
        (
            PrimitiveType::Timestamp64,
            Value::Int64(-53_375_809 * 86_400 * 1_000_000),
            true,
        ),
        (
            PrimitiveType::Timestamp64,
            Value::Int64(-53_375_809 * 86_400 * 1_000_000 - 1),
            false,
        ),
        (
            PrimitiveType::Interval64,
            Value::Int64(9_223_339_708_800_000_000),
            true,
        ),
        (
            PrimitiveType::Interval64,
            Value::Int64(9_223_339_708_800_000_001),
            false,
        ),
        (PrimitiveType::Float, Value::Double(3.0e38), true),
        (PrimitiveType::Float, Value::Double(1.0e39), false),
        (PrimitiveType::Float, Value::Double(f64::INFINITY), true),
        (PrimitiveType::Utf8, Value::String("héllo".into()), true),
        (PrimitiveType::Utf8, Value::String(vec![0xFF, 0xFE]), false),
        (PrimitiveType::Json, Value::String(vec![0xC0]), false),
        (PrimitiveType::Uuid, Value::String(vec![0; 16]), true),
        (PrimitiveType::Uuid, Value::String(vec![0; 15]), false),
        (PrimitiveType::Int64, Value::Uint64(1), false),
        (PrimitiveType::String, Value::Null, false),
        (PrimitiveType::Null, Value::Null, true),
        (PrimitiveType::Yson, Value::Any(Node::entity()), true),
    ];
    for (prim, value, ok) in cases {
        assert_eq!(
            check_value(&value, &p(prim)).is_ok(),
            ok,
            "{value:?} as {}",
            prim.name()
        );
    }
}

#[test]
fn errors_name_the_path_inside_the_value() {
    let ty = Type::list(Type::Struct(vec![
        Member::new("id", p(PrimitiveType::Uint32)),
        Member::new(
            "tags",
            Type::dict(
                p(PrimitiveType::Utf8),
                Type::optional(p(PrimitiveType::Int8)),
            ),
        ),
    ]));
    assert_eq!(
        read("[{id=1u; tags=[]}; {id=2u; tags=[[a; 1]; [b; 300]]}]", &ty),
        Err("[1].tags[1].value: 300 is out of range for int8 (-128..=127)".into())
    );
    assert_eq!(
        read("[{id=1u; tags=[[a]]}]", &ty),
        Err("[0].tags[0]: a dict entry is a list [key; value], found 1 items".into())
    );
    assert_eq!(
        read("[{id=-1; tags=[]}]", &ty),
        Err("[0].id: -1 is out of range for uint32".into())
    );
    assert_eq!(
        read("[{tags=[]}]", &ty),
        Err("[0].id: missing member of non-nullable type uint32".into())
    );
    assert_eq!(
        read("[{id=1u; tags=[]; extra=1}]", &ty),
        Err(
            "[0]: \"extra\" is not a member of struct<id=uint32;tags=dict<utf8;optional<int8>>>"
                .into()
        )
    );
    assert_eq!(
        read("[[1u; []; 3]]", &ty),
        Err(
            "[0]: struct<id=uint32;tags=dict<utf8;optional<int8>>> has 2 members, the list has 3"
                .into()
        )
    );
    assert_eq!(
        read("[{id=1u; id=2u; tags=[]}]", &ty),
        Err("[0].id: member given twice".into())
    );
    assert_eq!(
        read("[{id=1u; tags=[[\"\\xFF\"; #]]}]", &ty),
        Err("[0].tags[0].key: \"\\xFF\" is not valid UTF-8".into())
    );
    assert_eq!(
        read("{}", &ty),
        Err("expected a list for type list<struct<id=uint32;tags=dict<utf8;optional<int8>>>>, found map".into())
    );
    assert_eq!(
        read("<a=1>[]", &ty),
        Err("attributes are allowed only on values of type yson".into())
    );

    let oo = Type::optional(Type::optional(p(PrimitiveType::Int64)));
    assert_eq!(
        read("5", &oo),
        Err("expected a list for type optional<optional<int64>>, found int64".into())
    );
    assert_eq!(
        read("[1; 2]", &oo),
        Err(
            "a present value of optional<optional<int64>> is a list of one item, found 2 items"
                .into()
        )
    );
    let v = Type::VariantTuple(vec![p(PrimitiveType::Int8)]);
    assert_eq!(
        read("[1; 5]", &v),
        Err("variant index 1 is out of range for variant<int8> (1 alternatives)".into())
    );
    assert_eq!(
        read("[x; 5]", &v),
        Err("a variant alternative is an index or a member name, found string".into())
    );
    assert_eq!(
        read("%true", &p(PrimitiveType::Double)),
        Err("expected a double for type double, found boolean".into())
    );

    // Values checked against types.
    let e = check_value(
        &Value::List(vec![Value::Tuple(vec![Value::Uint64(1), Value::Int64(1)])]),
        &ty,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "[0].tags: a int64 value is not a value of type dict<utf8;optional<int8>>"
    );
    let e = check_value(&Value::Int64(5), &oo).unwrap_err();
    assert!(e.message.contains("must be Value::Some"), "{e}");
    let e = check_value(
        &Value::Some(Box::new(Value::Int64(5))),
        &Type::optional(p(PrimitiveType::Int64)),
    )
    .unwrap_err();
    assert!(e.message.contains("not Value::Some"), "{e}");
    let e = value_to_node(
        &Value::Variant(3, Box::new(Value::Null)),
        &v,
        StructForm::Named,
    )
    .unwrap_err();
    assert!(e.message.contains("out of range"), "{e}");
}

#[test]
fn yson_values_keep_every_node_kind() {
    let ty = Type::optional(p(PrimitiveType::Yson));
    for text in [
        "1",
        "2u",
        "1.5",
        "%false",
        "s",
        "[1; [2]]",
        "{a=<b=c>#}",
        "<x=1>#",
    ] {
        let node = yson(text);
        assert_eq!(
            value_from_node(&node, &ty),
            Ok(Value::Any(node.clone())),
            "{text}"
        );
        assert_eq!(
            value_to_node(&Value::Any(node.clone()), &ty, StructForm::Named),
            Ok(node)
        );
    }
    assert!(matches!(
        value_from_node(&Node::new(NodeValue::Double(f64::NAN)), &ty),
        Ok(Value::Any(_))
    ));
}

fn count_subnodes(node: &Node) -> usize {
    1 + match &node.value {
        NodeValue::List(items) => items.iter().map(count_subnodes).sum(),
        NodeValue::Map(entries) => entries.iter().map(|(_, v)| count_subnodes(v)).sum(),
        _ => 0,
    }
}

/// Replaces the `n`-th subnode in pre-order; returns whether it did.
fn replace_subnode(node: &mut Node, n: &mut usize, with: &Node) -> bool {
    if *n == 0 {
        *node = with.clone();
        return true;
    }
    *n -= 1;
    match &mut node.value {
        NodeValue::List(items) => items.iter_mut().any(|item| replace_subnode(item, n, with)),
        NodeValue::Map(entries) => entries.iter_mut().any(|(_, v)| replace_subnode(v, n, with)),
        _ => false,
    }
}
