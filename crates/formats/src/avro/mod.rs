//! Avro: object container files and raw datum streams of table rows, with a codec compiled
//! from the table schema (the mapping is in `codec.rs` and
//! docs/formats/avro.md).
//!
//! The encoder and decoder are shapeshift's own (Avro's binary encoding is small and fixed
//! by the spec) because a `Value`-tree library loses what YT keeps: the order and the
//! duplicates of dict entries (maps become hash maps). The files are plain Avro — the tests
//! check them against the `apache-avro` crate in both directions.
//!
//! Container streams:
//! - one container (header: magic `Obj\x01`, metadata `avro.schema`, `avro.codec` =
//!   `null`, `yt.table_index`, then a 16-byte sync marker) per run of a table; a table
//!   switch ends the container and starts the next right after it (readers tell a new
//!   header from a block by the magic: a block count is never negative there);
//! - row positions travel as three trailing fields `_yt_row_index`, `_yt_range_index`
//!   (`["null","long"]`) and `_yt_key_switch` (`boolean`), present in a container only when
//!   its first row has a position; a later row that needs them starts a new container;
//! - blocks of up to 64 KiB of rows; a block's byte size is read through `Read::take`, so a
//!   hostile size allocates no more than the input holds.
//!
//! Raw datum streams ([`datum_source`], [`datum_sink`]) are datums back to back with no
//! header, of the first table only; positions are not carried.

use serde_json::{json, Value as Json};
use shapeshift_types::{TableSchema, Type, Value};

use crate::row_size_hint::RowSizeHint;
use crate::table::row_arena::check_row;
use crate::table::{FormatError, RowPosition};

mod block_codec;
mod codec;
pub mod rows;
mod serde;

pub use crate::serde_error::SerdeError;
pub use block_codec::{BlockCodec, MAX_BLOCK_BYTES};

use codec::{put_long, Compiler, DecodeError, Plan, Reader};

const FORMAT: &str = "avro";
const MAGIC: &[u8; 4] = b"Obj\x01";
const BLOCK_BYTES: usize = 64 << 10;
const SYSTEM_FIELDS: usize = 3;
const TYPE_V3_KEY: &str = "yt.type_v3";
const SYSTEM_FIELD_NAMES: [&str; 3] = ["_yt_row_index", "_yt_range_index", "_yt_key_switch"];

fn error(offset: Option<u64>, row: Option<u64>, message: impl Into<String>) -> FormatError {
    FormatError {
        format: FORMAT,
        offset,
        row,
        message: message.into(),
    }
}

/// A table schema compiled to its Avro record schema and codec.
#[derive(Clone, Debug)]
pub struct RowCodec {
    schema: TableSchema,
    avro_schema: Json,
    plans: Vec<Plan>,
    /// The record of the columns (no position fields): the serde path's plan.
    row: Plan,
    /// The serde path's room for the next datum.
    size_hint: RowSizeHint,
    system_fields: bool,
}

impl RowCodec {
    /// Compiles `schema` (without position fields).
    pub fn new(schema: &TableSchema) -> RowCodec {
        RowCodec::compile(schema, false)
    }

    fn compile(schema: &TableSchema, system_fields: bool) -> RowCodec {
        let mut compiler = Compiler::new();
        let fields: Vec<(&str, &shapeshift_types::Type)> = schema
            .columns
            .iter()
            .map(|c| (c.name.as_str(), &c.ty))
            .collect();
        let (mut avro_schema, mut plans) = compiler.record("row", &fields, &[]);
        let row = Plan::Record(plans.clone());
        // Each column's full YT type, so a file describes its table (`table_schema_of`);
        // readers compare schemas without `yt.*` properties.
        if let Some(Json::Array(json_fields)) = avro_schema.get_mut("fields") {
            for (field, column) in json_fields.iter_mut().zip(&schema.columns) {
                if let Json::Object(field) = field {
                    let text =
                        crate::yson::to_vec(&column.ty.to_node(), crate::yson::YsonFormat::Text);
                    field.insert(
                        TYPE_V3_KEY.into(),
                        Json::String(String::from_utf8_lossy(&text).into_owned()),
                    );
                }
            }
        }
        if system_fields {
            if let Some(Json::Array(fields)) = avro_schema.get_mut("fields") {
                fields.push(json!({"name": "_yt_row_index", "type": ["null", "long"]}));
                fields.push(json!({"name": "_yt_range_index", "type": ["null", "long"]}));
                fields.push(json!({"name": "_yt_key_switch", "type": "boolean"}));
            }
            let index = Plan::Optional {
                item: Box::new(Plan::long(shapeshift_types::PrimitiveType::Int64, false)),
                item_nullable: false,
            };
            plans.push(index.clone());
            plans.push(index);
            plans.push(Plan::Bool);
        }
        RowCodec {
            schema: schema.clone(),
            avro_schema,
            plans,
            row,
            size_hint: RowSizeHint::new(),
            system_fields,
        }
    }

    /// The Avro schema (JSON text) of the row record.
    pub fn schema_json(&self) -> String {
        self.avro_schema.to_string()
    }

