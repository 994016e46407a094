//! The Protobuf formats' own-API baselines for the format benchmark: prost used directly
//! (the generated messages of the lab's tables) for static Protobuf, and prost-reflect's
//! `DynamicMessage` for dynamic Protobuf.
//!
//! The same work as the interface, and what is left out on purpose:
//! - *read*: every frame of the stream (YT framing, parsed from the in-memory bytes) is
//!   merged into one reused message (prost's fastest use: buffers are kept) and every column
//!   is touched as the interface's row views are; composite columns count once in the
//!   checksum and their scalars are walked too (into a second, black-boxed checksum), so
//!   the baseline decodes everything the interface decodes. The interface additionally
//!   writes each composite value as binary YSON (its row convention); prost has no such step.
//! - *write* (static): from the same owned rows as the interface. One generated message is
//!   filled from each row ([`LabMessage::fill_from_row`]: every value read and checked
//!   against its field — ranges, UTF-8 — as the interface checks it against its column, the
//!   message's buffers reused so no row allocates) and encoded with its frame. Timing only the
//!   encoding of prebuilt messages would compare the interface's rows-to-bytes with prost's
//!   messages-to-bytes, a different input, and leave out the reading and checking of the
//!   values that any program with rows must do.
//! - *write* (dynamic): the messages are built from the owned rows once, outside the timed
//!   region (on the first, untimed call), and the timed region encodes them with their
//!   frames.
//!
//! A table without a compiled message has no baseline (both formats: the descriptors are
//! the compiled messages', whose layout is the dynamic codec's, tested byte for byte).

use std::cell::RefCell;
use std::hint::black_box;

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use shapeshift_formats::protobuf::messages::{Bm1Row, Bm2Row, Bm3Row, Bm5Row};
use shapeshift_formats::protobuf::{messages, LabMessage, StaticMessage};
use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::measure::Touch;

const TABLE_INDEX: u32 = 0xFFFF_FFFF;
const KEY_SWITCH: u32 = 0xFFFF_FFFE;
const RANGE_INDEX: u32 = 0xFFFF_FFFD;
const ROW_INDEX: u32 = 0xFFFF_FFFC;
const END_OF_STREAM: u32 = 0xFFFF_FFFB;

/// Calls `message` with each row message of a framed stream (control markers skipped).
fn for_each_frame(
    bytes: &[u8],
    mut message: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut pos = 0;
    let word = |pos: usize| -> Result<u32, String> {
        bytes
            .get(pos..pos + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format!("frame cut at byte {pos}"))
    };
    while pos < bytes.len() {
        let head = word(pos)?;
        pos += 4;
        match head {
            END_OF_STREAM => break,
            TABLE_INDEX | RANGE_INDEX => pos += 4,
            ROW_INDEX => pos += 8,
            KEY_SWITCH => {}
            len => {
                let end = pos + len as usize;
                let body = bytes
                    .get(pos..end)
                    .ok_or_else(|| format!("message cut at byte {pos}"))?;
                message(body)?;
                pos = end;
            }
        }
    }
    Ok(())
}

/// Appends one frame: the u32 LE length, then the message.
fn put_frame(out: &mut Vec<u8>, message: &impl Message) -> Result<(), String> {
    let len = message.encoded_len();
    let len32 = u32::try_from(len).map_err(|_| format!("message of {len} bytes"))?;
    out.reserve(4 + len);
    out.extend_from_slice(&len32.to_le_bytes());
    message.encode_raw(out);
    Ok(())
}

/// Messages built from one set of rows, kept across runs (identified by the rows' address
/// and length, so other rows rebuild them).
struct Prepared<M> {
    key: (usize, usize),
    messages: Vec<M>,
}

fn rows_key(rows: &[Vec<Value>]) -> (usize, usize) {
    (rows.as_ptr() as usize, rows.len())
}

/// prost's generated message of a lab table.
pub struct ProstBaseline {
    table: ProstTable,
}

enum ProstTable {
    Bm1(Generated<Bm1Row>),
    Bm2(Generated<Bm2Row>),
    Bm3(Generated<Bm3Row>),
    Bm5(Generated<Bm5Row>),
}

struct Generated<M> {
    message: std::marker::PhantomData<M>,
}

impl<M: LabMessage> Generated<M> {
    fn new() -> Self {
        Generated {
            message: std::marker::PhantomData,
        }
    }

    /// From the owned rows, as the interface: one message, reused, filled from each row
    /// (its values checked as `from_row` checks them, its buffers kept), then encoded.
    fn write(&self, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut message = M::default();
        for row in rows {
            message.fill_from_row(row)?;
            put_frame(&mut out, &message)?;
        }
        out.extend_from_slice(&END_OF_STREAM.to_le_bytes());
        Ok(out)
    }

    fn read(&self, bytes: &[u8]) -> Result<(usize, u64), String> {
        let mut touch = Touch::default();
        let mut inner = Touch::default();
        let mut rows = 0;
        let mut message = M::default();
        for_each_frame(bytes, |body| {
            message.clear();
            message.merge(body).map_err(|e| e.to_string())?;
            message.visit_columns(|v| touch.value(v), |v| inner.value(v));
            rows += 1;
            Ok(())
        })?;
        black_box(inner.total());
        Ok((rows, touch.total()))
    }
}

