//! The peer libraries used directly, on the same work as the common interface: arrow-rs
//! (builders, `StreamWriter`, `StreamReader`) and apache-avro (`Writer`, `Reader` of
//! `apache_avro::types::Value`). These are the "own API" arms of the format benchmark for
//! Arrow and Avro (`format_bench`), and the reference the interface is held to.
//!
//! The same work (docs/formats-protobuf-arrow-avro.md, "Measured"):
//! - *write*: from the table's owned rows to the format's bytes in memory. arrow-rs: one
//!   typed builder per column (resolved once), rows appended value by value, a
//!   `RecordBatch` cut every [`DEFAULT_BATCH_ROWS`] rows, `StreamWriter`; a string column is
//!   built with a dictionary builder when the interface's rule picks a dictionary (at most a
//!   quarter of the first 1024 values distinct), so both write the same stream.
//!   apache-avro: each row converted to an `apache_avro::types::Value` record and appended to
//!   a `Writer` of the interface's Avro schema.
//! - *read*: from the bytes to every value of every row, touched (the lab's checksum).
//!   arrow-rs: `StreamReader` batches, each column downcast once per batch, then row by row,
//!   column by column (the row-at-a-time work the interface does); the column-at-a-time
//!   variant ([`arrow_read_columnwise`]) is a reference figure. A composite value (list,
//!   struct, dict) counts as one composite in the checksum, as through the interface, and
//!   its leaves are read too (into a side sum), so it is fully decoded on both sides.
//!   apache-avro: `Reader` values, touched the same way.

use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BinaryDictionaryBuilder, BooleanBuilder, Float32Builder, Float64Builder,
    Int16Builder, Int32Builder, Int64Builder, Int8Builder, ListBuilder, MapBuilder, StringBuilder,
    StringDictionaryBuilder, StructBuilder, TimestampMicrosecondBuilder, UInt16Builder,
    UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};
use shapeshift_formats::arrow::DEFAULT_BATCH_ROWS;
use shapeshift_types::{PrimitiveType, TableSchema, Type, Value, ValueRef};

use crate::measure::Touch;

fn arrow_error(e: impl std::fmt::Display) -> String {
    format!("arrow-rs: {e}")
}

/// The primitive of a column held as a plain (nullable) Arrow scalar.
fn primitive_of(ty: &Type) -> Option<PrimitiveType> {
    match ty {
        Type::Optional(item) if !item.is_nullable() => primitive_of(item),
        Type::Primitive(p) => Some(*p),
        _ => None,
    }
}

/// Which composite shapes the lab's tables have (BM5); others have no arrow-rs baseline.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar(PrimitiveType),
    ListOfDouble,
    StructOfInt32String,
    DictOfInt64String,
}

fn shape(ty: &Type) -> Option<Shape> {
    use PrimitiveType as P;
    if let Some(p) = primitive_of(ty) {
        return matches!(
            p,
            P::Int8
                | P::Int16
                | P::Int32
                | P::Int64
                | P::Uint8
                | P::Uint16
                | P::Uint32
                | P::Uint64
                | P::Float
                | P::Double
                | P::Bool
                | P::String
                | P::Utf8
                | P::Timestamp
        )
        .then_some(Shape::Scalar(p));
    }
    match ty {
        Type::List(item) if **item == Type::Primitive(P::Double) => Some(Shape::ListOfDouble),
        Type::Struct(members)
            if members.len() == 2
                && members[0].ty == Type::Primitive(P::Int32)
                && members[1].ty == Type::Primitive(P::String) =>
        {
            Some(Shape::StructOfInt32String)
        }
        Type::Dict { key, value }
            if **key == Type::Primitive(P::Int64) && **value == Type::Primitive(P::String) =>
        {
            Some(Shape::DictOfInt64String)
        }
        _ => None,
    }
}

/// Whether a table has an arrow-rs baseline here (every column of a shape above).
pub fn arrow_supported(schema: &TableSchema) -> bool {
    schema.columns.iter().all(|c| shape(&c.ty).is_some())
}

/// The interface's dictionary rule on a string column's first values.
fn low_cardinality(rows: &[Vec<Value>], column: usize) -> bool {
    let sample = rows.len().min(DEFAULT_BATCH_ROWS).min(1024);
    if sample < 16 {
        return false;
    }
    let mut distinct = std::collections::HashSet::new();
    for row in &rows[..sample] {
        if let Value::String(s) = &row[column] {
            distinct.insert(s.as_slice());
            if distinct.len() * 4 > sample {
                return false;
            }
        }
    }
    true
}

enum ColumnBuilder {
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    Binary(BinaryBuilder),
    Utf8(StringBuilder),
    BinaryDictionary(BinaryDictionaryBuilder<Int32Type>),
    Utf8Dictionary(StringDictionaryBuilder<Int32Type>),
    Timestamp(TimestampMicrosecondBuilder),
    List(ListBuilder<Float64Builder>),
    Struct(StructBuilder),
    Map(MapBuilder<Int64Builder, BinaryBuilder>),
}

