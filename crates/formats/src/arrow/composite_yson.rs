//! Composite values of a record batch written as binary YSON straight from the child arrays.
//!
//! The row interface hands a list, struct, tuple or dict value over as its binary YSON
//! (YT's named form: structs as maps, dicts as lists of `[key; value]` pairs). Doing that
//! with a downcast and a type match per value and per item costs more than the Arrow decode
//! itself, so a column's type and array are resolved once per batch into a [`YsonPlan`]: a
//! tree of the concrete buffers (offsets, values, validity) with the structure the type
//! dictates, and struct keys already spelled as YSON strings. Writing a value is then a walk
//! of the tree with plain slice reads; a run of fixed-width scalars (a list of doubles) is
//! written in one loop.
//!
//! Invariants, checked when a plan is made so the walk only indexes in bounds:
//! - every node knows its length; a list's or dict's offsets have one more entry than its
//!   length and end within its child's length; a struct's members are at least as long as
//!   the struct; a string leaf's offsets end within its bytes;
//! - a node keeps its validity only when it has nulls; a null of a type without null is an
//!   error naming the type (the decoder does not check nullability), of an optional it is `#`.
//!
//! Shapes without a plan (variants, optionals of nullable items, decimals, uuids, dates and
//! times, `yson`, dictionary-encoded children) make [`YsonPlan::new`] return `None`; the
//! column then goes through owned values (row_views' transcoding).

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use shapeshift_types::{PrimitiveType, Type};

use crate::table::yson_binary;

/// Zeros after a spelled struct key (see [`append_short`]).
const KEY_PADDING: usize = 16;

/// A scalar column inside a composite value.
enum Leaf {
    I8(ScalarBuffer<i8>),
    I16(ScalarBuffer<i16>),
    I32(ScalarBuffer<i32>),
    I64(ScalarBuffer<i64>),
    U8(ScalarBuffer<u8>),
    U16(ScalarBuffer<u16>),
    U32(ScalarBuffer<u32>),
    U64(ScalarBuffer<u64>),
    F32(ScalarBuffer<f32>),
    F64(ScalarBuffer<f64>),
    Bool(BooleanBuffer),
    Bytes {
        offsets: OffsetBuffer<i32>,
        values: Buffer,
    },
}

enum Shape {
    Leaf(Leaf),
    /// `null` / `void`: always `#`.
    Null,
    List {
        offsets: OffsetBuffer<i32>,
        item: Box<YsonPlan>,
    },
    /// A struct: each member's key already spelled as a binary YSON string and `=`,
    /// followed by [`KEY_PADDING`] zeros (so a short key is copied as a fixed 16 bytes).
    Struct {
        keys: Vec<Vec<u8>>,
        members: Vec<YsonPlan>,
    },
    Tuple {
        elements: Vec<YsonPlan>,
    },
    Dict {
        offsets: OffsetBuffer<i32>,
        key: Box<YsonPlan>,
        value: Box<YsonPlan>,
    },
}

/// How to write values of one type from one array as binary YSON (see the module docs).
pub(super) struct YsonPlan {
    shape: Shape,
    /// The validity, only when the array has nulls.
    nulls: Option<NullBuffer>,
    /// The type is an optional whose null is `#` (else a null is an error).
    nullable: bool,
    len: usize,
    /// The type, for error messages.
    ty: Type,
}

fn primitive<T: ArrowPrimitiveType>(array: &dyn Array) -> Option<ScalarBuffer<T::Native>> {
    array.as_primitive_opt::<T>().map(|a| a.values().clone())
}

