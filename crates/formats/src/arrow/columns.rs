//! Type_v3 types as Arrow types, and columns of values as Arrow arrays and back.
//!
//! The mapping (docs/formats/arrow.md has the full table) keeps every value:
//! - integers as the Arrow integer of their width; `float`/`double` as Float32/Float64;
//! - `string` as Binary (YT strings are bytes), `utf8` as Utf8, `json` as Utf8 with the
//!   `arrow.json` extension, `uuid` as FixedSizeBinary(16) with `arrow.uuid`, `yson` as
//!   Binary (binary YSON) with the `yt.yson` extension;
//! - `date`/`date32` as Date32, `datetime`/`datetime64` as Timestamp(s), `timestamp`/
//!   `timestamp64` as Timestamp(µs), `interval`/`interval64` as Duration(µs) (field
//!   metadata `yt.type` tells the YT type apart where two share an Arrow type);
//! - `decimal(p, s)` as Decimal128 (p <= 38) or Decimal256, holding YT's integer; YT's
//!   `nan`/`±inf` are its sentinel integers, which lie outside the precision;
//! - `null`/`void` as Null; `optional<T>` as a nullable T, or — when T is itself nullable
//!   or a variant (unions carry no validity) — as a nullable struct `{value: T}` with
//!   metadata `yt.optional`;
//! - `list` as List, struct as Struct, tuple as Struct of `_1.._n` (`yt.tuple`), variants as
//!   dense Union (type ids 0..n), `dict` as Map when its key type is not nullable, else as
//!   List of `{key, value}` structs (`yt.dict`); `tagged` as its item, with `yt.tag`.
//!
//! Invariant of the builders: every slot is `Option<&Value>`, `None` meaning "null here"
//! (an absent optional, or any slot below a null parent, which Arrow masks). Unions have no
//! validity bitmap, so a union slot below a null parent points at alternative 0 with a null
//! child: masked by the parent, never read back.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, DurationMicrosecondType, Float32Type, Float64Type,
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampSecondType,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Decimal256Array,
    DurationMicrosecondArray, FixedSizeBinaryArray, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, ListArray, MapArray, NullArray, StringArray, StructArray,
    TimestampMicrosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array, UnionArray,
};
use arrow_buffer::{i256, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit, UnionFields, UnionMode};
use shapeshift_types::{Node, PrimitiveType, Type, Value};

use crate::yson::{self, YsonFormat};

pub(crate) const EXTENSION_NAME: &str = "ARROW:extension:name";
pub(crate) const EXTENSION_METADATA: &str = "ARROW:extension:metadata";

/// Whether `optional<item>` needs the `{value}` struct wrapper.
pub(crate) fn optional_needs_wrapper(item: &Type) -> bool {
    item.is_nullable()
        || matches!(
            item.untagged(),
            Type::VariantStruct(_) | Type::VariantTuple(_)
        )
}

fn dict_is_map(key: &Type) -> bool {
    !key.is_nullable()
}

