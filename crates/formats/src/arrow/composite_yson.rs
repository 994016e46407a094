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
//! Values are written through a [`Cursor`], a raw pointer into space reserved up front, so
//! no token checks capacity. That is sound because of one more invariant: for any range of
//! rows, [`YsonPlan::bound`] is at least the bytes the writers put there, and no writer's
//! fixed-size store reaches more than [`SLACK`] bytes past the last byte it means to write.
//! [`with_reserved`] reserves bound + slack before a run and asserts the bound after it.
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
    offsets.len() == len + 1 && offsets.last().is_some_and(|&last| last as usize <= items)
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
        // SAFETY: `i` is within the plan (checked above), which is what `bound` and `put`
        // need; `with_reserved` reserves the bound and the slack.
        unsafe { with_reserved(out, self.bound(i..i + 1), |c| self.put(i, c)) }
    }

    /// Writes the values of `rows` one after another into `out`, pushing the end of each
    /// value (`out.len()` after it) onto `ends`. A null of a nullable type is written as
    /// nothing (an empty range: every value's YSON has at least one byte), for the caller to
    /// view as a null. The space is reserved once for the whole run (see [`YsonPlan::bound`])
    /// and the shape matched once, so each shape's loop is monomorphic and writes without
    /// capacity checks (the per-batch column of a transposed chunk).
    ///
    /// # Errors
    /// The row and message of the first value that cannot be written (rows past the array,
    /// a null where the type has none); `out` then holds the values before it.
    pub(super) fn write_rows(
        &self,
        rows: Range<usize>,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), (usize, String)> {
        if rows.end > self.len || rows.start > rows.end {
            return Err((rows.start, format!("rows past an array of {}", self.len)));
        }
        ends.reserve(rows.len());
        let nulls = self.nulls.as_ref();
        macro_rules! each {
            ($c:ident, $put:expr) => {{
                for i in rows {
                    if nulls.is_some_and(|n| n.is_null(i)) {
                        if !self.nullable {
                            return Err((i, format!("null where type {} has no null", self.ty)));
                        }
                    } else {
                        $put(i, &mut *$c).map_err(|e| (i, e))?;
                    }
                    ends.push($c.len());
                }
                Ok(())
            }};
        }
        // SAFETY: `rows` are within the plan (checked above), which is what `bound` and the
        // writers need; `with_reserved` reserves their bound and the slack.
        unsafe {
            with_reserved(out, self.bound(rows.clone()), |c| match &self.shape {
                Shape::List { offsets, item } => match (&item.shape, &item.nulls) {
                    // A list of scalars (a vector): the items' type matched once per row.
                    (Shape::Leaf(leaf), None) => each!(c, |i, c: &mut Cursor| {
                        c.byte(b'[');
                        put_leaf_run(leaf, offsets[i] as usize..offsets[i + 1] as usize, c);
                        c.byte(b']');
                        Ok::<(), String>(())
                    }),
                    _ => each!(c, |i, c| put_list(offsets, item, i, c)),
                },
                Shape::Struct { keys, members } => {
                    each!(c, |i, c| put_struct(keys, members, i, c))
                }
                Shape::Tuple { elements } => each!(c, |i, c| put_tuple(elements, i, c)),
                Shape::Dict {
                    offsets,
                    key,
                    value,
                } => match (&key.shape, &key.nulls, &value.shape, &value.nulls) {
                    // Scalar keys and values (nearly every dict): no per-item check of the
                    // plans' shapes and validity.
                    (Shape::Leaf(key), None, Shape::Leaf(value), None) => {
                        each!(c, |i, c: &mut Cursor| {
                            c.byte(b'[');
                            for j in offsets[i] as usize..offsets[i + 1] as usize {
                                c.byte(b'[');
                                put_leaf(key, j, c);
                                c.byte(b';');
                                put_leaf(value, j, c);
                                c.array(*b";];");
                            }
                            c.byte(b']');
                            Ok::<(), String>(())
                        })
                    }
                    _ => each!(c, |i, c| put_dict(offsets, key, value, i, c)),
                },
                Shape::Leaf(_) | Shape::Null => each!(c, |i, c| self.put_present(i, c)),
            })
        }
    }

    /// At least the bytes the values `rows` (within `len`) take, without the bytes a fixed
    /// copy may write past the end ([`SLACK`]): one walk of the plan, not of the values. A
    /// range of rows maps to one range of a list's or dict's items (offsets ascend), so a
    /// run's bound costs the same for one row as for a chunk. Token widths are the widest:
    /// a varint of 10 bytes, a string's length of 10, a `#` for every row that may be null,
    /// and the items under a null row (which are not written) are counted.
    ///
    /// The writers rely on it: a run never writes more than its bound (the proptests check
    /// it, and [`with_reserved`] asserts it after every run).
    fn bound(&self, rows: Range<usize>) -> usize {
        const VARINT_TOKEN: usize = 11;
        let n = rows.len();
        let nulls = if self.nulls.is_some() { n } else { 0 };
        let own = match &self.shape {
            Shape::Null => n,
            Shape::Leaf(Leaf::Bool(_)) => n,
            Shape::Leaf(Leaf::F32(_) | Leaf::F64(_)) => 9 * n,
            Shape::Leaf(Leaf::Bytes { offsets, .. }) => {
                VARINT_TOKEN * n + items_of(offsets, &rows).len()
            }
            Shape::Leaf(_) => VARINT_TOKEN * n,
            Shape::List { offsets, item } => {
                let items = items_of(offsets, &rows);
                2 * n + items.len() + item.bound(items)
            }
            Shape::Struct { keys, members } => {
                let spelled: usize = keys.iter().map(|k| k.len() - KEY_PADDING + 1).sum();
                (2 + spelled) * n + members.iter().map(|m| m.bound(rows.clone())).sum::<usize>()
            }
            Shape::Tuple { elements } => {
                (2 + elements.len()) * n
                    + elements
                        .iter()
                        .map(|e| e.bound(rows.clone()))
                        .sum::<usize>()
            }
            Shape::Dict {
                offsets,
                key,
                value,
            } => {
                let items = items_of(offsets, &rows);
                2 * n + 5 * items.len() + key.bound(items.clone()) + value.bound(items)
            }
        };
        nulls + own
    }

    /// Writes value `i` (within `len`): `#` for a null of an optional.
    ///
    /// # Safety
    /// `c` has room for `self.bound(i..i + 1)` bytes and [`SLACK`].
    #[inline]
    unsafe fn put(&self, i: usize, c: &mut Cursor) -> Result<(), String> {
        if let Some(nulls) = &self.nulls {
            if nulls.is_null(i) {
                return self.put_null(c);
            }
        }
        self.put_present(i, c)
    }

    /// As [`YsonPlan::put`], value `i` known not to be null.
    ///
    /// # Safety
    /// As [`YsonPlan::put`].
    unsafe fn put_present(&self, i: usize, c: &mut Cursor) -> Result<(), String> {
        match &self.shape {
            Shape::Leaf(leaf) => put_leaf(leaf, i, c),
            Shape::Null => c.byte(b'#'),
            Shape::List { offsets, item } => put_list(offsets, item, i, c)?,
            Shape::Struct { keys, members } => put_struct(keys, members, i, c)?,
            Shape::Tuple { elements } => put_tuple(elements, i, c)?,
            Shape::Dict {
                offsets,
                key,
                value,
            } => put_dict(offsets, key, value, i, c)?,
        }
        Ok(())
    }

    /// [`YsonPlan::put`] with a leaf without nulls written in place (the members of
    /// structs and the keys and values of dicts mostly are such leaves).
    ///
    /// # Safety
    /// As [`YsonPlan::put`].
    #[inline(always)]
    unsafe fn put_item(&self, i: usize, c: &mut Cursor) -> Result<(), String> {
        match (&self.shape, &self.nulls) {
            (Shape::Leaf(leaf), None) => {
                put_leaf(leaf, i, c);
                Ok(())
            }
            _ => self.put(i, c),
        }
    }

    #[cold]
    unsafe fn put_null(&self, c: &mut Cursor) -> Result<(), String> {
        if self.nullable {
            c.byte(b'#');
            Ok(())
        } else {
            Err(format!("null where type {} has no null", self.ty))
        }
    }

    /// Writes the values `range` (within `len`), each followed by `;`: a leaf without nulls
    /// in one loop of its own type (the items of a list of scalars).
    ///
    /// # Safety
    /// `c` has room for `self.bound(range)` bytes, the `;`s and [`SLACK`].
    unsafe fn put_run(&self, range: Range<usize>, c: &mut Cursor) -> Result<(), String> {
        match (&self.shape, &self.nulls) {
            (Shape::Leaf(leaf), None) => put_leaf_run(leaf, range, c),
            _ => {
                for j in range {
                    self.put(j, c)?;
                    c.byte(b';');
                }
            }
        }
        Ok(())
    }
}