/// The leaf of a primitive of the named form written as a YSON scalar, if there is one.
fn leaf(p: PrimitiveType, array: &dyn Array) -> Option<Leaf> {
    use PrimitiveType as P;
    let len = array.len();
    let leaf = match (p, array.data_type()) {
        (P::Int8, DataType::Int8) => Leaf::I8(primitive::<Int8Type>(array)?),
        (P::Int16, DataType::Int16) => Leaf::I16(primitive::<Int16Type>(array)?),
        (P::Int32, DataType::Int32) => Leaf::I32(primitive::<Int32Type>(array)?),
        (P::Int64, DataType::Int64) => Leaf::I64(primitive::<Int64Type>(array)?),
        (P::Uint8, DataType::UInt8) => Leaf::U8(primitive::<UInt8Type>(array)?),
        (P::Uint16, DataType::UInt16) => Leaf::U16(primitive::<UInt16Type>(array)?),
        (P::Uint32, DataType::UInt32) => Leaf::U32(primitive::<UInt32Type>(array)?),
        (P::Uint64, DataType::UInt64) => Leaf::U64(primitive::<UInt64Type>(array)?),
        (P::Float, DataType::Float32) => Leaf::F32(primitive::<Float32Type>(array)?),
        (P::Double, DataType::Float64) => Leaf::F64(primitive::<Float64Type>(array)?),
        (P::Bool, DataType::Boolean) => Leaf::Bool(array.as_boolean_opt()?.values().clone()),
        (P::String, DataType::Binary) => {
            let a = array.as_binary_opt::<i32>()?;
            Leaf::Bytes {
                offsets: a.offsets().clone(),
                values: a.values().clone(),
            }
        }
        (P::Utf8 | P::Json, DataType::Utf8) => {
            let a = array.as_string_opt::<i32>()?;
            Leaf::Bytes {
                offsets: a.offsets().clone(),
                values: a.values().clone(),
            }
        }
        _ => return None,
    };
    let fits = match &leaf {
        Leaf::I8(v) => v.len() >= len,
        Leaf::I16(v) => v.len() >= len,
        Leaf::I32(v) => v.len() >= len,
        Leaf::I64(v) => v.len() >= len,
        Leaf::U8(v) => v.len() >= len,
        Leaf::U16(v) => v.len() >= len,
        Leaf::U32(v) => v.len() >= len,
        Leaf::U64(v) => v.len() >= len,
        Leaf::F32(v) => v.len() >= len,
        Leaf::F64(v) => v.len() >= len,
        Leaf::Bool(v) => v.len() >= len,
        Leaf::Bytes { offsets, values } => offsets_fit(offsets, len, values.len()),
    };
    fits.then_some(leaf)
}

/// Offsets of `len` values that end within `items` (Arrow's offsets are non-negative and
/// ascending by construction).
fn offsets_fit(offsets: &OffsetBuffer<i32>, len: usize, items: usize) -> bool {
    offsets.len() == len + 1 && (offsets.last() as usize) <= items
}

fn is_variant(ty: &Type) -> bool {
    matches!(
        ty.untagged(),
        Type::VariantStruct(_) | Type::VariantTuple(_)
    )
}