    /// Appends the datum of `values` (schema order) to `out`.
    ///
    /// # Errors
    /// When a value does not fit its column.
    pub fn encode_row(&self, values: &[Value], out: &mut Vec<u8>) -> Result<(), FormatError> {
        check_row(values, &self.schema, FORMAT)?;
        for (plan, value) in self.plans.iter().zip(values) {
            plan.encode(value, out).map_err(|e| error(None, None, e))?;
        }
        Ok(())
    }

    fn encode_position(&self, position: &RowPosition, out: &mut Vec<u8>) {
        if self.system_fields {
            for index in [position.row_index, position.range_index] {
                match index {
                    None => out.push(0),
                    Some(i) => {
                        out.push(2);
                        put_long(out, i);
                    }
                }
            }
            out.push(u8::from(position.key_switch));
        }
    }

    /// Decodes one datum (without position fields) into values.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset in `datum`, for malformed input, values out of
    /// range, or trailing bytes.
    pub fn decode_row(&self, datum: &[u8]) -> Result<Vec<Value>, FormatError> {
        let mut reader = Reader::new(datum, 0);
        let (values, _) = self
            .decode(&mut reader)
            .map_err(|e| error(Some(e.offset), None, e.message))?;
        if reader.remaining() != 0 {
            return Err(error(
                Some(reader.pos as u64),
                None,
                "trailing bytes after the datum",
            ));
        }
        Ok(values)
    }

    fn decode(&self, reader: &mut Reader<'_>) -> Result<(Vec<Value>, RowPosition), DecodeError> {
        let start = reader.pos;
        let mut values = Vec::with_capacity(self.schema.columns.len());
        for (plan, column) in self.plans.iter().zip(&self.schema.columns) {
            let value = plan.decode(reader)?;
            shapeshift_types::check_value(&value, &column.ty).map_err(|e| DecodeError {
                offset: reader.base + start as u64,
                message: format!("column {:?}: {e}", column.name),
            })?;
            values.push(value);
        }
        let mut position = RowPosition::default();
        if self.system_fields {
            let system = &self.plans[self.plans.len() - SYSTEM_FIELDS..];
            let index = |v: Value| match v {
                Value::Int64(i) => Some(i),
                _ => None,
            };
            position.row_index = index(system[0].decode(reader)?);
            position.range_index = index(system[1].decode(reader)?);
            position.key_switch = matches!(system[2].decode(reader)?, Value::Bool(true));
        }
        Ok((values, position))
    }
}

/// The Avro schema (JSON text) of a table's row record.
pub fn avro_schema(schema: &TableSchema) -> String {
    RowCodec::new(schema).schema_json()
}

/// The table schema an Avro record schema (JSON text) was written from: each field's
/// `yt.type_v3` and original name (`yt.name`), or for a field without one (a file of
/// another writer) the YT type of its plain Avro type (`null` unions as optionals, `int`,
/// `long`, `float`, `double`, `boolean`, `bytes`, `string`, arrays, records, string-keyed
/// maps). The position fields are left out.
///
/// # Errors
/// Malformed JSON, a schema that is not a record, or a field type with no YT counterpart.
pub fn table_schema_of(schema_json: &str) -> Result<TableSchema, FormatError> {
    let schema: Json = serde_json::from_str(schema_json)
        .map_err(|e| error(None, None, format!("avro.schema is not JSON: {e}")))?;
    let fields = schema
        .get("fields")
        .and_then(Json::as_array)
        .ok_or_else(|| error(None, None, "avro.schema is not a record"))?;
    let mut columns = Vec::with_capacity(fields.len());
    for field in fields {
        let avro_name = field.get("name").and_then(Json::as_str).unwrap_or_default();
        if SYSTEM_FIELD_NAMES.contains(&avro_name) {
            continue;
        }
        let name = field
            .get("yt.name")
            .and_then(Json::as_str)
            .unwrap_or(avro_name);
        let ty = match field.get(TYPE_V3_KEY).and_then(Json::as_str) {
            Some(text) => crate::yson::from_slice(text.as_bytes())
                .map_err(|e| e.to_string())
                .and_then(|node| Type::from_node(&node).map_err(|e| e.to_string())),
            None => field
                .get("type")
                .ok_or_else(|| "field without a type".to_owned())
                .and_then(yt_type_of_avro),
        }
        .map_err(|e| error(None, None, format!("column {name:?}: {e}")))?;
        columns.push(shapeshift_types::ColumnSchema::new(name, ty));
    }
    Ok(TableSchema::new(columns))
}