/// The Arrow field for a value of `ty` named `name`.
pub(crate) fn field(name: &str, ty: &Type) -> Field {
    let mut metadata = HashMap::new();
    let mut tags = Vec::new();
    let mut inner = ty;
    // Tags, and optionals that are just a nullable field, describe the same Arrow field.
    loop {
        match inner {
            Type::Tagged { tag, item } => {
                tags.push(tag.as_str());
                inner = item;
            }
            Type::Optional(item) if !optional_needs_wrapper(item) => inner = item,
            _ => break,
        }
    }
    if !tags.is_empty() {
        metadata.insert("yt.tag".to_owned(), tags.join("\n"));
    }
    match inner {
        Type::Primitive(p) => match p {
            PrimitiveType::Uuid => {
                metadata.insert(EXTENSION_NAME.to_owned(), "arrow.uuid".to_owned());
            }
            PrimitiveType::Json => {
                metadata.insert(EXTENSION_NAME.to_owned(), "arrow.json".to_owned());
            }
            PrimitiveType::Yson => {
                metadata.insert(EXTENSION_NAME.to_owned(), "yt.yson".to_owned());
                metadata.insert(EXTENSION_METADATA.to_owned(), "binary".to_owned());
            }
            PrimitiveType::Date
            | PrimitiveType::Datetime
            | PrimitiveType::Timestamp
            | PrimitiveType::Interval
            | PrimitiveType::Date32
            | PrimitiveType::Datetime64
            | PrimitiveType::Timestamp64
            | PrimitiveType::Interval64
            | PrimitiveType::Void => {
                metadata.insert("yt.type".to_owned(), p.name().to_owned());
            }
            _ => {}
        },
        Type::Optional(item) if optional_needs_wrapper(item) => {
            metadata.insert("yt.optional".to_owned(), "true".to_owned());
        }
        Type::Tuple(_) | Type::VariantTuple(_) => {
            metadata.insert("yt.tuple".to_owned(), "true".to_owned());
        }
        Type::Dict { key, .. } if !dict_is_map(key) => {
            metadata.insert("yt.dict".to_owned(), "true".to_owned());
        }
        _ => {}
    }
    // A union's logical nulls are its children's, so a variant field is declared nullable
    // (Arrow's validation would otherwise refuse a variant holding an absent optional).
    let nullable =
        ty.is_nullable() || matches!(inner, Type::VariantStruct(_) | Type::VariantTuple(_));
    Field::new(name, data_type(ty), nullable).with_metadata(metadata)
}

fn positional_fields(types: &[Type]) -> Vec<Field> {
    types
        .iter()
        .enumerate()
        .map(|(i, t)| field(&format!("_{}", i + 1), t))
        .collect()
}

fn entries_field(key: &Type, value: &Type, map: bool) -> Field {
    let fields = Fields::from(vec![field("key", key), field("value", value)]);
    Field::new(
        if map { "entries" } else { "item" },
        DataType::Struct(fields),
        false,
    )
}

/// The Arrow type of values of `ty`.
pub(crate) fn data_type(ty: &Type) -> DataType {
    use PrimitiveType as P;
    match ty {
        Type::Tagged { item, .. } => data_type(item),
        Type::Primitive(p) => match p {
            P::Int8 => DataType::Int8,
            P::Int16 => DataType::Int16,
            P::Int32 => DataType::Int32,
            P::Int64 => DataType::Int64,
            P::Uint8 => DataType::UInt8,
            P::Uint16 => DataType::UInt16,
            P::Uint32 => DataType::UInt32,
            P::Uint64 => DataType::UInt64,
            P::Float => DataType::Float32,
            P::Double => DataType::Float64,
            P::Bool => DataType::Boolean,
            P::String | P::Yson => DataType::Binary,
            P::Utf8 | P::Json => DataType::Utf8,
            P::Uuid => DataType::FixedSizeBinary(16),
            P::Date | P::Date32 => DataType::Date32,
            P::Datetime | P::Datetime64 => DataType::Timestamp(TimeUnit::Second, None),
            P::Timestamp | P::Timestamp64 => DataType::Timestamp(TimeUnit::Microsecond, None),
            P::Interval | P::Interval64 => DataType::Duration(TimeUnit::Microsecond),
            P::Null | P::Void => DataType::Null,
        },
        Type::Decimal { precision, scale } => {
            if *precision <= 38 {
                DataType::Decimal128(*precision, *scale as i8)
            } else {
                DataType::Decimal256(*precision, *scale as i8)
            }
        }
        Type::Optional(item) => {
            if optional_needs_wrapper(item) {
                DataType::Struct(Fields::from(vec![field("value", item)]))
            } else {
                data_type(item)
            }
        }
        Type::List(item) => DataType::List(Arc::new(field("item", item))),
        Type::Struct(members) => DataType::Struct(Fields::from(
            members
                .iter()
                .map(|m| field(&m.name, &m.ty))
                .collect::<Vec<_>>(),
        )),
        Type::Tuple(elements) => DataType::Struct(Fields::from(positional_fields(elements))),
        Type::VariantStruct(members) => {
            let fields: Vec<Field> = members.iter().map(|m| field(&m.name, &m.ty)).collect();
            union_type(fields)
        }
        Type::VariantTuple(elements) => union_type(positional_fields(elements)),
        Type::Dict { key, value } => {
            if dict_is_map(key) {
                DataType::Map(Arc::new(entries_field(key, value, true)), false)
            } else {
                DataType::List(Arc::new(entries_field(key, value, false)))
            }
        }
    }
}