impl ColumnBuilder {
    fn new(ty: &Type, dictionary: bool) -> ColumnBuilder {
        use PrimitiveType as P;
        let n = DEFAULT_BATCH_ROWS;
        match shape(ty).expect("checked by arrow_supported") {
            Shape::Scalar(p) => match p {
                P::Int8 => ColumnBuilder::I8(Int8Builder::with_capacity(n)),
                P::Int16 => ColumnBuilder::I16(Int16Builder::with_capacity(n)),
                P::Int32 => ColumnBuilder::I32(Int32Builder::with_capacity(n)),
                P::Int64 => ColumnBuilder::I64(Int64Builder::with_capacity(n)),
                P::Uint8 => ColumnBuilder::U8(UInt8Builder::with_capacity(n)),
                P::Uint16 => ColumnBuilder::U16(UInt16Builder::with_capacity(n)),
                P::Uint32 => ColumnBuilder::U32(UInt32Builder::with_capacity(n)),
                P::Uint64 => ColumnBuilder::U64(UInt64Builder::with_capacity(n)),
                P::Float => ColumnBuilder::F32(Float32Builder::with_capacity(n)),
                P::Double => ColumnBuilder::F64(Float64Builder::with_capacity(n)),
                P::Bool => ColumnBuilder::Bool(BooleanBuilder::with_capacity(n)),
                P::String if dictionary => {
                    ColumnBuilder::BinaryDictionary(BinaryDictionaryBuilder::new())
                }
                P::Utf8 if dictionary => {
                    ColumnBuilder::Utf8Dictionary(StringDictionaryBuilder::new())
                }
                P::String => ColumnBuilder::Binary(BinaryBuilder::with_capacity(n, n * 16)),
                P::Utf8 => ColumnBuilder::Utf8(StringBuilder::with_capacity(n, n * 16)),
                P::Timestamp => {
                    ColumnBuilder::Timestamp(TimestampMicrosecondBuilder::with_capacity(n))
                }
                _ => unreachable!("not a baseline scalar"),
            },
            Shape::ListOfDouble => ColumnBuilder::List(ListBuilder::with_capacity(
                Float64Builder::with_capacity(n * 4),
                n,
            )),
            Shape::StructOfInt32String => ColumnBuilder::Struct(StructBuilder::from_fields(
                vec![
                    Field::new("foo", DataType::Int32, false),
                    Field::new("bar", DataType::Binary, false),
                ],
                n,
            )),
            Shape::DictOfInt64String => ColumnBuilder::Map(MapBuilder::with_capacity(
                None,
                Int64Builder::with_capacity(n * 2),
                BinaryBuilder::with_capacity(n * 2, n * 16),
                n,
            )),
        }
    }