/// The items of rows `rows` of a list or dict: from the first row's start to the last
/// row's end.
#[inline(always)]
fn items_of(offsets: &OffsetBuffer<i32>, rows: &Range<usize>) -> Range<usize> {
    offsets[rows.start] as usize..offsets[rows.end] as usize
}

/// Bytes a fixed-size copy may write past the last byte of a run (a short string or key is
/// copied as 16 bytes, see [`Cursor::short`]): reserved beyond the run's bound.
const SLACK: usize = 16;

/// A write position in memory reserved up front, so no write checks capacity: binary YSON
/// of a run of values goes straight to its place. What makes that sound is the run's
/// [`YsonPlan::bound`], reserved (with [`SLACK`]) by [`with_reserved`] before the first write.
struct Cursor {
    at: *mut u8,
    /// The start of the `Vec` written into (so a position is its length after the write).
    base: *const u8,
}

impl Cursor {
    /// The bytes of the `Vec` before the cursor.
    #[inline(always)]
    fn len(&self) -> usize {
        self.at as usize - self.base as usize
    }

    #[inline(always)]
    unsafe fn byte(&mut self, b: u8) {
        self.at.write(b);
        self.at = self.at.add(1);
    }

    /// `N` bytes at once (a few moves, not a call of `memcpy`).
    #[inline(always)]
    unsafe fn array<const N: usize>(&mut self, bytes: [u8; N]) {
        self.at.cast::<[u8; N]>().write_unaligned(bytes);
        self.at = self.at.add(N);
    }