impl ProstBaseline {
    /// The baseline of `schema`'s compiled message; `None` for other tables.
    pub fn for_schema(schema: &TableSchema) -> Option<ProstBaseline> {
        let table = match StaticMessage::for_schema(schema)? {
            StaticMessage::Bm1 => ProstTable::Bm1(Generated::new()),
            StaticMessage::Bm2 => ProstTable::Bm2(Generated::new()),
            StaticMessage::Bm3 => ProstTable::Bm3(Generated::new()),
            StaticMessage::Bm5 => ProstTable::Bm5(Generated::new()),
        };
        Some(ProstBaseline { table })
    }

    /// The framed messages of `rows` (built from the rows on the first call for them).
    ///
    /// # Errors
    /// When a row does not fit the message.
    pub fn write(&self, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
        match &self.table {
            ProstTable::Bm1(t) => t.write(rows),
            ProstTable::Bm2(t) => t.write(rows),
            ProstTable::Bm3(t) => t.write(rows),
            ProstTable::Bm5(t) => t.write(rows),
        }
    }

    /// Rows read and their checksum.
    ///
    /// # Errors
    /// Malformed frames or messages.
    pub fn read(&self, bytes: &[u8]) -> Result<(usize, u64), String> {
        match &self.table {
            ProstTable::Bm1(t) => t.read(bytes),
            ProstTable::Bm2(t) => t.read(bytes),
            ProstTable::Bm3(t) => t.read(bytes),
            ProstTable::Bm5(t) => t.read(bytes),
        }
    }
}

/// prost-reflect's `DynamicMessage` over the lab table's message descriptor.
pub struct ReflectBaseline {
    descriptor: MessageDescriptor,
    fields: Vec<FieldDescriptor>,
    /// Per column: absent reads as null (optional columns).
    nullable: Vec<bool>,
    prepared: RefCell<Option<Prepared<DynamicMessage>>>,
}

impl ReflectBaseline {
    /// The baseline of `schema`; `None` for tables without a compiled message.
    pub fn for_schema(schema: &TableSchema) -> Option<ReflectBaseline> {
        let which = StaticMessage::for_schema(schema)?;
        let pool = DescriptorPool::decode(messages::FILE_DESCRIPTOR_SET).ok()?;
        let descriptor = pool.get_message_by_name(which.message_name())?;
        let fields: Vec<FieldDescriptor> = descriptor.fields().collect();
        let nullable = schema.columns.iter().map(|c| c.ty.is_nullable()).collect();
        Some(ReflectBaseline {
            descriptor,
            fields,
            nullable,
            prepared: RefCell::new(None),
        })
    }

    /// The framed messages of `rows` (built from the rows on the first call for them).
    ///
    /// # Errors
    /// When a row does not fit the message.
    pub fn write(&self, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
        let mut prepared = self.prepared.borrow_mut();
        if prepared.as_ref().map(|p| p.key) != Some(rows_key(rows)) {
            let messages = rows
                .iter()
                .map(|row| self.message_of(row))
                .collect::<Result<_, _>>()?;
            *prepared = Some(Prepared {
                key: rows_key(rows),
                messages,
            });
        }
        let mut out = Vec::new();
        for message in &prepared.as_ref().expect("prepared above").messages {
            put_frame(&mut out, message)?;
        }
        out.extend_from_slice(&END_OF_STREAM.to_le_bytes());
        Ok(out)
    }

    fn message_of(&self, row: &[Value]) -> Result<DynamicMessage, String> {
        if row.len() != self.fields.len() {
            return Err(format!(
                "row of {} values for {} fields",
                row.len(),
                self.fields.len()
            ));
        }
        let mut message = DynamicMessage::new(self.descriptor.clone());
        set_fields(&mut message, &self.fields, row)?;
        Ok(message)
    }

    /// Rows read and their checksum.
    ///
    /// # Errors
    /// Malformed frames or messages.
    pub fn read(&self, bytes: &[u8]) -> Result<(usize, u64), String> {
        let mut touch = Touch::default();
        let mut inner = Touch::default();
        let mut rows = 0;
        let mut message = DynamicMessage::new(self.descriptor.clone());
        for_each_frame(bytes, |body| {
            message.clear();
            message.merge(body).map_err(|e| e.to_string())?;
            for (field, &nullable) in self.fields.iter().zip(&self.nullable) {
                if nullable && !message.has_field(field) {
                    touch.value(ValueRef::Null);
                    continue;
                }
                let value = message.get_field(field);
                touch_reflected(&value, &mut touch, &mut inner);
            }
            rows += 1;
            Ok(())
        })?;
        black_box(inner.total());
        Ok((rows, touch.total()))
    }
}

