//! Columns of a record batch built row by row, each column's builder resolved once per table.
//!
//! The writer side of the row interface: a row's values are appended straight into typed
//! column buffers (`Vec<i64>`, offsets and bytes, a validity bitmap), with the same checks
//! the type checker makes (ranges, UTF-8), so no owned row is built or cloned for scalar
//! columns. Lists, structs, tuples and dicts are builders of their children (offsets and
//! validity of their own), so a composite value is walked once, checked on the way and never
//! cloned. Columns of the remaining types (variants, optionals of nullable items, decimals,
//! uuids, `yson`) keep owned values and are built by [`columns::build`] when the batch is
//! cut; both build the same arrays (tests/arrow_roundtrip.rs compares them).
//!
//! Invariants:
//! - Every builder of a table holds the same number of rows; a row that fails in its k-th
//!   column is rolled back from the first k + 1 builders ([`ColumnBuilder::truncate`], which
//!   also drops the items a composite value left in its children before failing), so a
//!   refused row leaves no trace.
//! - A child of a nested builder holds one slot per slot of its parent (structs) or per
//!   item (lists, dicts); below a null struct the children get masked null slots, whatever
//!   their type's nullability (Arrow masks them with the parent's validity).
//! - A builder's validity may lag behind its rows: the rows past `validity.len()` are all
//!   valid, and the bitmap is brought up to date before a null and at the cut, so a valid
//!   value costs no bitmap update.
//! - Buffers are taken (not copied) into the arrays when a batch is cut, and the builders
//!   start the next batch with room for as many slots as the batch just cut held, and at
//!   least their first capacity (a writer can start small: a one-row message allocates for
//!   a few rows; one batch with an unusually long list sizes its child for one batch only).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, DurationMicrosecondArray, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, ListArray, MapArray, StringArray,
    StructArray, TimestampMicrosecondArray, TimestampSecondArray, UInt16Array, UInt32Array,
    UInt64Array, UInt8Array,
};
use arrow_buffer::{BooleanBufferBuilder, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef, Fields, TimeUnit};
use shapeshift_types::{PrimitiveType, Type, Value, ValueRef};

use crate::arrow::columns;
use crate::table::row_arena::owned_value;
use crate::table::values::Scalar;

/// A 64-bit Arrow column of a YT time type: which Arrow type, and the YT range.
#[derive(Clone, Copy)]
struct TimeRange {
    unsigned: bool,
    min: i64,
    max: i64,
}

enum Kind {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(BooleanBufferBuilder),
    Bytes {
        offsets: Vec<i32>,
        data: Vec<u8>,
        utf8: bool,
    },
    /// Timestamp or Duration (64-bit) of a YT time type.
    Time64 {
        values: Vec<i64>,
        range: TimeRange,
        data_type: DataType,
    },
    /// Date32 of `date` or `date32`.
    Date {
        values: Vec<i32>,
        range: TimeRange,
    },
    /// A list: offsets into the item builder.
    List {
        offsets: Vec<i32>,
        item: Box<ColumnBuilder>,
        field: FieldRef,
    },
    /// A struct (members by name) or a tuple (`_1.._n`): one builder per member.
    Struct {
        members: Vec<ColumnBuilder>,
        fields: Fields,
    },
    /// A dict: offsets into key and value builders, cut as a Map (`map`) or, when the key
    /// type is nullable, a List of `{key, value}` structs.
    Entries {
        offsets: Vec<i32>,
        key: Box<ColumnBuilder>,
        value: Box<ColumnBuilder>,
        field: FieldRef,
        map: bool,
    },
    /// Any other type (variants, wrapped optionals, decimals, uuid, `yson`): owned values,
    /// built at the cut.
    Owned(Vec<Value>),
}

/// The builder of one column of the table being written.
pub(super) struct ColumnBuilder {
    kind: Kind,
    /// The validity of the first `validity.len()` rows; the rows after them (up to `len`)
    /// are all valid. Kept lagging so a non-null value costs no validity update; caught up
    /// before a null is appended and when the column is cut.
    validity: NullBufferBuilder,
    ty: Type,
    nullable: bool,
    len: usize,
    capacity: usize,
}

fn plain_primitive(ty: &Type) -> Option<PrimitiveType> {
    match ty {
        Type::Tagged { item, .. } => plain_primitive(item),
        Type::Optional(item) if !item.is_nullable() => plain_primitive(item),
        Type::Primitive(p) => Some(*p),
        _ => None,
    }
}

