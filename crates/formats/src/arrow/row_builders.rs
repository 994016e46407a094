//! Columns of a record batch built row by row, each column's builder resolved once per table.
//!
//! The writer side of the row interface: a row's values are appended straight into typed
//! column buffers (`Vec<i64>`, offsets and bytes, a validity bitmap), with the same checks
//! the type checker makes (ranges, UTF-8), so no owned row is built or cloned for scalar
//! columns. Columns of other types (composites, decimals, uuids, `yson`) keep owned values
//! and are built by [`columns::build`] when the batch is cut.
//!
//! Invariants:
//! - Every builder of a table holds the same number of rows; a row that fails in its k-th
//!   column is rolled back from the first k builders ([`ColumnBuilder::truncate`]), so a
//!   refused row leaves no trace.
//! - Buffers are taken (not copied) into the arrays when a batch is cut, and the builders
//!   start the next batch with the same capacity.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, DurationMicrosecondArray, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, StringArray,
    TimestampMicrosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use arrow_buffer::{BooleanBufferBuilder, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit};
use shapeshift_types::{PrimitiveType, Type, Value, ValueRef};

use super::columns;
use crate::row_bridge::owned_value;

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
    /// Any other type: owned values, built at the cut.
    Owned(Vec<Value>),
}

/// The builder of one column of the table being written.
pub(super) struct ColumnBuilder {
    kind: Kind,
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
            _ => Kind::Owned(v!()),
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

    fn append_null(&mut self) -> Result<(), String> {
        if !self.nullable {
            return Err(format!("null where type {} has no null", self.ty));
        }
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
            Kind::Owned(values) => values.push(Value::Null),
        }
        self.validity.append_null();
        self.len += 1;
        Ok(())
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
            _ => return Err(mismatch(&self.ty, value.kind())),
        }
        self.validity.append_non_null();
        self.len += 1;
        Ok(())
    }

    /// Appends an owned value of the column's type.
    ///
    /// # Errors
    /// When the value does not fit the type (kind, range, UTF-8), as `check_value` says.
    pub(super) fn append_owned(&mut self, value: &Value) -> Result<(), String> {
        if let Kind::Owned(values) = &mut self.kind {
            if matches!(value, Value::Null) {
                return self.append_null();
            }
            shapeshift_types::check_value(value, &self.ty).map_err(|e| e.to_string())?;
            values.push(value.clone());
            self.validity.append_non_null();
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
            _ => Err(mismatch(&self.ty, "composite")),
        }
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
            let value = owned_value(view, &self.ty, super::FORMAT).map_err(|e| e.message)?;
            values.push(value);
            self.validity.append_non_null();
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
            ValueRef::Composite(_) | ValueRef::Any(_) => Err(mismatch(&self.ty, "composite")),
        }
    }

    /// Rows appended since the last cut.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Drops the rows after the first `len` (a refused row's earlier columns).
    pub(super) fn truncate(&mut self, len: usize) {
        if len >= self.len {
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
        let nulls = self.validity.finish();
        let capacity = self.capacity;
        let len = self.len;
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
                let bytes = arrow_buffer::Buffer::from_vec(std::mem::take(data));
                if *utf8 {
                    // Every value was checked to be UTF-8 when appended.
                    Arc::new(
                        StringArray::try_new(offsets, bytes, nulls).map_err(|e| e.to_string())?,
                    )
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
            Kind::Owned(values) => {
                let values = std::mem::replace(values, Vec::with_capacity(capacity));
                debug_assert_eq!(values.len(), len);
                let slots: Vec<Option<&Value>> = values.iter().map(Some).collect();
                columns::build(&self.ty, &slots)?
            }
        })
    }
}

fn mismatch(ty: &Type, what: &str) -> String {
    format!("a {what} value does not fit type {ty}")
}

fn out_of_range(ty: &Type, value: Scalar<'_>) -> String {
    format!("{} is out of range for {ty}", value.show())
}

/// A scalar being appended.
#[derive(Clone, Copy)]
enum Scalar<'a> {
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(&'a [u8]),
}

impl Scalar<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "bool",
            Scalar::Int64(_) => "int64",
            Scalar::Uint64(_) => "uint64",
            Scalar::Double(_) => "double",
            Scalar::String(_) => "string",
        }
    }

    fn show(&self) -> String {
        match self {
            Scalar::Bool(v) => v.to_string(),
            Scalar::Int64(v) => v.to_string(),
            Scalar::Uint64(v) => v.to_string(),
            Scalar::Double(v) => v.to_string(),
            Scalar::String(v) => format!("{:?}", String::from_utf8_lossy(v)),
        }
    }
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
