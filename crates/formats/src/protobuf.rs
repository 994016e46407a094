//! Static Protobuf: row messages generated at build time with prost, in YT's protobuf
//! stream framing.
//!
//! The lab's tables have compiled messages ([`messages`]: `Bm1Row`, `Bm2Row`, `Bm3Row`,
//! `Bm5Row`, from `proto/lab_tables.proto` and the BM1 file `build.rs` writes). A table whose
//! schema equals one of them column for column (names and types; strictness and sort order
//! do not matter) is read and written through the generated type — prost does the wire
//! work, this module only moves fields between the message and the row
//! ([`StaticMessage::for_schema`] tells which). When any table of the stream has no compiled
//! message, [`source`]/[`sink`] fall back to the dynamic codec ([`crate::protobuf_dynamic`]),
//! whose layout is the same: the compiled messages follow the dynamic mapping rules, so
//! both read each other's rows.
//!
//! Framing ([`framing`]): a u32 LE length then the message; control markers `FFFFFFFF` +
//! u32 table index, `FFFFFFFE` key switch, `FFFFFFFD` + u32 range index, `FFFFFFFC` + u64 row
//! index, `FFFFFFFB` end of stream.

use std::io::{Read, Write};

use prost::Message;
use shapeshift_types::{ColumnSchema, Member, PrimitiveType, TableSchema, Type, Value, ValueRef};

use crate::protobuf_dynamic::check_scalar;
use crate::row_bridge::{check_row, owned_value, RowBuffer};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};

pub(crate) mod framing;

use framing::{FrameReader, FrameWriter};

/// The prost-generated messages of the lab's tables.
#[allow(clippy::all, missing_docs)]
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/shapeshift.lab.rs"));
}

use messages::{Bm1Row, Bm2Row, Bm3Row, Bm5DictEntry, Bm5Pair, Bm5Row};

const FORMAT: &str = "protobuf";

/// The tables with a compiled message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StaticMessage {
    /// `Bm1Row`: 1000 numeric columns `c0..c999` cycling int8..int64, uint8..uint64, float, double.
    Bm1,
    /// `Bm2Row`: `{id: uint32, data: string}`.
    Bm2,
    /// `Bm3Row`: ten columns of numbers and strings.
    Bm3,
    /// `Bm5Row`: `optional<string>`, `list<double>`, `struct<foo:int32,bar:string>`,
    /// `dict<int64,string>`.
    Bm5,
}

impl StaticMessage {
    pub const ALL: [StaticMessage; 4] = [
        StaticMessage::Bm1,
        StaticMessage::Bm2,
        StaticMessage::Bm3,
        StaticMessage::Bm5,
    ];

    /// The protobuf message's full name.
    pub fn message_name(self) -> &'static str {
        match self {
            StaticMessage::Bm1 => "shapeshift.lab.Bm1Row",
            StaticMessage::Bm2 => "shapeshift.lab.Bm2Row",
            StaticMessage::Bm3 => "shapeshift.lab.Bm3Row",
            StaticMessage::Bm5 => "shapeshift.lab.Bm5Row",
        }
    }

    /// The table schema the message was compiled for (as crates/lab/src/datasets.rs).
    pub fn schema(self) -> TableSchema {
        let p = Type::Primitive;
        use PrimitiveType as P;
        let columns = match self {
            StaticMessage::Bm1 => {
                const CYCLE: [PrimitiveType; 10] = [
                    P::Int8,
                    P::Int16,
                    P::Int32,
                    P::Int64,
                    P::Uint8,
                    P::Uint16,
                    P::Uint32,
                    P::Uint64,
                    P::Float,
                    P::Double,
                ];
                (0..1000)
                    .map(|i| ColumnSchema::new(format!("c{i}"), p(CYCLE[i % CYCLE.len()])))
                    .collect()
            }
            StaticMessage::Bm2 => vec![
                ColumnSchema::new("id", p(P::Uint32)),
                ColumnSchema::new("data", p(P::String)),
            ],
            StaticMessage::Bm3 => vec![
                ColumnSchema::new("id", p(P::Int64)),
                ColumnSchema::new("counter", p(P::Int64)),
                ColumnSchema::new("user", p(P::String)),
                ColumnSchema::new("score", p(P::Double)),
                ColumnSchema::new("active", p(P::Bool)),
                ColumnSchema::new("country", p(P::String)),
                ColumnSchema::new("created", p(P::Timestamp)),
                ColumnSchema::new("code", p(P::Int32)),
                ColumnSchema::new("ratio", p(P::Float)),
                ColumnSchema::new("comment", p(P::Utf8)),
            ],
            StaticMessage::Bm5 => vec![
                ColumnSchema::new("maybe", Type::optional(p(P::String))),
                ColumnSchema::new("values", Type::list(p(P::Double))),
                ColumnSchema::new(
                    "pair",
                    Type::Struct(vec![
                        Member::new("foo", p(P::Int32)),
                        Member::new("bar", p(P::String)),
                    ]),
                ),
                ColumnSchema::new("dict", Type::dict(p(P::Int64), p(P::String))),
            ],
        };
        TableSchema::new(columns)
    }

    /// The compiled message for `schema`: same column names and types, in order.
    pub fn for_schema(schema: &TableSchema) -> Option<StaticMessage> {
        StaticMessage::ALL.into_iter().find(|m| {
            let own = m.schema();
            own.columns.len() == schema.columns.len()
                && own
                    .columns
                    .iter()
                    .zip(&schema.columns)
                    .all(|(a, b)| a.name == b.name && a.ty == b.ty)
        })
    }

    fn codec(self) -> Box<dyn TableCodec> {
        match self {
            StaticMessage::Bm1 => Box::new(StaticTable::<Bm1Row>::new(self)),
            StaticMessage::Bm2 => Box::new(StaticTable::<Bm2Row>::new(self)),
            StaticMessage::Bm3 => Box::new(StaticTable::<Bm3Row>::new(self)),
            StaticMessage::Bm5 => Box::new(StaticTable::<Bm5Row>::new(self)),
        }
    }
}

