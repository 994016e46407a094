//! arrow-rs used directly: builders, `StreamWriter`, `StreamReader` (see the module docs of
//! [`super`] for the work both sides do).

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