/// The inclusive YT range of a time type, found with the type checker itself.
fn time_range(p: PrimitiveType) -> TimeRange {
    let ty = Type::Primitive(p);
    let unsigned = shapeshift_types::check_value(&Value::Uint64(0), &ty).is_ok();
    let fits = |v: i64| {
        let value = if unsigned {
            if v < 0 {
                return false;
            }
            Value::Uint64(v as u64)
        } else {
            Value::Int64(v)
        };
        shapeshift_types::check_value(&value, &ty).is_ok()
    };
    // The largest magnitude `m` in direction `sign` with `fits(sign * m)` (fits(0) holds).
    let extent = |sign: i64| -> i64 {
        let (mut lo, mut hi) = (0u64, i64::MAX as u64);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(sign * mid as i64) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo as i64
    };
    TimeRange {
        unsigned,
        min: -extent(-1),
        max: extent(1),
    }
}

/// The type a column's Arrow field holds values of: tags and optionals that are only the
/// field's nullability set aside.
fn structural(ty: &Type) -> &Type {
    match ty {
        Type::Tagged { item, .. } => structural(item),
        Type::Optional(item) if !columns::optional_needs_wrapper(item) => structural(item),
        other => other,
    }
}

/// The builder kind of a list, struct, tuple or dict column: children built alongside, so
/// a composite value is appended without cloning it (`None` for the other types).
fn nested_kind(ty: &Type, capacity: usize) -> Option<Kind> {
    let offsets = || {
        let mut offsets = Vec::with_capacity(capacity + 1);
        offsets.push(0);
        offsets
    };
    let data_type = columns::data_type(ty);
    Some(match (structural(ty), data_type) {
        (Type::List(item), DataType::List(field)) => Kind::List {
            offsets: offsets(),
            item: Box::new(ColumnBuilder::new(item, capacity)),
            field,
        },
        (Type::Struct(members), DataType::Struct(fields)) => Kind::Struct {
            members: members
                .iter()
                .map(|m| ColumnBuilder::new(&m.ty, capacity))
                .collect(),
            fields,
        },
        (Type::Tuple(elements), DataType::Struct(fields)) => Kind::Struct {
            members: elements
                .iter()
                .map(|t| ColumnBuilder::new(t, capacity))
                .collect(),
            fields,
        },
        (Type::Dict { key, value }, DataType::Map(field, _)) => Kind::Entries {
            offsets: offsets(),
            key: Box::new(ColumnBuilder::new(key, capacity)),
            value: Box::new(ColumnBuilder::new(value, capacity)),
            field,
            map: true,
        },
        (Type::Dict { key, value }, DataType::List(field)) => Kind::Entries {
            offsets: offsets(),
            key: Box::new(ColumnBuilder::new(key, capacity)),
            value: Box::new(ColumnBuilder::new(value, capacity)),
            field,
            map: false,
        },
        _ => return None,
    })
}

/// The end offset after `items` child values, as Arrow's 32-bit offsets.
fn offset(items: usize) -> Result<i32, String> {
    i32::try_from(items).map_err(|_| "more than 2^31 items in one batch column".to_owned())
}

impl ColumnBuilder {
    /// A builder for a column of `ty`, `capacity` rows per batch.
    pub(super) fn new(ty: &Type, capacity: usize) -> ColumnBuilder {
        use PrimitiveType as P;
        macro_rules! v {
            () => {
                Vec::with_capacity(capacity)
            };
        }
        let kind = match plain_primitive(ty) {
            Some(P::Int8) => Kind::I8(v!()),
            Some(P::Int16) => Kind::I16(v!()),
            Some(P::Int32) => Kind::I32(v!()),
            Some(P::Int64) => Kind::I64(v!()),
            Some(P::Uint8) => Kind::U8(v!()),
            Some(P::Uint16) => Kind::U16(v!()),
            Some(P::Uint32) => Kind::U32(v!()),
            Some(P::Uint64) => Kind::U64(v!()),
            Some(P::Float) => Kind::F32(v!()),
            Some(P::Double) => Kind::F64(v!()),
            Some(P::Bool) => Kind::Bool(BooleanBufferBuilder::new(capacity)),
            Some(p @ (P::String | P::Utf8 | P::Json)) => {
                let mut offsets = Vec::with_capacity(capacity + 1);
                offsets.push(0);
                Kind::Bytes {
                    offsets,
                    data: Vec::new(),
                    utf8: p != P::String,
                }
            }
            Some(
                p @ (P::Datetime
                | P::Timestamp
                | P::Interval
                | P::Datetime64
                | P::Timestamp64
                | P::Interval64),
            ) => Kind::Time64 {
                values: v!(),
                range: time_range(p),
                data_type: columns::data_type(&Type::Primitive(p)),
            },
            Some(p @ (P::Date | P::Date32)) => Kind::Date {
                values: v!(),
                range: time_range(p),
            },
            _ => nested_kind(ty, capacity).unwrap_or_else(|| Kind::Owned(v!())),
        };
        ColumnBuilder {
            kind,
            validity: NullBufferBuilder::new(capacity),
            ty: ty.clone(),
            nullable: ty.is_nullable(),
            len: 0,
            capacity,
        }
    }

