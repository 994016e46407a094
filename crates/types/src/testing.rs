//! Proptest strategies for the tests of every layer (feature `testing`).
//!
//! Everything generated is valid: [`arb_type`] gives types that pass [`Type::validate`],
//! [`arb_value`] values that pass [`crate::check_value`] for their type, [`arb_schema`]
//! schemas that pass [`TableSchema::validate`]. Round-trip tests can therefore compare with
//! `==`, which is why no strategy produces a NaN (NaN != NaN): doubles cover zeros, normal,
//! subnormal and infinite values; decimals cover the `nan`/`inf` specials, which are plain
//! bytes.
//!
//! Use from another crate's tests:
//!
//! ```toml
//! [dev-dependencies]
//! shapeshift-types = { workspace = true, features = ["testing"] }
//! ```

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::Union;

use crate::typed_value::{signed_range, unsigned_max};
use crate::{
    decimal_text_to_binary, ColumnSchema, Member, Node, NodeValue, PrimitiveType, SortOrder,
    TableSchema, Type, Value,
};

/// Primitive types that may appear anywhere (`yson` needs an `optional` around it).
fn plain_primitives() -> Vec<PrimitiveType> {
    PrimitiveType::ALL
        .iter()
        .copied()
        .filter(|p| *p != PrimitiveType::Yson)
        .collect()
}

fn arb_decimal_type() -> impl Strategy<Value = Type> {
    (1u8..=76)
        .prop_flat_map(|precision| (Just(precision), 0..=precision))
        .prop_map(|(precision, scale)| Type::Decimal { precision, scale })
}

/// Leaves: every primitive (yson as `optional<yson>`) and decimals.
fn arb_leaf_type() -> BoxedStrategy<Type> {
    prop_oneof![
        8 => proptest::sample::select(plain_primitives()).prop_map(Type::Primitive),
        1 => Just(Type::optional(Type::Primitive(PrimitiveType::Yson))),
        2 => arb_decimal_type(),
    ]
    .boxed()
}

/// Types allowed in dict keys: no `yson` or `json` anywhere inside.
fn arb_key_type() -> BoxedStrategy<Type> {
    let leaf = prop_oneof![
        4 => proptest::sample::select(
            plain_primitives()
                .into_iter()
                .filter(|p| *p != PrimitiveType::Json)
                .collect::<Vec<_>>()
        )
        .prop_map(Type::Primitive),
        1 => arb_decimal_type(),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::optional),
            vec(inner.clone(), 1..3).prop_map(Type::Tuple),
        ]
    })
    .boxed()
}

/// A member name: usually an identifier, sometimes arbitrary non-empty UTF-8.
fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_][a-z0-9_]{0,7}",
        1 => "\\PC{1,6}",
    ]
}

/// Makes member names unique by suffixing the index to repeats.
fn unique_members(pairs: Vec<(String, Type)>) -> Vec<Member> {
    let mut members: Vec<Member> = Vec::with_capacity(pairs.len());
    for (i, (name, ty)) in pairs.into_iter().enumerate() {
        let name = if members.iter().any(|m| m.name == name) {
            format!("{name}_{i}")
        } else {
            name
        };
        members.push(Member::new(name, ty));
    }
    members
}

/// Any valid type_v3 type with up to `depth` levels of composite nesting (plus the leaf).
/// Covers every primitive, decimals of every width, and every composite: optional (also of
/// nullable items), list, struct (also empty), tuple, both variants (never empty: they
/// would have no values), dict, tagged.
pub fn arb_type(depth: u32) -> BoxedStrategy<Type> {
    arb_leaf_type()
        .prop_recursive(depth, 48, 4, |inner| {
            prop_oneof![
                2 => inner.clone().prop_map(Type::optional),
                2 => inner.clone().prop_map(Type::list),
                2 => vec((arb_name(), inner.clone()), 0..4)
                    .prop_map(|pairs| Type::Struct(unique_members(pairs))),
                1 => vec(inner.clone(), 0..4).prop_map(Type::Tuple),
                1 => vec((arb_name(), inner.clone()), 1..4)
                    .prop_map(|pairs| Type::VariantStruct(unique_members(pairs))),
                1 => vec(inner.clone(), 1..4).prop_map(Type::VariantTuple),
                1 => (arb_key_type(), inner.clone()).prop_map(|(k, v)| Type::dict(k, v)),
                1 => ("[a-z][a-z_./]{0,10}", inner).prop_map(|(tag, item)| Type::tagged(tag, item)),
            ]
        })
        .boxed()
}

fn arb_double() -> BoxedStrategy<f64> {
    use proptest::num::f64 as f;
    (f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO | f::INFINITE).boxed()
}

