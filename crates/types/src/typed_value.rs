//! Typed values as YSON nodes: YT's representation of a value of a given type_v3 type, and
//! the checks a [`Value`] must pass to be a value of a type.
//!
//! | type                              | node                                               |
//! |-----------------------------------|----------------------------------------------------|
//! | int8..int64, interval, *64 dates  | int64 (a non-negative uint64 is accepted on input) |
//! | uint8..uint64, date, datetime, timestamp | uint64 (a non-negative int64 accepted)      |
//! | float, double                     | double                                             |
//! | bool                              | boolean                                            |
//! | string, utf8, json                | string                                             |
//! | uuid                              | string of 16 bytes                                 |
//! | decimal(p, s)                     | string: the binary form (see [`crate::decimal_text_to_binary`]) |
//! | null, void                        | `#`                                                |
//! | yson                              | the node itself                                    |
//! | `optional<T>`, T not nullable     | `#` or the T node                                  |
//! | `optional<T>`, T nullable         | `#` or `[T node]`                                  |
//! | `list<T>`                         | list                                               |
//! | struct                            | map `{name=v;...}` (named) or list `[v;...]` (positional) |
//! | tuple                             | list                                               |
//! | variant over elements             | `[index; v]`                                       |
//! | variant over members              | `[name; v]` (named) or `[index; v]` (positional)   |
//! | `dict<K, V>`                      | `[[k; v]; ...]`                                    |
//! | `tagged<_, T>`                    | as T                                               |
//!
//! Reading is as lenient as YT: a struct may come as a map or a list; members of a nullable
//! type may be left out (they read as null); variant alternatives may be named by index or
//! by name. Writing is canonical, in the [`StructForm`] asked for.
//!
//! Ranges checked (YT's): narrow integers fit their width; `date` < 49673 days (2106-01-01),
//! `datetime` and `timestamp` below the same instant; `interval` within ± that span;
//! `date32`, `datetime64`, `timestamp64` within YT's 64-bit date range
//! (-144169-01-01 .. 148107-12-31) and `interval64` within ± that span; finite `float`
//! values fit an f32; `utf8` and `json` are UTF-8 (JSON syntax itself is not checked);
//! `uuid` is 16 bytes; decimals are valid for their precision.
//!
//! In an `optional<yson>`, an entity `#` without attributes *is* the null: a
//! `Value::Any(#)` in such a column is written as `#` and reads back as `Value::Null`.

use crate::decimal::check_decimal_binary;
use crate::error::{show_bytes, Path, TypeError};
use crate::{Member, Node, NodeValue, PrimitiveType, Type, Value};

/// How struct values, and the alternatives of variants over named members, are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum StructForm {
    /// Structs as maps `{name=value}`, named-variant alternatives by name: YT's default.
    #[default]
    Named,
    /// Structs as lists in member order, named-variant alternatives by index: more compact,
    /// what YT writes with `complex_type_mode=positional`.
    Positional,
}

// YT's bounds of the date and time types.
const DATE_UPPER: u64 = 49_673;
const DATETIME_UPPER: u64 = DATE_UPPER * 86_400;
const TIMESTAMP_UPPER: u64 = DATETIME_UPPER * 1_000_000;
const DATE32_UPPER: i64 = 53_375_808;
const DATE32_LOWER: i64 = -DATE32_UPPER - 1;
const DATETIME64_UPPER: i64 = DATE32_UPPER * 86_400;
const DATETIME64_LOWER: i64 = DATE32_LOWER * 86_400;
const TIMESTAMP64_UPPER: i64 = DATETIME64_UPPER * 1_000_000;
const TIMESTAMP64_LOWER: i64 = DATETIME64_LOWER * 1_000_000;
const INTERVAL64_UPPER: i64 = TIMESTAMP64_UPPER - TIMESTAMP64_LOWER + 1;

