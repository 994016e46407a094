//! Avro: object container files and raw datum streams of table rows, with a codec compiled
//! from the table schema (the mapping is in `codec.rs` and
//! docs/formats-protobuf-arrow-avro.md).
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

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};

use serde_json::{json, Value as Json};
use shapeshift_types::{TableSchema, Type, Value, ValueRef};

use crate::row_bridge::{check_row, owned_value, RowBuffer};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};

mod block_codec;
mod codec;

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
                item: Box::new(Plan::Long { unsigned: false }),
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

/// Reads rows from Avro object container files (one per run of a table, back to back).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(ContainerSource {
        input: BufReader::with_capacity(BLOCK_BYTES, input),
        offset: 0,
        schemas: schemas.to_vec(),
        container: None,
        block: Vec::new(),
        block_offset: 0,
        block_compressed: false,
        packed: Vec::new(),
        block_pos: 0,
        block_rows_left: 0,
        rows: 0,
        row: RowBuffer::default(),
    }))
}

/// Writes rows as Avro object container files (one per run of a table).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    sink_with_codec(schemas, output, BlockCodec::Null)
}

/// Writes rows as Avro object container files whose blocks are compressed with `codec`
/// (`avro.codec` in each header).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink_with_codec(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    codec: BlockCodec,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(ContainerSink {
        output,
        schemas: schemas.to_vec(),
        container: None,
        block: Vec::new(),
        block_rows: 0,
        rows: 0,
        wrote_header: false,
        compression: codec,
    }))
}

struct OpenContainer {
    table_index: usize,
    codec: RowCodec,
    sync: [u8; 16],
    /// How its blocks are compressed.
    compression: BlockCodec,
}

struct ContainerSink {
    output: Box<dyn Write>,
    schemas: Vec<TableSchema>,
    container: Option<OpenContainer>,
    block: Vec<u8>,
    block_rows: u64,
    rows: u64,
    wrote_header: bool,
    compression: BlockCodec,
}

