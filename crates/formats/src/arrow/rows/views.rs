//! Rows of a record batch as borrowed views, resolved column by column.
//!
//! Reading a batch row by row the naive way costs a downcast and a type match per value. Here
//! each column of a batch is resolved once into a [`ColumnView`] (its concrete buffers: a
//! value slice, offsets, dictionary keys, the validity bitmap), and rows are produced a chunk
//! at a time: for a chunk of rows, every column fills its slot of every row in one tight,
//! monomorphic loop ("transposition"), and the consumer then walks rows of ready views.
//!
//! Invariants:
//! - A view of a string borrows the batch's value buffer (no copy); the buffers are
//!   reference-counted clones held by the [`ColumnView`]s, so their bytes stay put for as
//!   long as the views live. Composite values (lists, structs, tuples and dicts by a
//!   [`YsonPlan`] resolved once per batch; the rare scalars that need a conversion — uuid,
//!   decimal, `yson` — and the shapes without a plan through owned values) are written
//!   into the chunk's own arena as binary YSON;
//!   their views are made only after the whole chunk is written, so the arena never moves
//!   under a view.
//! - Views are stored with a widened lifetime but handed out only through a borrow of the
//!   [`ChunkViews`] (see [`ChunkViews::row`]); everything they point into is replaced only
//!   through `&mut self`, after that borrow has ended.
//! - A chunk holds about [`CHUNK_VALUES`] values and at least `CHUNK_MIN_ROWS` rows, so the
//!   views stay in cache between being written and being read.
//! - Values are range-checked where the Arrow type is wider than the YT type (dates, times);
//!   a null in a column whose type has none is an error naming the row.

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, GenericByteArray};
use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use shapeshift_types::{PrimitiveType, Type, Value, ValueRef};

use crate::arrow::columns;
use crate::arrow::composite_yson::YsonPlan;
use crate::table::values::{signed_bounds, unsigned_bound};
use crate::table::yson_binary;

/// Values per chunk of transposed rows: small enough that a narrow table's views (24 bytes
/// each: 12 KiB) stay in L1 between being written and being read. A/B in one run of the
/// format benchmark (2026-11-21, scale 0.4, medians of 28): BM3 reads 4.15 ms at 4096,
/// 4.32 at 1024, 3.57 at 512, 3.86 at 256 (arrow-rs 3.0); BM2 1.44 / 1.39 / 1.29; BM5 the
/// same within noise.
pub(super) const CHUNK_VALUES: usize = 512;

/// Rows per chunk at least: a wide table (BM1, 1000 columns) pays each column's setup once
/// per chunk, so a chunk of a few rows costs more in setup than it saves in cache (BM1
/// reads, same A/B: 7.6 ms at 16 rows, 9.6 at 4, 9.9 at 1, 8.3 at 8, 7.3 at 32, 8.9 at 64;
/// filling row by row 10.5).
const CHUNK_MIN_ROWS: usize = 16;

/// The concrete data of one column of the current batch.
enum Kind {
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
    /// Binary or Utf8 (the decoder has validated offsets and UTF-8).
    Bytes {
        offsets: OffsetBuffer<i32>,
        values: Buffer,
    },
    /// A dictionary of Binary or Utf8 with Int32 keys.
    DictionaryBytes {
        keys: ScalarBuffer<i32>,
        offsets: OffsetBuffer<i32>,
        values: Buffer,
        value_nulls: Option<NullBuffer>,
        /// The view of every dictionary entry (borrowing `values`), made once per batch,
        /// so a value's view is one indexed load; `None` when an entry's offsets are out of
        /// bounds (then each value is resolved, and the bad one reported, as before).
        entries: Option<Vec<ValueRef<'static>>>,
    },
    /// A 64-bit time held as signed in Arrow and unsigned in YT, checked against `0..=max`.
    UnsignedTime {
        values: ScalarBuffer<i64>,
        max: u64,
    },
    /// Date32 of the unsigned `date`, checked against `0..=max`.
    UnsignedDate {
        values: ScalarBuffer<i32>,
        max: u64,
    },
    /// A 64-bit signed time, checked against `min..=max`.
    SignedTime {
        values: ScalarBuffer<i64>,
        min: i64,
        max: i64,
    },
    /// Date32 of `date32`, checked against `min..=max`.
    SignedDate {
        values: ScalarBuffer<i32>,
        min: i64,
        max: i64,
    },
    /// `null` / `void`: every value is null.
    AlwaysNull,
    /// A list, struct, tuple or dict written as binary YSON from the child arrays.
    Composite(YsonPlan),
    /// Everything else: composite values as binary YSON, written from the arrays.
    Transcoded {
        ty: Type,
        array: ArrayRef,
    },
}

/// One column of the current batch, resolved once per batch.
pub(super) struct ColumnView {
    kind: Kind,
    nulls: Option<NullBuffer>,
    /// The column's type allows null.
    nullable: bool,
    /// For a fixed-width numeric column without nulls: its values' address and count (the
    /// buffer is held by `kind`), so a chunk fill writes its views with no setup beyond one
    /// match ([`PlainColumn::scatter`]). A wide table (BM1: 1000 columns, 16 rows a chunk)
    /// otherwise pays the general column fill's setup per column and chunk.
    plain: Option<(PlainColumn, usize)>,
}

/// The values of a fixed-width numeric column without nulls, by address (see
/// [`ColumnView::plain`]; an address rather than a pointer keeps the reader `Send`).
#[derive(Clone, Copy)]
enum PlainColumn {
    I8(usize),
    I16(usize),
    I32(usize),
    I64(usize),
    U8(usize),
    U16(usize),
    U32(usize),
    U64(usize),
    F32(usize),
    F64(usize),
}

