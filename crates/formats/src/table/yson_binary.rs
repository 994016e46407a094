//! Binary YSON written straight into a byte vector: the encoding of composite and `yson`
//! values in rows of the common interface ([`ValueRef::Composite`] / [`ValueRef::Any`]).
//!
//! Tokens are YT's binary ones: `0x01` string (zigzag varint length, bytes), `0x02` int64
//! (zigzag varint), `0x03` double (8 bytes little-endian), `0x04`/`0x05` false/true, `0x06`
//! uint64 (varint); structure is ASCII (`[`, `{`, `<`, `=`, `;`, `#`), every container item
//! followed by `;`. Values are written from their type without building nodes, in YT's named
//! form (structs as maps, named variants by name), exactly as [`value_to_node`] shapes them.
//!
//! [`ValueRef::Composite`]: shapeshift_types::ValueRef::Composite
//! [`ValueRef::Any`]: shapeshift_types::ValueRef::Any
//! [`value_to_node`]: shapeshift_types::value_to_node

use shapeshift_types::{Node, NodeValue, PrimitiveType, Type, Value};

use crate::varint;

#[inline]
pub(crate) fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(0x01);
    let len = bytes.len() as i64;
    varint::put(out, ((len << 1) ^ (len >> 63)) as u64);
    out.extend_from_slice(bytes);
}

#[inline]
pub(crate) fn int64(out: &mut Vec<u8>, v: i64) {
    out.push(0x02);
    varint::put(out, ((v << 1) ^ (v >> 63)) as u64);
}

#[inline]
pub(crate) fn uint64(out: &mut Vec<u8>, v: u64) {
    out.push(0x06);
    varint::put(out, v);
}

#[inline]
pub(crate) fn double(out: &mut Vec<u8>, v: f64) {
    out.push(0x03);
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
pub(crate) fn boolean(out: &mut Vec<u8>, v: bool) {
    out.push(if v { 0x05 } else { 0x04 });
}

/// Writes `node` (attributes included).
pub(crate) fn node(out: &mut Vec<u8>, node: &Node) {
    if !node.attributes.is_empty() {
        out.push(b'<');
        for (key, value) in &node.attributes {
            string(out, key);
            out.push(b'=');
            self::node(out, value);
            out.push(b';');
        }
        out.push(b'>');
    }
    match &node.value {
        NodeValue::Entity => out.push(b'#'),
        NodeValue::Bool(v) => boolean(out, *v),
        NodeValue::Int64(v) => int64(out, *v),
        NodeValue::Uint64(v) => uint64(out, *v),
        NodeValue::Double(v) => double(out, *v),
        NodeValue::String(v) => string(out, v),
        NodeValue::List(items) => {
            out.push(b'[');
            for item in items {
                self::node(out, item);
                out.push(b';');
            }
            out.push(b']');
        }
        NodeValue::Map(entries) => {
            out.push(b'{');
            for (key, value) in entries {
                string(out, key);
                out.push(b'=');
                self::node(out, value);
                out.push(b';');
            }
            out.push(b'}');
        }
    }
}

fn mismatch(value: &Value, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

/// Writes `value`, a value of `ty`, in YT's named form.
///
/// # Errors
/// A message when the value's shape does not fit the type.
pub(crate) fn value(out: &mut Vec<u8>, value: &Value, ty: &Type) -> Result<(), String> {
    match (ty, value) {
        (Type::Tagged { item, .. }, _) => self::value(out, value, item)?,
        (Type::Primitive(PrimitiveType::Yson), Value::Any(n)) => node(out, n),
        (Type::Optional(item), Value::Any(n))
            if matches!(item.untagged(), Type::Primitive(PrimitiveType::Yson)) =>
        {
            node(out, n)
        }
        (Type::Optional(_) | Type::Primitive(_), Value::Null) => out.push(b'#'),
        (Type::Optional(item), Value::Some(inner)) if item.is_nullable() => {
            out.push(b'[');
            self::value(out, inner, item)?;
            out.push(b';');
            out.push(b']');
        }
        (Type::Optional(item), _) if !item.is_nullable() => self::value(out, value, item)?,
        (Type::Primitive(_), Value::Bool(v)) => boolean(out, *v),
        (Type::Primitive(_), Value::Int64(v)) => int64(out, *v),
        (Type::Primitive(_), Value::Uint64(v)) => uint64(out, *v),
        (Type::Primitive(_), Value::Double(v)) => double(out, *v),
        (Type::Primitive(_) | Type::Decimal { .. }, Value::String(v)) => string(out, v),
        (Type::List(item), Value::List(items)) => {
            out.push(b'[');
            for v in items {
                self::value(out, v, item)?;
                out.push(b';');
            }
            out.push(b']');
        }
        (Type::Struct(members), Value::Tuple(items)) if members.len() == items.len() => {
            out.push(b'{');
            for (member, v) in members.iter().zip(items) {
                string(out, member.name.as_bytes());
                out.push(b'=');
                self::value(out, v, &member.ty)?;
                out.push(b';');
            }
            out.push(b'}');
        }
        (Type::Tuple(elements), Value::Tuple(items)) if elements.len() == items.len() => {
            out.push(b'[');
            for (element, v) in elements.iter().zip(items) {
                self::value(out, v, element)?;
                out.push(b';');
            }
            out.push(b']');
        }
        (Type::VariantStruct(members), Value::Variant(index, v)) => {
            let member = members
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            out.push(b'[');
            string(out, member.name.as_bytes());
            out.push(b';');
            self::value(out, v, &member.ty)?;
            out.push(b';');
            out.push(b']');
        }
        (Type::VariantTuple(elements), Value::Variant(index, v)) => {
            let element = elements
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            out.push(b'[');
            int64(out, i64::from(*index));
            out.push(b';');
            self::value(out, v, element)?;
            out.push(b';');
            out.push(b']');
        }
        (Type::Dict { key, value: item }, Value::Dict(pairs)) => {
            out.push(b'[');
            for (k, v) in pairs {
                out.push(b'[');
                self::value(out, k, key)?;
                out.push(b';');
                self::value(out, v, item)?;
                out.push(b';');
                out.push(b']');
                out.push(b';');
            }
            out.push(b']');
        }
        _ => return Err(mismatch(value, ty)),
    }
    Ok(())
}