/// Touches a field's value as the interface views it: scalars as themselves, lists and
/// messages as one composite (their scalars go to `inner`).
fn touch_reflected(value: &prost_reflect::Value, touch: &mut Touch, inner: &mut Touch) {
    use prost_reflect::Value as R;
    match value {
        R::List(_) | R::Message(_) | R::Map(_) => {
            touch.value(ValueRef::Composite(&[]));
            walk_reflected(value, inner);
        }
        scalar => touch.value(reflected_scalar(scalar)),
    }
}

fn walk_reflected(value: &prost_reflect::Value, inner: &mut Touch) {
    use prost_reflect::Value as R;
    match value {
        R::List(items) => items.iter().for_each(|v| walk_reflected(v, inner)),
        R::Message(m) => m.fields().for_each(|(_, v)| walk_reflected(v, inner)),
        R::Map(map) => map.values().for_each(|v| walk_reflected(v, inner)),
        scalar => inner.value(reflected_scalar(scalar)),
    }
}

fn reflected_scalar(value: &prost_reflect::Value) -> ValueRef<'_> {
    use prost_reflect::Value as R;
    match value {
        R::Bool(v) => ValueRef::Bool(*v),
        R::I32(v) | R::EnumNumber(v) => ValueRef::Int64(i64::from(*v)),
        R::I64(v) => ValueRef::Int64(*v),
        R::U32(v) => ValueRef::Uint64(u64::from(*v)),
        R::U64(v) => ValueRef::Uint64(*v),
        R::F32(v) => ValueRef::Double(f64::from(*v)),
        R::F64(v) => ValueRef::Double(*v),
        R::String(s) => ValueRef::String(s.as_bytes()),
        R::Bytes(b) => ValueRef::String(b),
        R::List(_) | R::Map(_) | R::Message(_) => ValueRef::Composite(&[]),
    }
}

/// Sets `fields[i]` of `message` from `values[i]` (absent for `Null`).
fn set_fields(
    message: &mut DynamicMessage,
    fields: &[FieldDescriptor],
    values: &[Value],
) -> Result<(), String> {
    for (field, value) in fields.iter().zip(values) {
        if matches!(value, Value::Null) {
            continue;
        }
        let reflected = if field.is_list() {
            let items: Vec<&Value> = match value {
                Value::List(items) => items.iter().collect(),
                Value::Dict(pairs) => {
                    // A dict is a repeated entry message {key = 1; value = 2}.
                    let Kind::Message(entry) = field.kind() else {
                        return Err(format!("field {}: a dict needs entries", field.name()));
                    };
                    let entry_fields: Vec<FieldDescriptor> = entry.fields().collect();
                    let mut list = Vec::with_capacity(pairs.len());
                    for (k, v) in pairs {
                        let mut m = DynamicMessage::new(entry.clone());
                        set_fields(&mut m, &entry_fields, &[k.clone(), v.clone()])?;
                        list.push(prost_reflect::Value::Message(m));
                    }
                    message.set_field(field, prost_reflect::Value::List(list));
                    continue;
                }
                other => return Err(format!("field {}: {other:?} is not a list", field.name())),
            };
            prost_reflect::Value::List(
                items
                    .into_iter()
                    .map(|v| scalar_of(&field.kind(), v, field))
                    .collect::<Result<_, _>>()?,
            )
        } else {
            scalar_of(&field.kind(), value, field)?
        };
        message.set_field(field, reflected);
    }
    Ok(())
}

fn scalar_of(
    kind: &Kind,
    value: &Value,
    field: &FieldDescriptor,
) -> Result<prost_reflect::Value, String> {
    use prost_reflect::Value as R;
    let wrong = || format!("field {}: {value:?} does not fit {kind:?}", field.name());
    Ok(match (kind, value) {
        (Kind::Int32 | Kind::Sint32 | Kind::Sfixed32, Value::Int64(v)) => {
            R::I32(i32::try_from(*v).map_err(|_| wrong())?)
        }
        (Kind::Int64 | Kind::Sint64 | Kind::Sfixed64, Value::Int64(v)) => R::I64(*v),
        (Kind::Uint32 | Kind::Fixed32, Value::Uint64(v)) => {
            R::U32(u32::try_from(*v).map_err(|_| wrong())?)
        }
        (Kind::Uint64 | Kind::Fixed64, Value::Uint64(v)) => R::U64(*v),
        (Kind::Float, Value::Double(v)) => R::F32(*v as f32),
        (Kind::Double, Value::Double(v)) => R::F64(*v),
        (Kind::Bool, Value::Bool(v)) => R::Bool(*v),
        (Kind::Bytes, Value::String(s)) => R::Bytes(prost::bytes::Bytes::from(s.clone())),
        (Kind::String, Value::String(s)) => {
            R::String(String::from_utf8(s.clone()).map_err(|_| wrong())?)
        }
        (Kind::Message(descriptor), Value::Tuple(members)) => {
            let fields: Vec<FieldDescriptor> = descriptor.fields().collect();
            if fields.len() != members.len() {
                return Err(wrong());
            }
            let mut m = DynamicMessage::new(descriptor.clone());
            set_fields(&mut m, &fields, members)?;
            R::Message(m)
        }
        _ => return Err(wrong()),
    })
}