    fn append(&mut self, value: &Value) -> Result<(), String> {
        let mismatch = || format!("arrow-rs baseline: unexpected value {value:?}");
        macro_rules! scalar {
            ($b:expr, $pattern:pat => $v:expr) => {
                match value {
                    Value::Null => $b.append_null(),
                    $pattern => $b.append_value($v),
                    _ => return Err(mismatch()),
                }
            };
        }
        match self {
            ColumnBuilder::I8(b) => scalar!(b, Value::Int64(v) => *v as i8),
            ColumnBuilder::I16(b) => scalar!(b, Value::Int64(v) => *v as i16),
            ColumnBuilder::I32(b) => scalar!(b, Value::Int64(v) => *v as i32),
            ColumnBuilder::I64(b) => scalar!(b, Value::Int64(v) => *v),
            ColumnBuilder::U8(b) => scalar!(b, Value::Uint64(v) => *v as u8),
            ColumnBuilder::U16(b) => scalar!(b, Value::Uint64(v) => *v as u16),
            ColumnBuilder::U32(b) => scalar!(b, Value::Uint64(v) => *v as u32),
            ColumnBuilder::U64(b) => scalar!(b, Value::Uint64(v) => *v),
            ColumnBuilder::F32(b) => scalar!(b, Value::Double(v) => *v as f32),
            ColumnBuilder::F64(b) => scalar!(b, Value::Double(v) => *v),
            ColumnBuilder::Bool(b) => scalar!(b, Value::Bool(v) => *v),
            ColumnBuilder::Binary(b) => scalar!(b, Value::String(v) => v),
            ColumnBuilder::Utf8(b) => {
                scalar!(b, Value::String(v) => std::str::from_utf8(v).map_err(arrow_error)?)
            }
            ColumnBuilder::BinaryDictionary(b) => match value {
                Value::Null => b.append_null(),
                Value::String(v) => {
                    b.append(v).map_err(arrow_error)?;
                }
                _ => return Err(mismatch()),
            },
            ColumnBuilder::Utf8Dictionary(b) => match value {
                Value::Null => b.append_null(),
                Value::String(v) => {
                    b.append(std::str::from_utf8(v).map_err(arrow_error)?)
                        .map_err(arrow_error)?;
                }
                _ => return Err(mismatch()),
            },
            ColumnBuilder::Timestamp(b) => scalar!(b, Value::Uint64(v) => *v as i64),
            ColumnBuilder::List(b) => match value {
                Value::List(items) => {
                    for item in items {
                        match item {
                            Value::Double(v) => b.values().append_value(*v),
                            _ => return Err(mismatch()),
                        }
                    }
                    b.append(true);
                }
                _ => return Err(mismatch()),
            },
            ColumnBuilder::Struct(b) => match value {
                Value::Tuple(members) => match members.as_slice() {
                    [Value::Int64(foo), Value::String(bar)] => {
                        b.field_builder::<Int32Builder>(0)
                            .ok_or_else(mismatch)?
                            .append_value(*foo as i32);
                        b.field_builder::<BinaryBuilder>(1)
                            .ok_or_else(mismatch)?
                            .append_value(bar);
                        b.append(true);
                    }
                    _ => return Err(mismatch()),
                },
                _ => return Err(mismatch()),
            },
            ColumnBuilder::Map(b) => match value {
                Value::Dict(pairs) => {
                    for (k, v) in pairs {
                        match (k, v) {
                            (Value::Int64(k), Value::String(v)) => {
                                b.keys().append_value(*k);
                                b.values().append_value(v);
                            }
                            _ => return Err(mismatch()),
                        }
                    }
                    b.append(true).map_err(arrow_error)?;
                }
                _ => return Err(mismatch()),
            },
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::I8(b) => Arc::new(b.finish()),
            ColumnBuilder::I16(b) => Arc::new(b.finish()),
            ColumnBuilder::I32(b) => Arc::new(b.finish()),
            ColumnBuilder::I64(b) => Arc::new(b.finish()),
            ColumnBuilder::U8(b) => Arc::new(b.finish()),
            ColumnBuilder::U16(b) => Arc::new(b.finish()),
            ColumnBuilder::U32(b) => Arc::new(b.finish()),
            ColumnBuilder::U64(b) => Arc::new(b.finish()),
            ColumnBuilder::F32(b) => Arc::new(b.finish()),
            ColumnBuilder::F64(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
            ColumnBuilder::Binary(b) => Arc::new(b.finish()),
            ColumnBuilder::Utf8(b) => Arc::new(b.finish()),
            ColumnBuilder::BinaryDictionary(b) => Arc::new(b.finish()),
            ColumnBuilder::Utf8Dictionary(b) => Arc::new(b.finish()),
            ColumnBuilder::Timestamp(b) => Arc::new(b.finish()),
            ColumnBuilder::List(b) => Arc::new(b.finish()),
            ColumnBuilder::Struct(b) => Arc::new(b.finish()),
            ColumnBuilder::Map(b) => Arc::new(b.finish()),
        }
    }
}

/// arrow-rs builders and `StreamWriter`: `rows` to an IPC stream.
///
/// # Errors
/// A message when a value does not fit its column (the rows are the lab's, so a bug).
pub fn arrow_write(schema: &TableSchema, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
    let mut builders: Vec<ColumnBuilder> = schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| ColumnBuilder::new(&c.ty, low_cardinality(rows, i)))
        .collect();
    let mut out = Vec::new();
    let mut writer: Option<StreamWriter<&mut Vec<u8>>> = None;
    let mut arrow_schema: Option<Arc<Schema>> = None;
    for chunk in rows.chunks(DEFAULT_BATCH_ROWS) {
        for row in chunk {
            for (builder, value) in builders.iter_mut().zip(row) {
                builder.append(value)?;
            }
        }
        let columns: Vec<ArrayRef> = builders.iter_mut().map(|b| b.finish()).collect();
        let schema_ref = arrow_schema.get_or_insert_with(|| {
            Arc::new(Schema::new(
                schema
                    .columns
                    .iter()
                    .zip(&columns)
                    .map(|(c, a)| Field::new(&c.name, a.data_type().clone(), c.ty.is_nullable()))
                    .collect::<Vec<_>>(),
            ))
        });
        let batch = RecordBatch::try_new(schema_ref.clone(), columns).map_err(arrow_error)?;
        if writer.is_none() {
            writer = Some(StreamWriter::try_new(&mut out, schema_ref).map_err(arrow_error)?);
        }
        if let Some(w) = writer.as_mut() {
            w.write(&batch).map_err(arrow_error)?;
        }
    }
    if let Some(mut w) = writer {
        w.finish().map_err(arrow_error)?;
    }
    Ok(out)
}

