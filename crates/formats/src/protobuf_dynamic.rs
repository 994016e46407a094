//! Dynamic Protobuf: row messages laid out from any table schema at run time, in YT's
//! protobuf stream framing.
//!
//! YT's "dynamic protobuf" builds message descriptors from the table schema; shapeshift
//! compiles the schema straight to a wire codec instead (a [`RowCodec`]): no descriptor
//! objects, no reflection, one pass per row — what YT's own C++ writer does. The layout is
//! what a `.proto` file written by the mapping rules would give (column `i` is field `i + 1`;
//! [`proto_schema`] prints that file), so any protobuf library reads the rows with it.
//! The mapping of every type, and the presence rules behind the wrapper messages, are in
//! docs/formats-protobuf-arrow-avro.md and in `plan.rs`.
//!
//! Framing (length prefixes, control markers for table/range/row index and key switches)
//! is shared with the static codec, see [`crate::protobuf`].

use std::io::{Read, Write};

use shapeshift_types::{PrimitiveType, TableSchema, Type, Value, ValueRef};

use crate::protobuf::framing::{FrameReader, FrameWriter};
use crate::row_bridge::{check_row, owned_value, RowBuffer};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};

mod plan;
mod proto_text;
mod wire;

use plan::{encode_members, put_bytes, Plan};
pub use proto_text::proto_schema;
use wire::{put_tag, put_varint, Cursor, WireError};

const FORMAT: &str = "protobuf_dynamic";

/// A table schema compiled to its row message codec.
#[derive(Clone, Debug)]
pub struct RowCodec {
    schema: TableSchema,
    plans: Vec<Plan>,
}

/// One top-level field as decoded, before it becomes a view.
#[derive(Clone, Debug, Default)]
enum Decoded {
    #[default]
    Absent,
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    /// A byte range of the message.
    Bytes(usize, usize),
    Value(Value),
}

impl RowCodec {
    /// Compiles `schema`.
    pub fn new(schema: &TableSchema) -> RowCodec {
        RowCodec {
            schema: schema.clone(),
            plans: schema
                .columns
                .iter()
                .map(|c| Plan::compile(&c.ty))
                .collect(),
        }
    }

    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// Appends the row message of `values` (schema order) to `out`.
    ///
    /// # Errors
    /// When a value does not fit its column (checked against the column type).
    pub fn encode_row(&self, values: &[Value], out: &mut Vec<u8>) -> Result<(), FormatError> {
        check_row(values, &self.schema, FORMAT)?;
        encode_members(&self.plans, values, out).map_err(|m| error(None, m))
    }

    /// Decodes one row message into owned values (schema order).
    ///
    /// # Errors
    /// A [`FormatError`] naming the byte offset in `message` for malformed messages or
    /// values that do not fit their column.
    pub fn decode_row(&self, message: &[u8]) -> Result<Vec<Value>, FormatError> {
        let mut decoded = Vec::new();
        self.decode_fields(message, 0, &mut decoded)
            .map_err(|e| error(Some(e.offset), e.message))?;
        let mut values = Vec::with_capacity(decoded.len());
        for ((slot, plan), column) in decoded
            .into_iter()
            .zip(&self.plans)
            .zip(&self.schema.columns)
        {
            let value = match slot {
                Decoded::Absent => plan.default_value(),
                Decoded::Int(v) => Value::Int64(v),
                Decoded::Uint(v) => Value::Uint64(v),
                Decoded::Double(v) => Value::Double(v),
                Decoded::Bool(v) => Value::Bool(v),
                Decoded::Bytes(start, end) => Value::String(message[start..end].to_vec()),
                Decoded::Value(v) => v,
            };
            shapeshift_types::check_value(&value, &column.ty)
                .map_err(|e| error(None, format!("column {:?}: {e}", column.name)))?;
            values.push(value);
        }
        Ok(values)
    }