    /// A varint without a loop for values below 2^56 (all lengths and nearly all numbers
    /// of real data): the 7-bit groups are spread to bytes at once, the continuation bits
    /// set on all but the last, and 8 bytes stored (see [`SLACK`]). A loop of data-dependent
    /// length mispredicts on every change of length (dict keys, struct members).
    #[inline(always)]
    unsafe fn varint(&mut self, v: u64) {
        if v >= 1 << 56 {
            return self.long_varint(v);
        }
        let len = VARINT_LEN[(v | 1).leading_zeros() as usize] as usize;
        let spelled = spread_groups(v) | CONTINUATION[len];
        self.at
            .cast::<[u8; 8]>()
            .write_unaligned(spelled.to_le_bytes());
        self.at = self.at.add(len);
    }

    #[cold]
    unsafe fn long_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    #[inline(always)]
    unsafe fn int64(&mut self, v: i64) {
        self.byte(0x02);
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    #[inline(always)]
    unsafe fn uint64(&mut self, v: u64) {
        self.byte(0x06);
        self.varint(v);
    }

    #[inline(always)]
    unsafe fn double(&mut self, v: f64) {
        let mut spelled = [0x03u8; 9];
        spelled[1..].copy_from_slice(&v.to_le_bytes());
        self.array(spelled);
    }

    /// `source[range]` (a range within `source`): a short run is copied as a fixed 16 bytes
    /// where the source has them (a copy of a run-time size is a call of `memcpy`, which
    /// costs more than the few bytes of a token); up to 16 bytes past the end may be written.
    #[inline(always)]
    unsafe fn short(&mut self, source: &[u8], range: Range<usize>) {
        const SHORT: usize = 16;
        let len = range.len();
        match source.get(range.start..range.start + SHORT) {
            Some(padded) if len <= SHORT => {
                std::ptr::copy_nonoverlapping(padded.as_ptr(), self.at, SHORT)
            }
            _ => {
                let bytes = &source[range];
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.at, bytes.len());
            }
        }
        self.at = self.at.add(len);
    }