impl PlainColumn {
    /// The plain view of `kind`'s values and their count, when it has one.
    fn of(kind: &Kind) -> Option<(PlainColumn, usize)> {
        fn at<T>(v: &ScalarBuffer<T>) -> usize
        where
            T: arrow_buffer::ArrowNativeType,
        {
            v.as_ptr() as usize
        }
        Some(match kind {
            Kind::I8(v) => (PlainColumn::I8(at(v)), v.len()),
            Kind::I16(v) => (PlainColumn::I16(at(v)), v.len()),
            Kind::I32(v) => (PlainColumn::I32(at(v)), v.len()),
            Kind::I64(v) => (PlainColumn::I64(at(v)), v.len()),
            Kind::U8(v) => (PlainColumn::U8(at(v)), v.len()),
            Kind::U16(v) => (PlainColumn::U16(at(v)), v.len()),
            Kind::U32(v) => (PlainColumn::U32(at(v)), v.len()),
            Kind::U64(v) => (PlainColumn::U64(at(v)), v.len()),
            Kind::F32(v) => (PlainColumn::F32(at(v)), v.len()),
            Kind::F64(v) => (PlainColumn::F64(at(v)), v.len()),
            _ => return None,
        })
    }

    /// Writes the views of values `start..start + len` to `out`, `out + width`, ...
    ///
    /// # Safety
    /// `start + len` is within the column's value count, the buffer is alive, and `out`
    /// has room for `len` views `width` apart.
    #[inline(always)]
    unsafe fn scatter(self, out: *mut ValueRef<'static>, width: usize, start: usize, len: usize) {
        macro_rules! run {
            ($address:expr, $t:ty, $view:expr) => {{
                let values = std::slice::from_raw_parts(($address as *const $t).add(start), len);
                for (r, v) in values.iter().enumerate() {
                    out.add(r * width).write($view(*v));
                }
            }};
        }
        match self {
            PlainColumn::I8(a) => run!(a, i8, |v: i8| ValueRef::Int64(v.into())),
            PlainColumn::I16(a) => run!(a, i16, |v: i16| ValueRef::Int64(v.into())),
            PlainColumn::I32(a) => run!(a, i32, |v: i32| ValueRef::Int64(v.into())),
            PlainColumn::I64(a) => run!(a, i64, ValueRef::Int64),
            PlainColumn::U8(a) => run!(a, u8, |v: u8| ValueRef::Uint64(v.into())),
            PlainColumn::U16(a) => run!(a, u16, |v: u16| ValueRef::Uint64(v.into())),
            PlainColumn::U32(a) => run!(a, u32, |v: u32| ValueRef::Uint64(v.into())),
            PlainColumn::U64(a) => run!(a, u64, ValueRef::Uint64),
            PlainColumn::F32(a) => run!(a, f32, |v: f32| ValueRef::Double(v.into())),
            PlainColumn::F64(a) => run!(a, f64, ValueRef::Double),
        }
    }
}

fn primitive<T: ArrowPrimitiveType>(array: &ArrayRef) -> Option<ScalarBuffer<T::Native>> {
    array.as_primitive_opt::<T>().map(|a| a.values().clone())
}

/// The primitive of a column read as a plain scalar, if it is one (tags and optionals of a
/// non-nullable item are the same Arrow field).
fn scalar_primitive(ty: &Type) -> Option<PrimitiveType> {
    match ty {
        Type::Tagged { item, .. } => scalar_primitive(item),
        Type::Optional(item) if !item.is_nullable() => scalar_primitive(item),
        Type::Primitive(p) => Some(*p),
        _ => None,
    }
}

fn bytes_kind<O: arrow_array::types::ByteArrayType<Offset = i32>>(
    array: &GenericByteArray<O>,
) -> Kind {
    Kind::Bytes {
        offsets: array.offsets().clone(),
        values: array.values().clone(),
    }
}

impl ColumnView {
    /// Resolves `array`, a column of type `ty` (checked against the table's Arrow schema,
    /// dictionaries aside).
    pub(super) fn new(ty: &Type, array: &ArrayRef) -> ColumnView {
        use PrimitiveType as P;
        let transcoded = || Kind::Transcoded {
            ty: ty.clone(),
            array: array.clone(),
        };
        let kind = match (scalar_primitive(ty), array.data_type()) {
            (Some(P::Int8), DataType::Int8) => primitive::<Int8Type>(array).map(Kind::I8),
            (Some(P::Int16), DataType::Int16) => primitive::<Int16Type>(array).map(Kind::I16),
            (Some(P::Int32), DataType::Int32) => primitive::<Int32Type>(array).map(Kind::I32),
            (Some(P::Int64), DataType::Int64) => primitive::<Int64Type>(array).map(Kind::I64),
            (Some(P::Uint8), DataType::UInt8) => primitive::<UInt8Type>(array).map(Kind::U8),
            (Some(P::Uint16), DataType::UInt16) => primitive::<UInt16Type>(array).map(Kind::U16),
            (Some(P::Uint32), DataType::UInt32) => primitive::<UInt32Type>(array).map(Kind::U32),
            (Some(P::Uint64), DataType::UInt64) => primitive::<UInt64Type>(array).map(Kind::U64),
            (Some(P::Float), DataType::Float32) => primitive::<Float32Type>(array).map(Kind::F32),
            (Some(P::Double), DataType::Float64) => primitive::<Float64Type>(array).map(Kind::F64),
            (Some(P::Bool), DataType::Boolean) => array
                .as_boolean_opt()
                .map(|a| Kind::Bool(a.values().clone())),
            (Some(P::String), DataType::Binary) => array.as_binary_opt::<i32>().map(bytes_kind),
            (Some(P::Utf8 | P::Json), DataType::Utf8) => {
                array.as_string_opt::<i32>().map(bytes_kind)
            }
            (Some(P::String | P::Utf8 | P::Json), DataType::Dictionary(_, _)) => {
                dictionary_kind(array)
            }
            (Some(p @ (P::Datetime | P::Timestamp)), DataType::Timestamp(..)) => {
                primitive_i64(array).map(|values| Kind::UnsignedTime {
                    values,
                    max: unsigned_bound(&Type::Primitive(p)),
                })
            }
            (Some(p @ (P::Datetime64 | P::Timestamp64)), DataType::Timestamp(..))
            | (Some(p @ (P::Interval | P::Interval64)), DataType::Duration(_)) => {
                primitive_i64(array).map(|values| {
                    let (min, max) = signed_bounds(&Type::Primitive(p));
                    Kind::SignedTime { values, min, max }
                })
            }
            (Some(P::Date), DataType::Date32) => array
                .as_primitive_opt::<arrow_array::types::Date32Type>()
                .map(|a| Kind::UnsignedDate {
                    values: a.values().clone(),
                    max: unsigned_bound(&Type::Primitive(P::Date)),
                }),
            (Some(P::Date32), DataType::Date32) => array
                .as_primitive_opt::<arrow_array::types::Date32Type>()
                .map(|a| {
                    let (min, max) = signed_bounds(&Type::Primitive(P::Date32));
                    Kind::SignedDate {
                        values: a.values().clone(),
                        min,
                        max,
                    }
                }),
            (Some(P::Null | P::Void), _) => Some(Kind::AlwaysNull),
            (None, _) if !is_decimal(ty) => YsonPlan::new(ty, array.as_ref()).map(Kind::Composite),
            _ => None,
        }
        .unwrap_or_else(transcoded);
        // A dictionary's nulls are its keys' (value nulls are checked per value).
        let nulls = array.nulls().cloned();
        let plain = if nulls.as_ref().is_none_or(|n| n.null_count() == 0) {
            PlainColumn::of(&kind)
        } else {
            None
        };
        ColumnView {
            kind,
            nulls,
            nullable: ty.is_nullable(),
            plain,
        }
    }