    /// Brings the validity up to `len` rows (the lagging rows are valid).
    #[inline]
    fn catch_up_validity(&mut self) {
        let lag = self.len - self.validity.len();
        if lag > 0 {
            self.validity.append_n_non_nulls(lag);
        }
    }

    fn append_null(&mut self) -> Result<(), String> {
        if !self.nullable {
            return Err(format!("null where type {} has no null", self.ty));
        }
        self.append_masked();
        Ok(())
    }

    /// Appends a null slot whatever the type: a null value, or a slot below a null parent
    /// (which Arrow masks, so it is never read back).
    fn append_masked(&mut self) {
        match &mut self.kind {
            Kind::I8(v) => v.push(0),
            Kind::I16(v) => v.push(0),
            Kind::I32(v) => v.push(0),
            Kind::I64(v) => v.push(0),
            Kind::U8(v) => v.push(0),
            Kind::U16(v) => v.push(0),
            Kind::U32(v) => v.push(0),
            Kind::U64(v) => v.push(0),
            Kind::F32(v) => v.push(0.0),
            Kind::F64(v) => v.push(0.0),
            Kind::Bool(b) => b.append(false),
            Kind::Bytes { offsets, data, .. } => offsets.push(data.len() as i32),
            Kind::Time64 { values, .. } => values.push(0),
            Kind::Date { values, .. } => values.push(0),
            Kind::List { offsets, .. } | Kind::Entries { offsets, .. } => {
                let end = *offsets.last().expect("offsets start with 0");
                offsets.push(end);
            }
            Kind::Struct { members, .. } => members.iter_mut().for_each(|m| m.append_masked()),
            Kind::Owned(values) => values.push(Value::Null),
        }
        self.catch_up_validity();
        self.validity.append_null();
        self.len += 1;
    }

    /// Appends a scalar to a column of a scalar kind.
    #[inline]
    fn append_scalar(&mut self, value: Scalar<'_>) -> Result<(), String> {
        macro_rules! int {
            ($v:expr, $t:ty) => {{
                let x = match value {
                    Scalar::Int64(x) => <$t>::try_from(x).ok(),
                    Scalar::Uint64(x) => <$t>::try_from(x).ok(),
                    _ => return Err(mismatch(&self.ty, value.kind())),
                };
                match x {
                    Some(x) => $v.push(x),
                    None => return Err(out_of_range(&self.ty, value)),
                }
            }};
        }
        match &mut self.kind {
            Kind::I8(v) if matches!(value, Scalar::Int64(_)) => int!(v, i8),
            Kind::I16(v) if matches!(value, Scalar::Int64(_)) => int!(v, i16),
            Kind::I32(v) if matches!(value, Scalar::Int64(_)) => int!(v, i32),
            Kind::I64(v) if matches!(value, Scalar::Int64(_)) => int!(v, i64),
            Kind::U8(v) if matches!(value, Scalar::Uint64(_)) => int!(v, u8),
            Kind::U16(v) if matches!(value, Scalar::Uint64(_)) => int!(v, u16),
            Kind::U32(v) if matches!(value, Scalar::Uint64(_)) => int!(v, u32),
            Kind::U64(v) if matches!(value, Scalar::Uint64(_)) => int!(v, u64),
            Kind::F32(v) => match value {
                Scalar::Double(x) if !x.is_finite() || x.abs() <= f64::from(f32::MAX) => {
                    v.push(x as f32)
                }
                Scalar::Double(_) => return Err(out_of_range(&self.ty, value)),
                _ => return Err(mismatch(&self.ty, value.kind())),
            },
            Kind::F64(v) => match value {
                Scalar::Double(x) => v.push(x),
                _ => return Err(mismatch(&self.ty, value.kind())),
            },
            Kind::Bool(b) => match value {
                Scalar::Bool(x) => b.append(x),
                _ => return Err(mismatch(&self.ty, value.kind())),
            },
            Kind::Bytes {
                offsets,
                data,
                utf8,
            } => match value {
                Scalar::String(bytes) => {
                    if *utf8 && std::str::from_utf8(bytes).is_err() {
                        return Err(format!("invalid UTF-8 in a value of type {}", self.ty));
                    }
                    let end = data.len() + bytes.len();
                    let end = i32::try_from(end)
                        .map_err(|_| "more than 2 GiB of strings in one batch column")?;
                    data.extend_from_slice(bytes);
                    offsets.push(end);
                }
                _ => return Err(mismatch(&self.ty, value.kind())),
            },
            Kind::Time64 { values, range, .. } => {
                let x = range
                    .check(value)
                    .ok_or_else(|| out_of_range(&self.ty, value))?;
                values.push(x);
            }
            Kind::Date { values, range } => {
                let x = range
                    .check(value)
                    .ok_or_else(|| out_of_range(&self.ty, value))?;
                values.push(x as i32);
            }
            Kind::Owned(_) => unreachable!("owned columns take values"),
            Kind::List { .. } | Kind::Struct { .. } | Kind::Entries { .. } => {
                return Err(mismatch(&self.ty, value.kind()))
            }
            _ => return Err(mismatch(&self.ty, value.kind())),
        }
        self.len += 1;
        Ok(())
    }