    /// The string `source[range]`.
    #[inline(always)]
    unsafe fn string(&mut self, source: &[u8], range: Range<usize>) {
        let len = range.len();
        if len < 64 {
            // The tag and a one-byte length (zigzag 2 * len < 128): most strings inside
            // composites.
            self.array([0x01, (len as u8) << 1]);
        } else {
            self.byte(0x01);
            self.varint(2 * len as u64);
        }
        self.short(source, range);
    }

    /// A struct member's key as spelled by [`YsonPlan::new`] (string token and `=`, then
    /// [`KEY_PADDING`] zeros): one 16-byte copy when it is that short.
    #[inline(always)]
    unsafe fn key(&mut self, padded: &[u8]) {
        let len = padded.len() - KEY_PADDING;
        if len <= KEY_PADDING {
            // A padded key holds `len + KEY_PADDING` >= 16 bytes.
            std::ptr::copy_nonoverlapping(padded.as_ptr(), self.at, KEY_PADDING);
        } else {
            std::ptr::copy_nonoverlapping(padded.as_ptr(), self.at, len);
        }
        self.at = self.at.add(len);
    }
}

/// The bytes of a varint below 2^56 by the leading zeros of its value (`v | 1`, so at
/// least 8 leading zeros index it: 8 bytes for 50..56 significant bits).
const VARINT_LEN: [u8; 65] = {
    let mut table = [0u8; 65];
    let mut zeros = 0;
    while zeros <= 64 {
        let bits = if zeros >= 64 { 1 } else { 64 - zeros };
        table[zeros] = bits.div_ceil(7) as u8;
        zeros += 1;
    }
    table
};

/// The continuation bits of a varint of `len` bytes (set on all but the last), by `len`.
const CONTINUATION: [u64; 9] = {
    let mut table = [0u64; 9];
    let mut len = 1;
    while len <= 8 {
        table[len] = 0x8080_8080_8080_8080u64 & ((1u64 << (8 * (len - 1))) - 1);
        len += 1;
    }
    table
};

/// The low 56 bits of `v` as eight 7-bit groups, one per byte (low group first).
#[inline(always)]
fn spread_groups(v: u64) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        // SAFETY: the target has BMI2 (checked at compile time).
        unsafe { std::arch::x86_64::_pdep_u64(v, 0x7F7F_7F7F_7F7F_7F7F) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
    {
        let mut spread = 0u64;
        for group in 0..8 {
            spread |= ((v >> (7 * group)) & 0x7F) << (8 * group);
        }
        spread
    }
}

/// Reserves `bound` bytes and [`SLACK`] in `out`, runs `write` on a cursor at its end, and
/// keeps what was written (also when `write` fails: the bytes before the failure).
///
/// # Panics
/// When `write` went past `bound`: a bug of [`YsonPlan::bound`] (the slack keeps an overrun
/// of a fixed copy inside the allocation; this catches one the slack would not).
///
/// # Safety
/// `write` writes at most `bound` bytes, plus at most [`SLACK`] bytes past its last byte.
#[inline(always)]
unsafe fn with_reserved<T>(
    out: &mut Vec<u8>,
    bound: usize,
    write: impl FnOnce(&mut Cursor) -> T,
) -> T {
    out.reserve(bound + SLACK);
    let from = out.len();
    let base = out.as_mut_ptr();
    let mut c = Cursor {
        at: base.add(from),
        base,
    };
    let result = write(&mut c);
    let written = c.len();
    assert!(written <= from + bound, "binary YSON past its bound");
    // SAFETY: the bytes up to the cursor were written.
    out.set_len(written);
    result
}