/// Reads framed rows: through the compiled messages when every table has one, else
/// through the dynamic codec (same layout).
///
/// # Errors
/// Never for the static path; as [`crate::protobuf_dynamic::source`] otherwise.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    match schemas
        .iter()
        .map(StaticMessage::for_schema)
        .collect::<Option<Vec<_>>>()
    {
        Some(messages) => Ok(Box::new(StaticSource {
            frames: FrameReader::new(input, FORMAT, schemas.len()),
            tables: messages.into_iter().map(StaticMessage::codec).collect(),
            row: RowBuffer::default(),
        })),
        None => crate::protobuf_dynamic::source(schemas, input),
    }
}

/// Writes framed rows: through the compiled messages when every table has one, else
/// through the dynamic codec (same layout).
///
/// # Errors
/// Never for the static path; as [`crate::protobuf_dynamic::sink`] otherwise.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    match schemas
        .iter()
        .map(StaticMessage::for_schema)
        .collect::<Option<Vec<_>>>()
    {
        Some(messages) => Ok(Box::new(StaticSink {
            frames: FrameWriter::new(output, FORMAT, schemas.len()),
            tables: messages.into_iter().map(StaticMessage::codec).collect(),
            row: RowBuffer::default(),
        })),
        None => crate::protobuf_dynamic::sink(schemas, output),
    }
}