    /// The first null in rows `start..start + len` of a fast kind (a transcoded column
    /// checks its own).
    fn first_null(&self, start: usize, len: usize) -> Option<usize> {
        if matches!(self.kind, Kind::AlwaysNull | Kind::Transcoded { .. }) {
            return None;
        }
        let nulls = self.nulls.as_ref().filter(|n| n.null_count() > 0)?;
        (start..start + len).find(|i| nulls.is_null(*i))
    }
}

fn primitive_i64(array: &ArrayRef) -> Option<ScalarBuffer<i64>> {
    match array.data_type() {
        DataType::Timestamp(arrow_schema::TimeUnit::Second, _) => array
            .as_primitive_opt::<arrow_array::types::TimestampSecondType>()
            .map(|a| a.values().clone()),
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _) => array
            .as_primitive_opt::<arrow_array::types::TimestampMicrosecondType>()
            .map(|a| a.values().clone()),
        DataType::Duration(arrow_schema::TimeUnit::Microsecond) => array
            .as_primitive_opt::<arrow_array::types::DurationMicrosecondType>()
            .map(|a| a.values().clone()),
        _ => None,
    }
}

fn dictionary_kind(array: &ArrayRef) -> Option<Kind> {
    let dictionary = array.as_dictionary_opt::<Int32Type>()?;
    let keys = dictionary.keys().values().clone();
    let values = dictionary.values();
    let (offsets, bytes) = match values.data_type() {
        DataType::Binary => {
            let v = values.as_binary::<i32>();
            (v.offsets().clone(), v.values().clone())
        }
        DataType::Utf8 => {
            let v = values.as_string::<i32>();
            (v.offsets().clone(), v.values().clone())
        }
        _ => return None,
    };
    let value_nulls = values.nulls().cloned();
    let entries = {
        let all = widen(bytes.as_slice());
        (0..offsets.len().saturating_sub(1))
            .map(|k| {
                if value_nulls
                    .as_ref()
                    .is_some_and(|n| k < n.len() && n.is_null(k))
                {
                    Some(ValueRef::Null)
                } else {
                    bytes_at(&offsets, all, k).map(ValueRef::String)
                }
            })
            .collect()
    };
    Some(Kind::DictionaryBytes {
        keys,
        offsets,
        values: bytes,
        value_nulls,
        entries,
    })
}

/// Where a view of the arena goes once the chunk's arena is complete.
enum ArenaSlot {
    String,
    Composite,
    Any,
}

/// A chunk of rows of the current batch, as views.
#[derive(Default)]
pub(super) struct ChunkViews {
    columns: Vec<ColumnView>,
    /// Rows `start..start + len` of the batch are in `views`, `width` values per row.
    start: usize,
    len: usize,
    width: usize,
    views: Vec<ValueRef<'static>>,
    arena: Vec<u8>,
    pending: Vec<(usize, Range<usize>, ArenaSlot)>,
    composites: CompositeRuns,
}

/// The composite columns of a chunk, each written into the arena in one run: where each
/// value ends, so the views are made once the arena is complete.
#[derive(Default)]
struct CompositeRuns {
    /// For each run, the arena offset after each of its rows (a null row adds no bytes).
    ends: Vec<usize>,
    runs: Vec<CompositeRun>,
}

struct CompositeRun {
    column: usize,
    /// Where the run's first value starts in the arena.
    arena_from: usize,
    /// Where the run's ends start in `ends`.
    ends_from: usize,
}

/// An error in row `row` of the batch (0-based), column `column` (table order).
pub(super) struct ViewError {
    pub row: usize,
    pub column: usize,
    pub message: String,
}

impl ChunkViews {
    /// Starts a new batch whose columns (table order) are `columns`.
    pub(super) fn reset(&mut self, columns: Vec<ColumnView>) {
        self.views.clear();
        self.arena.clear();
        self.pending.clear();
        self.width = columns.len();
        self.columns = columns;
        self.start = 0;
        self.len = 0;
    }

    /// Whether row `row` of the batch is in the current chunk.
    pub(super) fn holds(&self, row: usize) -> bool {
        row >= self.start && row < self.start + self.len
    }

    /// Values per row.
    pub(super) fn width(&self) -> usize {
        self.width
    }

    /// Rows per chunk for this batch's width.
    pub(super) fn chunk_rows(&self) -> usize {
        (CHUNK_VALUES / self.width.max(1)).max(CHUNK_MIN_ROWS)
    }

    /// The row after the chunk's last (batch numbering).
    pub(super) fn end(&self) -> usize {
        self.start + self.len
    }