#[inline(always)]
unsafe fn put_list(
    offsets: &OffsetBuffer<i32>,
    item: &YsonPlan,
    i: usize,
    c: &mut Cursor,
) -> Result<(), String> {
    let range = offsets[i] as usize..offsets[i + 1] as usize;
    c.byte(b'[');
    item.put_run(range, c)?;
    c.byte(b']');
    Ok(())
}

#[inline(always)]
unsafe fn put_struct(
    keys: &[Vec<u8>],
    members: &[YsonPlan],
    i: usize,
    c: &mut Cursor,
) -> Result<(), String> {
    c.byte(b'{');
    for (key, member) in keys.iter().zip(members) {
        c.key(key);
        member.put_item(i, c)?;
        c.byte(b';');
    }
    c.byte(b'}');
    Ok(())
}

#[inline(always)]
unsafe fn put_tuple(elements: &[YsonPlan], i: usize, c: &mut Cursor) -> Result<(), String> {
    c.byte(b'[');
    for element in elements {
        element.put_item(i, c)?;
        c.byte(b';');
    }
    c.byte(b']');
    Ok(())
}

#[inline(always)]
unsafe fn put_dict(
    offsets: &OffsetBuffer<i32>,
    key: &YsonPlan,
    value: &YsonPlan,
    i: usize,
    c: &mut Cursor,
) -> Result<(), String> {
    c.byte(b'[');
    for j in offsets[i] as usize..offsets[i + 1] as usize {
        c.byte(b'[');
        key.put_item(j, c)?;
        c.byte(b';');
        value.put_item(j, c)?;
        c.array(*b";];");
    }
    c.byte(b']');
    Ok(())
}

/// A member's plan, which must cover the `len` rows of its parent.
fn member_plan(ty: &Type, array: &dyn Array, len: usize) -> Option<YsonPlan> {
    YsonPlan::new(ty, array).filter(|plan| plan.len >= len)
}

#[inline(always)]
unsafe fn put_leaf(leaf: &Leaf, i: usize, c: &mut Cursor) {
    match leaf {
        Leaf::I8(v) => c.int64(v[i].into()),
        Leaf::I16(v) => c.int64(v[i].into()),
        Leaf::I32(v) => c.int64(v[i].into()),
        Leaf::I64(v) => c.int64(v[i]),
        Leaf::U8(v) => c.uint64(v[i].into()),
        Leaf::U16(v) => c.uint64(v[i].into()),
        Leaf::U32(v) => c.uint64(v[i].into()),
        Leaf::U64(v) => c.uint64(v[i]),
        Leaf::F32(v) => c.double(v[i].into()),
        Leaf::F64(v) => c.double(v[i]),
        Leaf::Bool(v) => c.byte(if v.value(i) { 0x05 } else { 0x04 }),
        Leaf::Bytes { offsets, values } => {
            c.string(values, offsets[i] as usize..offsets[i + 1] as usize)
        }
    }
}