fn union_type(mut fields: Vec<Field>) -> DataType {
    // Arrow type ids are i8: a longer variant has no union (build_union refuses its values).
    fields.truncate(127);
    let ids: Vec<i8> = (0..fields.len() as i8).collect();
    let fields = UnionFields::try_new(ids, fields).expect("distinct type ids 0..n");
    DataType::Union(fields, UnionMode::Dense)
}

fn mismatch(value: Option<&Value>, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

/// YT's decimal binary (big-endian, sign bit flipped) as a signed integer.
fn decimal_to_i256(bytes: &[u8]) -> Result<i256, String> {
    if !matches!(bytes.len(), 4 | 8 | 16 | 32) {
        return Err(format!("decimal of {} bytes", bytes.len()));
    }
    let negative = bytes[0] & 0x80 == 0;
    let mut be = [if negative { 0xFF } else { 0 }; 32];
    be[32 - bytes.len()..].copy_from_slice(bytes);
    be[32 - bytes.len()] ^= 0x80;
    Ok(i256::from_be_bytes(be))
}

/// The inverse of [`decimal_to_i256`] for a width of `width` bytes.
fn decimal_from_i256(value: i256, width: usize) -> Result<Vec<u8>, String> {
    let be = value.to_be_bytes();
    let (high, low) = be.split_at(32 - width);
    let sign = if low[0] & 0x80 != 0 { 0xFF } else { 0 };
    if high.iter().any(|b| *b != sign) {
        return Err(format!(
            "decimal integer {value} does not fit {width} bytes"
        ));
    }
    let mut out = low.to_vec();
    out[0] ^= 0x80;
    Ok(out)
}

fn null_buffer(slots: &[Option<&Value>]) -> Option<NullBuffer> {
    if slots
        .iter()
        .all(|s| matches!(s, Some(v) if !matches!(v, Value::Null)))
    {
        None
    } else {
        Some(NullBuffer::from_iter(
            slots
                .iter()
                .map(|s| matches!(s, Some(v) if !matches!(v, Value::Null))),
        ))
    }
}

macro_rules! primitive_array {
    ($array:ty, $slots:expr, $ty:expr, $pattern:pat => $convert:expr) => {{
        let mut values = Vec::with_capacity($slots.len());
        for slot in $slots {
            values.push(match slot {
                None | Some(Value::Null) => None,
                Some($pattern) => Some($convert),
                other => return Err(mismatch(*other, $ty)),
            });
        }
        Arc::new(<$array>::from(values)) as ArrayRef
    }};
}

/// The Arrow array of `slots`, values of `ty` (see the module invariant).
pub(crate) fn build(ty: &Type, slots: &[Option<&Value>]) -> Result<ArrayRef, String> {
    use PrimitiveType as P;
    let array: ArrayRef = match ty {
        Type::Tagged { item, .. } => return build(item, slots),
        Type::Primitive(p) => match p {
            P::Int8 => primitive_array!(Int8Array, slots, ty, Value::Int64(v) => *v as i8),
            P::Int16 => primitive_array!(Int16Array, slots, ty, Value::Int64(v) => *v as i16),
            P::Int32 => primitive_array!(Int32Array, slots, ty, Value::Int64(v) => *v as i32),
            P::Int64 => primitive_array!(Int64Array, slots, ty, Value::Int64(v) => *v),
            P::Uint8 => primitive_array!(UInt8Array, slots, ty, Value::Uint64(v) => *v as u8),
            P::Uint16 => primitive_array!(UInt16Array, slots, ty, Value::Uint64(v) => *v as u16),
            P::Uint32 => primitive_array!(UInt32Array, slots, ty, Value::Uint64(v) => *v as u32),
            P::Uint64 => primitive_array!(UInt64Array, slots, ty, Value::Uint64(v) => *v),
            P::Float => primitive_array!(Float32Array, slots, ty, Value::Double(v) => *v as f32),
            P::Double => primitive_array!(Float64Array, slots, ty, Value::Double(v) => *v),
            P::Bool => primitive_array!(BooleanArray, slots, ty, Value::Bool(v) => *v),
            P::Date => primitive_array!(Date32Array, slots, ty, Value::Uint64(v) => *v as i32),
            P::Date32 => primitive_array!(Date32Array, slots, ty, Value::Int64(v) => *v as i32),
            P::Datetime => {
                primitive_array!(TimestampSecondArray, slots, ty, Value::Uint64(v) => *v as i64)
            }
            P::Datetime64 => {
                primitive_array!(TimestampSecondArray, slots, ty, Value::Int64(v) => *v)
            }
            P::Timestamp => {
                primitive_array!(TimestampMicrosecondArray, slots, ty, Value::Uint64(v) => *v as i64)
            }
            P::Timestamp64 => {
                primitive_array!(TimestampMicrosecondArray, slots, ty, Value::Int64(v) => *v)
            }
            P::Interval | P::Interval64 => {
                primitive_array!(DurationMicrosecondArray, slots, ty, Value::Int64(v) => *v)
            }
            P::String => {
                let mut values = Vec::with_capacity(slots.len());
                for slot in slots {
                    values.push(match slot {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(s.as_slice()),
                        other => return Err(mismatch(*other, ty)),
                    });
                }
                Arc::new(BinaryArray::from(values))
            }
            P::Utf8 | P::Json => {
                let mut values = Vec::with_capacity(slots.len());
                for slot in slots {
                    values.push(match slot {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(
                            std::str::from_utf8(s).map_err(|e| format!("invalid UTF-8: {e}"))?,
                        ),
                        other => return Err(mismatch(*other, ty)),
                    });
                }
                Arc::new(StringArray::from(values))
            }
            P::Uuid => {
                let mut values = Vec::with_capacity(slots.len());
                for slot in slots {
                    values.push(match slot {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) if s.len() == 16 => Some(s.as_slice()),
                        other => return Err(mismatch(*other, ty)),
                    });
                }
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16)
                        .map_err(|e| e.to_string())?,
                )
            }
            P::Yson => {
                let mut values: Vec<Option<Vec<u8>>> = Vec::with_capacity(slots.len());
                for slot in slots {
                    values.push(match slot {
                        None | Some(Value::Null) => None,
                        Some(Value::Any(node)) => Some(yson::to_vec(node, YsonFormat::Binary)),
                        other => return Err(mismatch(*other, ty)),
                    });
                }
                Arc::new(BinaryArray::from_iter(values))
            }
            P::Null | P::Void => Arc::new(NullArray::new(slots.len())),
        },
        Type::Decimal { precision, scale } => {
            let mut values = Vec::with_capacity(slots.len());
            for slot in slots {
                values.push(match slot {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(decimal_to_i256(s)?),
                    other => return Err(mismatch(*other, ty)),
                });
            }
            if *precision <= 38 {
                let narrow: Vec<Option<i128>> =
                    values.into_iter().map(|v| v.map(|v| v.as_i128())).collect();
                Arc::new(
                    Decimal128Array::from(narrow)
                        .with_precision_and_scale(*precision, *scale as i8)
                        .map_err(|e| e.to_string())?,
                )
            } else {
                Arc::new(
                    Decimal256Array::from(values)
                        .with_precision_and_scale(*precision, *scale as i8)
                        .map_err(|e| e.to_string())?,
                )
            }
        }
        Type::Optional(item) => {
            if !optional_needs_wrapper(item) {
                return build(item, slots);
            }
            let nulls = null_buffer(slots);
            let nullable_item = item.is_nullable();
            let mut children = Vec::with_capacity(slots.len());
            for slot in slots {
                children.push(match slot {
                    None | Some(Value::Null) => None,
                    Some(Value::Some(inner)) if nullable_item => Some(inner.as_ref()),
                    Some(v) if !nullable_item => Some(*v),
                    other => return Err(mismatch(*other, ty)),
                });
            }
            let child = build(item, &children)?;
            let DataType::Struct(fields) = data_type(ty) else {
                unreachable!("a wrapped optional is a struct")
            };
            Arc::new(StructArray::try_new(fields, vec![child], nulls).map_err(|e| e.to_string())?)
        }
        Type::List(item) => {
            let (offsets, children, nulls) = flatten(slots, ty, |v| match v {
                Value::List(items) => Some(items.iter().map(Some).collect()),
                _ => None,
            })?;
            let values = build(item, &children)?;
            let DataType::List(field) = data_type(ty) else {
                unreachable!("a list type")
            };
            Arc::new(ListArray::try_new(field, offsets, values, nulls).map_err(|e| e.to_string())?)
        }
        Type::Struct(members) => {
            let types: Vec<&Type> = members.iter().map(|m| &m.ty).collect();
            build_struct(ty, &types, slots)?
        }
        Type::Tuple(elements) => {
            let types: Vec<&Type> = elements.iter().collect();
            build_struct(ty, &types, slots)?
        }
        Type::VariantStruct(members) => {
            let types: Vec<&Type> = members.iter().map(|m| &m.ty).collect();
            build_union(ty, &types, slots)?
        }
        Type::VariantTuple(elements) => {
            let types: Vec<&Type> = elements.iter().collect();
            build_union(ty, &types, slots)?
        }
        Type::Dict { key, value } => {
            let (offsets, pairs, nulls) = flatten(slots, ty, |v| match v {
                Value::Dict(pairs) => Some(pairs.iter().map(|(k, v)| (k, v)).collect::<Vec<_>>()),
                _ => None,
            })?;
            let keys: Vec<Option<&Value>> = pairs.iter().map(|(k, _)| Some(*k)).collect();
            let values: Vec<Option<&Value>> = pairs.iter().map(|(_, v)| Some(*v)).collect();
            let entries_fields = Fields::from(vec![field("key", key), field("value", value)]);
            let entries = StructArray::try_new(
                entries_fields,
                vec![build(key, &keys)?, build(value, &values)?],
                None,
            )
            .map_err(|e| e.to_string())?;
            match data_type(ty) {
                DataType::Map(field, ordered) => Arc::new(
                    MapArray::try_new(field, offsets, entries, nulls, ordered)
                        .map_err(|e| e.to_string())?,
                ),
                DataType::List(field) => Arc::new(
                    ListArray::try_new(field, offsets, Arc::new(entries), nulls)
                        .map_err(|e| e.to_string())?,
                ),
                _ => unreachable!("a dict is a map or a list"),
            }
        }
    };
    Ok(array)
}