fn sync_marker(schema_json: &str, table_index: usize) -> [u8; 16] {
    let mut marker = [0u8; 16];
    for (i, half) in marker.chunks_mut(8).enumerate() {
        let mut hasher = DefaultHasher::new();
        (schema_json, table_index, i).hash(&mut hasher);
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    marker
}

impl ContainerSink {
    fn io(&self, e: std::io::Error) -> FormatError {
        error(None, Some(self.rows), format!("write: {e}"))
    }

    fn flush_block(&mut self) -> Result<(), FormatError> {
        let Some(container) = &self.container else {
            return Ok(());
        };
        if self.block_rows == 0 {
            return Ok(());
        }
        let compressed = match container.compression {
            BlockCodec::Null => None,
            codec => Some(
                codec
                    .compress(&self.block)
                    .map_err(|e| error(None, Some(self.rows), e))?,
            ),
        };
        let data = compressed.as_deref().unwrap_or(&self.block);
        let mut head = Vec::with_capacity(20);
        put_long(&mut head, self.block_rows as i64);
        put_long(&mut head, data.len() as i64);
        let sync = container.sync;
        let result = self
            .output
            .write_all(&head)
            .and_then(|()| self.output.write_all(data))
            .and_then(|()| self.output.write_all(&sync));
        result.map_err(|e| self.io(e))?;
        self.block.clear();
        self.block_rows = 0;
        Ok(())
    }

    fn start_container(
        &mut self,
        table_index: usize,
        system_fields: bool,
    ) -> Result<(), FormatError> {
        self.flush_block()?;
        let codec = RowCodec::compile(&self.schemas[table_index], system_fields);
        let schema_json = codec.schema_json();
        let sync = sync_marker(&schema_json, table_index);
        let mut header = MAGIC.to_vec();
        let table = table_index.to_string();
        let metadata: [(&str, &[u8]); 3] = [
            ("avro.schema", schema_json.as_bytes()),
            ("avro.codec", self.compression.name().as_bytes()),
            ("yt.table_index", table.as_bytes()),
        ];
        put_long(&mut header, metadata.len() as i64);
        for (key, value) in metadata {
            put_long(&mut header, key.len() as i64);
            header.extend_from_slice(key.as_bytes());
            put_long(&mut header, value.len() as i64);
            header.extend_from_slice(value);
        }
        header.push(0);
        header.extend_from_slice(&sync);
        self.output.write_all(&header).map_err(|e| self.io(e))?;
        self.wrote_header = true;
        self.container = Some(OpenContainer {
            table_index,
            codec,
            sync,
            compression: self.compression,
        });
        Ok(())
    }

    fn write_values(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let needs_system =
            position.row_index.is_some() || position.range_index.is_some() || position.key_switch;
        let fits = self.container.as_ref().is_some_and(|c| {
            c.table_index == position.table_index && (c.codec.system_fields || !needs_system)
        });
        if !fits {
            self.start_container(position.table_index, needs_system)?;
        }
        let Some(container) = &self.container else {
            unreachable!("a container was started above")
        };
        let rows = self.rows;
        for (plan, (value, column)) in container
            .codec
            .plans
            .iter()
            .zip(values.iter().zip(&container.codec.schema.columns))
        {
            plan.encode(value, &mut self.block)
                .map_err(|e| error(None, Some(rows), format!("column {:?}: {e}", column.name)))?;
        }
        container.codec.encode_position(position, &mut self.block);
        self.block_rows += 1;
        self.rows += 1;
        if self.block.len() >= BLOCK_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn table(&self, position: &RowPosition) -> Result<&TableSchema, FormatError> {
        self.schemas.get(position.table_index).ok_or_else(|| {
            error(
                None,
                Some(self.rows),
                format!("table index {} out of range", position.table_index),
            )
        })
    }
}

impl RowSink for ContainerSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = self.table(position)?;
        if values.len() != table.columns.len() {
            return Err(error(
                None,
                Some(self.rows),
                "row length differs from the schema",
            ));
        }
        let owned = values
            .iter()
            .zip(&table.columns)
            .map(|(v, c)| {
                owned_value(v, &c.ty, FORMAT).map_err(|e| {
                    error(
                        None,
                        Some(self.rows),
                        format!("column {:?}: {}", c.name, e.message),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.write_values(position, &owned)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let table = self.table(position)?;
        check_row(values, table, FORMAT).map_err(|e| FormatError {
            row: Some(self.rows),
            ..e
        })?;
        self.write_values(position, values)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        if !self.wrote_header && !self.schemas.is_empty() {
            // An empty file still has its header, so readers know the schema.
            self.start_container(0, false)?;
        }
        self.flush_block()?;
        self.output.flush().map_err(|e| self.io(e))
    }
}

struct ContainerSource {
    input: BufReader<Box<dyn Read>>,
    offset: u64,
    schemas: Vec<TableSchema>,
    container: Option<OpenContainer>,
    block: Vec<u8>,
    /// The file offset of the current block's data.
    block_offset: u64,
    /// The block's data was compressed: `block` positions are not file offsets.
    block_compressed: bool,
    /// A compressed block as read (reused).
    packed: Vec<u8>,
    block_pos: usize,
    block_rows_left: u64,
    rows: u64,
    row: RowBuffer,
}

impl ContainerSource {
    fn fail(&self, offset: u64, message: impl Into<String>) -> FormatError {
        error(Some(offset), Some(self.rows), message)
    }

    /// An error at byte `at` of the current block's (decompressed) data: the file offset
    /// itself for an uncompressed block, else the compressed block's offset with `at` named.
    fn block_error(&self, at: u64, message: impl Into<String>) -> FormatError {
        let message = message.into();
        if self.block_compressed {
            self.fail(
                self.block_offset,
                format!("at byte {at} of the decompressed block: {message}"),
            )
        } else {
            self.fail(self.block_offset + at, message)
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), FormatError> {
        self.input.read_exact(buf).map_err(|e| {
            self.fail(
                self.offset,
                format!("input ends or fails inside a {}-byte field: {e}", buf.len()),
            )
        })?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn read_long(&mut self) -> Result<i64, FormatError> {
        let start = self.offset;
        let mut z = 0u64;
        for i in 0..10 {
            let mut b = [0u8; 1];
            self.read_exact(&mut b)?;
            if i == 9 && b[0] > 1 {
                return Err(self.fail(start, "varint longer than 64 bits"));
            }
            z |= u64::from(b[0] & 0x7f) << (7 * i);
            if b[0] < 0x80 {
                return Ok(((z >> 1) as i64) ^ -((z & 1) as i64));
            }
        }
        Err(self.fail(start, "varint longer than 10 bytes"))
    }

    /// Reads `len` bytes, allocating only as the input delivers them.
    fn read_bytes(&mut self, len: i64, into: &mut Vec<u8>) -> Result<(), FormatError> {
        let start = self.offset;
        let len =
            u64::try_from(len).map_err(|_| self.fail(start, format!("negative length {len}")))?;
        into.clear();
        let read = (&mut self.input)
            .take(len)
            .read_to_end(into)
            .map_err(|e| self.fail(start, format!("read: {e}")))?;
        self.offset += read as u64;
        if (read as u64) < len {
            return Err(self.fail(
                self.offset,
                format!("input ends inside a field of {len} bytes"),
            ));
        }
        Ok(())
    }

    /// `Some(true)` at a container header, `Some(false)` at a block, `None` at the end.
    fn peek_header(&mut self) -> Result<Option<bool>, FormatError> {
        let offset = self.offset;
        let rows = self.rows;
        let available = self
            .input
            .fill_buf()
            .map_err(|e| error(Some(offset), Some(rows), format!("read: {e}")))?;
        // A block count is a non-negative varint: its first byte is never 'O' (0x4F, the
        // whole varint -40), so that byte alone tells a header.
        Ok(available.first().map(|b| *b == MAGIC[0]))
    }

    fn read_header(&mut self) -> Result<(), FormatError> {
        let start = self.offset;
        let mut magic = [0u8; 4];
        self.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(self.fail(start, "not an Avro object container (bad magic)"));
        }
        let mut schema_text = None;
        let mut codec = None;
        let mut table_index = None;
        let mut key = Vec::new();
        let mut value = Vec::new();
        loop {
            let count_offset = self.offset;
            let mut count = self.read_long()?;
            if count == 0 {
                break;
            }
            if count < 0 {
                count = count
                    .checked_neg()
                    .ok_or_else(|| self.fail(count_offset, "bad block count"))?;
                self.read_long()?;
            }
            for _ in 0..count {
                let len = self.read_long()?;
                self.read_bytes(len, &mut key)?;
                let len = self.read_long()?;
                self.read_bytes(len, &mut value)?;
                match key.as_slice() {
                    b"avro.schema" => schema_text = Some(value.clone()),
                    b"avro.codec" => codec = Some(value.clone()),
                    b"yt.table_index" => table_index = Some(value.clone()),
                    _ => {}
                }
            }
        }
        let mut sync = [0u8; 16];
        self.read_exact(&mut sync)?;
        let compression = match codec {
            None => BlockCodec::Null,
            Some(name) => std::str::from_utf8(&name)
                .ok()
                .and_then(BlockCodec::from_name)
                .ok_or_else(|| {
                    self.fail(
                        start,
                        format!(
                            "unsupported codec {:?} (null, deflate, snappy and zstandard are read)",
                            String::from_utf8_lossy(&name)
                        ),
                    )
                })?,
        };
        let table_index = match table_index {
            None => 0,
            Some(text) => std::str::from_utf8(&text)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or_else(|| self.fail(start, "bad yt.table_index"))?,
        };
        let table = self.schemas.get(table_index).ok_or_else(|| {
            self.fail(
                start,
                format!(
                    "table index {table_index} but the stream has {} tables",
                    self.schemas.len()
                ),
            )
        })?;
        let schema_text =
            schema_text.ok_or_else(|| self.fail(start, "container without avro.schema"))?;
        let schema: Json = serde_json::from_slice(&schema_text)
            .map_err(|e| self.fail(start, format!("avro.schema is not JSON: {e}")))?;
        // Compared by what decides the encoding, so files of other writers (which drop
        // unknown properties and name records their way) are read too.
        let wanted = codec::structural(&schema);
        let codec = [false, true]
            .into_iter()
            .map(|system| RowCodec::compile(table, system))
            .find(|codec| codec::structural(&codec.avro_schema) == wanted)
            .ok_or_else(|| {
                self.fail(
                    start,
                    format!("the file's schema differs from the table's: {schema}"),
                )
            })?;
        self.container = Some(OpenContainer {
            table_index,
            codec,
            sync,
            compression,
        });
        Ok(())
    }

    /// Reads headers and blocks up to a block with rows left; `false` at the end.
    fn fill_block(&mut self) -> Result<bool, FormatError> {
        while self.block_rows_left == 0 {
            if self.container.is_some() && self.block_pos != self.block.len() {
                return Err(self.block_error(self.block_pos as u64, "trailing bytes in a block"));
            }
            match self.peek_header()? {
                None => {
                    if self.container.is_none() {
                        return Err(self.fail(self.offset, "empty input: no container header"));
                    }
                    return Ok(false);
                }
                Some(true) => self.read_header()?,
                Some(false) if self.container.is_none() => {
                    return Err(self.fail(self.offset, "not an Avro object container (bad magic)"))
                }
                Some(false) => {
                    let start = self.offset;
                    let count = self.read_long()?;
                    let size = self.read_long()?;
                    if count < 0 || size < 0 {
                        return Err(
                            self.fail(start, format!("block with {count} rows of {size} bytes"))
                        );
                    }
                    let compression = self
                        .container
                        .as_ref()
                        .map_or(BlockCodec::Null, |c| c.compression);
                    if compression == BlockCodec::Null {
                        let mut block = std::mem::take(&mut self.block);
                        self.read_bytes(size, &mut block)?;
                        self.block = block;
                    } else {
                        let mut packed = std::mem::take(&mut self.packed);
                        self.read_bytes(size, &mut packed)?;
                        let data_offset = self.offset - size as u64;
                        let result = compression.decompress(&packed, &mut self.block);
                        self.packed = packed;
                        result.map_err(|e| {
                            self.fail(data_offset, format!("{} block: {e}", compression.name()))
                        })?;
                    }
                    self.block_offset = self.offset - size as u64;
                    self.block_pos = 0;
                    self.block_compressed = compression != BlockCodec::Null;
                    let mut sync = [0u8; 16];
                    let sync_offset = self.offset;
                    self.read_exact(&mut sync)?;
                    if self.container.as_ref().is_some_and(|c| c.sync != sync) {
                        return Err(self.fail(sync_offset, "sync marker differs from the header's"));
                    }
                    self.block_rows_left = count as u64;
                }
            }
        }
        Ok(true)
    }
}

impl RowSource for ContainerSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.fill_block()? {
            return Ok(None);
        }
        let Some(container) = &self.container else {
            unreachable!("a block is read inside a container")
        };
        let base = if self.block_compressed {
            0
        } else {
            self.block_offset
        };
        let mut reader = Reader::new(&self.block[self.block_pos..], base + self.block_pos as u64);
        let decoded = container.codec.decode(&mut reader);
        let (values, mut position) =
            decoded.map_err(|e| self.block_error(e.offset.saturating_sub(base), e.message))?;
        self.block_pos += reader.pos;
        self.block_rows_left -= 1;
        position.table_index = container.table_index;
        self.row.clear();
        for (value, column) in values.iter().zip(&container.codec.schema.columns) {
            self.row.push_value(value, &column.ty, FORMAT)?;
        }
        self.rows += 1;
        Ok(Some(RowRef {
            position,
            values: self.row.views(),
        }))
    }
}

/// Reads raw Avro datums back to back (no header) of the first table. The input is read
/// whole.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn datum_source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    let table = schemas
        .first()
        .ok_or_else(|| error(None, None, "no table schema given"))?;
    Ok(Box::new(DatumSource {
        input: Some(input),
        bytes: Vec::new(),
        pos: 0,
        codec: RowCodec::new(table),
        rows: 0,
        row: RowBuffer::default(),
    }))
}

/// Writes raw Avro datums back to back (no header) of the first table; positions are
/// not carried.
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn datum_sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    let table = schemas
        .first()
        .ok_or_else(|| error(None, None, "no table schema given"))?;
    Ok(Box::new(DatumSink {
        output,
        codec: RowCodec::new(table),
        buffer: Vec::new(),
        rows: 0,
    }))
}

struct DatumSource {
    input: Option<Box<dyn Read>>,
    bytes: Vec<u8>,
    pos: usize,
    codec: RowCodec,
    rows: u64,
    row: RowBuffer,
}

impl RowSource for DatumSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if let Some(mut input) = self.input.take() {
            input
                .read_to_end(&mut self.bytes)
                .map_err(|e| error(Some(self.bytes.len() as u64), None, format!("read: {e}")))?;
        }
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let mut reader = Reader::new(&self.bytes[self.pos..], self.pos as u64);
        let (values, _) = self
            .codec
            .decode(&mut reader)
            .map_err(|e| error(Some(e.offset), Some(self.rows), e.message))?;
        if reader.pos == 0 {
            // A schema whose datums take no bytes cannot tell rows apart.
            return Err(error(
                Some(self.pos as u64),
                Some(self.rows),
                "datums of this schema take no bytes",
            ));
        }
        self.pos += reader.pos;
        self.row.clear();
        for (value, column) in values.iter().zip(&self.codec.schema.columns) {
            self.row.push_value(value, &column.ty, FORMAT)?;
        }
        self.rows += 1;
        Ok(Some(RowRef {
            position: RowPosition::default(),
            values: self.row.views(),
        }))
    }
}