    /// The views of `count` rows of the batch from row `first`, which must be in the chunk,
    /// row after row.
    pub(super) fn rows(&self, first: usize, count: usize) -> &[ValueRef<'_>] {
        // The views of a chunk whose fill failed still point into its cleared arena.
        assert!(
            first >= self.start && first + count <= self.end(),
            "rows outside the chunk"
        );
        let at = (first - self.start) * self.width;
        &self.views[at..at + count * self.width]
    }

    /// The views of row `row` of the batch, which must be in the chunk.
    pub(super) fn row(&self, row: usize) -> &[ValueRef<'_>] {
        assert!(self.holds(row), "a row outside the chunk");
        let at = (row - self.start) * self.width;
        &self.views[at..at + self.width]
    }

    /// Fills the chunk with rows `start..start + len` of the batch.
    ///
    /// # Errors
    /// A value that does not fit its type (a null where none is allowed, a time out of
    /// range, malformed composite data).
    pub(super) fn fill(&mut self, start: usize, len: usize) -> Result<(), ViewError> {
        self.arena.clear();
        self.pending.clear();
        self.composites.ends.clear();
        self.composites.runs.clear();
        self.start = start;
        self.len = 0;
        let width = self.width;
        // Every column writes each of its slots below, so the views are only resized (not
        // cleared and refilled with nulls first: a pass over the whole chunk).
        if self.views.len() != len * width {
            self.views.clear();
            self.views.resize(len * width, ValueRef::Null);
        }
        if width == 0 {
            self.len = len;
            return Ok(());
        }
        for c in 0..width {
            if let Some((plain, count)) = self.columns[c].plain {
                if start + len <= count {
                    let out = self.views.as_mut_ptr();
                    // SAFETY: rows `start..start + len` are within the column's values
                    // (checked), whose buffer the column view holds; the views hold
                    // `len * width` slots (resized above) and `c < width`, so slot
                    // `r * width + c` of every row `r < len` is inside.
                    unsafe { plain.scatter(out.add(c), width, start, len) };
                    continue;
                }
            }
            fill_column(
                &self.columns[c],
                c,
                width,
                start,
                len,
                &mut self.views,
                &mut self.arena,
                &mut self.pending,
                &mut self.composites,
            )
            .map_err(|(row, message)| ViewError {
                row,
                column: c,
                message,
            })?;
        }
        for run in &self.composites.runs {
            let ends = &self.composites.ends[run.ends_from..run.ends_from + len];
            let mut from = run.arena_from;
            for (r, end) in ends.iter().enumerate() {
                let bytes: &[u8] = &self.arena[from..*end];
                // SAFETY: as for `pending` below.
                let bytes: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &[u8]>(bytes) };
                self.views[r * width + run.column] = if bytes.is_empty() {
                    ValueRef::Null
                } else {
                    ValueRef::Composite(bytes)
                };
                from = *end;
            }
        }
        for (at, range, slot) in self.pending.drain(..) {
            let bytes: &[u8] = &self.arena[range];
            // SAFETY: see the module invariants: the arena is complete and is not touched
            // again until the next `fill`/`reset` (both `&mut self`), and the views are
            // only handed out through `row`, which borrows `self`.
            let bytes: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &[u8]>(bytes) };
            self.views[at] = match slot {
                ArenaSlot::String => ValueRef::String(bytes),
                ArenaSlot::Composite => ValueRef::Composite(bytes),
                ArenaSlot::Any => ValueRef::Any(bytes),
            };
        }
        self.len = len;
        Ok(())
    }
}

impl ChunkViews {
    /// Fills the views with the single row `i` of the batch, column after column (one
    /// match per value on the column's resolved kind; the row's views stay in L1).
    ///
    /// # Errors
    /// As [`ChunkViews::fill`].
    pub(super) fn fill_row(&mut self, i: usize) -> Result<(), ViewError> {
        self.arena.clear();
        self.pending.clear();
        self.start = i;
        self.len = 0;
        let width = self.width;
        if self.views.len() != width {
            self.views.clear();
            self.views.resize(width, ValueRef::Null);
        }
        for (c, column) in self.columns.iter().enumerate() {
            let view =
                row_view(column, i, &mut self.arena, &mut self.pending, c).map_err(|message| {
                    ViewError {
                        row: i,
                        column: c,
                        message,
                    }
                })?;
            self.views[c] = view;
        }
        for (at, range, slot) in self.pending.drain(..) {
            let bytes: &[u8] = &self.arena[range];
            // SAFETY: as in `fill`: the arena is complete and untouched until the next fill.
            let bytes: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &[u8]>(bytes) };
            self.views[at] = match slot {
                ArenaSlot::String => ValueRef::String(bytes),
                ArenaSlot::Composite => ValueRef::Composite(bytes),
                ArenaSlot::Any => ValueRef::Any(bytes),
            };
        }
        self.len = 1;
        Ok(())
    }
}

