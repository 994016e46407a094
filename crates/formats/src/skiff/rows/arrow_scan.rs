//! Skiff rows straight into Arrow record batches of the columns a query reads: the columnar
//! fast path under the query engine (`shapeshift sql` over Skiff tables).
//!
//! The row interface hands out every value of every row, and building Arrow arrays from those
//! values costs a call and a match per value. Here a table's row layout is compiled once into
//! [`Step`]s: runs of fixed-size scalars (bounds checked once per run, the columns read loaded
//! at fixed offsets inside the run), optional values (a tag, then the value) and strings (a
//! length, then the bytes). Strings become Arrow views into the input buffer: no string is
//! copied. Columns the query does not read are stepped over with only the checks that find
//! where the next field starts (lengths in bounds, tags 0 or 1): their values are never
//! produced, so their booleans and UTF-8 are not looked at.
//!
//! Invariants: a batch holds only whole rows read to their end, and every row belongs to
//! table 0 (a query table is one table). A row that fails is reported with its byte offset,
//! row number and column, and nothing after it is read. A table with a column this scan does
//! not cover (composites, yson, decimals, uuids, wide integers, nested optionals, null
//! types) or with system fields has no scan ([`ArrowScan::new`] gives `None`): the row
//! interface reads it. For the columns it covers, the values are those the row interface
//! builds (the same casts), which a property test checks.

use std::sync::Arc;

