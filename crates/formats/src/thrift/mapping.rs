//! YT types as Thrift types, and values of them written and read through the wire layer.
//!
//! Two places a value can sit: a *field* (a row's column, a struct member or tuple element,
//! a dict entry's key or value), which may be absent, and an *element* (of a list, or a
//! variant's payload), which may not. In a field, `optional<T>` is the field left out when
//! null, else `T`'s field (a one-field wrapper struct `{1: T}` when `T` is itself
//! nullable), and `null`/`void` are always left out. In an element, a nullable type is the
//! wrapper `{1: T}` (empty for null), anything else its own type.

use shapeshift_types::{Node, PhysicalType, PrimitiveType, Type, Value, ValueRef};

use super::wire::{DecodeError, Decoder, Encoder, WireType};
use crate::table::row_arena::RowArena;
use crate::table::values::{ColumnCheck, ColumnKind, Scalar};
use crate::yson::{self, YsonFormat};

/// The wire type of a primitive, `None` for `null`/`void` (never on the wire).
#[inline]
pub(crate) fn primitive_wire(p: PrimitiveType) -> Option<WireType> {
    use PrimitiveType as P;
    Some(match p {
        P::Int8 => WireType::I8,
        P::Int16 | P::Uint8 => WireType::I16,
        P::Int32 | P::Uint16 | P::Date | P::Date32 => WireType::I32,
        P::Int64
        | P::Uint32
        | P::Uint64
        | P::Datetime
        | P::Timestamp
        | P::Interval
        | P::Datetime64
        | P::Timestamp64
        | P::Interval64 => WireType::I64,
        P::Float | P::Double => WireType::Double,
        P::Bool => WireType::Bool,
        P::String | P::Utf8 | P::Json | P::Uuid | P::Yson => WireType::Binary,
        P::Null | P::Void => return None,
    })
}

/// The wire type of a present field of type `ty`; `None` when the field is never written.
#[inline]
pub(crate) fn field_wire(ty: &Type) -> Option<WireType> {
    match ty.untagged() {
        Type::Primitive(p) => primitive_wire(*p),
        Type::Decimal { .. } => Some(WireType::Binary),
        Type::Optional(item) if item.is_nullable() => Some(WireType::Struct),
        Type::Optional(item) => field_wire(item),
        Type::List(_) | Type::Dict { .. } => Some(WireType::List),
        Type::Struct(_) | Type::Tuple(_) | Type::VariantStruct(_) | Type::VariantTuple(_) => {
            Some(WireType::Struct)
        }
        Type::Tagged { item, .. } => field_wire(item),
    }
}

/// The wire type of an element (list item, variant payload) of type `ty`.
#[inline]
pub(crate) fn element_wire(ty: &Type) -> WireType {
    if ty.is_nullable() {
        return WireType::Struct;
    }
    field_wire(ty).unwrap_or(WireType::Struct)
}

/// The member types of a struct-like type (struct, tuple, variant), `None` for others.
fn members(ty: &Type) -> Option<Vec<&Type>> {
    match ty {
        Type::Struct(m) | Type::VariantStruct(m) => Some(m.iter().map(|m| &m.ty).collect()),
        Type::Tuple(t) | Type::VariantTuple(t) => Some(t.iter().collect()),
        _ => None,
    }
}

fn field_id(index: usize) -> Result<i16, String> {
    i16::try_from(index + 1)
        .map_err(|_| format!("field {} is past Thrift's largest id 32767", index + 1))
}