fn arb_decimal_value(precision: u8, scale: u8) -> BoxedStrategy<Value> {
    let int_digits = usize::from(precision - scale);
    let scale_digits = usize::from(scale);
    let finite = (
        any::<bool>(),
        proptest::string::string_regex(&format!("[0-9]{{0,{int_digits}}}")).expect("valid regex"),
        proptest::string::string_regex(&format!("[0-9]{{0,{scale_digits}}}")).expect("valid regex"),
    )
        .prop_map(|(negative, int, frac)| {
            let int = if int.is_empty() { "0".to_owned() } else { int };
            format!("{}{int}.{frac}", if negative { "-" } else { "" })
        });
    let text = prop_oneof![
        8 => finite,
        1 => Just("nan".to_owned()),
        1 => Just("inf".to_owned()),
        1 => Just("-inf".to_owned()),
    ];
    text.prop_map(move |t| {
        Value::String(
            decimal_text_to_binary(&t, precision, scale)
                .expect("generated decimal text fits its type"),
        )
    })
    .boxed()
}

fn arb_primitive_value(p: PrimitiveType) -> BoxedStrategy<Value> {
    use PrimitiveType as P;
    if let Some((lo, hi)) = signed_range(p) {
        return prop_oneof![1 => Just(lo), 1 => Just(hi), 1 => Just(0i64), 6 => lo..=hi]
            .prop_map(Value::Int64)
            .boxed();
    }
    if let Some(hi) = unsigned_max(p) {
        return prop_oneof![1 => Just(0u64), 1 => Just(hi), 6 => 0..=hi]
            .prop_map(Value::Uint64)
            .boxed();
    }
    match p {
        P::Float => {
            use proptest::num::f32 as f;
            (f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO | f::INFINITE)
                .prop_map(|v| Value::Double(f64::from(v)))
                .boxed()
        }
        P::Double => arb_double().prop_map(Value::Double).boxed(),
        P::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        P::String => vec(any::<u8>(), 0..24).prop_map(Value::String).boxed(),
        P::Utf8 => "\\PC{0,12}"
            .prop_map(|s| Value::String(s.into_bytes()))
            .boxed(),
        P::Json => prop_oneof![
            Just("null".to_owned()),
            any::<i32>().prop_map(|v| v.to_string()),
            "[a-z ]{0,8}".prop_map(|s| format!("{{\"k\":\"{s}\"}}")),
            "[a-z]{0,8}".prop_map(|s| format!("[\"{s}\",1,true]")),
        ]
        .prop_map(|s| Value::String(s.into_bytes()))
        .boxed(),
        P::Uuid => vec(any::<u8>(), 16).prop_map(Value::String).boxed(),
        // An entity without attributes would read back as the null of optional<yson>.
        P::Yson => arb_node(2)
            .prop_map(|n| {
                if n.attributes.is_empty() && matches!(n.value, NodeValue::Entity) {
                    Value::Any(Node::string("entity"))
                } else {
                    Value::Any(n)
                }
            })
            .boxed(),
        P::Null | P::Void => Just(Value::Null).boxed(),
        // Every integer primitive returned above.
        _ => Just(Value::Null).boxed(),
    }
}

/// Values of `ty`, valid for it (`check_value` passes). Lists and dicts have up to 3 items.
///
/// # Panics
///
/// For a variant without alternatives, which has no values (`arb_type` never makes one).
pub fn arb_value(ty: &Type) -> BoxedStrategy<Value> {
    match ty {
        Type::Primitive(p) => arb_primitive_value(*p),
        Type::Decimal { precision, scale } => arb_decimal_value(*precision, *scale),
        Type::Tagged { item, .. } => arb_value(item),
        Type::Optional(item) => {
            let nullable = item.is_nullable();
            prop_oneof![
                1 => Just(Value::Null),
                3 => arb_value(item).prop_map(move |v| {
                    if nullable {
                        Value::Some(Box::new(v))
                    } else {
                        v
                    }
                }),
            ]
            .boxed()
        }
        Type::List(item) => vec(arb_value(item), 0..4).prop_map(Value::List).boxed(),
        Type::Struct(members) => members
            .iter()
            .map(|m| arb_value(&m.ty))
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
        Type::Tuple(elements) => elements
            .iter()
            .map(arb_value)
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
        Type::VariantStruct(members) => {
            variant_values(members.iter().map(|m| &m.ty).collect::<Vec<_>>())
        }
        Type::VariantTuple(elements) => variant_values(elements.iter().collect()),
        Type::Dict { key, value } => vec((arb_value(key), arb_value(value)), 0..4)
            .prop_map(Value::Dict)
            .boxed(),
    }
}