    /// Appends an owned value of the column's type.
    ///
    /// # Errors
    /// When the value does not fit the type (kind, range, UTF-8), as `check_value` says.
    #[inline]
    pub(super) fn append_owned(&mut self, value: &Value) -> Result<(), String> {
        // Every scalar kind with the value it takes, in one match (no further dispatch on the
        // type): `false` is a value out of range, which the general path appends or refuses
        // with the message (so errors are worded in one place).
        #[inline(always)]
        fn narrow<T: TryFrom<X>, X>(v: &mut Vec<T>, x: X) -> bool {
            match T::try_from(x) {
                Ok(x) => {
                    v.push(x);
                    true
                }
                Err(_) => false,
            }
        }
        let appended = match (&mut self.kind, value) {
            (Kind::I64(v), Value::Int64(x)) => {
                v.push(*x);
                true
            }
            (Kind::F64(v), Value::Double(x)) => {
                v.push(*x);
                true
            }
            (Kind::I32(v), Value::Int64(x)) => narrow(v, *x),
            (Kind::I16(v), Value::Int64(x)) => narrow(v, *x),
            (Kind::I8(v), Value::Int64(x)) => narrow(v, *x),
            (Kind::U64(v), Value::Uint64(x)) => {
                v.push(*x);
                true
            }
            (Kind::U32(v), Value::Uint64(x)) => narrow(v, *x),
            (Kind::U16(v), Value::Uint64(x)) => narrow(v, *x),
            (Kind::U8(v), Value::Uint64(x)) => narrow(v, *x),
            (Kind::F32(v), Value::Double(x)) => {
                let fits = !x.is_finite() || x.abs() <= f64::from(f32::MAX);
                if fits {
                    v.push(*x as f32);
                }
                fits
            }
            (Kind::Bool(b), Value::Bool(x)) => {
                b.append(*x);
                true
            }
            (
                Kind::Bytes {
                    offsets,
                    data,
                    utf8,
                },
                Value::String(bytes),
            ) => {
                if *utf8 && std::str::from_utf8(bytes).is_err() {
                    return Err(format!("invalid UTF-8 in a value of type {}", self.ty));
                }
                let end = i32::try_from(data.len() + bytes.len())
                    .map_err(|_| "more than 2 GiB of strings in one batch column")?;
                data.extend_from_slice(bytes);
                offsets.push(end);
                true
            }
            (Kind::Time64 { values, range, .. }, Value::Int64(_) | Value::Uint64(_)) => {
                let scalar = match value {
                    Value::Int64(x) => Scalar::Int64(*x),
                    Value::Uint64(x) => Scalar::Uint64(*x),
                    _ => unreachable!("matched above"),
                };
                match range.check(scalar) {
                    Some(x) => {
                        values.push(x);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !appended {
            return self.append_owned_in_general(value);
        }
        self.len += 1;
        Ok(())
    }

    /// The items of a list value, item `i` failing with its index.
    fn append_items(&mut self, items: &[Value]) -> Result<(), String> {
        let mut done = 0;
        // A list of doubles (BM5's shape, and vectors generally): one tight loop.
        if let Kind::F64(v) = &mut self.kind {
            v.reserve(items.len());
            for item in items {
                let Value::Double(x) = item else { break };
                v.push(*x);
                done += 1;
            }
            self.len += done;
        }
        for (i, item) in items.iter().enumerate().skip(done) {
            self.append_owned(item)
                .map_err(|e| format!("item {i}: {e}"))?;
        }
        Ok(())
    }

    /// [`ColumnBuilder::append_owned`] for every kind and value.
    fn append_owned_in_general(&mut self, value: &Value) -> Result<(), String> {
        if let Kind::Owned(values) = &mut self.kind {
            if matches!(value, Value::Null) {
                return self.append_null();
            }
            shapeshift_types::check_value(value, &self.ty).map_err(|e| e.to_string())?;
            values.push(value.clone());
            self.len += 1;
            return Ok(());
        }
        match value {
            Value::Null => self.append_null(),
            Value::Bool(v) => self.append_scalar(Scalar::Bool(*v)),
            Value::Int64(v) => self.append_scalar(Scalar::Int64(*v)),
            Value::Uint64(v) => self.append_scalar(Scalar::Uint64(*v)),
            Value::Double(v) => self.append_scalar(Scalar::Double(*v)),
            Value::String(v) => self.append_scalar(Scalar::String(v)),
            composite => self.append_composite(composite),
        }
    }

    /// Appends a list, struct, tuple or dict value to a nested column, children first. On
    /// error the children may hold part of the value: [`ColumnBuilder::truncate`] of the
    /// builder to its length drops it.
    fn append_composite(&mut self, value: &Value) -> Result<(), String> {
        match (&mut self.kind, value) {
            (Kind::List { offsets, item, .. }, Value::List(items)) => {
                item.append_items(items)?;
                offsets.push(offset(item.len)?);
            }
            (Kind::Struct { members, fields }, Value::Tuple(values))
                if values.len() == members.len() =>
            {
                for ((member, v), field) in members.iter_mut().zip(values).zip(fields.iter()) {
                    member
                        .append_owned(v)
                        .map_err(|e| format!("{}: {e}", field.name()))?;
                }
            }
            (
                Kind::Entries {
                    offsets,
                    key,
                    value: item,
                    ..
                },
                Value::Dict(pairs),
            ) => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    key.append_owned(k)
                        .map_err(|e| format!("entry {i} key: {e}"))?;
                    item.append_owned(v)
                        .map_err(|e| format!("entry {i} value: {e}"))?;
                }
                offsets.push(offset(key.len)?);
            }
            _ => return Err(mismatch(&self.ty, value_kind(value))),
        }
        self.len += 1;
        Ok(())
    }

    /// Appends a view of a value of the column's type.
    ///
    /// # Errors
    /// As [`ColumnBuilder::append_owned`]; malformed YSON of a composite value.
    pub(super) fn append_view(&mut self, view: &ValueRef<'_>) -> Result<(), String> {
        if let Kind::Owned(values) = &mut self.kind {
            if view.is_null() {
                return self.append_null();
            }
            let value = owned_value(view, &self.ty, crate::arrow::FORMAT).map_err(|e| e.message)?;
            values.push(value);
            self.len += 1;
            return Ok(());
        }
        match view {
            ValueRef::Null => self.append_null(),
            ValueRef::Bool(v) => self.append_scalar(Scalar::Bool(*v)),
            ValueRef::Int64(v) => self.append_scalar(Scalar::Int64(*v)),
            ValueRef::Uint64(v) => self.append_scalar(Scalar::Uint64(*v)),
            ValueRef::Double(v) => self.append_scalar(Scalar::Double(*v)),
            ValueRef::String(v) => self.append_scalar(Scalar::String(v)),
            ValueRef::Composite(_) | ValueRef::Any(_) => {
                let value =
                    owned_value(view, &self.ty, crate::arrow::FORMAT).map_err(|e| e.message)?;
                self.append_composite(&value)
            }
        }
    }

    /// Rows appended since the last cut.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Drops the rows after the first `len` (a refused row's earlier columns).
    /// Children of nested columns are cut to what the first `len` rows hold even when this
    /// builder already has `len` rows (a value that failed halfway left items behind).
    pub(super) fn truncate(&mut self, len: usize) {
        if len > self.len {
            return;
        }
        match &mut self.kind {
            Kind::I8(v) => v.truncate(len),
            Kind::I16(v) => v.truncate(len),
            Kind::I32(v) => v.truncate(len),
            Kind::I64(v) => v.truncate(len),
            Kind::U8(v) => v.truncate(len),
            Kind::U16(v) => v.truncate(len),
            Kind::U32(v) => v.truncate(len),
            Kind::U64(v) => v.truncate(len),
            Kind::F32(v) => v.truncate(len),
            Kind::F64(v) => v.truncate(len),
            Kind::Bool(b) => b.truncate(len),
            Kind::Bytes { offsets, data, .. } => {
                offsets.truncate(len + 1);
                data.truncate(offsets[len] as usize);
            }
            Kind::Time64 { values, .. } => values.truncate(len),
            Kind::Date { values, .. } => values.truncate(len),
            Kind::List { offsets, item, .. } => {
                offsets.truncate(len + 1);
                item.truncate(offsets[len] as usize);
            }
            Kind::Entries {
                offsets,
                key,
                value,
                ..
            } => {
                offsets.truncate(len + 1);
                key.truncate(offsets[len] as usize);
                value.truncate(offsets[len] as usize);
            }
            Kind::Struct { members, .. } => members.iter_mut().for_each(|m| m.truncate(len)),
            Kind::Owned(values) => values.truncate(len),
        }
        self.validity.truncate(len);
        self.len = len;
    }

    /// The column of the rows appended since the last cut; the builder starts empty.
    ///
    /// # Errors
    /// When an owned column's values cannot form its Arrow array.
    pub(super) fn cut(&mut self) -> Result<ArrayRef, String> {
        self.catch_up_validity();
        let nulls = self.validity.finish();
        let len = self.len;
        let capacity = self.capacity.max(len);
        self.len = 0;
        fn take<T>(v: &mut Vec<T>, capacity: usize) -> ScalarBuffer<T>
        where
            T: arrow_buffer::ArrowNativeType,
        {
            ScalarBuffer::from(std::mem::replace(v, Vec::with_capacity(capacity)))
        }
        Ok(match &mut self.kind {
            Kind::I8(v) => Arc::new(Int8Array::new(take(v, capacity), nulls)),
            Kind::I16(v) => Arc::new(Int16Array::new(take(v, capacity), nulls)),
            Kind::I32(v) => Arc::new(Int32Array::new(take(v, capacity), nulls)),
            Kind::I64(v) => Arc::new(Int64Array::new(take(v, capacity), nulls)),
            Kind::U8(v) => Arc::new(UInt8Array::new(take(v, capacity), nulls)),
            Kind::U16(v) => Arc::new(UInt16Array::new(take(v, capacity), nulls)),
            Kind::U32(v) => Arc::new(UInt32Array::new(take(v, capacity), nulls)),
            Kind::U64(v) => Arc::new(UInt64Array::new(take(v, capacity), nulls)),
            Kind::F32(v) => Arc::new(Float32Array::new(take(v, capacity), nulls)),
            Kind::F64(v) => Arc::new(Float64Array::new(take(v, capacity), nulls)),
            Kind::Bool(b) => Arc::new(BooleanArray::new(b.finish(), nulls)),
            Kind::Bytes {
                offsets,
                data,
                utf8,
            } => {
                let mut fresh = Vec::with_capacity(capacity + 1);
                fresh.push(0);
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, fresh)));
                // The next batch's strings likely need as many bytes as this one's.
                let fresh = Vec::with_capacity(data.len());
                let bytes = arrow_buffer::Buffer::from_vec(std::mem::replace(data, fresh));
                if *utf8 {
                    if nulls.as_ref().is_some_and(|n| n.len() != len) || offsets.len() != len + 1 {
                        return Err(format!("utf8 column of {len} rows built unevenly"));
                    }
                    // SAFETY: the offsets start at 0 and ascend to `bytes.len()` (each is the
                    // data's length after a value, checked to fit i32; `truncate` cuts both
                    // together), the validity has one bit per row (checked above), and every
                    // value was checked to be UTF-8 when appended (`append_owned` and
                    // `append_scalar`, the only appends), so the values on their boundaries
                    // are UTF-8. `try_new` would validate all the bytes a second time.
                    Arc::new(unsafe { StringArray::new_unchecked(offsets, bytes, nulls) })
                } else {
                    Arc::new(
                        BinaryArray::try_new(offsets, bytes, nulls).map_err(|e| e.to_string())?,
                    )
                }
            }
            Kind::Time64 {
                values, data_type, ..
            } => {
                let values = take(values, capacity);
                match data_type {
                    DataType::Timestamp(TimeUnit::Second, _) => {
                        Arc::new(TimestampSecondArray::new(values, nulls))
                    }
                    DataType::Timestamp(TimeUnit::Microsecond, _) => {
                        Arc::new(TimestampMicrosecondArray::new(values, nulls))
                    }
                    DataType::Duration(TimeUnit::Microsecond) => {
                        Arc::new(DurationMicrosecondArray::new(values, nulls))
                    }
                    other => return Err(format!("no time column of Arrow type {other}")),
                }
            }
            Kind::Date { values, .. } => Arc::new(Date32Array::new(take(values, capacity), nulls)),
            Kind::List {
                offsets,
                item,
                field,
            } => {
                let offsets = take_offsets(offsets, capacity);
                let items = item.cut()?;
                Arc::new(
                    ListArray::try_new(field.clone(), offsets, items, nulls)
                        .map_err(|e| e.to_string())?,
                )
            }
            Kind::Struct { members, fields } => {
                if members.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    let children = members
                        .iter_mut()
                        .map(|m| m.cut())
                        .collect::<Result<Vec<_>, _>>()?;
                    Arc::new(
                        StructArray::try_new(fields.clone(), children, nulls)
                            .map_err(|e| e.to_string())?,
                    )
                }
            }
            Kind::Entries {
                offsets,
                key,
                value,
                field,
                map,
            } => {
                let offsets = take_offsets(offsets, capacity);
                let DataType::Struct(entry_fields) = field.data_type() else {
                    return Err(format!("dict entries of Arrow type {}", field.data_type()));
                };
                let entries = StructArray::try_new(
                    entry_fields.clone(),
                    vec![key.cut()?, value.cut()?],
                    None,
                )
                .map_err(|e| e.to_string())?;
                if *map {
                    Arc::new(
                        MapArray::try_new(field.clone(), offsets, entries, nulls, false)
                            .map_err(|e| e.to_string())?,
                    )
                } else {
                    Arc::new(
                        ListArray::try_new(field.clone(), offsets, Arc::new(entries), nulls)
                            .map_err(|e| e.to_string())?,
                    )
                }
            }
            Kind::Owned(values) => {
                let values = std::mem::replace(values, Vec::with_capacity(capacity));
                debug_assert_eq!(values.len(), len);
                let slots: Vec<Option<&Value>> = values.iter().map(Some).collect();
                columns::build(&self.ty, &slots)?
            }
        })
    }
}

