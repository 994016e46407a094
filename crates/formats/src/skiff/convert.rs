//! Reading validated Skiff bytes as values: borrowed [`ValueRef`]s for scalars, owned
//! [`Value`]s for everything, and the byte conversions of wide integers (decimal, uuid).
//!
//! Every function here takes bytes that [`super::scan::skip`] has accepted for the same plan,
//! so lengths and tags are known to be in range.

use shapeshift_types::{Value, ValueRef};

use super::error::SkiffError;
use super::plan::{FieldPlan, Kind, ValueShape, WideAs};
use super::scan::{read_bytes32, read_u16, read_u32, read_u64};
use super::yson_bridge;

/// A borrowed view of a scalar (or optional scalar) value; only for `plan.borrowable` plans.
#[inline(always)]
pub(crate) fn scalar_ref<'a>(plan: &FieldPlan, data: &'a [u8], pos: usize) -> ValueRef<'a> {
    match plan.kind {
        Kind::Nothing => ValueRef::Null,
        Kind::Bool => ValueRef::Bool(data[pos] == 1),
        Kind::I8 => ValueRef::Int64(data[pos] as i8 as i64),
        Kind::I16 => ValueRef::Int64(read_u16(data, pos) as i16 as i64),
        Kind::I32 => ValueRef::Int64(read_u32(data, pos) as i32 as i64),
        Kind::I64 => ValueRef::Int64(read_u64(data, pos) as i64),
        Kind::U8 => ValueRef::Uint64(data[pos] as u64),
        Kind::U16 => ValueRef::Uint64(read_u16(data, pos) as u64),
        Kind::U32 => ValueRef::Uint64(read_u32(data, pos) as u64),
        Kind::U64 => ValueRef::Uint64(read_u64(data, pos)),
        Kind::Double => ValueRef::Double(f64::from_bits(read_u64(data, pos))),
        Kind::String32 => ValueRef::String(read_bytes32(data, pos)),
        Kind::Yson32 => ValueRef::Any(read_bytes32(data, pos)),
        Kind::Variant8 => {
            if data[pos] == 0 {
                ValueRef::Null
            } else {
                scalar_ref(&plan.children[1], data, pos + 1)
            }
        }
        // Not borrowable: callers check `plan.borrowable` first.
        Kind::Wide | Kind::Tuple | Kind::Variant16 | Kind::Repeated8 | Kind::Repeated16 => {
            ValueRef::Null
        }
    }
}