impl YsonPlan {
    /// The plan for values of `ty` in `array`, or `None` for a shape without one.
    pub(super) fn new(ty: &Type, array: &dyn Array) -> Option<YsonPlan> {
        let mut inner = ty;
        let mut nullable = false;
        loop {
            match inner {
                Type::Tagged { item, .. } => inner = item,
                Type::Optional(item) if !item.is_nullable() && !is_variant(item) => {
                    nullable = true;
                    inner = item;
                }
                _ => break,
            }
        }
        if array.as_any_dictionary_opt().is_some() {
            return None;
        }
        let len = array.len();
        let shape = match inner {
            Type::Primitive(PrimitiveType::Null | PrimitiveType::Void) => {
                nullable = true;
                Shape::Null
            }
            Type::Primitive(p) => Shape::Leaf(leaf(*p, array)?),
            Type::List(item) => {
                let list = array.as_list_opt::<i32>()?;
                let values = list.values();
                if !offsets_fit(list.offsets(), len, values.len()) {
                    return None;
                }
                Shape::List {
                    offsets: list.offsets().clone(),
                    item: Box::new(YsonPlan::new(item, values.as_ref())?),
                }
            }
            Type::Struct(members) => {
                let s = array.as_struct_opt()?;
                if s.num_columns() != members.len() {
                    return None;
                }
                let mut keys = Vec::with_capacity(members.len());
                let mut plans = Vec::with_capacity(members.len());
                for (member, column) in members.iter().zip(s.columns()) {
                    let mut key = Vec::with_capacity(member.name.len() + 3 + KEY_PADDING);
                    yson_binary::string(&mut key, member.name.as_bytes());
                    key.push(b'=');
                    key.resize(key.len() + KEY_PADDING, 0);
                    keys.push(key);
                    plans.push(member_plan(&member.ty, column.as_ref(), len)?);
                }
                Shape::Struct {
                    keys,
                    members: plans,
                }
            }
            Type::Tuple(elements) => {
                let s = array.as_struct_opt()?;
                if s.num_columns() != elements.len() {
                    return None;
                }
                Shape::Tuple {
                    elements: elements
                        .iter()
                        .zip(s.columns())
                        .map(|(t, column)| member_plan(t, column.as_ref(), len))
                        .collect::<Option<_>>()?,
                }
            }
            Type::Dict { key, value } => {
                let (offsets, entries) = if let Some(map) = array.as_map_opt() {
                    (map.offsets().clone(), map.entries())
                } else {
                    let list = array.as_list_opt::<i32>()?;
                    (list.offsets().clone(), list.values().as_struct_opt()?)
                };
                if entries.num_columns() != 2 || !offsets_fit(&offsets, len, entries.len()) {
                    return None;
                }
                let items = entries.len();
                Shape::Dict {
                    offsets,
                    key: Box::new(member_plan(key, entries.column(0).as_ref(), items)?),
                    value: Box::new(member_plan(value, entries.column(1).as_ref(), items)?),
                }
            }
            _ => return None,
        };
        Some(YsonPlan {
            shape,
            nulls: array.nulls().filter(|n| n.null_count() > 0).cloned(),
            nullable,
            len,
            ty: ty.clone(),
        })
    }

    /// Writes value `i` as binary YSON.
    ///
    /// # Errors
    /// `i` out of the array, or a null where the type has none.
    pub(super) fn write(&self, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        if i >= self.len {
            return Err(format!("row {i} past an array of {}", self.len));
        }
        self.write_at(i, out)
    }

    /// Writes the values of `rows` one after another into `out`, pushing the end of each
    /// value (`out.len()` after it) onto `ends`. A null of a nullable type is written as
    /// nothing (an empty range: every value's YSON has at least one byte), for the caller to
    /// view as a null. The shape is matched once for the whole run, so each shape's loop is
    /// monomorphic (the per-batch column of a transposed chunk).
    ///
    /// # Errors
    /// The row and message of the first value that cannot be written (rows past the array,
    /// a null where the type has none).
    pub(super) fn write_rows(
        &self,
        rows: Range<usize>,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), (usize, String)> {
        if rows.end > self.len {
            return Err((rows.start, format!("rows past an array of {}", self.len)));
        }
        ends.reserve(rows.len());
        let nulls = self.nulls.as_ref();
        macro_rules! each {
            ($write:expr) => {
                for i in rows {
                    if nulls.is_some_and(|n| n.is_null(i)) {
                        if !self.nullable {
                            return Err((i, format!("null where type {} has no null", self.ty)));
                        }
                    } else {
                        $write(i, &mut *out).map_err(|e| (i, e))?;
                    }
                    ends.push(out.len());
                }
            };
        }
        match &self.shape {
            Shape::List { offsets, item } => each!(|i, out| write_list(offsets, item, i, out)),
            Shape::Struct { keys, members } => {
                each!(|i, out| write_struct(keys, members, i, out))
            }
            Shape::Tuple { elements } => each!(|i, out| write_tuple(elements, i, out)),
            Shape::Dict {
                offsets,
                key,
                value,
            } => each!(|i, out| write_dict(offsets, key, value, i, out)),
            Shape::Leaf(_) | Shape::Null => each!(|i, out| self.write_at(i, out)),
        }
        Ok(())
    }

    /// As [`YsonPlan::write`], `i` known to be below `len`.
    fn write_at(&self, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        if let Some(nulls) = &self.nulls {
            if nulls.is_null(i) {
                return self.null(out);
            }
        }
        match &self.shape {
            Shape::Leaf(leaf) => write_leaf(leaf, i, out),
            Shape::Null => out.push(b'#'),
            Shape::List { offsets, item } => write_list(offsets, item, i, out)?,
            Shape::Struct { keys, members } => write_struct(keys, members, i, out)?,
            Shape::Tuple { elements } => write_tuple(elements, i, out)?,
            Shape::Dict {
                offsets,
                key,
                value,
            } => write_dict(offsets, key, value, i, out)?,
        }
        Ok(())
    }