/// The view of value `i` of one column (arena-backed views are queued in `pending`).
#[inline(always)]
fn row_view(
    column: &ColumnView,
    i: usize,
    arena: &mut Vec<u8>,
    pending: &mut Vec<(usize, Range<usize>, ArenaSlot)>,
    c: usize,
) -> Result<ValueRef<'static>, String> {
    if let Some(nulls) = &column.nulls {
        if nulls.is_null(i) && !matches!(column.kind, Kind::Transcoded { .. }) {
            return if column.nullable || matches!(column.kind, Kind::AlwaysNull) {
                Ok(ValueRef::Null)
            } else {
                Err("null where the column's type has no null".to_owned())
            };
        }
    }
    let short = || "column shorter than the batch".to_owned();
    macro_rules! at {
        ($values:expr) => {
            *$values.get(i).ok_or_else(short)?
        };
    }
    Ok(match &column.kind {
        Kind::I8(v) => ValueRef::Int64(at!(v).into()),
        Kind::I16(v) => ValueRef::Int64(at!(v).into()),
        Kind::I32(v) => ValueRef::Int64(at!(v).into()),
        Kind::I64(v) => ValueRef::Int64(at!(v)),
        Kind::U8(v) => ValueRef::Uint64(at!(v).into()),
        Kind::U16(v) => ValueRef::Uint64(at!(v).into()),
        Kind::U32(v) => ValueRef::Uint64(at!(v).into()),
        Kind::U64(v) => ValueRef::Uint64(at!(v)),
        Kind::F32(v) => ValueRef::Double(at!(v).into()),
        Kind::F64(v) => ValueRef::Double(at!(v)),
        Kind::Bool(bits) => {
            if i >= bits.len() {
                return Err(short());
            }
            ValueRef::Bool(bits.value(i))
        }
        Kind::Bytes { offsets, values } => ValueRef::String(
            bytes_at(offsets, widen(values.as_slice()), i)
                .ok_or_else(|| "string offsets out of bounds".to_owned())?,
        ),
        Kind::DictionaryBytes {
            keys,
            offsets,
            values,
            value_nulls,
            ..
        } => {
            let key = at!(keys);
            let k = usize::try_from(key).map_err(|_| format!("negative dictionary key {key}"))?;
            if value_nulls
                .as_ref()
                .is_some_and(|n| k < n.len() && n.is_null(k))
            {
                return Ok(ValueRef::Null);
            }
            ValueRef::String(
                bytes_at(offsets, widen(values.as_slice()), k)
                    .ok_or_else(|| format!("dictionary key {key} out of range"))?,
            )
        }
        Kind::UnsignedTime { values, max } => {
            let v = at!(values);
            u64::try_from(v)
                .ok()
                .filter(|v| v <= max)
                .map(ValueRef::Uint64)
                .ok_or_else(|| format!("time {v} out of range 0..={max}"))?
        }
        Kind::UnsignedDate { values, max } => {
            let v = at!(values);
            u64::try_from(v)
                .ok()
                .filter(|v| v <= max)
                .map(ValueRef::Uint64)
                .ok_or_else(|| format!("date {v} out of range 0..={max}"))?
        }
        Kind::SignedTime { values, min, max } => {
            let v = at!(values);
            if !(*min..=*max).contains(&v) {
                return Err(format!("time {v} out of range {min}..={max}"));
            }
            ValueRef::Int64(v)
        }
        Kind::SignedDate { values, min, max } => {
            let v = i64::from(at!(values));
            if !(*min..=*max).contains(&v) {
                return Err(format!("date {v} out of range {min}..={max}"));
            }
            ValueRef::Int64(v)
        }
        Kind::AlwaysNull => ValueRef::Null,
        Kind::Composite(plan) => {
            let from = arena.len();
            plan.write(i, arena)?;
            pending.push((c, from..arena.len(), ArenaSlot::Composite));
            ValueRef::Null
        }
        Kind::Transcoded { ty, array } => {
            if i >= array.len() {
                return Err(format!("column of {} rows", array.len()));
            }
            let from = arena.len();
            let mut view = ValueRef::Null;
            if let Some(slot) = transcode(ty, array.as_ref(), i, arena, &mut view)? {
                pending.push((c, from..arena.len(), slot));
            }
            view
        }
    })
}

/// Writes `f(value)` of each row into column `c` of the views (see [`scatter_rows`]).
#[inline(always)]
fn scatter<T: Copy>(
    views: &mut [ValueRef<'static>],
    c: usize,
    width: usize,
    start: usize,
    values: &[T],
    nulls: Option<&NullBuffer>,
    mut f: impl FnMut(T) -> Result<ValueRef<'static>, String>,
) -> Result<(), (usize, String)> {
    let len = values.len();
    scatter_rows(views, c, width, start, len, nulls, |r| f(values[r]))
}

/// Writes `f(r)` for each row `r` of the chunk (`0..len`) into column `c` of the views, and
/// `Null` where the validity bitmap says so: `f` never sees a row under a null, whose bytes
/// Arrow leaves undefined.
///
/// The validity is taken 64 rows at a time: a word with every row valid runs the plain loop,
/// so a column without nulls (or with few) costs one conversion and one store per value.
#[inline(always)]
fn scatter_rows(
    views: &mut [ValueRef<'static>],
    c: usize,
    width: usize,
    start: usize,
    len: usize,
    nulls: Option<&NullBuffer>,
    mut f: impl FnMut(usize) -> Result<ValueRef<'static>, String>,
) -> Result<(), (usize, String)> {
    // One check for the whole column instead of one per row: every `r * width + c` below
    // is then within `views`.
    assert!(c < width && views.len() >= len * width, "chunk shape");
    let base = views.as_mut_ptr();
    let put = |r: usize, view: ValueRef<'static>| {
        debug_assert!(r < len);
        // SAFETY: r < len and c < width, so r * width + c < len * width <= views.len().
        unsafe { base.add(r * width + c).write(view) }
    };
    match nulls.filter(|n| n.null_count() > 0) {
        None => {
            for r in 0..len {
                put(r, f(r).map_err(|e| (start + r, e))?);
            }
        }
        Some(nulls) => {
            if nulls.len() < start + len {
                return Err((start, format!("validity of {} rows", nulls.len())));
            }
            let words = BitChunks::new(nulls.validity(), nulls.offset() + start, len);
            for (k, word) in words.iter_padded().enumerate() {
                let from = k * 64;
                let to = (from + 64).min(len);
                let all = if to - from == 64 {
                    u64::MAX
                } else {
                    (1u64 << (to - from)) - 1
                };
                if word & all == all {
                    for r in from..to {
                        put(r, f(r).map_err(|e| (start + r, e))?);
                    }
                } else {
                    for r in from..to {
                        let view = if word >> (r - from) & 1 == 1 {
                            f(r).map_err(|e| (start + r, e))?
                        } else {
                            ValueRef::Null
                        };
                        put(r, view);
                    }
                }
            }
        }
    }
    Ok(())
}

fn slice_of<T>(values: &[T], start: usize, len: usize) -> Result<&[T], (usize, String)> {
    values.get(start..start + len).ok_or_else(|| {
        (
            start,
            format!("column shorter than the batch ({})", values.len()),
        )
    })
}

/// The bytes of value `i` of an offsets/values pair; `None` when the offsets point outside.
#[inline(always)]
fn bytes_at<'b>(offsets: &[i32], values: &'b [u8], i: usize) -> Option<&'b [u8]> {
    let start = usize::try_from(*offsets.get(i)?).ok()?;
    let end = usize::try_from(*offsets.get(i + 1)?).ok()?;
    values.get(start..end)
}