/// Moves fields between a generated message and row views.
pub(crate) trait StaticRow: Message + Default {
    /// Pushes one view per column (checking YT's ranges, which protobuf types do not carry).
    fn push_views(&self, row: &mut RowBuffer) -> Result<(), String>;
    /// Sets every field from one view per column.
    fn set_from_views(&mut self, views: &[ValueRef<'_>]) -> Result<(), String>;
}

trait TableCodec {
    fn decode(&mut self, message: &[u8], row: &mut RowBuffer) -> Result<(), String>;
    fn encode_views(&mut self, views: &[ValueRef<'_>], out: &mut Vec<u8>) -> Result<(), String>;
    fn schema(&self) -> &TableSchema;
}

struct StaticTable<M> {
    message: M,
    schema: TableSchema,
}

impl<M: StaticRow> StaticTable<M> {
    fn new(which: StaticMessage) -> Self {
        StaticTable {
            message: M::default(),
            schema: which.schema(),
        }
    }
}

impl<M: StaticRow> TableCodec for StaticTable<M> {
    fn decode(&mut self, message: &[u8], row: &mut RowBuffer) -> Result<(), String> {
        // Merging into a cleared message reuses its buffers from row to row.
        self.message.clear();
        self.message.merge(message).map_err(|e| e.to_string())?;
        row.clear();
        self.message.push_views(row)
    }

    fn encode_views(&mut self, views: &[ValueRef<'_>], out: &mut Vec<u8>) -> Result<(), String> {
        if views.len() != self.schema.columns.len() {
            return Err(format!(
                "row has {} values, the schema {} columns",
                views.len(),
                self.schema.columns.len()
            ));
        }
        self.message.set_from_views(views)?;
        self.message.encode(out).map_err(|e| e.to_string())
    }

    fn schema(&self) -> &TableSchema {
        &self.schema
    }
}

struct StaticSource {
    frames: FrameReader,
    tables: Vec<Box<dyn TableCodec>>,
    row: RowBuffer,
}

impl RowSource for StaticSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        let Some(position) = self.frames.next_message()? else {
            return Ok(None);
        };
        let offset = self.frames.message_offset;
        self.tables[position.table_index]
            .decode(&self.frames.message, &mut self.row)
            .map_err(|e| FormatError {
                format: FORMAT,
                offset: Some(offset),
                row: Some(self.frames.rows() - 1),
                message: format!("row message: {e}"),
            })?;
        Ok(Some(RowRef {
            position,
            values: self.row.views(),
        }))
    }
}

struct StaticSink {
    frames: FrameWriter,
    tables: Vec<Box<dyn TableCodec>>,
    row: RowBuffer,
}

impl RowSink for StaticSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.frames.check_table(position)?;
        self.frames.message.clear();
        let result =
            self.tables[position.table_index].encode_views(values, &mut self.frames.message);
        result.map_err(|e| self.frames.error(e))?;
        self.frames.write_message(position)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.frames.check_table(position)?;
        let table = &mut self.tables[position.table_index];
        check_row(values, table.schema(), FORMAT)?;
        self.row.clear();
        for (value, column) in values.iter().zip(&table.schema().columns) {
            self.row.push_value(value, &column.ty, FORMAT)?;
        }
        self.frames.message.clear();
        let result = table.encode_views(self.row.views(), &mut self.frames.message);
        result.map_err(|e| self.frames.error(e))?;
        self.frames.write_message(position)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.frames.finish()
    }
}

// Field conversions shared by the message bridges (the BM1 one is generated by build.rs).

fn signed(v: i64, lo: i64, hi: i64) -> Result<i64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} out of range {lo}..={hi}"))
    }
}

fn unsigned(v: u64, hi: u64) -> Result<u64, String> {
    if v <= hi {
        Ok(v)
    } else {
        Err(format!("{v} out of range 0..={hi}"))
    }
}

fn narrow_signed(view: &ValueRef<'_>, lo: i64, hi: i64) -> Result<i64, String> {
    match view {
        ValueRef::Int64(v) => signed(*v, lo, hi),
        other => Err(format!("expected an int64 value, found {other:?}")),
    }
}

fn narrow_unsigned(view: &ValueRef<'_>, hi: u64) -> Result<u64, String> {
    match view {
        ValueRef::Uint64(v) => unsigned(*v, hi),
        other => Err(format!("expected a uint64 value, found {other:?}")),
    }
}

fn double(view: &ValueRef<'_>) -> Result<f64, String> {
    match view {
        ValueRef::Double(v) => Ok(*v),
        other => Err(format!("expected a double value, found {other:?}")),
    }
}

fn float(view: &ValueRef<'_>) -> Result<f32, String> {
    let v = double(view)?;
    let narrow = v as f32;
    if f64::from(narrow) == v || v.is_nan() {
        Ok(narrow)
    } else {
        Err(format!("{v} is not a float value"))
    }
}

fn boolean(view: &ValueRef<'_>) -> Result<bool, String> {
    match view {
        ValueRef::Bool(v) => Ok(*v),
        other => Err(format!("expected a bool value, found {other:?}")),
    }
}

fn bytes<'a>(view: &ValueRef<'a>) -> Result<&'a [u8], String> {
    match view {
        ValueRef::String(s) => Ok(s),
        other => Err(format!("expected a string value, found {other:?}")),
    }
}

fn set_bytes(field: &mut Vec<u8>, view: &ValueRef<'_>) -> Result<(), String> {
    let s = bytes(view)?;
    field.clear();
    field.extend_from_slice(s);
    Ok(())
}

include!(concat!(env!("OUT_DIR"), "/bm1_bridge.rs"));

impl StaticRow for Bm2Row {
    fn push_views(&self, row: &mut RowBuffer) -> Result<(), String> {
        row.push_uint64(u64::from(self.id));
        row.push_string(&self.data);
        Ok(())
    }