/// The inclusive range of a signed primitive (one held as `Value::Int64`); `None` for the
/// other primitives.
#[inline]
pub fn signed_range(p: PrimitiveType) -> Option<(i64, i64)> {
    use PrimitiveType::*;
    Some(match p {
        Int8 => (i8::MIN.into(), i8::MAX.into()),
        Int16 => (i16::MIN.into(), i16::MAX.into()),
        Int32 => (i32::MIN.into(), i32::MAX.into()),
        Int64 => (i64::MIN, i64::MAX),
        Interval => {
            let max = TIMESTAMP_UPPER as i64 - 1;
            (-max, max)
        }
        Date32 => (DATE32_LOWER, DATE32_UPPER - 1),
        Datetime64 => (DATETIME64_LOWER, DATETIME64_UPPER - 1),
        Timestamp64 => (TIMESTAMP64_LOWER, TIMESTAMP64_UPPER - 1),
        Interval64 => (-INTERVAL64_UPPER + 1, INTERVAL64_UPPER - 1),
        _ => return None,
    })
}

/// The inclusive upper bound of an unsigned primitive (one held as `Value::Uint64`); `None`
/// for the other primitives.
#[inline]
pub fn unsigned_max(p: PrimitiveType) -> Option<u64> {
    use PrimitiveType::*;
    Some(match p {
        Uint8 => u8::MAX.into(),
        Uint16 => u16::MAX.into(),
        Uint32 => u32::MAX.into(),
        Uint64 => u64::MAX,
        Date => DATE_UPPER - 1,
        Datetime => DATETIME_UPPER - 1,
        Timestamp => TIMESTAMP_UPPER - 1,
        _ => return None,
    })
}

/// Writes `value`, a value of `ty`, as a YSON node.
///
/// # Errors
///
/// A [`TypeError`] naming the path inside the value (`[3].price`) when `value` is not a
/// value of `ty`: the same errors [`check_value`] reports.
pub fn value_to_node(value: &Value, ty: &Type, form: StructForm) -> Result<Node, TypeError> {
    to_node(value, ty, form, &Path::Root)
}

/// Reads a value of `ty` from its YSON node.
///
/// # Errors
///
/// A [`TypeError`] naming the path inside the value when the node does not represent a
/// value of `ty` (wrong node kind, out-of-range integer, unknown struct member, missing
/// non-nullable member, bad variant index, invalid UTF-8 in `utf8`, ...).
pub fn value_from_node(node: &Node, ty: &Type) -> Result<Value, TypeError> {
    from_node(node, ty, &Path::Root)
}

/// Checks that `value` is a value of `ty`: its shape follows the type and every primitive
/// is in range (see the module documentation for the ranges).
///
/// # Errors
///
/// A [`TypeError`] naming the path inside the value of the first problem found.
pub fn check_value(value: &Value, ty: &Type) -> Result<(), TypeError> {
    check(value, ty, &Path::Root)
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Int64(_) => "int64",
        Value::Uint64(_) => "uint64",
        Value::Double(_) => "double",
        Value::String(_) => "string",
        Value::Some(_) => "some",
        Value::List(_) => "list",
        Value::Tuple(_) => "tuple",
        Value::Variant(..) => "variant",
        Value::Dict(_) => "dict",
        Value::Any(_) => "any",
    }
}

fn mismatch(value: &Value, ty: &Type, path: &Path<'_>) -> TypeError {
    path.error(format!(
        "a {} value is not a value of type {ty}",
        value_kind(value)
    ))
}

fn check_primitive(value: &Value, p: PrimitiveType, path: &Path<'_>) -> Result<(), TypeError> {
    use PrimitiveType as P;
    // The type is named only in errors: built there, not on every value checked.
    let ty = || Type::Primitive(p);
    match (p, value) {
        (_, Value::Int64(v)) if signed_range(p).is_some() => {
            let (lo, hi) = signed_range(p).unwrap_or((i64::MIN, i64::MAX));
            if *v < lo || *v > hi {
                return Err(path.error(format!("{v} is out of range for {} ({lo}..={hi})", ty())));
            }
            Ok(())
        }
        (_, Value::Uint64(v)) if unsigned_max(p).is_some() => {
            let hi = unsigned_max(p).unwrap_or(u64::MAX);
            if *v > hi {
                return Err(path.error(format!("{v} is out of range for {} (0..={hi})", ty())));
            }
            Ok(())
        }
        (P::Float, Value::Double(v)) => {
            if v.is_finite() && v.abs() > f64::from(f32::MAX) {
                return Err(path.error(format!("{v} is out of range for float")));
            }
            Ok(())
        }
        (P::Double, Value::Double(_)) | (P::Bool, Value::Bool(_)) => Ok(()),
        (P::String, Value::String(_)) => Ok(()),
        (P::Utf8 | P::Json, Value::String(bytes)) => {
            if std::str::from_utf8(bytes).is_err() {
                return Err(path.error(format!("{} is not valid UTF-8", show_bytes(bytes))));
            }
            Ok(())
        }
        (P::Uuid, Value::String(bytes)) => {
            if bytes.len() != 16 {
                return Err(path.error(format!("a uuid is 16 bytes, found {}", bytes.len())));
            }
            Ok(())
        }
        (P::Yson, Value::Any(_)) | (P::Null | P::Void, Value::Null) => Ok(()),
        _ => Err(mismatch(value, &ty(), path)),
    }
}