type Flattened<'v, T> = (OffsetBuffer<i32>, Vec<T>, Option<NullBuffer>);

/// Offsets, the concatenated items and the validity of list-like slots.
fn flatten<'v, T>(
    slots: &[Option<&'v Value>],
    ty: &Type,
    items: impl Fn(&'v Value) -> Option<Vec<T>>,
) -> Result<Flattened<'v, T>, String> {
    let mut offsets = Vec::with_capacity(slots.len() + 1);
    offsets.push(0i32);
    let mut children = Vec::new();
    for slot in slots {
        match slot {
            None | Some(Value::Null) => {}
            Some(v) => children.extend(items(v).ok_or_else(|| mismatch(Some(v), ty))?),
        }
        let end =
            i32::try_from(children.len()).map_err(|_| "more than 2^31 list items in a batch")?;
        offsets.push(end);
    }
    Ok((
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        children,
        null_buffer(slots),
    ))
}

fn build_struct(ty: &Type, types: &[&Type], slots: &[Option<&Value>]) -> Result<ArrayRef, String> {
    let nulls = null_buffer(slots);
    for slot in slots {
        match slot {
            None | Some(Value::Null) => {}
            Some(Value::Tuple(values)) if values.len() == types.len() => {}
            other => return Err(mismatch(*other, ty)),
        }
    }
    let DataType::Struct(fields) = data_type(ty) else {
        unreachable!("a struct type")
    };
    if types.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(slots.len(), nulls)));
    }
    let mut children = Vec::with_capacity(types.len());
    for (i, member) in types.iter().enumerate() {
        let member_slots: Vec<Option<&Value>> = slots
            .iter()
            .map(|slot| match slot {
                Some(Value::Tuple(values)) => Some(&values[i]),
                _ => None,
            })
            .collect();
        children.push(build(member, &member_slots)?);
    }
    Ok(Arc::new(
        StructArray::try_new(fields, children, nulls).map_err(|e| e.to_string())?,
    ))
}