struct DatumSink {
    output: Box<dyn Write>,
    codec: RowCodec,
    buffer: Vec<u8>,
    rows: u64,
}

impl DatumSink {
    fn write_buffer(&mut self) -> Result<(), FormatError> {
        let result = self.output.write_all(&self.buffer);
        result.map_err(|e| error(None, Some(self.rows), format!("write: {e}")))?;
        self.buffer.clear();
        self.rows += 1;
        Ok(())
    }

    fn check_table(&self, position: &RowPosition) -> Result<(), FormatError> {
        if position.table_index != 0 {
            return Err(error(
                None,
                Some(self.rows),
                "raw Avro datum streams carry one table only",
            ));
        }
        Ok(())
    }
}

impl RowSink for DatumSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.check_table(position)?;
        if values.len() != self.codec.schema.columns.len() {
            return Err(error(
                None,
                Some(self.rows),
                "row length differs from the schema",
            ));
        }
        let owned = values
            .iter()
            .zip(&self.codec.schema.columns)
            .map(|(v, c)| owned_value(v, &c.ty, FORMAT))
            .collect::<Result<Vec<_>, _>>()?;
        self.buffer.clear();
        self.codec.encode_row(&owned, &mut self.buffer)?;
        self.write_buffer()
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.check_table(position)?;
        self.buffer.clear();
        self.codec.encode_row(values, &mut self.buffer)?;
        self.write_buffer()
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.output
            .flush()
            .map_err(|e| error(None, Some(self.rows), format!("write: {e}")))
    }
}