/// Values `range` of a leaf, each followed by `;`: the leaf's type matched once.
#[inline(always)]
unsafe fn put_leaf_run(leaf: &Leaf, range: Range<usize>, c: &mut Cursor) {
    macro_rules! run {
        ($values:expr, $put:expr) => {
            for v in &$values[range] {
                $put(&mut *c, *v);
                c.byte(b';');
            }
        };
    }
    match leaf {
        Leaf::I8(v) => run!(v, |c: &mut Cursor, v: i8| c.int64(v.into())),
        Leaf::I16(v) => run!(v, |c: &mut Cursor, v: i16| c.int64(v.into())),
        Leaf::I32(v) => run!(v, |c: &mut Cursor, v: i32| c.int64(v.into())),
        Leaf::I64(v) => run!(v, |c: &mut Cursor, v: i64| c.int64(v)),
        Leaf::U8(v) => run!(v, |c: &mut Cursor, v: u8| c.uint64(v.into())),
        Leaf::U16(v) => run!(v, |c: &mut Cursor, v: u16| c.uint64(v.into())),
        Leaf::U32(v) => run!(v, |c: &mut Cursor, v: u32| c.uint64(v.into())),
        Leaf::U64(v) => run!(v, |c: &mut Cursor, v: u64| c.uint64(v)),
        Leaf::F32(v) => {
            for v in &v[range] {
                c.array(double_item(f64::from(*v)));
            }
        }
        Leaf::F64(v) => {
            for v in &v[range] {
                c.array(double_item(*v));
            }
        }
        Leaf::Bool(bits) => {
            for j in range {
                c.array([if bits.value(j) { 0x05 } else { 0x04 }, b';']);
            }
        }
        Leaf::Bytes { offsets, values } => {
            for j in range {
                c.string(values, offsets[j] as usize..offsets[j + 1] as usize);
                c.byte(b';');
            }
        }
    }
}

/// A double's token and the `;` that follows it in a list: ten bytes stored at once.
#[inline(always)]
fn double_item(v: f64) -> [u8; 10] {
    let mut spelled = [b';'; 10];
    spelled[0] = 0x03;
    spelled[1..9].copy_from_slice(&v.to_le_bytes());
    spelled
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

    /// The fixed-size stores' edges: string lengths around the one-byte length (63, 64) and
    /// the 16-byte copy (16, 17), integers at every varint length boundary and past 2^56
    /// (the loop), a struct key longer than one 16-byte copy.
    #[test]
    fn token_edges_spell_like_owned_values() {
        let p = Type::Primitive;
        let mut ints: Vec<i64> = vec![0, -1, i64::MIN, i64::MAX];
        let mut uints: Vec<u64> = vec![0, u64::MAX];
        for k in 1..10 {
            let edge = 1u64 << (7 * k);
            uints.extend([edge - 1, edge, edge + 1]);
            let half = (edge >> 1) as i64;
            ints.extend([half - 1, half, -half, -half - 1]);
        }
        let strings: Vec<Value> = [0usize, 1, 15, 16, 17, 63, 64, 65, 127, 128, 8191, 8192]
            .iter()
            .map(|n| Value::String((0..*n).map(|i| (i % 251) as u8).collect()))
            .collect();
        let long_key = Type::Struct(vec![
            Member::new(
                "a_member_name_longer_than_sixteen",
                p(PrimitiveType::Uint64),
            ),
            Member::new("s", p(PrimitiveType::String)),
        ]);
        let cases = [
            (
                Type::list(p(PrimitiveType::Int64)),
                vec![Value::List(ints.iter().map(|v| Value::Int64(*v)).collect())],
            ),
            (
                Type::list(p(PrimitiveType::Uint64)),
                vec![Value::List(
                    uints.iter().map(|v| Value::Uint64(*v)).collect(),
                )],
            ),
            (
                Type::list(p(PrimitiveType::String)),
                vec![Value::List(strings.clone())],
            ),
            (
                long_key,
                strings
                    .iter()
                    .zip(&uints)
                    .map(|(s, u)| Value::Tuple(vec![Value::Uint64(*u), s.clone()]))
                    .collect(),
            ),
        ];
        for (ty, values) in cases {
            let spellings = both_spellings(&ty, &values).expect("a plan");
            for (by_plan, by_value) in spellings {
                assert_eq!(by_plan, by_value, "{ty}");
            }
            // The whole run through one reservation, as a chunk is written.
            let slots: Vec<Option<&Value>> = values.iter().map(Some).collect();
            let array = columns::build(&ty, &slots).unwrap();
            let plan = YsonPlan::new(&ty, array.as_ref()).unwrap();
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            plan.write_rows(0..values.len(), &mut out, &mut ends)
                .unwrap();
            assert!(out.len() <= plan.bound(0..values.len()));
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