/// One column of a batch, downcast once.
enum ColumnReader<'a> {
    I8(&'a arrow_array::Int8Array),
    I16(&'a arrow_array::Int16Array),
    I32(&'a arrow_array::Int32Array),
    I64(&'a arrow_array::Int64Array),
    U8(&'a arrow_array::UInt8Array),
    U16(&'a arrow_array::UInt16Array),
    U32(&'a arrow_array::UInt32Array),
    U64(&'a arrow_array::UInt64Array),
    F32(&'a arrow_array::Float32Array),
    F64(&'a arrow_array::Float64Array),
    Bool(&'a arrow_array::BooleanArray),
    Binary(&'a arrow_array::BinaryArray),
    Utf8(&'a arrow_array::StringArray),
    BinaryDictionary(&'a arrow_array::Int32Array, &'a arrow_array::BinaryArray),
    Utf8Dictionary(&'a arrow_array::Int32Array, &'a arrow_array::StringArray),
    Timestamp(&'a arrow_array::TimestampMicrosecondArray),
    List(&'a arrow_array::ListArray, &'a arrow_array::Float64Array),
    Struct(&'a arrow_array::Int32Array, &'a arrow_array::BinaryArray),
    Map(
        &'a arrow_array::MapArray,
        &'a arrow_array::Int64Array,
        &'a arrow_array::BinaryArray,
    ),
}

impl<'a> ColumnReader<'a> {
    fn new(array: &'a dyn Array) -> Result<ColumnReader<'a>, String> {
        let unexpected = || format!("arrow-rs baseline: column of {}", array.data_type());
        Ok(match array.data_type() {
            DataType::Int8 => ColumnReader::I8(array.as_primitive::<Int8Type>()),
            DataType::Int16 => ColumnReader::I16(array.as_primitive::<Int16Type>()),
            DataType::Int32 => ColumnReader::I32(array.as_primitive::<Int32Type>()),
            DataType::Int64 => ColumnReader::I64(array.as_primitive::<Int64Type>()),
            DataType::UInt8 => ColumnReader::U8(array.as_primitive::<UInt8Type>()),
            DataType::UInt16 => ColumnReader::U16(array.as_primitive::<UInt16Type>()),
            DataType::UInt32 => ColumnReader::U32(array.as_primitive::<UInt32Type>()),
            DataType::UInt64 => ColumnReader::U64(array.as_primitive::<UInt64Type>()),
            DataType::Float32 => ColumnReader::F32(array.as_primitive::<Float32Type>()),
            DataType::Float64 => ColumnReader::F64(array.as_primitive::<Float64Type>()),
            DataType::Boolean => ColumnReader::Bool(array.as_boolean()),
            DataType::Binary => ColumnReader::Binary(array.as_binary::<i32>()),
            DataType::Utf8 => ColumnReader::Utf8(array.as_string::<i32>()),
            DataType::Dictionary(_, values) => {
                let d = array
                    .as_dictionary_opt::<Int32Type>()
                    .ok_or_else(unexpected)?;
                match values.as_ref() {
                    DataType::Binary => {
                        ColumnReader::BinaryDictionary(d.keys(), d.values().as_binary::<i32>())
                    }
                    DataType::Utf8 => {
                        ColumnReader::Utf8Dictionary(d.keys(), d.values().as_string::<i32>())
                    }
                    _ => return Err(unexpected()),
                }
            }
            DataType::Timestamp(..) => {
                ColumnReader::Timestamp(array.as_primitive::<TimestampMicrosecondType>())
            }
            DataType::List(_) => {
                let list = array.as_list::<i32>();
                ColumnReader::List(list, list.values().as_primitive::<Float64Type>())
            }
            DataType::Struct(_) => {
                let s = array.as_struct();
                ColumnReader::Struct(
                    s.column(0).as_primitive::<Int32Type>(),
                    s.column(1).as_binary::<i32>(),
                )
            }
            DataType::Map(..) => {
                let map = array.as_map();
                ColumnReader::Map(
                    map,
                    map.keys().as_primitive::<Int64Type>(),
                    map.values().as_binary::<i32>(),
                )
            }
            _ => return Err(unexpected()),
        })
    }

    /// Touches value `i` (composites: counted in `touch`, leaves summed into `leaves`).
    #[inline(always)]
    fn touch(&self, i: usize, touch: &mut Touch, leaves: &mut Touch) {
        macro_rules! scalar {
            ($a:expr, $view:expr) => {
                if $a.is_valid(i) {
                    touch.value($view($a.value(i)));
                }
            };
        }
        match self {
            ColumnReader::I8(a) => scalar!(a, |v: i8| ValueRef::Int64(v.into())),
            ColumnReader::I16(a) => scalar!(a, |v: i16| ValueRef::Int64(v.into())),
            ColumnReader::I32(a) => scalar!(a, |v: i32| ValueRef::Int64(v.into())),
            ColumnReader::I64(a) => scalar!(a, ValueRef::Int64),
            ColumnReader::U8(a) => scalar!(a, |v: u8| ValueRef::Uint64(v.into())),
            ColumnReader::U16(a) => scalar!(a, |v: u16| ValueRef::Uint64(v.into())),
            ColumnReader::U32(a) => scalar!(a, |v: u32| ValueRef::Uint64(v.into())),
            ColumnReader::U64(a) => scalar!(a, ValueRef::Uint64),
            ColumnReader::F32(a) => scalar!(a, |v: f32| ValueRef::Double(v.into())),
            ColumnReader::F64(a) => scalar!(a, ValueRef::Double),
            ColumnReader::Bool(a) => scalar!(a, ValueRef::Bool),
            ColumnReader::Binary(a) => scalar!(a, ValueRef::String),
            ColumnReader::Utf8(a) => {
                if a.is_valid(i) {
                    touch.value(ValueRef::String(a.value(i).as_bytes()));
                }
            }
            ColumnReader::BinaryDictionary(keys, values) => {
                if keys.is_valid(i) {
                    touch.value(ValueRef::String(values.value(keys.value(i) as usize)));
                }
            }
            ColumnReader::Utf8Dictionary(keys, values) => {
                if keys.is_valid(i) {
                    let v = values.value(keys.value(i) as usize);
                    touch.value(ValueRef::String(v.as_bytes()));
                }
            }
            ColumnReader::Timestamp(a) => scalar!(a, |v: i64| ValueRef::Uint64(v as u64)),
            ColumnReader::List(list, items) => {
                let offsets = list.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                for v in &items.values()[start..end] {
                    leaves.value(ValueRef::Double(*v));
                }
                touch.value(ValueRef::Composite(&[]));
            }
            ColumnReader::Struct(foo, bar) => {
                leaves.value(ValueRef::Int64(foo.value(i).into()));
                leaves.value(ValueRef::String(bar.value(i)));
                touch.value(ValueRef::Composite(&[]));
            }
            ColumnReader::Map(map, keys, values) => {
                let offsets = map.value_offsets();
                for j in offsets[i] as usize..offsets[i + 1] as usize {
                    leaves.value(ValueRef::Int64(keys.value(j)));
                    leaves.value(ValueRef::String(values.value(j)));
                }
                touch.value(ValueRef::Composite(&[]));
            }
        }
    }
}

/// Binary YSON of the lab's composite shapes, as the row interface spells a composite value
/// (YT's named form), written from the arrays by the baseline's own code.
mod yson_spelling {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn int64(out: &mut Vec<u8>, v: i64) {
        out.push(0x02);
        varint(out, ((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn double(out: &mut Vec<u8>, v: f64) {
        out.push(0x03);
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn string(out: &mut Vec<u8>, bytes: &[u8]) {
        out.push(0x01);
        let len = bytes.len() as i64;
        varint(out, ((len << 1) ^ (len >> 63)) as u64);
        out.extend_from_slice(bytes);
    }
}

impl ColumnReader<'_> {
    /// As [`ColumnReader::touch`], a composite value spelled as binary YSON into `scratch`
    /// (the interface's convention) instead of having its leaves summed.
    #[inline(always)]
    fn touch_spelled(&self, i: usize, touch: &mut Touch, scratch: &mut Vec<u8>) {
        use yson_spelling::{double, int64, string};
        let start = scratch.len();
        match self {
            ColumnReader::List(list, items) => {
                let offsets = list.value_offsets();
                scratch.push(b'[');
                for v in &items.values()[offsets[i] as usize..offsets[i + 1] as usize] {
                    double(scratch, *v);
                    scratch.push(b';');
                }
                scratch.push(b']');
            }
            ColumnReader::Struct(foo, bar) => {
                scratch.push(b'{');
                string(scratch, b"foo");
                scratch.push(b'=');
                int64(scratch, foo.value(i).into());
                scratch.extend_from_slice(b";");
                string(scratch, b"bar");
                scratch.push(b'=');
                string(scratch, bar.value(i));
                scratch.extend_from_slice(b";}");
            }
            ColumnReader::Map(map, keys, values) => {
                let offsets = map.value_offsets();
                scratch.push(b'[');
                for j in offsets[i] as usize..offsets[i + 1] as usize {
                    scratch.push(b'[');
                    int64(scratch, keys.value(j));
                    scratch.push(b';');
                    string(scratch, values.value(j));
                    scratch.extend_from_slice(b";];");
                }
                scratch.push(b']');
            }
            _ => return self.touch(i, touch, &mut Touch::default()),
        }
        touch.value(ValueRef::Composite(&scratch[start..]));
    }
}

/// As [`arrow_read`], with composite values spelled as binary YSON (what the row interface
/// must hand over) instead of walked: the reference that tells how much of the interface's
/// read overhead on composite columns is the YSON convention itself.
///
/// # Errors
/// As [`arrow_read`].
pub fn arrow_read_spelling_composites(bytes: &[u8]) -> Result<(usize, u64), String> {
    let (mut touch, mut rows) = (Touch::default(), 0);
    let mut scratch = Vec::new();
    for batch in arrow_batches(bytes)? {
        let batch = batch.map_err(arrow_error)?;
        let columns = batch
            .columns()
            .iter()
            .map(|c| ColumnReader::new(c.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        for i in 0..batch.num_rows() {
            scratch.clear();
            for column in &columns {
                column.touch_spelled(i, &mut touch, &mut scratch);
            }
        }
        rows += batch.num_rows();
    }
    black_box(scratch.len());
    Ok((rows, touch.total()))
}

fn arrow_batches(bytes: &[u8]) -> Result<StreamReader<Cursor<&[u8]>>, String> {
    StreamReader::try_new(Cursor::new(bytes), None).map_err(arrow_error)
}

/// arrow-rs `StreamReader`, row by row over each batch: rows read and their checksum.
///
/// # Errors
/// A message for a stream arrow-rs cannot read or a column of another type.
pub fn arrow_read(bytes: &[u8]) -> Result<(usize, u64), String> {
    let (mut touch, mut leaves, mut rows) = (Touch::default(), Touch::default(), 0);
    for batch in arrow_batches(bytes)? {
        let batch = batch.map_err(arrow_error)?;
        let columns = batch
            .columns()
            .iter()
            .map(|c| ColumnReader::new(c.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        for i in 0..batch.num_rows() {
            for column in &columns {
                column.touch(i, &mut touch, &mut leaves);
            }
        }
        rows += batch.num_rows();
    }
    black_box(leaves.total());
    Ok((rows, touch.total()))
}

/// As [`arrow_read`], column by column over each batch (the columnar reference).
///
/// # Errors
/// As [`arrow_read`].
pub fn arrow_read_columnwise(bytes: &[u8]) -> Result<(usize, u64), String> {
    let (mut touch, mut leaves, mut rows) = (Touch::default(), Touch::default(), 0);
    for batch in arrow_batches(bytes)? {
        let batch = batch.map_err(arrow_error)?;
        for column in batch.columns() {
            let column = ColumnReader::new(column.as_ref())?;
            for i in 0..batch.num_rows() {
                column.touch(i, &mut touch, &mut leaves);
            }
        }
        rows += batch.num_rows();
    }
    black_box(leaves.total());
    Ok((rows, touch.total()))
}

/// apache-avro: `rows` converted to `apache_avro::types::Value` records and written by a
/// `Writer` of the interface's Avro schema (no compression).
///
/// # Errors
/// A message when apache-avro refuses the schema or a value.
pub fn avro_write(schema: &TableSchema, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
    let avro_schema = avro_schema_of(schema)?;
    let RecordShape { names, schemas } = record_shape(&avro_schema)?;
    let mut writer = apache_avro::Writer::new(&avro_schema, Vec::new());
    for row in rows {
        let fields = names
            .iter()
            .zip(&schemas)
            .zip(row)
            .map(|((name, s), v)| Ok((name.clone(), to_avro(v, s)?)))
            .collect::<Result<Vec<_>, String>>()?;
        writer
            .append(AvroValue::Record(fields))
            .map_err(avro_error)?;
    }
    writer.into_inner().map_err(avro_error)
}

/// apache-avro `Reader` to `apache_avro::types::Value`s, every value touched: rows read and
/// their checksum.
///
/// # Errors
/// A message for a file apache-avro cannot read.
pub fn avro_read(bytes: &[u8]) -> Result<(usize, u64), String> {
    let (mut touch, mut leaves, mut rows) = (Touch::default(), Touch::default(), 0);
    let reader = apache_avro::Reader::new(bytes).map_err(avro_error)?;
    for value in reader {
        match value.map_err(avro_error)? {
            AvroValue::Record(fields) => {
                for (_, v) in &fields {
                    touch_avro(v, &mut touch, &mut leaves, false);
                }
            }
            other => {
                return Err(format!(
                    "apache-avro: a row that is not a record: {other:?}"
                ))
            }
        }
        rows += 1;
    }
    black_box(leaves.total());
    Ok((rows, touch.total()))
}

use apache_avro::types::Value as AvroValue;

fn avro_error(e: impl std::fmt::Display) -> String {
    format!("apache-avro: {e}")
}

fn avro_schema_of(schema: &TableSchema) -> Result<apache_avro::Schema, String> {
    apache_avro::Schema::parse_str(&shapeshift_formats::avro::avro_schema(schema))
        .map_err(avro_error)
}

struct RecordShape {
    names: Vec<String>,
    schemas: Vec<apache_avro::Schema>,
}

fn record_shape(schema: &apache_avro::Schema) -> Result<RecordShape, String> {
    match schema {
        apache_avro::Schema::Record(record) => Ok(RecordShape {
            names: record.fields.iter().map(|f| f.name.clone()).collect(),
            schemas: record.fields.iter().map(|f| f.schema.clone()).collect(),
        }),
        _ => Err("apache-avro: the table schema is not a record".into()),
    }
}

/// A value of the lab's tables as apache-avro's value of `schema` (the interface's mapping).
fn to_avro(value: &Value, schema: &apache_avro::Schema) -> Result<AvroValue, String> {
    use apache_avro::Schema as S;
    let mismatch = || format!("apache-avro baseline: value {value:?} for schema {schema:?}");
    Ok(match (schema, value) {
        (S::Union(union), Value::Null) => {
            let _ = union;
            AvroValue::Union(0, Box::new(AvroValue::Null))
        }
        (S::Union(union), v) => {
            let inner = union.variants().get(1).ok_or_else(mismatch)?;
            AvroValue::Union(1, Box::new(to_avro(v, inner)?))
        }
        (S::Null, Value::Null) => AvroValue::Null,
        (S::Int, Value::Int64(v)) => AvroValue::Int(*v as i32),
        (S::Int, Value::Uint64(v)) => AvroValue::Int(*v as i32),
        (S::Long, Value::Int64(v)) => AvroValue::Long(*v),
        (S::Long, Value::Uint64(v)) => AvroValue::Long(*v as i64),
        (S::TimestampMicros, Value::Uint64(v)) => AvroValue::TimestampMicros(*v as i64),
        (S::TimestampMicros, Value::Int64(v)) => AvroValue::TimestampMicros(*v),
        (S::Date, Value::Uint64(v)) => AvroValue::Date(*v as i32),
        (S::Date, Value::Int64(v)) => AvroValue::Date(*v as i32),
        (S::Float, Value::Double(v)) => AvroValue::Float(*v as f32),
        (S::Double, Value::Double(v)) => AvroValue::Double(*v),
        (S::Boolean, Value::Bool(v)) => AvroValue::Boolean(*v),
        (S::Bytes, Value::String(v)) => AvroValue::Bytes(v.clone()),
        (S::String, Value::String(v)) => {
            AvroValue::String(String::from_utf8(v.clone()).map_err(avro_error)?)
        }
        (S::Array(array), Value::List(items)) => AvroValue::Array(
            items
                .iter()
                .map(|v| to_avro(v, &array.items))
                .collect::<Result<_, _>>()?,
        ),
        (S::Array(array), Value::Dict(pairs)) => {
            let entry = record_shape(&array.items)?;
            AvroValue::Array(
                pairs
                    .iter()
                    .map(|(k, v)| {
                        Ok(AvroValue::Record(vec![
                            (entry.names[0].clone(), to_avro(k, &entry.schemas[0])?),
                            (entry.names[1].clone(), to_avro(v, &entry.schemas[1])?),
                        ]))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        (S::Record(_), Value::Tuple(values)) => {
            let shape = record_shape(schema)?;
            AvroValue::Record(
                shape
                    .names
                    .iter()
                    .zip(&shape.schemas)
                    .zip(values)
                    .map(|((n, s), v)| Ok((n.clone(), to_avro(v, s)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
        _ => return Err(mismatch()),
    })
}

/// Touches an apache-avro value as the interface's view of it is touched: a top-level
/// scalar into `touch`, a top-level composite as one composite in `touch` with its leaves in
/// `leaves`.
fn touch_avro(value: &AvroValue, touch: &mut Touch, leaves: &mut Touch, inside: bool) {
    let scalar = |v: ValueRef<'_>, touch: &mut Touch, leaves: &mut Touch| {
        if inside {
            leaves.value(v)
        } else {
            touch.value(v)
        }
    };
    match value {
        AvroValue::Null => {}
        AvroValue::Boolean(v) => scalar(ValueRef::Bool(*v), touch, leaves),
        AvroValue::Int(v) | AvroValue::Date(v) => {
            scalar(ValueRef::Int64((*v).into()), touch, leaves)
        }
        AvroValue::Long(v) | AvroValue::TimestampMicros(v) => {
            scalar(ValueRef::Int64(*v), touch, leaves)
        }
        AvroValue::Float(v) => scalar(ValueRef::Double((*v).into()), touch, leaves),
        AvroValue::Double(v) => scalar(ValueRef::Double(*v), touch, leaves),
        AvroValue::Bytes(v) | AvroValue::Fixed(_, v) => scalar(ValueRef::String(v), touch, leaves),
        AvroValue::String(v) => scalar(ValueRef::String(v.as_bytes()), touch, leaves),
        AvroValue::Union(_, inner) => touch_avro(inner, touch, leaves, inside),
        AvroValue::Array(items) => {
            for item in items {
                touch_avro(item, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        AvroValue::Record(fields) => {
            for (_, v) in fields {
                touch_avro(v, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        AvroValue::Map(entries) => {
            for v in entries.values() {
                touch_avro(v, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        other => leaves.value(ValueRef::String(format!("{other:?}").as_bytes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasets::{Cardinality, Dataset};

    #[test]
    fn arrow_baselines_read_what_they_write_row_and_column_wise_alike() {
        for dataset in Dataset::ALL {
            let schema = dataset.schema();
            let rows = dataset.rows(300, 3, Cardinality::High);
            assert!(arrow_supported(&schema), "{}", dataset.name());
            let bytes = arrow_write(&schema, &rows).unwrap();
            let by_rows = arrow_read(&bytes).unwrap();
            assert_eq!(by_rows.0, rows.len());
            assert_eq!(arrow_read_columnwise(&bytes).unwrap(), by_rows);
            assert_eq!(arrow_read_spelling_composites(&bytes).unwrap(), by_rows);
            let avro = avro_write(&schema, &rows).unwrap();
            assert_eq!(avro_read(&avro).unwrap(), by_rows, "{}", dataset.name());
        }
    }
}

/// Reference figures: arrow-rs reading row by row against column by column, on the lab's
/// tables (prints MB/s; run with
/// `cargo test --release -p shapeshift-lab column_wise_reference -- --ignored --nocapture`).
#[cfg(test)]
mod reference {
    use super::*;
    use crate::datasets::{Cardinality, Dataset};
    use crate::measure::measure;
    use shapeshift_formats::table::SharedOutput;

    #[test]
    #[ignore]
    fn column_wise_reference() {
        for dataset in Dataset::ALL {
            let count = crate::codec_bench::default_rows(dataset) / 2;
            let rows = dataset.rows(count, 42, Cardinality::High);
            let bytes = arrow_write(&dataset.schema(), &rows).unwrap();
            let mb = bytes.len() as f64 / 1e6;
            let median = |mut s: Vec<f64>| {
                s.sort_by(f64::total_cmp);
                s[s.len() / 2]
            };
            let by_rows = median(measure(7, || arrow_read(&bytes)).unwrap());
            let by_columns = median(measure(7, || arrow_read_columnwise(&bytes)).unwrap());
            println!(
                "{}: arrow-rs read row by row {:.0} MB/s, column by column {:.0} MB/s",
                dataset.name(),
                mb / by_rows,
                mb / by_columns
            );
        }
    }

    /// Reference figures: the interface's Arrow read against arrow-rs row by row, as the
    /// format benchmark has it (composites walked) and with composites spelled as binary
    /// YSON as the interface must (run with
    /// `cargo test --release -p shapeshift-lab yson_convention_reference -- --ignored --nocapture`).
    /// Runs alternate; the medians of 9 are printed.
    #[test]
    #[ignore]
    fn yson_convention_reference() {
        use shapeshift_formats::table::{open_sink, open_source, FormatKind, RowPosition};
        for dataset in Dataset::ALL {
            let schema = dataset.schema();
            let count = (crate::codec_bench::default_rows(dataset) as f64 * 0.4) as usize;
            let rows = dataset.rows(count, 42, Cardinality::High);
            let bytes = arrow_write(&schema, &rows).unwrap();
            // The interface reads the stream it writes (its schema carries the YT types).
            let own: std::rc::Rc<[u8]> = {
                let buffer = SharedOutput::default();
                let mut sink = open_sink(
                    FormatKind::Arrow,
                    std::slice::from_ref(&schema),
                    Box::new(buffer.clone()),
                )
                .unwrap();
                for row in &rows {
                    sink.write_owned_row(&RowPosition::default(), row).unwrap();
                }
                sink.finish().unwrap();
                drop(sink);
                let bytes = buffer.take();
                bytes.into()
            };
            let interface = || -> Result<(usize, u64), String> {
                let mut source = open_source(
                    FormatKind::Arrow,
                    std::slice::from_ref(&schema),
                    Box::new(Cursor::new(own.clone())),
                )
                .map_err(|e| e.to_string())?;
                let (mut touch, mut rows) = (Touch::default(), 0);
                while let Some(row) = source.next_row().map_err(|e| e.to_string())? {
                    row.values.iter().for_each(|v| touch.value(*v));
                    rows += 1;
                }
                Ok((rows, touch.total()))
            };
            let expected = interface().unwrap();
            assert_eq!(arrow_read(&bytes).unwrap(), expected);
            assert_eq!(arrow_read_spelling_composites(&bytes).unwrap(), expected);
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..9 {
                a.extend(measure(1, interface).unwrap());
                b.extend(measure(1, || arrow_read(&bytes)).unwrap());
                c.extend(measure(1, || arrow_read_spelling_composites(&bytes)).unwrap());
            }
            let median = |mut s: Vec<f64>| {
                s.sort_by(f64::total_cmp);
                s[s.len() / 2] * 1e3
            };
            let (a, b, c) = (median(a), median(b), median(c));
            println!(
                "{}: interface {a:.2} ms, arrow-rs {b:.2} ms ({:+.0}%), arrow-rs spelling \
                 composites as YSON {c:.2} ms ({:+.0}%)",
                dataset.name(),
                (a / b - 1.0) * 100.0,
                (a / c - 1.0) * 100.0
            );
        }
    }
}