/// A borrowed slice of a reference-counted buffer, with the buffer's lifetime widened.
///
/// SAFETY (of the callers): the buffer is held by a [`ColumnView`] of the current batch, and
/// views are only handed out while the [`ChunkViews`] holding it is borrowed.
fn widen(bytes: &[u8]) -> &'static [u8] {
    unsafe { std::mem::transmute::<&[u8], &'static [u8]>(bytes) }
}

#[allow(clippy::too_many_arguments)]
fn fill_column(
    column: &ColumnView,
    c: usize,
    width: usize,
    start: usize,
    len: usize,
    views: &mut [ValueRef<'static>],
    arena: &mut Vec<u8>,
    pending: &mut Vec<(usize, Range<usize>, ArenaSlot)>,
    composites: &mut CompositeRuns,
) -> Result<(), (usize, String)> {
    let nulls = column.nulls.as_ref();
    if !column.nullable {
        if let Some(row) = column.first_null(start, len) {
            return Err((row, "null where the column's type has no null".to_owned()));
        }
    }
    macro_rules! plain {
        ($values:expr, $convert:expr) => {
            scatter(
                views,
                c,
                width,
                start,
                slice_of($values, start, len)?,
                nulls,
                |v| Ok($convert(v)),
            )
        };
    }
    match &column.kind {
        Kind::I8(v) => plain!(v, |v: i8| ValueRef::Int64(v.into())),
        Kind::I16(v) => plain!(v, |v: i16| ValueRef::Int64(v.into())),
        Kind::I32(v) => plain!(v, |v: i32| ValueRef::Int64(v.into())),
        Kind::I64(v) => plain!(v, ValueRef::Int64),
        Kind::U8(v) => plain!(v, |v: u8| ValueRef::Uint64(v.into())),
        Kind::U16(v) => plain!(v, |v: u16| ValueRef::Uint64(v.into())),
        Kind::U32(v) => plain!(v, |v: u32| ValueRef::Uint64(v.into())),
        Kind::U64(v) => plain!(v, ValueRef::Uint64),
        Kind::F32(v) => plain!(v, |v: f32| ValueRef::Double(v.into())),
        Kind::F64(v) => plain!(v, ValueRef::Double),
        Kind::Bool(bits) => {
            if start + len > bits.len() {
                return Err((start, "boolean column shorter than the batch".into()));
            }
            let bits = bits.slice(start, len);
            let bytes = bits.values();
            let offset = bits.offset();
            scatter_rows(views, c, width, start, len, nulls, |r| {
                let at = offset + r;
                Ok(ValueRef::Bool(bytes[at / 8] >> (at % 8) & 1 == 1))
            })
        }
        Kind::Bytes { offsets, values } => {
            let bytes = widen(values.as_slice());
            let offsets: &[i32] = offsets;
            let Some(ends) = offsets.get(start..start + len + 1) else {
                return Err((start, "string offsets shorter than the batch".into()));
            };
            scatter_rows(views, c, width, start, len, nulls, |r| {
                // Arrow's offsets are non-negative and ascending (OffsetBuffer's invariant);
                // the end is checked against the bytes.
                let (from, to) = (ends[r] as usize, ends[r + 1] as usize);
                bytes
                    .get(from..to)
                    .map(ValueRef::String)
                    .ok_or_else(|| "string offsets out of bounds".to_owned())
            })
        }
        Kind::DictionaryBytes {
            keys,
            entries: Some(entries),
            ..
        } => scatter(
            views,
            c,
            width,
            start,
            slice_of(keys, start, len)?,
            nulls,
            |key| {
                // A negative key wraps to an index past every dictionary.
                entries.get(key as usize).copied().ok_or_else(|| {
                    if key < 0 {
                        format!("negative dictionary key {key}")
                    } else {
                        format!("dictionary key {key} out of range")
                    }
                })
            },
        ),
        Kind::DictionaryBytes {
            keys,
            offsets,
            values,
            value_nulls,
            entries: None,
        } => {
            let bytes = widen(values.as_slice());
            let offsets: &[i32] = offsets;
            scatter(
                views,
                c,
                width,
                start,
                slice_of(keys, start, len)?,
                nulls,
                |key| {
                    let k = usize::try_from(key)
                        .map_err(|_| format!("negative dictionary key {key}"))?;
                    if value_nulls
                        .as_ref()
                        .is_some_and(|n| k < n.len() && n.is_null(k))
                    {
                        return Ok(ValueRef::Null);
                    }
                    bytes_at(offsets, bytes, k)
                        .map(ValueRef::String)
                        .ok_or_else(|| format!("dictionary key {key} out of range"))
                },
            )
        }
        Kind::UnsignedTime { values, max } => scatter(
            views,
            c,
            width,
            start,
            slice_of(values, start, len)?,
            nulls,
            |v| {
                u64::try_from(v)
                    .ok()
                    .filter(|v| v <= max)
                    .map(ValueRef::Uint64)
                    .ok_or_else(|| format!("time {v} out of range 0..={max}"))
            },
        ),
        Kind::UnsignedDate { values, max } => scatter(
            views,
            c,
            width,
            start,
            slice_of(values, start, len)?,
            nulls,
            |v| {
                u64::try_from(v)
                    .ok()
                    .filter(|v| v <= max)
                    .map(ValueRef::Uint64)
                    .ok_or_else(|| format!("date {v} out of range 0..={max}"))
            },
        ),
        Kind::SignedTime { values, min, max } => scatter(
            views,
            c,
            width,
            start,
            slice_of(values, start, len)?,
            nulls,
            |v| {
                if (*min..=*max).contains(&v) {
                    Ok(ValueRef::Int64(v))
                } else {
                    Err(format!("time {v} out of range {min}..={max}"))
                }
            },
        ),
        Kind::SignedDate { values, min, max } => scatter(
            views,
            c,
            width,
            start,
            slice_of(values, start, len)?,
            nulls,
            |v| {
                let v = i64::from(v);
                if (*min..=*max).contains(&v) {
                    Ok(ValueRef::Int64(v))
                } else {
                    Err(format!("date {v} out of range {min}..={max}"))
                }
            },
        ),
        Kind::AlwaysNull => scatter_rows(views, c, width, start, len, None, |_| Ok(ValueRef::Null)),
        Kind::Composite(plan) => {
            // The plan's validity is the column's: a null row adds no bytes and is viewed
            // as a null (a null where the type has none was refused above).
            composites.runs.push(CompositeRun {
                column: c,
                arena_from: arena.len(),
                ends_from: composites.ends.len(),
            });
            plan.write_rows(start..start + len, arena, &mut composites.ends)
        }
        Kind::Transcoded { ty, array } => {
            if start + len > array.len() {
                return Err((start, format!("column of {} rows", array.len())));
            }
            for r in 0..len {
                let i = start + r;
                let at = r * width + c;
                let from = arena.len();
                let slot =
                    transcode(ty, array.as_ref(), i, arena, &mut views[at]).map_err(|e| (i, e))?;
                if let Some(slot) = slot {
                    pending.push((at, from..arena.len(), slot));
                }
            }
            Ok(())
        }
    }
}

/// The view of value `i` of a column of `ty` that the fast kinds do not cover: a scalar
/// straight into `view`, or bytes appended to `arena` (`Some(slot)`: the view is made once
/// the arena is complete).
fn transcode(
    ty: &Type,
    array: &dyn Array,
    i: usize,
    arena: &mut Vec<u8>,
    view: &mut ValueRef<'static>,
) -> Result<Option<ArenaSlot>, String> {
    let primitive = scalar_primitive(ty);
    let is_yson = matches!(primitive, Some(PrimitiveType::Yson));
    if is_yson || (primitive.is_some() || is_decimal(ty)) {
        // uuid, decimals, `yson` and the other scalars without a fast kind: through the
        // owned value, as the type checker sees it.
        let value = columns::value_at(ty, array, i)?;
        shapeshift_types::check_value(&value, ty).map_err(|e| e.to_string())?;
        *view = match value {
            Value::Null => ValueRef::Null,
            Value::Bool(v) => ValueRef::Bool(v),
            Value::Int64(v) => ValueRef::Int64(v),
            Value::Uint64(v) => ValueRef::Uint64(v),
            Value::Double(v) => ValueRef::Double(v),
            Value::String(bytes) => {
                arena.extend_from_slice(&bytes);
                return Ok(Some(ArenaSlot::String));
            }
            Value::Any(_) => {
                yson_binary::value(arena, &value, ty)?;
                return Ok(Some(ArenaSlot::Any));
            }
            other => {
                yson_binary::value(arena, &other, ty)?;
                return Ok(Some(ArenaSlot::Composite));
            }
        };
        return Ok(None);
    }
    if value_is_null(ty, array, i) {
        *view = ValueRef::Null;
        return Ok(None);
    }
    write_yson(ty, array, i, arena)?;
    Ok(Some(ArenaSlot::Composite))
}

fn is_decimal(ty: &Type) -> bool {
    match ty {
        Type::Tagged { item, .. } => is_decimal(item),
        Type::Optional(item) if !item.is_nullable() => is_decimal(item),
        Type::Decimal { .. } => true,
        _ => false,
    }
}

/// Whether the value of nullable `ty` at `i` is null (for the types whose Arrow field is
/// itself nullable; a wrapped optional's struct is null, a variant's null is its child's).
fn value_is_null(ty: &Type, array: &dyn Array, i: usize) -> bool {
    match ty {
        Type::Tagged { item, .. } => value_is_null(item, array, i),
        Type::Optional(_) => array.is_null(i),
        _ => false,
    }
}

/// Writes value `i` of `array`, of type `ty`, as binary YSON in YT's named form, straight
/// from the arrays for lists, structs, tuples, dicts and plain scalars; other shapes go
/// through an owned value.
fn write_yson(ty: &Type, array: &dyn Array, i: usize, out: &mut Vec<u8>) -> Result<(), String> {
    use PrimitiveType as P;
    if i >= array.len() {
        return Err(format!("row {i} past an array of {}", array.len()));
    }
    let through_value = |out: &mut Vec<u8>| -> Result<(), String> {
        let value = columns::value_at(ty, array, i)?;
        shapeshift_types::check_value(&value, ty).map_err(|e| e.to_string())?;
        yson_binary::value(out, &value, ty)
    };
    if array.as_any_dictionary_opt().is_some() {
        return through_value(out);
    }
    let null_here = || format!("null where type {ty} has no null");
    match ty {
        Type::Tagged { item, .. } => write_yson(item, array, i, out),
        Type::Optional(item) if !item.is_nullable() && !is_variant(item) => {
            if array.is_null(i) {
                out.push(b'#');
                Ok(())
            } else {
                write_yson(item, array, i, out)
            }
        }
        Type::Primitive(P::Null | P::Void) => {
            out.push(b'#');
            Ok(())
        }
        Type::Primitive(p)
            if !ty.is_nullable() && write_scalar_run(*p, array, i..i + 1, false, out)? =>
        {
            Ok(())
        }
        Type::List(item) => {
            if array.is_null(i) {
                return Err(null_here());
            }
            let list = array.as_list_opt::<i32>().ok_or_else(|| wrong(ty, array))?;
            let range = list_range(list.value_offsets(), i, list.values().len())?;
            let values = list.values().as_ref();
            out.push(b'[');
            if let Some(p) = plain_primitive(item) {
                if write_scalar_run(p, values, range.clone(), true, out)? {
                    out.push(b']');
                    return Ok(());
                }
            }
            for j in range {
                write_yson(item, values, j, out)?;
                out.push(b';');
            }
            out.push(b']');
            Ok(())
        }
        Type::Struct(members) => {
            if array.is_null(i) {
                return Err(null_here());
            }
            let s = array
                .as_struct_opt()
                .filter(|s| s.num_columns() == members.len())
                .ok_or_else(|| wrong(ty, array))?;
            out.push(b'{');
            for (member, column) in members.iter().zip(s.columns()) {
                yson_binary::string(out, member.name.as_bytes());
                out.push(b'=');
                write_yson(&member.ty, column.as_ref(), i, out)?;
                out.push(b';');
            }
            out.push(b'}');
            Ok(())
        }
        Type::Tuple(elements) => {
            if array.is_null(i) {
                return Err(null_here());
            }
            let s = array
                .as_struct_opt()
                .filter(|s| s.num_columns() == elements.len())
                .ok_or_else(|| wrong(ty, array))?;
            out.push(b'[');
            for (element, column) in elements.iter().zip(s.columns()) {
                write_yson(element, column.as_ref(), i, out)?;
                out.push(b';');
            }
            out.push(b']');
            Ok(())
        }
        Type::Dict { key, value } => {
            if array.is_null(i) {
                return Err(null_here());
            }
            let (entries, range) = if let Some(map) = array.as_map_opt() {
                let range = list_range(map.value_offsets(), i, map.entries().len())?;
                (map.entries().clone(), range)
            } else {
                let list = array.as_list_opt::<i32>().ok_or_else(|| wrong(ty, array))?;
                let range = list_range(list.value_offsets(), i, list.values().len())?;
                let entries = list
                    .values()
                    .as_struct_opt()
                    .ok_or_else(|| wrong(ty, array))?
                    .clone();
                (entries, range)
            };
            if entries.num_columns() != 2 {
                return Err(wrong(ty, array));
            }
            let (keys, values) = (entries.column(0).as_ref(), entries.column(1).as_ref());
            out.push(b'[');
            for j in range {
                out.push(b'[');
                write_yson(key, keys, j, out)?;
                out.push(b';');
                write_yson(value, values, j, out)?;
                out.push(b';');
                out.push(b']');
                out.push(b';');
            }
            out.push(b']');
            Ok(())
        }
        _ => through_value(out),
    }
}

fn is_variant(ty: &Type) -> bool {
    matches!(
        ty.untagged(),
        Type::VariantStruct(_) | Type::VariantTuple(_)
    )
}

/// A list item that is a plain, non-nullable primitive (written in one run).
fn plain_primitive(ty: &Type) -> Option<PrimitiveType> {
    match ty {
        Type::Tagged { item, .. } => plain_primitive(item),
        Type::Primitive(p) if !ty.is_nullable() => Some(*p),
        _ => None,
    }
}

fn wrong(ty: &Type, array: &dyn Array) -> String {
    format!("array of {} where type {ty} is expected", array.data_type())
}

fn list_range(offsets: &[i32], i: usize, items: usize) -> Result<Range<usize>, String> {
    let at = |k: usize| {
        offsets
            .get(k)
            .and_then(|o| usize::try_from(*o).ok())
            .filter(|o| *o <= items)
    };
    match (at(i), at(i + 1)) {
        (Some(start), Some(end)) if start <= end => Ok(start..end),
        _ => Err(format!("list offsets of row {i} out of bounds")),
    }
}

/// Writes values `range` of a plain primitive array as binary YSON scalars (each followed by
/// `;` when `separated`). Returns `false`, writing nothing, for a primitive or array this
/// fast path does not cover.
fn write_scalar_run(
    p: PrimitiveType,
    array: &dyn Array,
    range: Range<usize>,
    separated: bool,
    out: &mut Vec<u8>,
) -> Result<bool, String> {
    use PrimitiveType as P;
    if range.end > array.len() {
        return Err(format!(
            "item {} past an array of {}",
            range.end,
            array.len()
        ));
    }
    if let Some(j) = range.clone().find(|j| array.is_null(*j)) {
        return Err(format!("null item {j} where type {p:?} has no null"));
    }
    macro_rules! run {
        ($t:ty, $write:expr) => {{
            let Some(a) = array.as_primitive_opt::<$t>() else {
                return Ok(false);
            };
            for v in &a.values()[range] {
                $write(out, *v);
                if separated {
                    out.push(b';');
                }
            }
        }};
    }
    match (p, array.data_type()) {
        (P::Int8, DataType::Int8) => run!(Int8Type, |o, v: i8| yson_binary::int64(o, v.into())),
        (P::Int16, DataType::Int16) => {
            run!(Int16Type, |o, v: i16| yson_binary::int64(o, v.into()))
        }
        (P::Int32, DataType::Int32) => {
            run!(Int32Type, |o, v: i32| yson_binary::int64(o, v.into()))
        }
        (P::Int64, DataType::Int64) => run!(Int64Type, yson_binary::int64),
        (P::Uint8, DataType::UInt8) => {
            run!(UInt8Type, |o, v: u8| yson_binary::uint64(o, v.into()))
        }
        (P::Uint16, DataType::UInt16) => {
            run!(UInt16Type, |o, v: u16| yson_binary::uint64(o, v.into()))
        }
        (P::Uint32, DataType::UInt32) => {
            run!(UInt32Type, |o, v: u32| yson_binary::uint64(o, v.into()))
        }
        (P::Uint64, DataType::UInt64) => run!(UInt64Type, yson_binary::uint64),
        (P::Float, DataType::Float32) => {
            run!(Float32Type, |o, v: f32| yson_binary::double(o, v.into()))
        }
        (P::Double, DataType::Float64) => run!(Float64Type, yson_binary::double),
        (P::Bool, DataType::Boolean) => {
            let Some(a) = array.as_boolean_opt() else {
                return Ok(false);
            };
            for j in range {
                yson_binary::boolean(out, a.value(j));
                if separated {
                    out.push(b';');
                }
            }
        }
        (P::String, DataType::Binary) => {
            let Some(a) = array.as_binary_opt::<i32>() else {
                return Ok(false);
            };
            for j in range {
                yson_binary::string(out, a.value(j));
                if separated {
                    out.push(b';');
                }
            }
        }
        (P::Utf8 | P::Json, DataType::Utf8) => {
            let Some(a) = array.as_string_opt::<i32>() else {
                return Ok(false);
            };
            for j in range {
                yson_binary::string(out, a.value(j).as_bytes());
                if separated {
                    out.push(b';');
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}