/// The offsets of the rows cut, the builder's offsets starting over at 0.
fn take_offsets(offsets: &mut Vec<i32>, capacity: usize) -> OffsetBuffer<i32> {
    let mut fresh = Vec::with_capacity(capacity + 1);
    fresh.push(0);
    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, fresh)))
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Int64(_) => "int64",
        Value::Uint64(_) => "uint64",
        Value::Double(_) => "double",
        Value::String(_) => "string",
        Value::Some(_) => "optional",
        Value::List(_) => "list",
        Value::Tuple(_) => "struct or tuple",
        Value::Variant(..) => "variant",
        Value::Dict(_) => "dict",
        Value::Any(_) => "yson",
    }
}

fn mismatch(ty: &Type, what: &str) -> String {
    format!("a {what} value does not fit type {ty}")
}

fn out_of_range(ty: &Type, value: Scalar<'_>) -> String {
    format!("{} is out of range for {ty}", value.show())
}

impl TimeRange {
    /// The value as the Arrow integer, when it is of the right kind and in range.
    #[inline]
    fn check(&self, value: Scalar<'_>) -> Option<i64> {
        let x = match (self.unsigned, value) {
            (true, Scalar::Uint64(x)) => i64::try_from(x).ok()?,
            (false, Scalar::Int64(x)) => x,
            _ => return None,
        };
        (self.min..=self.max).contains(&x).then_some(x)
    }
}