use arrow_array::types::{
    Date32Type, DurationMicrosecondType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use arrow_array::{
    ArrayRef, BinaryViewArray, PrimitiveArray, RecordBatch, RecordBatchOptions, StringViewArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use shapeshift_types::TableSchema;

use super::{codec, FORMAT};
use crate::skiff::plan::{FieldPlan, Kind, ValueShape, WideAs};
use crate::table::FormatError;

/// The byte size of a fixed-size scalar of the plan's `kind` (the scalars this scan reads);
/// `None` for every other kind.
fn scalar_size(kind: Kind) -> Option<usize> {
    match kind {
        Kind::I8 | Kind::U8 | Kind::Bool => Some(1),
        Kind::I16 | Kind::U16 => Some(2),
        Kind::I32 | Kind::U32 => Some(4),
        Kind::I64 | Kind::U64 | Kind::Double => Some(8),
        _ => None,
    }
}

/// A value as read from the wire, before the cast to its column's Arrow type.
#[derive(Clone, Copy)]
enum Raw {
    Signed(i64),
    Unsigned(u64),
    Double(f64),
    Bool(bool),
}

/// Reads a `wire` scalar (one `scalar_size` knows) from the start of `bytes` (which holds at least its size).
#[inline(always)]
fn read_raw(wire: Kind, bytes: &[u8]) -> Raw {
    let le = |n: usize| {
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(word)
    };
    match wire {
        Kind::I8 => Raw::Signed(bytes[0] as i8 as i64),
        Kind::I16 => Raw::Signed(le(2) as u16 as i16 as i64),
        Kind::I32 => Raw::Signed(le(4) as u32 as i32 as i64),
        Kind::I64 => Raw::Signed(le(8) as i64),
        Kind::U8 => Raw::Unsigned(u64::from(bytes[0])),
        Kind::U16 => Raw::Unsigned(le(2)),
        Kind::U32 => Raw::Unsigned(le(4)),
        Kind::U64 => Raw::Unsigned(le(8)),
        Kind::Double => Raw::Double(f64::from_bits(le(8))),
        Kind::Bool => Raw::Bool(bytes[0] != 0),
        other => unreachable!("{other:?} is not a scalar the scan reads (scalar_size)"),
    }
}

/// The values of one output column.
enum Values {
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
    /// Arrow byte views; `text` when the bytes must be UTF-8.
    Views {
        views: Vec<u128>,
        text: bool,
    },
}

impl Values {
    /// The empty values of an Arrow type this scan builds, room for `capacity` (`None` for
    /// the other types).
    fn for_type(data_type: &DataType, capacity: usize) -> Option<Values> {
        use TimeUnit::{Microsecond, Second};
        Some(match data_type {
            DataType::Int8 => Values::I8(Vec::with_capacity(capacity)),
            DataType::Int16 => Values::I16(Vec::with_capacity(capacity)),
            DataType::Int32 | DataType::Date32 => Values::I32(Vec::with_capacity(capacity)),
            DataType::Int64
            | DataType::Timestamp(Second | Microsecond, None)
            | DataType::Duration(Microsecond) => Values::I64(Vec::with_capacity(capacity)),
            DataType::UInt8 => Values::U8(Vec::with_capacity(capacity)),
            DataType::UInt16 => Values::U16(Vec::with_capacity(capacity)),
            DataType::UInt32 => Values::U32(Vec::with_capacity(capacity)),
            DataType::UInt64 => Values::U64(Vec::with_capacity(capacity)),
            DataType::Float32 => Values::F32(Vec::with_capacity(capacity)),
            DataType::Float64 => Values::F64(Vec::with_capacity(capacity)),
            DataType::Boolean => Values::Bool(BooleanBufferBuilder::new(capacity)),
            DataType::Utf8 | DataType::Utf8View => Values::Views {
                views: Vec::with_capacity(capacity),
                text: true,
            },
            DataType::Binary | DataType::BinaryView => Values::Views {
                views: Vec::with_capacity(capacity),
                text: false,
            },
            _ => return None,
        })
    }

    /// Whether values read as `wire` cast to these (the row interface's casts: integers to
    /// integers, doubles to floats, booleans to booleans).
    fn takes(&self, wire: Kind) -> bool {
        match self {
            Values::F32(_) | Values::F64(_) => wire == Kind::Double,
            Values::Bool(_) => wire == Kind::Bool,
            Values::Views { .. } => false,
            _ => !matches!(wire, Kind::Double | Kind::Bool),
        }
    }

    /// Appends the `wire` scalar at the start of `bytes` (which holds at least its size),
    /// cast as the row interface casts it (`as` between integer widths). A scalar of the
    /// values' own width is loaded as it is (the same bits as the cast).
    #[inline(always)]
    fn push_wire(&mut self, wire: Kind, bytes: &[u8]) {
        macro_rules! number {
            ($v:expr, $t:ty, $same:pat) => {{
                const SIZE: usize = std::mem::size_of::<$t>();
                $v.push(if matches!(wire, $same) {
                    <$t>::from_le_bytes(bytes[..SIZE].try_into().expect("the size"))
                } else {
                    match read_raw(wire, bytes) {
                        Raw::Signed(x) => x as $t,
                        Raw::Unsigned(x) => x as $t,
                        Raw::Double(x) => x as $t,
                        Raw::Bool(x) => x as u8 as $t,
                    }
                })
            }};
        }
        match self {
            Values::I8(v) => number!(v, i8, Kind::I8 | Kind::U8),
            Values::I16(v) => number!(v, i16, Kind::I16 | Kind::U16),
            Values::I32(v) => number!(v, i32, Kind::I32 | Kind::U32),
            Values::I64(v) => number!(v, i64, Kind::I64 | Kind::U64),
            Values::U8(v) => number!(v, u8, Kind::I8 | Kind::U8),
            Values::U16(v) => number!(v, u16, Kind::I16 | Kind::U16),
            Values::U32(v) => number!(v, u32, Kind::I32 | Kind::U32),
            Values::U64(v) => number!(v, u64, Kind::I64 | Kind::U64),
            // Skiff has no 32-bit float: `float` columns travel as doubles.
            Values::F32(v) => v.push(f64::from_le_bytes(bytes[..8].try_into().expect("8")) as f32),
            Values::F64(v) => number!(v, f64, Kind::Double),
            Values::Bool(b) => b.append(bytes[0] != 0),
            Values::Views { views, .. } => views.push(0),
        }
    }

    /// Appends a zero (the slot of a null).
    fn push_zero(&mut self) {
        self.push_wire(Kind::U64, &[0; 8]);
    }
}

/// One output column: its values and, for an optional column, its validity.
struct Output {
    values: Values,
    nulls: Option<BooleanBufferBuilder>,
}

/// A read of a fixed-size scalar at `offset` inside a fixed run, into output `out`.
#[derive(Clone, Copy, Debug)]
struct Read {
    offset: usize,
    wire: Kind,
    out: usize,
    column: usize,
}

/// One piece of a row, in wire order.
#[derive(Clone, Debug)]
enum Step {
    /// `len` bytes of non-optional fixed-size scalars (the row's table index first in the
    /// first run); the columns read are at `reads`, the booleans read are checked 0 or 1.
    Fixed { len: usize, reads: Vec<Read> },
    /// `variant8<nothing; T>` of a fixed-size `T`: a tag (0 null, 1 the value), then `T`.
    OptionalScalar {
        wire: Kind,
        out: Option<usize>,
        column: usize,
    },
    /// A string (`string32`), optional or not: a u32 length, then the bytes.
    String {
        optional: bool,
        out: Option<usize>,
        column: usize,
    },
}

/// The compiled scan of one table's rows into Arrow batches of some of its columns.
#[derive(Clone, Debug)]
pub struct ArrowScan {
    steps: Vec<Step>,
    /// Names of the table's columns, for messages.
    names: Vec<String>,
    /// The projected columns: Arrow types (strings as views) in projection order.
    schema: SchemaRef,
}

/// Bytes a batch may span, so that string views (u32 offsets) reach every byte of it.
const MAX_BATCH_SPAN: usize = 1 << 31;

impl ArrowScan {
    /// The scan of the rows of `table` (YT's Skiff schema for it, no system fields) into the
    /// columns `projection` (indices into the table's columns; the same column may not
    /// appear twice). `arrow` is the table's Arrow schema, one field per column (the Arrow
    /// format's mapping, `arrow::arrow_schema`; passed in, as a format does not import
    /// another): its types are the arrays' (strings and binaries as views). `None` when the
    /// table has a column the scan does not cover (see the module docs).
    ///
    /// # Errors
    /// When the table schema has no Skiff schema, `arrow` does not have one field per
    /// column, or a projected index is out of range.
    pub fn new(
        table: &TableSchema,
        arrow: &Schema,
        projection: &[usize],
    ) -> Result<Option<ArrowScan>, FormatError> {
        let codec = codec(std::slice::from_ref(table), false)?;
        let plan = codec.table(0).expect("a codec of one table");
        if plan.has_key_switch()
            || plan.has_row_index()
            || plan.has_range_index()
            || plan.has_other_columns()
            || !plan.sparse_column_names().is_empty()
        {
            return Ok(None);
        }
        if arrow.fields().len() != table.columns.len() {
            return Err(FormatError::new(
                FORMAT,
                format!(
                    "an Arrow schema of {} fields for a table of {} columns",
                    arrow.fields().len(),
                    table.columns.len()
                ),
            ));
        }
        let mut out_of_column = vec![None; table.columns.len()];
        let mut fields = Vec::with_capacity(projection.len());
        for (out, &column) in projection.iter().enumerate() {
            let field = arrow.fields().get(column).ok_or_else(|| {
                FormatError::new(
                    FORMAT,
                    format!(
                        "column {column} of a table of {} columns",
                        table.columns.len()
                    ),
                )
            })?;
            if out_of_column[column].replace(out).is_some() {
                return Err(FormatError::new(
                    FORMAT,
                    format!("column {:?} projected twice", field.name()),
                ));
            }
            let data_type = match field.data_type() {
                DataType::Utf8 => DataType::Utf8View,
                DataType::Binary => DataType::BinaryView,
                other => other.clone(),
            };
            fields.push(Field::clone(field).with_data_type(data_type));
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut run_len = 2; // the table index
        let mut run_reads = Vec::new();
        for column in 0..plan.column_count() {
            let field_plan = plan.column_plan(column);
            let Some((item, optional)) = simple_item(field_plan) else {
                return Ok(None);
            };
            let out = out_of_column[column];
            let target = arrow.field(column).data_type();
            if Values::for_type(target, 0).is_none() {
                return Ok(None);
            }
            if item.kind == Kind::String32 {
                if !matches!(target, DataType::Utf8 | DataType::Binary) {
                    return Ok(None);
                }
                close_run(&mut steps, &mut run_len, &mut run_reads);
                steps.push(Step::String {
                    optional,
                    out,
                    column,
                });
                continue;
            }
            let (wire, Some(size)) = (item.kind, scalar_size(item.kind)) else {
                return Ok(None);
            };
            if !Values::for_type(target, 0).is_some_and(|v| v.takes(wire)) {
                return Ok(None);
            }
            if optional {
                close_run(&mut steps, &mut run_len, &mut run_reads);
                steps.push(Step::OptionalScalar { wire, out, column });
            } else {
                if let Some(out) = out {
                    run_reads.push(Read {
                        offset: run_len,
                        wire,
                        out,
                        column,
                    });
                }
                run_len += size;
            }
        }
        close_run(&mut steps, &mut run_len, &mut run_reads);
        Ok(Some(ArrowScan {
            steps,
            names: table.columns.iter().map(|c| c.name.clone()).collect(),
            schema: Arc::new(Schema::new(fields)),
        }))
    }

    /// The projected columns' Arrow schema (strings and binaries as views).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Reads rows from `data` starting at `*offset` (a row's start) into one batch of at most
    /// `max_rows` rows, and moves `*offset` past them; `None` at the end of `data`. `rows_before`
    /// is the number of rows before `*offset`, for messages. String views point into `data`.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset, row number and column of the first row that is
    /// cut off, malformed, or of another table; nothing of that batch is returned.
    pub fn read_batch(
        &self,
        data: &Buffer,
        offset: &mut usize,
        rows_before: u64,
        max_rows: usize,
    ) -> Result<Option<RecordBatch>, FormatError> {
        let bytes: &[u8] = data.as_slice();
        let start = *offset;
        if start >= bytes.len() {
            return Ok(None);
        }
        // Room for the rows a batch of short rows holds (at least 2 bytes each).
        let capacity = max_rows.min((bytes.len() - start) / 2 + 1);
        let mut outputs: Vec<Output> = self
            .schema
            .fields()
            .iter()
            .map(|f| Output {
                values: Values::for_type(f.data_type(), capacity).expect("a type checked by new"),
                nulls: f.is_nullable().then(|| BooleanBufferBuilder::new(capacity)),
            })
            .collect();
        let mut pos = start;
        let mut rows = 0usize;
        while rows < max_rows && pos < bytes.len() && pos - start < MAX_BATCH_SPAN {
            let row = rows_before + rows as u64;
            pos = self
                .read_row(bytes, pos, start, &mut outputs)
                .map_err(|fault| {
                    let (at, column, message) = *fault;
                    let message = match column {
                        Some(c) => format!("column \"{}\": {message}", self.names[c]),
                        None => message,
                    };
                    FormatError::new(FORMAT, message).at(at as u64).in_row(row)
                })?;
            rows += 1;
        }
        *offset = pos;
        let span = data.slice_with_length(start, pos - start);
        let columns: Vec<ArrayRef> = outputs
            .into_iter()
            .zip(self.schema.fields())
            .map(|(output, field)| finish(output, field.data_type(), &span))
            .collect();
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map(Some)
        .map_err(|e| FormatError::new(FORMAT, e.to_string()).at(start as u64))
    }

    /// Reads the row at `pos` into `outputs`; where it ends. `batch_start` is where the
    /// batch's span starts (string views are offsets from it). On failure: the offset, the
    /// table column (if any) and what is wrong; `outputs` may then hold part of the row.
    #[inline]
    fn read_row(
        &self,
        bytes: &[u8],
        mut pos: usize,
        batch_start: usize,
        outputs: &mut [Output],
    ) -> Result<usize, Fault> {
        let row_start = pos;
        for step in &self.steps {
            match step {
                Step::Fixed { len, reads } => {
                    let Some(run) = bytes.get(pos..pos + len) else {
                        return Err(fault(pos, None, cut_off(bytes.len() - pos, *len)));
                    };
                    if pos == row_start {
                        let table_index = u16::from_le_bytes([run[0], run[1]]);
                        if table_index != 0 {
                            return Err(fault(
                                pos,
                                None,
                                format!(
                                    "a row of table {table_index}; a query table reads streams of one table"
                                ),
                            ));
                        }
                    }
                    for read in reads {
                        if read.wire == Kind::Bool {
                            check_bool(run[read.offset], pos + read.offset, read.column)?;
                        }
                        let output = &mut outputs[read.out];
                        output.values.push_wire(read.wire, &run[read.offset..]);
                        if let Some(nulls) = &mut output.nulls {
                            nulls.append(true);
                        }
                    }
                    pos += len;
                }
                Step::OptionalScalar { wire, out, column } => {
                    let present = read_tag(bytes, pos).map_err(|m| fault(pos, Some(*column), m))?;
                    pos += 1;
                    let size = if present {
                        scalar_size(*wire).expect("a scalar")
                    } else {
                        0
                    };
                    let Some(value) = bytes.get(pos..pos + size) else {
                        return Err(fault(pos, Some(*column), cut_off(bytes.len() - pos, size)));
                    };
                    if let Some(out) = out {
                        let output = &mut outputs[*out];
                        if present {
                            if *wire == Kind::Bool {
                                check_bool(value[0], pos, *column)?;
                            }
                            output.values.push_wire(*wire, value);
                        } else {
                            output.values.push_zero();
                        }
                        if let Some(nulls) = &mut output.nulls {
                            nulls.append(present);
                        }
                    }
                    pos += size;
                }
                Step::String {
                    optional,
                    out,
                    column,
                } => {
                    let fail = |at: usize, message: String| fault(at, Some(*column), message);
                    let present = if *optional {
                        let present = read_tag(bytes, pos).map_err(|m| fail(pos, m))?;
                        pos += 1;
                        present
                    } else {
                        true
                    };
                    let mut value: &[u8] = &[];
                    let mut value_start = pos;
                    if present {
                        let Some(len) = bytes.get(pos..pos + 4) else {
                            return Err(fail(pos, cut_off(bytes.len() - pos, 4)));
                        };
                        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                        value_start = pos + 4;
                        let Some(v) = bytes.get(value_start..value_start + len) else {
                            return Err(fail(pos, cut_off(bytes.len() - value_start, len)));
                        };
                        value = v;
                        pos = value_start + len;
                    }
                    if let Some(out) = out {
                        let output = &mut outputs[*out];
                        let Values::Views { views, text } = &mut output.values else {
                            unreachable!("a string column's output holds views")
                        };
                        let view_offset = u32::try_from(value_start - batch_start)
                            .map_err(|_| fail(value_start, "a row over 4 GiB".to_owned()))?;
                        let view = make_view(bytes, value_start, value.len(), view_offset);
                        if *text && !is_utf8(value, view) {
                            return Err(fail(value_start, "invalid UTF-8".to_owned()));
                        }
                        views.push(view);
                        if let Some(nulls) = &mut output.nulls {
                            nulls.append(present);
                        }
                    }
                }
            }
        }
        Ok(pos)
    }
}

/// The item of a column the scan covers, and whether it is optional: a plain scalar or
/// string (not a decimal, uuid or wide integer), or `variant8<nothing; T>` of one.
fn simple_item(plan: &FieldPlan) -> Option<(&FieldPlan, bool)> {
    let (item, optional) = match plan.shape {
        ValueShape::Scalar => (plan, false),
        ValueShape::Optional {
            nullable_item: false,
        } if plan.kind == Kind::Variant8 && plan.children.len() == 2 => (&plan.children[1], true),
        _ => return None,
    };
    let plain = item.shape == ValueShape::Scalar && item.wide_as == WideAs::Raw;
    (plain && (item.kind == Kind::String32 || scalar_size(item.kind).is_some()))
        .then_some((item, optional))
}

fn close_run(steps: &mut Vec<Step>, run_len: &mut usize, reads: &mut Vec<Read>) {
    if *run_len > 0 {
        steps.push(Step::Fixed {
            len: *run_len,
            reads: std::mem::take(reads),
        });
    }
    *run_len = 0;
}

/// Where a row failed, the table column if any, and what is wrong: boxed, so that the
/// row reader's result stays two words on the path that does not fail.
type Fault = Box<(usize, Option<usize>, String)>;

#[cold]
fn fault(at: usize, column: Option<usize>, message: String) -> Fault {
    Box::new((at, column, message))
}

#[cold]
fn cut_off(left: usize, needed: usize) -> String {
    format!("the input ends {left} bytes into a field of {needed}")
}

#[inline(always)]
fn check_bool(byte: u8, at: usize, column: usize) -> Result<(), Fault> {
    if byte > 1 {
        return Err(fault(
            at,
            Some(column),
            format!("boolean byte {byte} (must be 0 or 1)"),
        ));
    }
    Ok(())
}

/// An optional's tag at `pos`: `false` for 0 (null), `true` for 1.
#[inline(always)]
fn read_tag(bytes: &[u8], pos: usize) -> Result<bool, String> {
    match bytes.get(pos) {
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        Some(tag) => Err(format!(
            "variant8 tag {tag} of an optional (must be 0 or 1)"
        )),
        None => Err(cut_off(0, 1)),
    }
}

/// Whether `value` (whose view is `view`) is UTF-8: short ASCII strings are told from
/// their inline bytes at once (the bytes after the value are zero).
#[inline(always)]
fn is_utf8(value: &[u8], view: u128) -> bool {
    const HIGH_BITS: u128 = 0x8080_8080_8080_8080_8080_8080 << 32;
    (value.len() <= 12 && view & HIGH_BITS == 0) || std::str::from_utf8(value).is_ok()
}

/// The Arrow byte view of the `len` bytes at `start` in `bytes`, which start `offset` bytes
/// into buffer 0: the length (u32), then up to 12 bytes inline, or the first 4 bytes, the
/// buffer index (0) and the offset. Short values are read as one 16-byte word where the
/// input has one (masked to their length), not copied byte by byte: a copy through the stack
/// stalled every row on store forwarding.
#[inline(always)]
fn make_view(bytes: &[u8], start: usize, len: usize, offset: u32) -> u128 {
    if len <= 12 {
        let payload = match bytes.get(start..start + 16) {
            Some(word) => {
                u128::from_le_bytes(word.try_into().expect("16 bytes")) & ((1u128 << (8 * len)) - 1)
            }
            None => {
                let mut word = [0u8; 16];
                word[..len].copy_from_slice(&bytes[start..start + len]);
                u128::from_le_bytes(word)
            }
        };
        return (payload << 32) | len as u128;
    }
    let prefix = u32::from_le_bytes(bytes[start..start + 4].try_into().expect("4 bytes"));
    len as u128 | (u128::from(prefix) << 32) | (u128::from(offset) << 96)
}

/// The Arrow array of one output. `span`: the batch's bytes, which string views point into.
fn finish(output: Output, data_type: &DataType, span: &Buffer) -> ArrayRef {
    let nulls = output.nulls.map(|mut n| NullBuffer::new(n.finish()));
    // Each `Values` holds the native type of `data_type` (Values::for_type).
    macro_rules! primitive {
        ($v:expr, $t:ty) => {
            Arc::new(
                PrimitiveArray::<$t>::new(ScalarBuffer::from($v), nulls)
                    .with_data_type(data_type.clone()),
            )
        };
    }
    match output.values {
        Values::I8(v) => primitive!(v, Int8Type),
        Values::I16(v) => primitive!(v, Int16Type),
        Values::I32(v) => match data_type {
            DataType::Date32 => primitive!(v, Date32Type),
            _ => primitive!(v, Int32Type),
        },
        Values::I64(v) => match data_type {
            DataType::Timestamp(TimeUnit::Second, _) => primitive!(v, TimestampSecondType),
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                primitive!(v, TimestampMicrosecondType)
            }
            DataType::Duration(TimeUnit::Microsecond) => primitive!(v, DurationMicrosecondType),
            _ => primitive!(v, Int64Type),
        },
        Values::U8(v) => primitive!(v, UInt8Type),
        Values::U16(v) => primitive!(v, UInt16Type),
        Values::U32(v) => primitive!(v, UInt32Type),
        Values::U64(v) => primitive!(v, UInt64Type),
        Values::F32(v) => primitive!(v, Float32Type),
        Values::F64(v) => primitive!(v, Float64Type),
        Values::Bool(mut b) => Arc::new(arrow_array::BooleanArray::new(b.finish(), nulls)),
        Values::Views { views, text } => {
            let views = ScalarBuffer::from(views);
            let buffers = vec![span.clone()];
            // SAFETY: every view is inline or lies inside `span` (built by `make_view` from a
            // slice of it, offset from its start); text views were checked UTF-8.
            if text {
                Arc::new(unsafe { StringViewArray::new_unchecked(views, buffers, nulls) })
            } else {
                Arc::new(unsafe { BinaryViewArray::new_unchecked(views, buffers, nulls) })
            }
        }
    }
}