fn build_union(ty: &Type, types: &[&Type], slots: &[Option<&Value>]) -> Result<ArrayRef, String> {
    if types.len() > 127 {
        return Err("a variant of more than 127 alternatives has no Arrow union".into());
    }
    let mut type_ids = Vec::with_capacity(slots.len());
    let mut offsets = Vec::with_capacity(slots.len());
    let mut per_alternative: Vec<Vec<Option<&Value>>> = vec![Vec::new(); types.len()];
    for slot in slots {
        let (index, value) = match slot {
            Some(Value::Variant(index, value)) if (*index as usize) < types.len() => {
                (*index as usize, Some(value.as_ref()))
            }
            // Below a null parent: masked, never read back.
            None | Some(Value::Null) => (0, None),
            other => return Err(mismatch(*other, ty)),
        };
        type_ids.push(index as i8);
        offsets.push(per_alternative[index].len() as i32);
        per_alternative[index].push(value);
    }
    let children = types
        .iter()
        .zip(&per_alternative)
        .map(|(t, values)| build(t, values))
        .collect::<Result<Vec<_>, _>>()?;
    let DataType::Union(fields, _) = data_type(ty) else {
        unreachable!("a union type")
    };
    Ok(Arc::new(
        UnionArray::try_new(
            fields,
            ScalarBuffer::from(type_ids),
            Some(ScalarBuffer::from(offsets)),
            children,
        )
        .map_err(|e| e.to_string())?,
    ))
}