/// The owned value at `pos` and the position after it.
///
/// # Errors
/// Only when a yson32 payload is not valid YSON.
pub(crate) fn decode(
    plan: &FieldPlan,
    data: &[u8],
    pos: usize,
) -> Result<(Value, usize), SkiffError> {
    let fixed = |value: Value| Ok((value, pos + plan.wire.fixed_width().unwrap_or(0)));
    match plan.kind {
        Kind::Nothing => Ok((Value::Null, pos)),
        Kind::Bool => fixed(Value::Bool(data[pos] == 1)),
        Kind::I8 => fixed(Value::Int64(data[pos] as i8 as i64)),
        Kind::I16 => fixed(Value::Int64(read_u16(data, pos) as i16 as i64)),
        Kind::I32 => fixed(Value::Int64(read_u32(data, pos) as i32 as i64)),
        Kind::I64 => fixed(Value::Int64(read_u64(data, pos) as i64)),
        Kind::U8 => fixed(Value::Uint64(data[pos] as u64)),
        Kind::U16 => fixed(Value::Uint64(read_u16(data, pos) as u64)),
        Kind::U32 => fixed(Value::Uint64(read_u32(data, pos) as u64)),
        Kind::U64 => fixed(Value::Uint64(read_u64(data, pos))),
        Kind::Double => fixed(Value::Double(f64::from_bits(read_u64(data, pos)))),
        Kind::Wide => {
            let width = plan.wire.fixed_width().unwrap_or(0);
            let wire_bytes = &data[pos..pos + width];
            fixed(Value::String(wide_to_value_bytes(plan.wide_as, wire_bytes)))
        }
        Kind::String32 => {
            let bytes = read_bytes32(data, pos);
            Ok((Value::String(bytes.to_vec()), pos + 4 + bytes.len()))
        }
        Kind::Yson32 => {
            let bytes = read_bytes32(data, pos);
            Ok((
                Value::Any(yson_bridge::parse(bytes)?),
                pos + 4 + bytes.len(),
            ))
        }
        Kind::Tuple => {
            let mut at = pos;
            let mut values = Vec::with_capacity(plan.children.len());
            for child in &plan.children {
                let (value, next) = decode(child, data, at)?;
                values.push(value);
                at = next;
            }
            Ok((Value::Tuple(values), at))
        }
        Kind::Variant8 | Kind::Variant16 => {
            let (tag, at) = if plan.kind == Kind::Variant8 {
                (data[pos] as usize, pos + 1)
            } else {
                (read_u16(data, pos) as usize, pos + 2)
            };
            let (value, end) = decode(&plan.children[tag], data, at)?;
            let value = match plan.shape {
                ValueShape::Optional { nullable_item } => match (tag, nullable_item) {
                    (0, _) => Value::Null,
                    (_, true) => Value::Some(Box::new(value)),
                    (_, false) => value,
                },
                _ => Value::Variant(tag as u32, Box::new(value)),
            };
            Ok((value, end))
        }
        Kind::Repeated8 | Kind::Repeated16 => {
            let wide_tag = plan.kind == Kind::Repeated16;
            let mut at = pos;
            let mut items = Vec::new();
            loop {
                let tag = if wide_tag {
                    let tag = read_u16(data, at);
                    at += 2;
                    if tag == u16::MAX {
                        break;
                    }
                    tag as usize
                } else {
                    let tag = data[at];
                    at += 1;
                    if tag == u8::MAX {
                        break;
                    }
                    tag as usize
                };
                let (value, next) = decode(&plan.children[tag], data, at)?;
                at = next;
                items.push(match plan.shape {
                    ValueShape::ListOfVariants => Value::Variant(tag as u32, Box::new(value)),
                    _ => value,
                });
            }
            let value = match plan.shape {
                ValueShape::Dict => Value::Dict(
                    items
                        .into_iter()
                        .map(|entry| match entry {
                            Value::Tuple(mut pair) if pair.len() == 2 => {
                                let value = pair.pop().unwrap_or_default();
                                let key = pair.pop().unwrap_or_default();
                                (key, value)
                            }
                            other => (other, Value::Null),
                        })
                        .collect(),
                ),
                _ => Value::List(items),
            };
            Ok((value, at))
        }
    }
}

/// Wire bytes (little-endian two's complement) of a wide integer or decimal, as value bytes.
pub(crate) fn wide_to_value_bytes(wide_as: WideAs, wire: &[u8]) -> Vec<u8> {
    match wide_as {
        WideAs::Raw => wire.to_vec(),
        WideAs::Uuid => wire.iter().rev().copied().collect(),
        WideAs::Decimal { .. } => {
            let mut bytes: Vec<u8> = wire.iter().rev().copied().collect();
            if let Some(first) = bytes.first_mut() {
                *first ^= 0x80;
            }
            bytes
        }
    }
}

/// Value bytes of a wide integer or decimal, as wire bytes; `None` when the length is wrong.
pub(crate) fn value_bytes_to_wide(wide_as: WideAs, bytes: &[u8], width: usize) -> Option<Vec<u8>> {
    if bytes.len() != width {
        return None;
    }
    Some(match wide_as {
        WideAs::Raw => bytes.to_vec(),
        WideAs::Uuid => bytes.iter().rev().copied().collect(),
        WideAs::Decimal { .. } => {
            let mut flipped = bytes.to_vec();
            flipped[0] ^= 0x80;
            flipped.reverse();
            flipped
        }
    })
}