    /// [`YsonPlan::write_at`] with a leaf without nulls written in place (the members of
    /// structs and the keys and values of dicts mostly are such leaves).
    #[inline(always)]
    fn write_item(&self, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
        match (&self.shape, &self.nulls) {
            (Shape::Leaf(leaf), None) => {
                write_leaf(leaf, i, out);
                Ok(())
            }
            _ => self.write_at(i, out),
        }
    }

    #[cold]
    fn null(&self, out: &mut Vec<u8>) -> Result<(), String> {
        if self.nullable {
            out.push(b'#');
            Ok(())
        } else {
            Err(format!("null where type {} has no null", self.ty))
        }
    }

    /// Writes the values `range` (within `len`), each followed by `;`.
    fn write_run(&self, range: Range<usize>, out: &mut Vec<u8>) -> Result<(), String> {
        match (&self.shape, &self.nulls) {
            (Shape::Leaf(Leaf::F64(values)), None) => {
                fixed_run(&values[range], out, |v, slot| {
                    slot[0] = 0x03;
                    slot[1..9].copy_from_slice(&v.to_le_bytes());
                });
            }
            (Shape::Leaf(Leaf::F32(values)), None) => {
                fixed_run(&values[range], out, |v, slot| {
                    slot[0] = 0x03;
                    slot[1..9].copy_from_slice(&f64::from(v).to_le_bytes());
                });
            }
            _ => {
                for j in range {
                    self.write_at(j, out)?;
                    out.push(b';');
                }
            }
        }
        Ok(())
    }
}

#[inline(always)]
fn write_list(
    offsets: &OffsetBuffer<i32>,
    item: &YsonPlan,
    i: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let range = offsets[i] as usize..offsets[i + 1] as usize;
    out.push(b'[');
    item.write_run(range, out)?;
    out.push(b']');
    Ok(())
}

#[inline(always)]
fn write_struct(
    keys: &[Vec<u8>],
    members: &[YsonPlan],
    i: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.push(b'{');
    for (key, member) in keys.iter().zip(members) {
        append_short(out, key, 0..key.len() - KEY_PADDING);
        member.write_item(i, out)?;
        out.push(b';');
    }
    out.push(b'}');
    Ok(())
}

#[inline(always)]
fn write_tuple(elements: &[YsonPlan], i: usize, out: &mut Vec<u8>) -> Result<(), String> {
    out.push(b'[');
    for element in elements {
        element.write_item(i, out)?;
        out.push(b';');
    }
    out.push(b']');
    Ok(())
}

#[inline(always)]
fn write_dict(
    offsets: &OffsetBuffer<i32>,
    key: &YsonPlan,
    value: &YsonPlan,
    i: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.push(b'[');
    for j in offsets[i] as usize..offsets[i + 1] as usize {
        out.push(b'[');
        key.write_item(j, out)?;
        out.push(b';');
        value.write_item(j, out)?;
        out.extend_from_slice(b";];");
    }
    out.push(b']');
    Ok(())
}

/// A member's plan, which must cover the `len` rows of its parent.
fn member_plan(ty: &Type, array: &dyn Array, len: usize) -> Option<YsonPlan> {
    YsonPlan::new(ty, array).filter(|plan| plan.len >= len)
}

/// Writes doubles as `0x03`, 8 bytes, `;` each, into space reserved once.
#[inline(always)]
fn fixed_run<T: Copy>(values: &[T], out: &mut Vec<u8>, spell: impl Fn(T, &mut [u8])) {
    const WIDTH: usize = 10;
    let start = out.len();
    out.resize(start + values.len() * WIDTH, b';');
    for (v, slot) in values.iter().zip(out[start..].chunks_exact_mut(WIDTH)) {
        spell(*v, &mut slot[..WIDTH - 1]);
    }
}