    /// The top-level fields of `message` into `decoded`, one slot per column; scalars stay
    /// undecoded views into the message (the fast path), composites become values.
    fn decode_fields(
        &self,
        message: &[u8],
        base: u64,
        decoded: &mut Vec<Decoded>,
    ) -> Result<(), WireError> {
        decoded.clear();
        decoded.resize(self.plans.len(), Decoded::Absent);
        let mut cursor = Cursor::new(message, base);
        while !cursor.at_end() {
            let (field, wire_type) = cursor.tag()?;
            let index = field as usize - 1;
            let Some(plan) = self.plans.get(index) else {
                cursor.skip(wire_type)?;
                continue;
            };
            let slot = &mut decoded[index];
            match plan {
                Plan::Signed | Plan::Unsigned | Plan::Float | Plan::Double | Plan::Bool => {
                    plan::expect_wire(&cursor, wire_type, plan.scalar_wire_type())?;
                    *slot = match plan {
                        Plan::Signed => Decoded::Int(cursor.varint()? as i64),
                        Plan::Unsigned => Decoded::Uint(cursor.varint()?),
                        Plan::Float => {
                            Decoded::Double(f64::from(f32::from_bits(cursor.fixed32()?)))
                        }
                        Plan::Double => Decoded::Double(f64::from_bits(cursor.fixed64()?)),
                        _ => Decoded::Bool(cursor.varint()? != 0),
                    };
                }
                Plan::Bytes => {
                    plan::expect_wire(&cursor, wire_type, wire::LEN)?;
                    let body = cursor.len_delimited()?;
                    let start = (body.base - base) as usize;
                    *slot = Decoded::Bytes(start, start + body.bytes.len());
                }
                _ => {
                    let mut value = match std::mem::take(slot) {
                        Decoded::Value(v) => v,
                        _ => plan.default_value(),
                    };
                    plan.decode(wire_type, &mut cursor, &mut value)?;
                    *slot = Decoded::Value(value);
                }
            }
        }
        Ok(())
    }
}

fn error(offset: Option<u64>, message: impl Into<String>) -> FormatError {
    FormatError {
        format: FORMAT,
        offset,
        row: None,
        message: message.into(),
    }
}

/// Checks a scalar view against a primitive column type where the view's kind alone does
/// not guarantee it (narrow integers, dates, utf8, uuid, decimals).
pub(crate) fn check_scalar(view: &ValueRef<'_>, ty: &Type) -> Result<(), String> {
    let needs_check = match ty.untagged() {
        Type::Primitive(p) => !matches!(
            (p, view),
            (PrimitiveType::Int64, ValueRef::Int64(_))
                | (PrimitiveType::Uint64, ValueRef::Uint64(_))
                | (PrimitiveType::Double, ValueRef::Double(_))
                | (PrimitiveType::Bool, ValueRef::Bool(_))
                | (PrimitiveType::String, ValueRef::String(_))
        ),
        _ => true,
    };
    if !needs_check {
        return Ok(());
    }
    if let (Type::Primitive(PrimitiveType::Utf8), ValueRef::String(s)) = (ty.untagged(), view) {
        return std::str::from_utf8(s)
            .map(drop)
            .map_err(|e| format!("invalid UTF-8 in a utf8 value: {e}"));
    }
    let value = match view {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(v) => Value::Bool(*v),
        ValueRef::Int64(v) => Value::Int64(*v),
        ValueRef::Uint64(v) => Value::Uint64(*v),
        ValueRef::Double(v) => Value::Double(*v),
        ValueRef::String(s) => Value::String(s.to_vec()),
        ValueRef::Composite(_) | ValueRef::Any(_) => return Ok(()),
    };
    shapeshift_types::check_value(&value, ty).map_err(|e| e.to_string())
}

/// Reads framed row messages of the tables of `schemas`.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(DynamicSource {
        frames: FrameReader::new(input, FORMAT, schemas.len()),
        codecs: schemas.iter().map(RowCodec::new).collect(),
        decoded: Vec::new(),
        row: RowBuffer::default(),
    }))
}

/// Writes framed row messages of the tables of `schemas`.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(DynamicSink {
        frames: FrameWriter::new(output, FORMAT, schemas.len()),
        codecs: schemas.iter().map(RowCodec::new).collect(),
    }))
}

struct DynamicSource {
    frames: FrameReader,
    codecs: Vec<RowCodec>,
    decoded: Vec<Decoded>,
    row: RowBuffer,
}