    fn set_from_views(&mut self, views: &[ValueRef<'_>]) -> Result<(), String> {
        self.id = narrow_unsigned(&views[0], u32::MAX.into())? as u32;
        set_bytes(&mut self.data, &views[1])
    }
}

const TIMESTAMP: Type = Type::Primitive(PrimitiveType::Timestamp);
/// YT's largest timestamp: just before 2106-01-01 (49673 days), in microseconds.
const TIMESTAMP_MAX: u64 = 49_673 * 86_400 * 1_000_000 - 1;

impl StaticRow for Bm3Row {
    fn push_views(&self, row: &mut RowBuffer) -> Result<(), String> {
        row.push_int64(self.id);
        row.push_int64(self.counter);
        row.push_string(&self.user);
        row.push_double(self.score.unwrap_or_default());
        row.push_bool(self.active);
        row.push_string(&self.country);
        row.push_uint64(unsigned(self.created, TIMESTAMP_MAX)?);
        row.push_int64(i64::from(self.code));
        row.push_double(f64::from(self.ratio.unwrap_or_default()));
        row.push_string(self.comment.as_bytes());
        Ok(())
    }

    fn set_from_views(&mut self, views: &[ValueRef<'_>]) -> Result<(), String> {
        self.id = narrow_signed(&views[0], i64::MIN, i64::MAX)?;
        self.counter = narrow_signed(&views[1], i64::MIN, i64::MAX)?;
        set_bytes(&mut self.user, &views[2])?;
        self.score = Some(double(&views[3])?);
        self.active = boolean(&views[4])?;
        set_bytes(&mut self.country, &views[5])?;
        check_scalar(&views[6], &TIMESTAMP)?;
        self.created = narrow_unsigned(&views[6], u64::MAX)?;
        self.code = narrow_signed(&views[7], i32::MIN.into(), i32::MAX.into())? as i32;
        self.ratio = Some(float(&views[8])?);
        let comment = std::str::from_utf8(bytes(&views[9])?)
            .map_err(|e| format!("comment: invalid UTF-8: {e}"))?;
        self.comment.clear();
        self.comment.push_str(comment);
        Ok(())
    }
}

impl StaticRow for Bm5Row {
    fn push_views(&self, row: &mut RowBuffer) -> Result<(), String> {
        let schema_error = |e: crate::table::FormatError| e.message;
        match &self.maybe {
            Some(s) => row.push_string(s),
            None => row.push_null(),
        }
        let values = Value::List(self.values.iter().map(|v| Value::Double(*v)).collect());
        row.push_value(
            &values,
            &Type::list(Type::Primitive(PrimitiveType::Double)),
            FORMAT,
        )
        .map_err(schema_error)?;
        let pair = self.pair.clone().unwrap_or_default();
        let pair_type = StaticMessage::Bm5.schema().columns[2].ty.clone();
        let pair = Value::Tuple(vec![
            Value::Int64(i64::from(pair.foo)),
            Value::String(pair.bar),
        ]);
        row.push_value(&pair, &pair_type, FORMAT)
            .map_err(schema_error)?;
        let dict = Value::Dict(
            self.dict
                .iter()
                .map(|e| (Value::Int64(e.key), Value::String(e.value.clone())))
                .collect(),
        );
        let dict_type = Type::dict(
            Type::Primitive(PrimitiveType::Int64),
            Type::Primitive(PrimitiveType::String),
        );
        row.push_value(&dict, &dict_type, FORMAT)
            .map_err(schema_error)
    }

    fn set_from_views(&mut self, views: &[ValueRef<'_>]) -> Result<(), String> {
        let schema = StaticMessage::Bm5.schema();
        let owned =
            |i: usize| owned_value(&views[i], &schema.columns[i].ty, FORMAT).map_err(|e| e.message);
        self.maybe = match owned(0)? {
            Value::Null => None,
            Value::String(s) => Some(s),
            other => return Err(format!("maybe: unexpected {other:?}")),
        };
        self.values = match owned(1)? {
            Value::List(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::Double(d) => Ok(d),
                    other => Err(format!("values: unexpected {other:?}")),
                })
                .collect::<Result<_, _>>()?,
            other => return Err(format!("values: unexpected {other:?}")),
        };
        self.pair = match owned(2)? {
            Value::Tuple(members) => match <[Value; 2]>::try_from(members) {
                Ok([Value::Int64(foo), Value::String(bar)]) => Some(Bm5Pair {
                    foo: foo as i32,
                    bar,
                }),
                Ok(other) => return Err(format!("pair: unexpected {other:?}")),
                Err(other) => return Err(format!("pair: unexpected {other:?}")),
            },
            other => return Err(format!("pair: unexpected {other:?}")),
        };
        self.dict = match owned(3)? {
            Value::Dict(pairs) => pairs
                .into_iter()
                .map(|pair| match pair {
                    (Value::Int64(key), Value::String(value)) => Ok(Bm5DictEntry { key, value }),
                    other => Err(format!("dict: unexpected {other:?}")),
                })
                .collect::<Result<_, _>>()?,
            other => return Err(format!("dict: unexpected {other:?}")),
        };
        Ok(())
    }
}