fn yt_type_of_avro(schema: &Json) -> Result<Type, String> {
    use shapeshift_types::PrimitiveType as P;
    let p = |p: P| Ok(Type::Primitive(p));
    match schema {
        Json::String(name) => match name.as_str() {
            "null" => p(P::Null),
            "boolean" => p(P::Bool),
            "int" => p(P::Int32),
            "long" => p(P::Int64),
            "float" => p(P::Float),
            "double" => p(P::Double),
            "bytes" => p(P::String),
            "string" => p(P::Utf8),
            other => Err(format!(
                "Avro type {other:?} has no YT type here (and no yt.type_v3)"
            )),
        },
        Json::Array(branches) => match branches.as_slice() {
            [Json::String(null), item] | [item, Json::String(null)] if null == "null" => {
                Ok(Type::optional(yt_type_of_avro(item)?))
            }
            _ => Err("a union other than [\"null\", T] has no YT type here".into()),
        },
        Json::Object(object) => match object.get("type") {
            Some(Json::String(kind)) if kind == "array" => Ok(Type::list(yt_type_of_avro(
                object.get("items").ok_or("array without items")?,
            )?)),
            Some(Json::String(kind)) if kind == "map" => Ok(Type::dict(
                Type::Primitive(P::Utf8),
                yt_type_of_avro(object.get("values").ok_or("map without values")?)?,
            )),
            Some(Json::String(kind)) if kind == "record" => {
                let fields = object
                    .get("fields")
                    .and_then(Json::as_array)
                    .ok_or("record without fields")?;
                Ok(Type::Struct(
                    fields
                        .iter()
                        .map(|f| {
                            let name = f
                                .get("yt.name")
                                .or_else(|| f.get("name"))
                                .and_then(Json::as_str)
                                .ok_or("field without a name")?;
                            let ty = yt_type_of_avro(f.get("type").ok_or("field without a type")?)?;
                            Ok(shapeshift_types::Member::new(name, ty))
                        })
                        .collect::<Result<_, String>>()?,
                ))
            }
            Some(inner @ Json::String(_)) if object.get("logicalType").is_none() => {
                yt_type_of_avro(inner)
            }
            _ => Err(format!(
                "Avro type {schema} has no YT type here (and no yt.type_v3)"
            )),
        },
        other => Err(format!("Avro type {other} has no YT type here")),
    }
}

/// The tables of a stream of object container files, in file order: each container's
/// table index (`yt.table_index`, 0 when absent), its table schema ([`table_schema_of`])
/// and its row count (the sum of its blocks' counts; blocks are skipped unread).
///
/// # Errors
/// A [`FormatError`] with the byte offset of a malformed or truncated header or block.
pub fn container_tables(bytes: &[u8]) -> Result<Vec<(usize, TableSchema, u64)>, FormatError> {
    let mut tables: Vec<(usize, TableSchema, u64)> = Vec::new();
    let mut at = 0usize;
    let fail = |offset: usize, message: String| error(Some(offset as u64), None, message);
    let long = |at: &mut usize| -> Result<i64, FormatError> {
        let start = *at;
        let mut z = 0u64;
        for i in 0..10 {
            let b = *bytes
                .get(*at)
                .ok_or_else(|| fail(start, "input ends inside a varint".into()))?;
            *at += 1;
            z |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(((z >> 1) as i64) ^ -((z & 1) as i64));
            }
        }
        Err(fail(start, "varint longer than 10 bytes".into()))
    };
    let take = |at: &mut usize, len: i64| -> Result<&[u8], FormatError> {
        let start = *at;
        let slice = usize::try_from(len)
            .ok()
            .and_then(|len| bytes.get(*at..at.checked_add(len)?))
            .ok_or_else(|| fail(start, format!("{len} bytes past the input")))?;
        *at += slice.len();
        Ok(slice)
    };
    while at < bytes.len() {
        let start = at;
        if bytes[at..].starts_with(MAGIC) {
            at += MAGIC.len();
            let (mut schema_text, mut table_index) = (None, None);
            loop {
                let mut count = long(&mut at)?;
                if count == 0 {
                    break;
                }
                if count < 0 {
                    count = count
                        .checked_neg()
                        .ok_or_else(|| fail(start, "bad map count".into()))?;
                    long(&mut at)?;
                }
                for _ in 0..count {
                    let len = long(&mut at)?;
                    let key = take(&mut at, len)?;
                    let len = long(&mut at)?;
                    let value = take(&mut at, len)?;
                    match key {
                        b"avro.schema" => schema_text = Some(value),
                        b"yt.table_index" => table_index = Some(value),
                        _ => {}
                    }
                }
            }
            take(&mut at, 16)?;
            let table_index = match table_index {
                None => 0,
                Some(text) => std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<usize>().ok())
                    .ok_or_else(|| fail(start, "bad yt.table_index".into()))?,
            };
            let schema_text = schema_text
                .and_then(|t| std::str::from_utf8(t).ok())
                .ok_or_else(|| fail(start, "container without a UTF-8 avro.schema".into()))?;
            let table = table_schema_of(schema_text).map_err(|e| FormatError {
                offset: Some(start as u64),
                ..e
            })?;
            tables.push((table_index, table, 0));
        } else {
            let Some(last) = tables.last_mut() else {
                return Err(fail(
                    start,
                    "not an Avro object container (bad magic)".into(),
                ));
            };
            let count = long(&mut at)?;
            let size = long(&mut at)?;
            if count < 0 {
                return Err(fail(start, format!("block of {count} rows")));
            }
            take(&mut at, size)?;
            take(&mut at, 16)?;
            last.2 += count as u64;
        }
    }
    Ok(tables)
}