/// A dictionary-encoded version of a Binary or Utf8 array (Int32 keys).
pub(crate) fn dictionary_encode(array: &ArrayRef) -> Result<ArrayRef, String> {
    super::dictionary::encode(array)
}

/// Whether the sample of a Binary/Utf8 array has few enough distinct values that a
/// dictionary pays: at most a quarter of the (up to 1024) sampled values are distinct.
pub(crate) fn low_cardinality(array: &ArrayRef) -> bool {
    let sample = array.len().min(1024);
    if sample < 16 {
        return false;
    }
    let utf8 = matches!(array.data_type(), DataType::Utf8);
    let mut distinct = std::collections::HashSet::new();
    for i in 0..sample {
        if array.is_null(i) {
            continue;
        }
        let value: &[u8] = if utf8 {
            array.as_string::<i32>().value(i).as_bytes()
        } else {
            array.as_binary::<i32>().value(i)
        };
        distinct.insert(value);
        if distinct.len() * 4 > sample {
            return false;
        }
    }
    true
}

fn check_valid(array: &dyn Array, i: usize, ty: &Type) -> Result<(), String> {
    if array.is_null(i) {
        Err(format!("null where type {ty:?} has no null"))
    } else {
        Ok(())
    }
}

/// The value of `ty` at row `i` of `array` (dictionary arrays are resolved).
pub(crate) fn value_at(ty: &Type, array: &dyn Array, i: usize) -> Result<Value, String> {
    use PrimitiveType as P;
    if i >= array.len() {
        return Err(format!("row {i} past an array of {}", array.len()));
    }
    if let Some(dictionary) = array.as_any_dictionary_opt() {
        let keys = dictionary
            .keys()
            .as_primitive_opt::<Int32Type>()
            .ok_or("dictionary keys other than int32")?;
        if keys.is_null(i) {
            return if ty.is_nullable() {
                Ok(Value::Null)
            } else {
                Err(format!("null where type {ty:?} has no null"))
            };
        }
        let key = usize::try_from(keys.value(i)).map_err(|_| "negative dictionary key")?;
        return value_at(ty, dictionary.values().as_ref(), key);
    }
    let wrong = || {
        format!(
            "array of {} where type {ty:?} is expected",
            array.data_type()
        )
    };
    Ok(match ty {
        Type::Tagged { item, .. } => value_at(item, array, i)?,
        Type::Optional(item) => {
            if array.is_null(i) {
                return Ok(Value::Null);
            }
            if optional_needs_wrapper(item) {
                let inner = array.as_struct_opt().ok_or_else(wrong)?;
                if inner.num_columns() != 1 {
                    return Err(wrong());
                }
                let value = value_at(item, inner.column(0).as_ref(), i)?;
                if item.is_nullable() {
                    Value::Some(Box::new(value))
                } else {
                    value
                }
            } else {
                value_at(item, array, i)?
            }
        }
        Type::Primitive(P::Null | P::Void) => Value::Null,
        Type::Primitive(p) => {
            check_valid(array, i, ty)?;
            macro_rules! get {
                ($t:ty) => {
                    array.as_primitive_opt::<$t>().ok_or_else(wrong)?.value(i)
                };
            }
            match p {
                P::Int8 => Value::Int64(get!(Int8Type).into()),
                P::Int16 => Value::Int64(get!(Int16Type).into()),
                P::Int32 => Value::Int64(get!(Int32Type).into()),
                P::Int64 => Value::Int64(get!(Int64Type)),
                P::Uint8 => Value::Uint64(get!(UInt8Type).into()),
                P::Uint16 => Value::Uint64(get!(UInt16Type).into()),
                P::Uint32 => Value::Uint64(get!(UInt32Type).into()),
                P::Uint64 => Value::Uint64(get!(UInt64Type)),
                P::Float => Value::Double(get!(Float32Type).into()),
                P::Double => Value::Double(get!(Float64Type)),
                P::Bool => Value::Bool(array.as_boolean_opt().ok_or_else(wrong)?.value(i)),
                P::Date => Value::Uint64(
                    u64::try_from(get!(Date32Type)).map_err(|_| "negative date".to_owned())?,
                ),
                P::Date32 => Value::Int64(get!(Date32Type).into()),
                P::Datetime => Value::Uint64(
                    u64::try_from(get!(TimestampSecondType))
                        .map_err(|_| "negative datetime".to_owned())?,
                ),
                P::Datetime64 => Value::Int64(get!(TimestampSecondType)),
                P::Timestamp => Value::Uint64(
                    u64::try_from(get!(TimestampMicrosecondType))
                        .map_err(|_| "negative timestamp".to_owned())?,
                ),
                P::Timestamp64 => Value::Int64(get!(TimestampMicrosecondType)),
                P::Interval | P::Interval64 => Value::Int64(get!(DurationMicrosecondType)),
                P::String => Value::String(
                    array
                        .as_binary_opt::<i32>()
                        .ok_or_else(wrong)?
                        .value(i)
                        .to_vec(),
                ),
                P::Utf8 | P::Json => Value::String(
                    array
                        .as_string_opt::<i32>()
                        .ok_or_else(wrong)?
                        .value(i)
                        .as_bytes()
                        .to_vec(),
                ),
                P::Uuid => Value::String(
                    array
                        .as_fixed_size_binary_opt()
                        .filter(|a| a.value_length() == 16)
                        .ok_or_else(wrong)?
                        .value(i)
                        .to_vec(),
                ),
                P::Yson => {
                    let bytes = array.as_binary_opt::<i32>().ok_or_else(wrong)?.value(i);
                    let node: Node =
                        yson::from_slice(bytes).map_err(|e| format!("yson value: {e}"))?;
                    Value::Any(node)
                }
                P::Null | P::Void => Value::Null,
            }
        }
        Type::Decimal { precision, .. } => {
            check_valid(array, i, ty)?;
            let width = Type::decimal_byte_width(*precision);
            let integer = if *precision <= 38 {
                i256::from_i128(
                    array
                        .as_primitive_opt::<Decimal128Type>()
                        .ok_or_else(wrong)?
                        .value(i),
                )
            } else {
                array
                    .as_primitive_opt::<Decimal256Type>()
                    .ok_or_else(wrong)?
                    .value(i)
            };
            Value::String(decimal_from_i256(integer, width)?)
        }
        Type::List(item) => {
            check_valid(array, i, ty)?;
            let list = array.as_list_opt::<i32>().ok_or_else(wrong)?;
            let values = list.value(i);
            (0..values.len())
                .map(|j| value_at(item, values.as_ref(), j))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::List)?
        }
        Type::Struct(members) => {
            let types: Vec<&Type> = members.iter().map(|m| &m.ty).collect();
            struct_at(ty, &types, array, i)?
        }
        Type::Tuple(elements) => {
            let types: Vec<&Type> = elements.iter().collect();
            struct_at(ty, &types, array, i)?
        }
        Type::VariantStruct(members) => {
            let types: Vec<&Type> = members.iter().map(|m| &m.ty).collect();
            union_at(ty, &types, array, i)?
        }
        Type::VariantTuple(elements) => {
            let types: Vec<&Type> = elements.iter().collect();
            union_at(ty, &types, array, i)?
        }
        Type::Dict { key, value } => {
            check_valid(array, i, ty)?;
            let entries = if let Some(map) = array.as_map_opt() {
                map.value(i)
            } else {
                let list = array.as_list_opt::<i32>().ok_or_else(wrong)?;
                let entries = list.value(i);
                entries.as_struct_opt().ok_or_else(wrong)?.clone()
            };
            if entries.num_columns() != 2 {
                return Err(wrong());
            }
            let mut pairs = Vec::with_capacity(entries.len());
            for j in 0..entries.len() {
                pairs.push((
                    value_at(key, entries.column(0).as_ref(), j)?,
                    value_at(value, entries.column(1).as_ref(), j)?,
                ));
            }
            Value::Dict(pairs)
        }
    })
}