fn mismatch(value: &Value, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

/// Writes the fields of a struct (`types[i]` is field `i + 1`) and its stop field.
pub(crate) fn write_struct(
    e: &mut Encoder<'_>,
    types: &[&Type],
    values: &[Value],
) -> Result<(), String> {
    if types.len() != values.len() {
        return Err(format!(
            "{} values for {} fields",
            values.len(),
            types.len()
        ));
    }
    let mut last = 0;
    for (i, (ty, value)) in types.iter().zip(values).enumerate() {
        write_field(e, field_id(i)?, &mut last, ty, value)?;
    }
    e.stop();
    Ok(())
}

/// Writes a row struct (`types[i]` is field `i + 1`) from the row interface's borrowed
/// values, each already checked against its type: scalars are written as they are, and only
/// the values that need it (composites in binary YSON, `yson`, nested optionals, nulls of
/// `null`/`void`) are first made owned by `owned(column, value)`. The bytes are those
/// [`write_struct`] writes for the owned values.
pub(crate) fn write_row_refs(
    e: &mut Encoder<'_>,
    types: &[Type],
    values: &[ValueRef<'_>],
    owned: impl Fn(usize, ValueRef<'_>) -> Result<Value, String>,
) -> Result<(), String> {
    let mut last = 0;
    for (i, (ty, value)) in types.iter().zip(values).enumerate() {
        let id = field_id(i)?;
        let (item, optional) = match ty.untagged() {
            Type::Optional(item) if !item.is_nullable() => (item.untagged(), true),
            other => (other, false),
        };
        match (item, *value) {
            (_, ValueRef::Null) if optional => {}
            (Type::Primitive(PrimitiveType::Bool), ValueRef::Bool(v)) => {
                e.bool_field(id, v, &mut last)
            }
            (
                Type::Primitive(p),
                ValueRef::Int64(_)
                | ValueRef::Uint64(_)
                | ValueRef::Double(_)
                | ValueRef::String(_),
            ) if *p != PrimitiveType::Yson => {
                let scalar = Scalar::of_ref(*value).expect("a scalar");
                let wire = primitive_wire(*p)
                    .ok_or_else(|| format!("value {value:?} does not fit type {ty:?}"))?;
                e.field(wire, id, &mut last);
                write_scalar(e, *p, scalar)
                    .ok_or_else(|| format!("value {value:?} does not fit type {ty:?}"))?;
            }
            (Type::Decimal { .. }, ValueRef::String(bytes)) => {
                e.field(WireType::Binary, id, &mut last);
                e.binary(bytes)?;
            }
            _ => write_field(e, id, &mut last, ty, &owned(i, *value)?)?,
        }
    }
    e.stop();
    Ok(())
}

/// Writes field `id` holding `value` of `ty`, or nothing when it is absent.
fn write_field(
    e: &mut Encoder<'_>,
    id: i16,
    last: &mut i16,
    ty: &Type,
    value: &Value,
) -> Result<(), String> {
    let ty = ty.untagged();
    match (ty, value) {
        (Type::Primitive(PrimitiveType::Null | PrimitiveType::Void), Value::Null) => Ok(()),
        (Type::Optional(_), Value::Null) => Ok(()),
        (Type::Optional(item), Value::Some(inner)) if item.is_nullable() => {
            e.field(WireType::Struct, id, last);
            write_struct(e, &[item], std::slice::from_ref(inner))
        }
        (Type::Optional(item), _) if !item.is_nullable() => write_field(e, id, last, item, value),
        (Type::Primitive(PrimitiveType::Bool), Value::Bool(v)) => {
            e.bool_field(id, *v, last);
            Ok(())
        }
        _ => {
            let wire = field_wire(ty).ok_or_else(|| mismatch(value, ty))?;
            e.field(wire, id, last);
            write_body(e, ty, value)
        }
    }
}

/// Writes `value` of `ty` where it must be present.
fn write_element(e: &mut Encoder<'_>, ty: &Type, value: &Value) -> Result<(), String> {
    if ty.is_nullable() {
        return write_struct(e, &[ty], std::slice::from_ref(value));
    }
    write_body(e, ty.untagged(), value)
}

/// Writes the value of a non-nullable, untagged `ty` (no field header).
fn write_body(e: &mut Encoder<'_>, ty: &Type, value: &Value) -> Result<(), String> {
    match (ty, value) {
        (Type::Primitive(p), _) => {
            write_primitive(e, *p, value).ok_or_else(|| mismatch(value, ty))?
        }
        (Type::Decimal { .. }, Value::String(bytes)) => e.binary(bytes)?,
        (Type::List(item), Value::List(items)) => {
            e.list(element_wire(item), items.len())?;
            for v in items {
                write_element(e, item, v)?;
            }
        }
        (Type::Dict { key, value: val }, Value::Dict(entries)) => {
            e.list(WireType::Struct, entries.len())?;
            for (k, v) in entries {
                let mut last = 0;
                write_field(e, 1, &mut last, key, k)?;
                write_field(e, 2, &mut last, val, v)?;
                e.stop();
            }
        }
        (Type::VariantStruct(_) | Type::VariantTuple(_), Value::Variant(index, payload)) => {
            let types = members(ty).unwrap_or_default();
            let alt = types
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            let (id, mut last) = (field_id(*index as usize)?, 0);
            if alt.is_nullable() {
                e.field(WireType::Struct, id, &mut last);
                write_struct(e, &[alt], std::slice::from_ref(payload))?;
            } else {
                write_field(e, id, &mut last, alt, payload)?;
            }
            e.stop();
        }
        (Type::Struct(_) | Type::Tuple(_), Value::Tuple(items)) => {
            write_struct(e, &members(ty).unwrap_or_default(), items)?;
        }
        _ => return Err(mismatch(value, ty)),
    }
    Ok(())
}

/// Writes a primitive; `None` when the value is not of its kind or out of its wire range.
fn write_primitive(e: &mut Encoder<'_>, p: PrimitiveType, value: &Value) -> Option<()> {
    match value {
        Value::Any(node) if p == PrimitiveType::Yson => {
            e.binary(&yson::to_vec(node, YsonFormat::Binary)).ok()
        }
        other => write_scalar(e, p, Scalar::of(other)?),
    }
}

/// Writes a primitive other than `yson` from its scalar; `None` when the scalar is not of
/// its kind or out of its wire range.
#[inline]
fn write_scalar(e: &mut Encoder<'_>, p: PrimitiveType, value: Scalar<'_>) -> Option<()> {
    let wire = primitive_wire(p)?;
    match (wire, value) {
        (WireType::Bool, Scalar::Bool(v)) => e.bool(v),
        (WireType::Double, Scalar::Double(v)) => e.double(v),
        (WireType::Binary, Scalar::String(bytes)) => e.binary(bytes).ok()?,
        (_, Scalar::Int64(v)) => write_int(e, wire, v)?,
        // uint64 travels as the bit pattern of an i64.
        (_, Scalar::Uint64(v)) if wire == WireType::I64 => e.i64(v as i64),
        (_, Scalar::Uint64(v)) => write_int(e, wire, i64::try_from(v).ok()?)?,
        _ => return None,
    }
    Some(())
}

fn write_int(e: &mut Encoder<'_>, wire: WireType, v: i64) -> Option<()> {
    match wire {
        WireType::I8 => e.i8(i8::try_from(v).ok()?),
        WireType::I16 => e.i16(i16::try_from(v).ok()?),
        WireType::I32 => e.i32(i32::try_from(v).ok()?),
        WireType::I64 => e.i64(v),
        _ => return None,
    }
    Some(())
}

/// Reads a struct whose field `i + 1` is `types[i]`: absent nullable fields are null,
/// unknown fields are skipped.
pub(crate) fn read_struct(d: &mut Decoder<'_>, types: &[&Type]) -> Result<Vec<Value>, DecodeError> {
    let start = d.pos;
    let mut values: Vec<Option<Value>> = vec![None; types.len()];
    let mut last = 0;
    while let Some(header) = d.field(&mut last)? {
        let slot = usize::try_from(header.id)
            .ok()
            .and_then(|id| id.checked_sub(1))
            .filter(|&i| i < types.len());
        let Some(i) = slot else {
            d.skip(&header)?;
            continue;
        };
        let ty = types[i].untagged();
        let expected = field_wire(ty);
        if expected != Some(header.ty) {
            return Err(d.error_at(
                d.pos,
                match expected {
                    Some(w) => format!(
                        "field {} is {}, expected {}",
                        header.id,
                        header.ty.name(),
                        w.name()
                    ),
                    None => format!(
                        "field {} is present, but its type {ty:?} is never written",
                        header.id
                    ),
                },
            ));
        }
        if values[i].is_some() {
            return Err(d.error_at(d.pos, format!("field {} appears twice", header.id)));
        }
        let value = match ty {
            Type::Optional(item) if item.is_nullable() => {
                Value::Some(Box::new(read_struct(d, &[item])?.pop().unwrap_or_default()))
            }
            Type::Optional(item) => read_body(d, item.untagged(), header.bool_value)?,
            _ => read_body(d, ty, header.bool_value)?,
        };
        values[i] = Some(value);
    }
    values
        .into_iter()
        .zip(types)
        .enumerate()
        .map(|(i, (value, ty))| match value {
            Some(v) => Ok(v),
            None if ty.is_nullable() => Ok(Value::Null),
            None => Err(d.error_at(
                start,
                format!("required field {} ({ty:?}) is missing", i + 1),
            )),
        })
        .collect()
}

/// Reads a row struct straight into `arena` (the row interface's reading) when it has the
/// shape every Thrift writer gives it: the present columns' fields in id order, each once,
/// no unknown ids, nothing after the stop. Scalars go in as themselves, checked by their
/// columns' compiled `checks`, with no owned value in between; other columns as owned values
/// through [`RowArena::push_value`], which checks them. `None` for anything else (another
/// order, an unknown id, bytes that do not read, a value that does not fit): the arena is
/// then partly filled, and the caller reads the row the general way, which takes the other
/// orders and says what is wrong.
pub(crate) fn read_row_into(
    d: &mut Decoder<'_>,
    types: &[Type],
    checks: &[ColumnCheck],
    arena: &mut RowArena,
    format: &'static str,
) -> Option<()> {
    let mut last = 0;
    let mut next = d.field(&mut last).ok()?;
    for (i, (ty, check)) in types.iter().zip(checks).enumerate() {
        let ty = ty.untagged();
        match next {
            Some(header) if usize::try_from(header.id).ok() == Some(i + 1) => {
                if field_wire(ty) != Some(header.ty) {
                    return None;
                }
                let item = match ty {
                    Type::Optional(item) if !item.is_nullable() => item.untagged(),
                    other => other,
                };
                if check.kind == ColumnKind::Scalar {
                    let value = read_scalar_ref(d, item, header.bool_value)?;
                    check.write(value, ty).ok()?;
                    arena.push_ref(value);
                } else {
                    let value = match ty {
                        Type::Optional(item) if item.is_nullable() => Value::Some(Box::new(
                            read_struct(d, &[item]).ok()?.pop().unwrap_or_default(),
                        )),
                        _ => read_body(d, item, header.bool_value).ok()?,
                    };
                    arena.push_value(&value, ty, format).ok()?;
                }
                next = d.field(&mut last).ok()?;
            }
            _ if ty.is_nullable() => arena.push_null(),
            _ => return None,
        }
    }
    (next.is_none() && d.remaining() == 0).then_some(())
}

/// The scalar of a primitive (not `yson`) or decimal `ty` as the row carries it, borrowed
/// from the input, unchecked; `None` when it does not read.
#[inline]
fn read_scalar_ref<'a>(
    d: &mut Decoder<'a>,
    ty: &Type,
    bool_value: Option<bool>,
) -> Option<ValueRef<'a>> {
    let p = match ty {
        Type::Primitive(p) => *p,
        _ => return Some(ValueRef::String(d.binary().ok()?)),
    };
    Some(match primitive_wire(p)? {
        WireType::Bool => ValueRef::Bool(match bool_value {
            Some(v) => v,
            None => d.bool().ok()?,
        }),
        WireType::Double => ValueRef::Double(d.double().ok()?),
        WireType::Binary => ValueRef::String(d.binary().ok()?),
        _ => match read_primitive(d, p).ok()? {
            Value::Int64(v) => ValueRef::Int64(v),
            Value::Uint64(v) => ValueRef::Uint64(v),
            _ => return None,
        },
    })
}

fn read_element(d: &mut Decoder<'_>, ty: &Type) -> Result<Value, DecodeError> {
    if ty.is_nullable() {
        return Ok(read_struct(d, &[ty])?.pop().unwrap_or_default());
    }
    read_body(d, ty.untagged(), None)
}

/// Reads the value of a non-nullable, untagged `ty`; `bool_value` is a compact bool
/// field's value, carried in its header.
fn read_body(
    d: &mut Decoder<'_>,
    ty: &Type,
    bool_value: Option<bool>,
) -> Result<Value, DecodeError> {
    Ok(match ty {
        Type::Primitive(PrimitiveType::Bool) => Value::Bool(match bool_value {
            Some(v) => v,
            None => d.bool()?,
        }),
        Type::Primitive(p) => read_primitive(d, *p)?,
        Type::Decimal { .. } => Value::String(d.binary()?.to_vec()),
        Type::List(item) => {
            let want = element_wire(item);
            let count = list_header(d, want)?;
            let mut values = Vec::with_capacity(count);
            for _ in 0..count {
                values.push(read_element(d, item)?);
            }
            Value::List(values)
        }
        Type::Dict { key, value } => {
            let count = list_header(d, WireType::Struct)?;
            let mut entries = Vec::with_capacity(count);
            for _ in 0..count {
                let mut kv = read_struct(d, &[key, value])?;
                let v = kv.pop().unwrap_or_default();
                let k = kv.pop().unwrap_or_default();
                entries.push((k, v));
            }
            Value::Dict(entries)
        }
        Type::VariantStruct(_) | Type::VariantTuple(_) => {
            let types = members(ty).unwrap_or_default();
            let start = d.pos;
            let mut last = 0;
            let header = d
                .field(&mut last)?
                .ok_or_else(|| d.error_at(start, "a union with no field set"))?;
            let index = usize::try_from(header.id)
                .ok()
                .and_then(|id| id.checked_sub(1));
            let alt = index.and_then(|i| types.get(i)).ok_or_else(|| {
                d.error_at(
                    start,
                    format!(
                        "union field {} is not one of its {} alternatives",
                        header.id,
                        types.len()
                    ),
                )
            })?;
            if header.ty != element_wire(alt) {
                return Err(d.error_at(
                    start,
                    format!(
                        "union field {} is {}, expected {}",
                        header.id,
                        header.ty.name(),
                        element_wire(alt).name()
                    ),
                ));
            }
            let payload = match header.bool_value {
                Some(v) => Value::Bool(v),
                None => read_element(d, alt)?,
            };
            let end = d.pos;
            if d.field(&mut last)?.is_some() {
                return Err(d.error_at(end, "a union with more than one field set"));
            }
            Value::Variant(index.unwrap_or_default() as u32, Box::new(payload))
        }
        Type::Struct(_) | Type::Tuple(_) => {
            Value::Tuple(read_struct(d, &members(ty).unwrap_or_default())?)
        }
        Type::Tagged { item, .. } => read_body(d, item, bool_value)?,
        Type::Optional(_) => {
            return Err(d.error_at(d.pos, "an optional where a value must be present"))
        }
    })
}

/// A list header whose elements must be of type `want`; the element count.
fn list_header(d: &mut Decoder<'_>, want: WireType) -> Result<usize, DecodeError> {
    let start = d.pos;
    let (element, count) = d.list()?;
    if element != want && count > 0 {
        return Err(d.error_at(
            start,
            format!("list of {}, expected {}", element.name(), want.name()),
        ));
    }
    Ok(count)
}

fn read_primitive(d: &mut Decoder<'_>, p: PrimitiveType) -> Result<Value, DecodeError> {
    let start = d.pos;
    let Some(wire) = primitive_wire(p) else {
        return Ok(Value::Null);
    };
    let int = match wire {
        WireType::I8 => i64::from(d.i8()?),
        WireType::I16 => i64::from(d.i16()?),
        WireType::I32 => i64::from(d.i32()?),
        WireType::I64 => d.i64()?,
        WireType::Double => return Ok(Value::Double(d.double()?)),
        WireType::Bool => return Ok(Value::Bool(d.bool()?)),
        _ if p == PrimitiveType::Yson => {
            let bytes = d.binary()?;
            let node: Node = yson::from_slice(bytes)
                .map_err(|e| d.error_at(start, format!("yson value: {e}")))?;
            return Ok(Value::Any(node));
        }
        _ => return Ok(Value::String(d.binary()?.to_vec())),
    };
    Ok(match p.physical() {
        PhysicalType::Uint64 if p == PrimitiveType::Uint64 => Value::Uint64(int as u64),
        PhysicalType::Uint64 => Value::Uint64(
            u64::try_from(int)
                .map_err(|_| d.error_at(start, format!("{int} is negative for {p:?}")))?,
        ),
        _ => Value::Int64(int),
    })
}