fn variant_values(alternatives: Vec<&Type>) -> BoxedStrategy<Value> {
    assert!(
        !alternatives.is_empty(),
        "a variant without alternatives has no values"
    );
    Union::new(alternatives.into_iter().enumerate().map(|(i, t)| {
        arb_value(t)
            .prop_map(move |v| Value::Variant(i as u32, Box::new(v)))
            .boxed()
    }))
    .boxed()
}

/// A pair of a valid type (nesting up to `depth`) and a value of it.
pub fn arb_typed_value(depth: u32) -> BoxedStrategy<(Type, Value)> {
    arb_type(depth)
        .prop_flat_map(|ty| {
            let values = arb_value(&ty);
            (Just(ty), values)
        })
        .boxed()
}

/// Valid table schemas: 1..6 uniquely named columns of any type (nesting up to 2), a
/// prefix of them sorted, `strict` either way, `unique_keys` only with key columns.
pub fn arb_schema() -> BoxedStrategy<TableSchema> {
    (
        vec((arb_name(), arb_type(2)), 1..6),
        any::<prop::sample::Index>(),
        vec(any::<bool>(), 6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(pairs, key_index, descending, strict, unique_keys)| {
            let members = unique_members(pairs);
            let key_count = key_index.index(members.len() + 1);
            let columns: Vec<ColumnSchema> = members
                .into_iter()
                .enumerate()
                .map(|(i, m)| {
                    let column = ColumnSchema::new(m.name, m.ty);
                    if i < key_count {
                        column.sorted(if descending[i] {
                            SortOrder::Descending
                        } else {
                            SortOrder::Ascending
                        })
                    } else {
                        column
                    }
                })
                .collect();
            TableSchema {
                columns,
                strict,
                unique_keys: unique_keys && key_count > 0,
            }
        })
        .boxed()
}

fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => "[a-z_][a-z0-9_]{0,6}".prop_map(String::into_bytes),
        1 => vec(any::<u8>(), 0..12),
    ]
}

/// Arbitrary YSON nodes up to `depth` levels of lists and maps, with attributes on some
/// of them; every scalar kind, map keys of arbitrary bytes, no NaN.
pub fn arb_node(depth: u32) -> BoxedStrategy<Node> {
    let scalar = prop_oneof![
        Just(NodeValue::Entity),
        any::<bool>().prop_map(NodeValue::Bool),
        any::<i64>().prop_map(NodeValue::Int64),
        any::<u64>().prop_map(NodeValue::Uint64),
        arb_double().prop_map(NodeValue::Double),
        arb_bytes().prop_map(NodeValue::String),
    ]
    .prop_map(Node::new);
    scalar
        .prop_recursive(depth, 64, 4, |inner| {
            let value = prop_oneof![
                vec(inner.clone(), 0..4).prop_map(NodeValue::List),
                vec((arb_bytes(), inner.clone()), 0..4).prop_map(NodeValue::Map),
            ];
            let attributes = prop_oneof![
                3 => Just(Vec::new()),
                1 => vec((arb_bytes(), inner), 1..3),
            ];
            (attributes, value).prop_map(|(attributes, value)| Node { attributes, value })
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::TestRunner;

    /// The generators reach what they promise: deep nesting and every composite kind.
    #[test]
    fn arb_type_reaches_depth_three_and_every_kind() {
        fn depth(t: &Type) -> usize {
            match t {
                Type::Primitive(_) | Type::Decimal { .. } => 0,
                Type::Optional(i) | Type::List(i) | Type::Tagged { item: i, .. } => 1 + depth(i),
                Type::Struct(ms) | Type::VariantStruct(ms) => {
                    1 + ms.iter().map(|m| depth(&m.ty)).max().unwrap_or(0)
                }
                Type::Tuple(es) | Type::VariantTuple(es) => {
                    1 + es.iter().map(depth).max().unwrap_or(0)
                }
                Type::Dict { key, value } => 1 + depth(key).max(depth(value)),
            }
        }
        let mut runner = TestRunner::deterministic();
        let strategy = arb_type(3);
        let mut max_depth = 0;
        let mut kinds = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let t = strategy.new_tree(&mut runner).unwrap().current();
            t.validate().unwrap();
            max_depth = max_depth.max(depth(&t));
            kinds.insert(std::mem::discriminant(&t).hash_key());
        }
        assert!(max_depth >= 3, "max depth {max_depth}");
        assert_eq!(kinds.len(), 10, "every Type variant at the root");
    }

    trait HashKey {
        fn hash_key(&self) -> u64;
    }
    impl<T> HashKey for std::mem::Discriminant<T> {
        fn hash_key(&self) -> u64 {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.hash(&mut h);
            h.finish()
        }
    }
}