fn struct_at(ty: &Type, types: &[&Type], array: &dyn Array, i: usize) -> Result<Value, String> {
    check_valid(array, i, ty)?;
    let array = array
        .as_struct_opt()
        .filter(|s| s.num_columns() == types.len())
        .ok_or_else(|| {
            format!(
                "array of {} where type {ty:?} is expected",
                array.data_type()
            )
        })?;
    types
        .iter()
        .zip(array.columns())
        .map(|(t, column)| value_at(t, column.as_ref(), i))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Tuple)
}

fn union_at(ty: &Type, types: &[&Type], array: &dyn Array, i: usize) -> Result<Value, String> {
    let union = array.as_union_opt().ok_or_else(|| {
        format!(
            "array of {} where type {ty:?} is expected",
            array.data_type()
        )
    })?;
    let type_id = union.type_id(i);
    let DataType::Union(fields, _) = union.data_type() else {
        unreachable!("a union array has a union type")
    };
    if !fields.iter().any(|(id, _)| id == type_id) {
        return Err(format!("union type id {type_id} has no child"));
    }
    let index = usize::try_from(type_id)
        .ok()
        .filter(|index| *index < types.len())
        .ok_or_else(|| format!("union type id {type_id} out of range"))?;
    let child = union.child(type_id);
    let offset = union.value_offset(i);
    Ok(Value::Variant(
        index as u32,
        Box::new(value_at(types[index], child.as_ref(), offset)?),
    ))
}