fn check(value: &Value, ty: &Type, path: &Path<'_>) -> Result<(), TypeError> {
    match ty {
        Type::Primitive(p) => check_primitive(value, *p, path),
        Type::Decimal { precision, scale } => match value {
            Value::String(bytes) => {
                check_decimal_binary(bytes, *precision, *scale).map_err(|e| path.error(e.message))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Tagged { item, .. } => check(value, item, path),
        Type::Optional(item) => match value {
            Value::Null => Ok(()),
            Value::Some(inner) if item.is_nullable() => check(inner, item, path),
            _ if item.is_nullable() => Err(path.error(format!(
                "a present value of {ty} must be Value::Some (its item is nullable), found {}",
                value_kind(value)
            ))),
            Value::Some(_) => Err(path.error(format!(
                "a present value of {ty} is the item value itself, not Value::Some"
            ))),
            _ => check(value, item, path),
        },
        Type::List(item) => match value {
            Value::List(items) => {
                for (i, v) in items.iter().enumerate() {
                    check(v, item, &path.index(i))?;
                }
                Ok(())
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Struct(members) => match value {
            Value::Tuple(values) => {
                expect_len(values.len(), members.len(), ty, path)?;
                for (m, v) in members.iter().zip(values) {
                    check(v, &m.ty, &path.key(&m.name))?;
                }
                Ok(())
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Tuple(elements) => match value {
            Value::Tuple(values) => {
                expect_len(values.len(), elements.len(), ty, path)?;
                for (i, (t, v)) in elements.iter().zip(values).enumerate() {
                    check(v, t, &path.index(i))?;
                }
                Ok(())
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::VariantStruct(members) => match value {
            Value::Variant(index, inner) => {
                let m =
                    variant_alternative(*index, members.len(), ty, path).map(|i| &members[i])?;
                check(inner, &m.ty, &path.key(&m.name))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::VariantTuple(elements) => match value {
            Value::Variant(index, inner) => {
                let i = variant_alternative(*index, elements.len(), ty, path)?;
                check(inner, &elements[i], &path.index(i))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Dict {
            key,
            value: value_ty,
        } => match value {
            Value::Dict(pairs) => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    let entry = path.index(i);
                    check(k, key, &entry.key("key"))?;
                    check(v, value_ty, &entry.key("value"))?;
                }
                Ok(())
            }
            _ => Err(mismatch(value, ty, path)),
        },
    }
}

fn expect_len(found: usize, expected: usize, ty: &Type, path: &Path<'_>) -> Result<(), TypeError> {
    if found != expected {
        return Err(path.error(format!(
            "{ty} has {expected} members, the value has {found}"
        )));
    }
    Ok(())
}

fn variant_alternative(
    index: u32,
    len: usize,
    ty: &Type,
    path: &Path<'_>,
) -> Result<usize, TypeError> {
    let i = index as usize;
    if i >= len {
        return Err(path.error(format!(
            "variant index {index} is out of range for {ty} ({len} alternatives)"
        )));
    }
    Ok(i)
}

fn primitive_to_node(value: &Value, p: PrimitiveType, path: &Path<'_>) -> Result<Node, TypeError> {
    check_primitive(value, p, path)?;
    Ok(match value {
        Value::Null => Node::entity(),
        Value::Bool(b) => Node::new(NodeValue::Bool(*b)),
        Value::Int64(v) => Node::int64(*v),
        Value::Uint64(v) => Node::uint64(*v),
        Value::Double(v) => Node::new(NodeValue::Double(*v)),
        Value::String(bytes) => Node::string(bytes.clone()),
        Value::Any(node) => node.clone(),
        // check_primitive admits no other value kind for a primitive.
        other => return Err(mismatch(other, &Type::Primitive(p), path)),
    })
}

fn to_node(value: &Value, ty: &Type, form: StructForm, path: &Path<'_>) -> Result<Node, TypeError> {
    match ty {
        Type::Primitive(p) => primitive_to_node(value, *p, path),
        Type::Decimal { .. } => {
            check(value, ty, path)?;
            match value {
                Value::String(bytes) => Ok(Node::string(bytes.clone())),
                other => Err(mismatch(other, ty, path)),
            }
        }
        Type::Tagged { item, .. } => to_node(value, item, form, path),
        Type::Optional(item) => match value {
            Value::Null => Ok(Node::entity()),
            Value::Some(inner) if item.is_nullable() => {
                Ok(Node::list(vec![to_node(inner, item, form, path)?]))
            }
            _ if item.is_nullable() => Err(path.error(format!(
                "a present value of {ty} must be Value::Some (its item is nullable), found {}",
                value_kind(value)
            ))),
            Value::Some(_) => Err(path.error(format!(
                "a present value of {ty} is the item value itself, not Value::Some"
            ))),
            _ => to_node(value, item, form, path),
        },
        Type::List(item) => match value {
            Value::List(items) => Ok(Node::list(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| to_node(v, item, form, &path.index(i)))
                    .collect::<Result<_, _>>()?,
            )),
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Struct(members) => match value {
            Value::Tuple(values) => {
                expect_len(values.len(), members.len(), ty, path)?;
                match form {
                    StructForm::Named => {
                        let mut entries = Vec::with_capacity(members.len());
                        for (m, v) in members.iter().zip(values) {
                            let node = to_node(v, &m.ty, form, &path.key(&m.name))?;
                            entries.push((m.name.as_bytes().to_vec(), node));
                        }
                        Ok(Node::new(NodeValue::Map(entries)))
                    }
                    StructForm::Positional => Ok(Node::list(
                        members
                            .iter()
                            .zip(values)
                            .map(|(m, v)| to_node(v, &m.ty, form, &path.key(&m.name)))
                            .collect::<Result<_, _>>()?,
                    )),
                }
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Tuple(elements) => match value {
            Value::Tuple(values) => {
                expect_len(values.len(), elements.len(), ty, path)?;
                Ok(Node::list(
                    elements
                        .iter()
                        .zip(values)
                        .enumerate()
                        .map(|(i, (t, v))| to_node(v, t, form, &path.index(i)))
                        .collect::<Result<_, _>>()?,
                ))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::VariantStruct(members) => match value {
            Value::Variant(index, inner) => {
                let i = variant_alternative(*index, members.len(), ty, path)?;
                let m = &members[i];
                let tag = match form {
                    StructForm::Named => Node::string(m.name.as_str()),
                    StructForm::Positional => Node::int64(i64::from(*index)),
                };
                Ok(Node::list(vec![
                    tag,
                    to_node(inner, &m.ty, form, &path.key(&m.name))?,
                ]))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::VariantTuple(elements) => match value {
            Value::Variant(index, inner) => {
                let i = variant_alternative(*index, elements.len(), ty, path)?;
                Ok(Node::list(vec![
                    Node::int64(i64::from(*index)),
                    to_node(inner, &elements[i], form, &path.index(i))?,
                ]))
            }
            _ => Err(mismatch(value, ty, path)),
        },
        Type::Dict {
            key,
            value: value_ty,
        } => match value {
            Value::Dict(pairs) => Ok(Node::list(
                pairs
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        let entry = path.index(i);
                        Ok(Node::list(vec![
                            to_node(k, key, form, &entry.key("key"))?,
                            to_node(v, value_ty, form, &entry.key("value"))?,
                        ]))
                    })
                    .collect::<Result<_, TypeError>>()?,
            )),
            _ => Err(mismatch(value, ty, path)),
        },
    }
}

fn node_mismatch(node: &Node, expected: &str, ty: &Type, path: &Path<'_>) -> TypeError {
    path.error(format!(
        "expected {expected} for type {ty}, found {}",
        node.kind()
    ))
}

fn no_attributes(node: &Node, path: &Path<'_>) -> Result<(), TypeError> {
    if node.attributes.is_empty() {
        Ok(())
    } else {
        Err(path.error("attributes are allowed only on values of type yson"))
    }
}

fn primitive_from_node(node: &Node, p: PrimitiveType, path: &Path<'_>) -> Result<Value, TypeError> {
    use PrimitiveType as P;
    let ty = Type::Primitive(p);
    if p == P::Yson {
        return Ok(Value::Any(node.clone()));
    }
    no_attributes(node, path)?;
    let value = if signed_range(p).is_some() {
        match node.value {
            NodeValue::Int64(v) => Value::Int64(v),
            NodeValue::Uint64(v) => Value::Int64(
                i64::try_from(v)
                    .map_err(|_| path.error(format!("{v}u is out of range for {ty}")))?,
            ),
            _ => return Err(node_mismatch(node, "an integer", &ty, path)),
        }
    } else if unsigned_max(p).is_some() {
        match node.value {
            NodeValue::Uint64(v) => Value::Uint64(v),
            NodeValue::Int64(v) => Value::Uint64(
                u64::try_from(v)
                    .map_err(|_| path.error(format!("{v} is out of range for {ty}")))?,
            ),
            _ => return Err(node_mismatch(node, "an integer", &ty, path)),
        }
    } else {
        match (p, &node.value) {
            (P::Float | P::Double, NodeValue::Double(v)) => Value::Double(*v),
            (P::Bool, NodeValue::Bool(b)) => Value::Bool(*b),
            (P::String | P::Utf8 | P::Json | P::Uuid, NodeValue::String(s)) => {
                Value::String(s.clone())
            }
            (P::Null | P::Void, NodeValue::Entity) => Value::Null,
            (P::Float | P::Double, _) => return Err(node_mismatch(node, "a double", &ty, path)),
            (P::Bool, _) => return Err(node_mismatch(node, "a boolean", &ty, path)),
            (P::Null | P::Void, _) => return Err(node_mismatch(node, "#", &ty, path)),
            _ => return Err(node_mismatch(node, "a string", &ty, path)),
        }
    };
    check_primitive(&value, p, path)?;
    Ok(value)
}

fn list_of<'n>(node: &'n Node, ty: &Type, path: &Path<'_>) -> Result<&'n [Node], TypeError> {
    no_attributes(node, path)?;
    match &node.value {
        NodeValue::List(items) => Ok(items),
        _ => Err(node_mismatch(node, "a list", ty, path)),
    }
}

fn from_node(node: &Node, ty: &Type, path: &Path<'_>) -> Result<Value, TypeError> {
    match ty {
        Type::Primitive(p) => primitive_from_node(node, *p, path),
        Type::Decimal { precision, scale } => {
            no_attributes(node, path)?;
            match &node.value {
                NodeValue::String(bytes) => {
                    check_decimal_binary(bytes, *precision, *scale)
                        .map_err(|e| path.error(e.message))?;
                    Ok(Value::String(bytes.clone()))
                }
                _ => Err(node_mismatch(node, "a string (binary decimal)", ty, path)),
            }
        }
        Type::Tagged { item, .. } => from_node(node, item, path),
        Type::Optional(item) => {
            if node.attributes.is_empty() && matches!(node.value, NodeValue::Entity) {
                return Ok(Value::Null);
            }
            if item.is_nullable() {
                let items = list_of(node, ty, path)?;
                if items.len() != 1 {
                    return Err(path.error(format!(
                        "a present value of {ty} is a list of one item, found {} items",
                        items.len()
                    )));
                }
                Ok(Value::Some(Box::new(from_node(&items[0], item, path)?)))
            } else {
                from_node(node, item, path)
            }
        }
        Type::List(item) => {
            let items = list_of(node, ty, path)?;
            Ok(Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| from_node(n, item, &path.index(i)))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Type::Struct(members) => struct_from_node(node, members, ty, path),
        Type::Tuple(elements) => {
            let items = list_of(node, ty, path)?;
            if items.len() != elements.len() {
                return Err(path.error(format!(
                    "{ty} has {} elements, the list has {}",
                    elements.len(),
                    items.len()
                )));
            }
            Ok(Value::Tuple(
                elements
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, n))| from_node(n, t, &path.index(i)))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Type::VariantStruct(members) => {
            let (index_node, inner) = variant_pair(node, ty, path)?;
            let index = match &index_node.value {
                NodeValue::String(name) => members
                    .iter()
                    .position(|m| m.name.as_bytes() == name.as_slice())
                    .ok_or_else(|| {
                        path.error(format!(
                            "{} is not an alternative of {ty}",
                            show_bytes(name)
                        ))
                    })?,
                _ => variant_index(index_node, members.len(), ty, path)?,
            };
            let m = &members[index];
            Ok(Value::Variant(
                index as u32,
                Box::new(from_node(inner, &m.ty, &path.key(&m.name))?),
            ))
        }
        Type::VariantTuple(elements) => {
            let (index_node, inner) = variant_pair(node, ty, path)?;
            let index = variant_index(index_node, elements.len(), ty, path)?;
            Ok(Value::Variant(
                index as u32,
                Box::new(from_node(inner, &elements[index], &path.index(index))?),
            ))
        }
        Type::Dict { key, value } => {
            let items = list_of(node, ty, path)?;
            let mut pairs = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let entry = path.index(i);
                let pair = list_of(item, ty, &entry)?;
                if pair.len() != 2 {
                    return Err(entry.error(format!(
                        "a dict entry is a list [key; value], found {} items",
                        pair.len()
                    )));
                }
                pairs.push((
                    from_node(&pair[0], key, &entry.key("key"))?,
                    from_node(&pair[1], value, &entry.key("value"))?,
                ));
            }
            Ok(Value::Dict(pairs))
        }
    }
}

fn variant_pair<'n>(
    node: &'n Node,
    ty: &Type,
    path: &Path<'_>,
) -> Result<(&'n Node, &'n Node), TypeError> {
    let items = list_of(node, ty, path)?;
    match items {
        [index, inner] => {
            no_attributes(index, path)?;
            Ok((index, inner))
        }
        _ => Err(path.error(format!(
            "a variant value is a list [alternative; value], found {} items",
            items.len()
        ))),
    }
}

fn variant_index(node: &Node, len: usize, ty: &Type, path: &Path<'_>) -> Result<usize, TypeError> {
    let index: i128 = match node.value {
        NodeValue::Int64(v) => v.into(),
        NodeValue::Uint64(v) => v.into(),
        _ => {
            return Err(path.error(format!(
                "a variant alternative is an index or a member name, found {}",
                node.kind()
            )))
        }
    };
    if index < 0 || index >= len as i128 {
        return Err(path.error(format!(
            "variant index {index} is out of range for {ty} ({len} alternatives)"
        )));
    }
    Ok(index as usize)
}

fn struct_from_node(
    node: &Node,
    members: &[Member],
    ty: &Type,
    path: &Path<'_>,
) -> Result<Value, TypeError> {
    no_attributes(node, path)?;
    match &node.value {
        NodeValue::List(items) => {
            if items.len() > members.len() {
                return Err(path.error(format!(
                    "{ty} has {} members, the list has {}",
                    members.len(),
                    items.len()
                )));
            }
            let mut values = Vec::with_capacity(members.len());
            for (i, m) in members.iter().enumerate() {
                let member_path = path.key(&m.name);
                match items.get(i) {
                    Some(n) => values.push(from_node(n, &m.ty, &member_path)?),
                    None => values.push(missing_member(m, &member_path)?),
                }
            }
            Ok(Value::Tuple(values))
        }
        NodeValue::Map(entries) => {
            let mut slots: Vec<Option<Value>> = vec![None; members.len()];
            for (key, n) in entries {
                let index = members
                    .iter()
                    .position(|m| m.name.as_bytes() == key.as_slice())
                    .ok_or_else(|| {
                        path.error(format!("{} is not a member of {ty}", show_bytes(key)))
                    })?;
                let m = &members[index];
                let member_path = path.key(&m.name);
                if slots[index].is_some() {
                    return Err(member_path.error("member given twice"));
                }
                slots[index] = Some(from_node(n, &m.ty, &member_path)?);
            }
            members
                .iter()
                .zip(slots)
                .map(|(m, slot)| match slot {
                    Some(v) => Ok(v),
                    None => missing_member(m, &path.key(&m.name)),
                })
                .collect::<Result<_, _>>()
                .map(Value::Tuple)
        }
        _ => Err(node_mismatch(node, "a map or a list", ty, path)),
    }
}

fn missing_member(member: &Member, path: &Path<'_>) -> Result<Value, TypeError> {
    if member.ty.is_nullable() {
        Ok(Value::Null)
    } else {
        Err(path.error(format!("missing member of non-nullable type {}", member.ty)))
    }
}