impl RowSource for DynamicSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        let Some(position) = self.frames.next_message()? else {
            return Ok(None);
        };
        let codec = &self.codecs[position.table_index];
        let message = &self.frames.message;
        let base = self.frames.message_offset;
        let row_number = self.frames.rows() - 1;
        let at = |offset: Option<u64>, message: String| FormatError {
            format: FORMAT,
            offset,
            row: Some(row_number),
            message,
        };
        codec
            .decode_fields(message, base, &mut self.decoded)
            .map_err(|e| at(Some(e.offset), e.message))?;
        self.row.clear();
        for ((slot, plan), column) in self
            .decoded
            .iter_mut()
            .zip(&codec.plans)
            .zip(&codec.schema.columns)
        {
            let column_error = |e: String| at(Some(base), format!("column {:?}: {e}", column.name));
            match std::mem::take(slot) {
                Decoded::Absent => {
                    let value = plan.default_value();
                    shapeshift_types::check_value(&value, &column.ty)
                        .map_err(|e| column_error(format!("missing field: {e}")))?;
                    self.row.push_value(&value, &column.ty, FORMAT)?;
                }
                Decoded::Int(v) => {
                    check_scalar(&ValueRef::Int64(v), &column.ty).map_err(column_error)?;
                    self.row.push_int64(v);
                }
                Decoded::Uint(v) => {
                    check_scalar(&ValueRef::Uint64(v), &column.ty).map_err(column_error)?;
                    self.row.push_uint64(v);
                }
                Decoded::Double(v) => {
                    self.row.push_double(v);
                }
                Decoded::Bool(v) => self.row.push_bool(v),
                Decoded::Bytes(start, end) => {
                    let bytes = &message[start..end];
                    check_scalar(&ValueRef::String(bytes), &column.ty).map_err(column_error)?;
                    self.row.push_string(bytes);
                }
                Decoded::Value(value) => {
                    shapeshift_types::check_value(&value, &column.ty)
                        .map_err(|e| column_error(e.to_string()))?;
                    self.row.push_value(&value, &column.ty, FORMAT)?;
                }
            }
        }
        Ok(Some(RowRef {
            position,
            values: self.row.views(),
        }))
    }
}

struct DynamicSink {
    frames: FrameWriter,
    codecs: Vec<RowCodec>,
}

impl RowSink for DynamicSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.frames.check_table(position)?;
        let codec = &self.codecs[position.table_index];
        if values.len() != codec.plans.len() {
            return Err(self.frames.error(format!(
                "row has {} values, the schema {} columns",
                values.len(),
                codec.plans.len()
            )));
        }
        self.frames.message.clear();
        for (i, ((view, plan), column)) in values
            .iter()
            .zip(&codec.plans)
            .zip(&codec.schema.columns)
            .enumerate()
        {
            let field = i as u32 + 1;
            let out = &mut self.frames.message;
            let column_error = |e: String| FormatError {
                format: FORMAT,
                offset: None,
                row: None,
                message: format!("column {:?}: {e}", column.name),
            };
            // Scalars go straight to the wire; the rest through an owned value.
            match (plan, view) {
                (Plan::Signed, ValueRef::Int64(v)) => {
                    check_scalar(view, &column.ty).map_err(column_error)?;
                    if *v != 0 {
                        put_tag(out, field, wire::VARINT);
                        put_varint(out, *v as u64);
                    }
                }
                (Plan::Unsigned, ValueRef::Uint64(v)) => {
                    check_scalar(view, &column.ty).map_err(column_error)?;
                    if *v != 0 {
                        put_tag(out, field, wire::VARINT);
                        put_varint(out, *v);
                    }
                }
                (Plan::Double, ValueRef::Double(v)) => {
                    put_tag(out, field, wire::FIXED64);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                (Plan::Bool, ValueRef::Bool(v)) => {
                    if *v {
                        put_tag(out, field, wire::VARINT);
                        out.push(1);
                    }
                }
                (Plan::Bytes, ValueRef::String(s)) => {
                    check_scalar(view, &column.ty).map_err(column_error)?;
                    if !s.is_empty() {
                        put_bytes(out, field, s);
                    }
                }
                _ => {
                    let value = owned_value(view, &column.ty, FORMAT)
                        .map_err(|e| column_error(e.message))?;
                    plan.encode(&value, field, false, out)
                        .map_err(column_error)?;
                }
            }
        }
        self.frames.write_message(position)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.frames.check_table(position)?;
        let codec = &self.codecs[position.table_index];
        self.frames.message.clear();
        codec.encode_row(values, &mut self.frames.message)?;
        self.frames.write_message(position)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}