/// Appends the first `len` bytes of `padded`: the whole array is copied (a copy of a size
/// known at compile time is a few moves; one of a run-time size is a call of `memcpy`, which
/// costs more than the few bytes of a token) and the tail cut off again.
#[inline(always)]
fn append_prefix<const N: usize>(out: &mut Vec<u8>, padded: &[u8; N], len: usize) {
    debug_assert!(len <= N);
    let at = out.len();
    out.extend_from_slice(padded);
    out.truncate(at + len);
}

/// Binary YSON's token `tag` and varint `v`, spelled on the stack and appended at once.
#[inline(always)]
fn tagged_varint(out: &mut Vec<u8>, tag: u8, mut v: u64) {
    let mut spelled = [0u8; 11];
    spelled[0] = tag;
    let mut n = 1;
    while v >= 0x80 {
        spelled[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    spelled[n] = v as u8;
    append_prefix(out, &spelled, n + 1);
}

/// Bytes that are mostly short (struct keys, strings inside composites): a short run is
/// copied as a fixed 16 bytes where the source has them, see [`append_prefix`].
#[inline(always)]
fn append_short(out: &mut Vec<u8>, source: &[u8], range: Range<usize>) {
    const SHORT: usize = 16;
    if range.len() <= SHORT {
        if let Some(padded) = source
            .get(range.start..range.start + SHORT)
            .and_then(|s| <&[u8; SHORT]>::try_from(s).ok())
        {
            append_prefix(out, padded, range.len());
            return;
        }
    }
    out.extend_from_slice(&source[range]);
}

#[inline(always)]
fn int64(out: &mut Vec<u8>, v: i64) {
    tagged_varint(out, 0x02, ((v << 1) ^ (v >> 63)) as u64);
}

#[inline(always)]
fn uint64(out: &mut Vec<u8>, v: u64) {
    tagged_varint(out, 0x06, v);
}

#[inline(always)]
fn double(out: &mut Vec<u8>, v: f64) {
    let mut spelled = [0x03u8; 9];
    spelled[1..].copy_from_slice(&v.to_le_bytes());
    out.extend_from_slice(&spelled);
}

/// The string `source[range]`.
#[inline(always)]
fn string(out: &mut Vec<u8>, source: &[u8], range: Range<usize>) {
    let len = range.len() as i64;
    tagged_varint(out, 0x01, ((len << 1) ^ (len >> 63)) as u64);
    append_short(out, source, range);
}

#[inline(always)]
fn write_leaf(leaf: &Leaf, i: usize, out: &mut Vec<u8>) {
    match leaf {
        Leaf::I8(v) => int64(out, v[i].into()),
        Leaf::I16(v) => int64(out, v[i].into()),
        Leaf::I32(v) => int64(out, v[i].into()),
        Leaf::I64(v) => int64(out, v[i]),
        Leaf::U8(v) => uint64(out, v[i].into()),
        Leaf::U16(v) => uint64(out, v[i].into()),
        Leaf::U32(v) => uint64(out, v[i].into()),
        Leaf::U64(v) => uint64(out, v[i]),
        Leaf::F32(v) => double(out, v[i].into()),
        Leaf::F64(v) => double(out, v[i]),
        Leaf::Bool(v) => yson_binary::boolean(out, v.value(i)),
        Leaf::Bytes { offsets, values } => {
            let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
            string(out, values, start..end);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;
    use shapeshift_types::testing::{arb_type, arb_value};
    use shapeshift_types::{Member, Value};

    use super::*;
    use crate::arrow::columns;

    /// The plan's spelling and the owned path's (value -> binary YSON) for every row.
    fn both_spellings(ty: &Type, values: &[Value]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let slots: Vec<Option<&Value>> = values.iter().map(Some).collect();
        let array = columns::build(ty, &slots).unwrap();
        let plan = YsonPlan::new(ty, array.as_ref())?;
        Some(
            values
                .iter()
                .enumerate()
                .map(|(i, value)| {
                    let mut by_plan = Vec::new();
                    plan.write(i, &mut by_plan).unwrap();
                    let mut by_value = Vec::new();
                    yson_binary::value(&mut by_value, value, ty).unwrap();
                    (by_plan, by_value)
                })
                .collect(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn plans_spell_what_owned_values_spell(
            (ty, values) in arb_type(3).prop_flat_map(|ty| {
                let values = vec(arb_value(&ty), 0..6);
                (Just(ty), values)
            })
        ) {
            for (by_plan, by_value) in both_spellings(&ty, &values).unwrap_or_default() {
                prop_assert_eq!(by_plan, by_value);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// `write_rows` (a chunk's column in one run) gives each row's `write` bytes, a null
        /// row as an empty range, over any sub-range of rows.
        #[test]
        fn a_run_spells_what_single_writes_spell(
            (ty, values) in arb_type(3).prop_flat_map(|ty| {
                let values = vec(arb_value(&ty), 0..8);
                (Just(ty), values)
            }),
            cut in 0usize..8,
        ) {
            let slots: Vec<Option<&Value>> = values.iter().map(Some).collect();
            let array = columns::build(&ty, &slots).unwrap();
            let Some(plan) = YsonPlan::new(&ty, array.as_ref()) else { return Ok(()) };
            let from = cut.min(values.len());
            let (mut out, mut ends) = (vec![0xAA], Vec::new());
            plan.write_rows(from..values.len(), &mut out, &mut ends).unwrap();
            prop_assert_eq!(ends.len(), values.len() - from);
            let mut at = 1;
            for (i, end) in (from..values.len()).zip(&ends) {
                let mut single = Vec::new();
                plan.write(i, &mut single).unwrap();
                if array.is_null(i) {
                    prop_assert_eq!(*end, at, "a null row adds nothing");
                } else {
                    prop_assert_eq!(&out[at..*end], &single[..]);
                }
                at = *end;
            }
            prop_assert_eq!(at, out.len());
            prop_assert!(plan.write_rows(0..values.len() + 1, &mut out, &mut ends).is_err());
        }
    }

    #[test]
    fn the_lab_shapes_have_plans_and_spell_like_owned_values() {
        let p = Type::Primitive;
        let pair = Type::Struct(vec![
            Member::new("foo", p(PrimitiveType::Int32)),
            Member::new("bar", p(PrimitiveType::String)),
        ]);
        let cases = [
            (
                Type::list(p(PrimitiveType::Double)),
                vec![
                    Value::List(vec![Value::Double(1.5), Value::Double(-0.0)]),
                    Value::List(vec![]),
                ],
            ),
            (
                Type::optional(pair.clone()),
                vec![
                    Value::Tuple(vec![Value::Int64(-3), Value::String(b"x".to_vec())]),
                    Value::Null,
                    Value::Tuple(vec![Value::Int64(1 << 20), Value::String(vec![0xFF; 200])]),
                ],
            ),
            (
                Type::dict(p(PrimitiveType::Int64), p(PrimitiveType::String)),
                vec![
                    Value::Dict(vec![(Value::Int64(i64::MIN), Value::String(vec![]))]),
                    Value::Dict(vec![]),
                ],
            ),
            (
                Type::Tuple(vec![p(PrimitiveType::Uint64), p(PrimitiveType::Bool)]),
                vec![Value::Tuple(vec![
                    Value::Uint64(u64::MAX),
                    Value::Bool(true),
                ])],
            ),
        ];
        for (ty, values) in cases {
            let spellings = both_spellings(&ty, &values).expect("a plan");
            assert_eq!(spellings.len(), values.len());
            for (by_plan, by_value) in spellings {
                assert_eq!(by_plan, by_value, "{ty}");
            }
        }
    }

    #[test]
    fn a_null_where_the_type_has_none_is_an_error() {
        let ty = Type::list(Type::Primitive(PrimitiveType::Int64));
        let array =
            arrow_array::ListArray::from_iter_primitive::<Int64Type, _, _>(vec![Some(vec![
                Some(1),
                None,
            ])]);
        let plan = YsonPlan::new(&ty, &array).expect("a plan");
        let e = plan.write(0, &mut Vec::new()).unwrap_err();
        assert!(e.contains("null where type int64 has no null"), "{e}");
        assert!(plan.write(1, &mut Vec::new()).is_err());
    }
}
