//! The registry: the one module that names every format.
//!
//! The row interface (`crate::table`) and the formats below it know nothing of each other's
//! names; here each [`FormatKind`] is tied to its reader and writer ([`open_source`],
//! [`open_sink`]), its settings ([`FormatOptions`]) and its magic bytes ([`sniff`]), its serde path on a program's own types ([`SerdeRowCodec`]). Adding a
//! format means a folder of its own and one arm in each match below.

use std::io::{Read, Write};

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::{other_columns, FormatError, RowPosition, RowSink, RowSource, SourceInput};
use crate::thrift::Protocol;

mod format_kind;
mod serde_path;

pub use crate::serde_error::SerdeError;
pub use format_kind::FormatKind;
pub use serde_path::SerdeRowCodec;

/// Opens a reader of `kind` over `input`, whose rows belong to `schemas` (table index =
/// position in `schemas`).
///
/// # Errors
/// A [`FormatError`] when `schemas` is empty, a schema cannot be expressed in the format, or
/// the format's header (Arrow, Avro) cannot be read.
pub fn open_source(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    open_source_with(kind, schemas, input, &FormatOptions::default())
}

/// Opens a writer of `kind` into `output` for rows of `schemas`.
///
/// # Errors
/// A [`FormatError`] when `schemas` is empty or a schema cannot be expressed in the format.
pub fn open_sink(
    kind: FormatKind,
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    open_sink_with(kind, schemas, output, &FormatOptions::default())
}

/// Format settings the common constructors do not guess.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatOptions {
    /// Skiff: the rows carry the `$key_switch`, `$row_index` and `$range_index` system
    /// fields (both ends must agree; YT sets them per job).
    pub skiff_system_columns: bool,
    /// Avro: how object container blocks are compressed when writing (readers take the
    /// codec from each container's header).
    pub avro_codec: crate::avro::BlockCodec,
    /// Avro: raw datums of the first table back to back, no container header (both ends hold
    /// the schema: Avro's RPC, a schema registry's messages, `fastavro.schemaless_writer`);
    /// positions are not carried and other tables are refused.
    pub avro_datums: bool,
}

/// [`open_source`] with [`FormatOptions`]: the format prepared for this one stream.
///
/// # Errors
/// As [`open_source`].
pub fn open_source_with(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    options: &FormatOptions,
) -> Result<Box<dyn RowSource>, FormatError> {
    PreparedFormat::new(kind, schemas.to_vec(), *options)?.open_source(input)
}

/// [`open_sink`] with [`FormatOptions`]: the format prepared for this one stream.
///
/// # Errors
/// As [`open_sink`].
pub fn open_sink_with(
    kind: FormatKind,
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    options: &FormatOptions,
) -> Result<Box<dyn RowSink>, FormatError> {
    PreparedFormat::new(kind, schemas.to_vec(), *options)?.open_sink(output)
}

/// A format with its table schemas compiled once, for opening many sources and sinks over
/// them: a caller sending one small message per stream (Python's `Codec`, a server answering
/// requests) pays the compile once instead of per message. Formats with nothing worth
/// keeping compile at each open, as [`open_source_with`] and [`open_sink_with`] do; either
/// way a stream opened here reads and writes the same bytes.
#[derive(Clone)]
pub struct PreparedFormat {
    kind: FormatKind,
    schemas: Vec<TableSchema>,
    options: FormatOptions,
    compiled: Compiled,
}

/// What [`PreparedFormat`] keeps of a format's compile, one variant per way of opening.
#[derive(Clone)]
enum Compiled {
    Yson {
        tables: crate::yson::rows::YsonTables,
        text: bool,
    },
    Msgpack(crate::tree::rows::TreeTables),
    Cbor(crate::tree::rows::TreeTables),
    /// Protobuf's dynamic codec; `dynamic`: errors name `protobuf-dynamic`, else `protobuf`.
    ProtobufFields {
        tables: crate::protobuf::rows::FieldTables,
        dynamic: bool,
    },
    /// Both protocols (the tables know theirs).
    Thrift(std::sync::Arc<crate::thrift::rows::ThriftTables>),
    Json(crate::json::rows::JsonTables),
    // Compiled at each open: little to keep, or kept by their own sources and sinks.
    ProtobufStatic,
    Skiff,
    Arrow,
    Avro,
    AvroDatums(crate::avro::rows::PreparedDatums),
}

impl PreparedFormat {
    /// Compiles `schemas` for `kind`.
    ///
    /// # Errors
    /// A [`FormatError`] when `schemas` is empty, (Thrift) a schema cannot be expressed in
    /// the format, or `avro_datums` is asked of another format, with a block codec, or for
    /// more than one table.
    pub fn new(
        kind: FormatKind,
        schemas: Vec<TableSchema>,
        options: FormatOptions,
    ) -> Result<PreparedFormat, FormatError> {
        if schemas.is_empty() {
            return Err(FormatError::new(kind.name(), "no table schema given"));
        }
        if options.avro_datums {
            // Said rather than ignored: each would drop something the caller asked for.
            let refusal = if kind != FormatKind::Avro {
                Some("raw datums (avro_datums) are an Avro form")
            } else if options.avro_codec != crate::avro::BlockCodec::Null {
                Some("raw datums (avro_datums) are not compressed: no block codec applies")
            } else if schemas.len() > 1 {
                Some("raw datums (avro_datums) carry one table: give one schema")
            } else {
                None
            };
            if let Some(message) = refusal {
                return Err(FormatError::new(kind.name(), message));
            }
        }
        let compiled = match kind {
            FormatKind::Yson | FormatKind::YsonText => Compiled::Yson {
                tables: crate::yson::rows::compile(&schemas),
                text: kind == FormatKind::YsonText,
            },
            FormatKind::Msgpack => Compiled::Msgpack(crate::tree::rows::compile_tables(&schemas)),
            FormatKind::Cbor => Compiled::Cbor(crate::tree::rows::compile_tables(&schemas)),
            FormatKind::Protobuf | FormatKind::ProtobufDynamic => {
                let dynamic = kind == FormatKind::ProtobufDynamic;
                match crate::protobuf::rows::compile(&schemas, dynamic) {
                    Some(tables) => Compiled::ProtobufFields { tables, dynamic },
                    None => Compiled::ProtobufStatic,
                }
            }
            FormatKind::Thrift => {
                Compiled::Thrift(crate::thrift::rows::compile(&schemas, Protocol::Binary)?)
            }
            FormatKind::ThriftCompact => {
                Compiled::Thrift(crate::thrift::rows::compile(&schemas, Protocol::Compact)?)
            }
            FormatKind::Skiff => Compiled::Skiff,
            FormatKind::Json => Compiled::Json(crate::json::rows::JsonTables::compile(&schemas)),
            FormatKind::Arrow => Compiled::Arrow,
            FormatKind::Avro if options.avro_datums => {
                Compiled::AvroDatums(crate::avro::rows::PreparedDatums::new(&schemas)?)
            }
            FormatKind::Avro => Compiled::Avro,
        };
        Ok(PreparedFormat {
            kind,
            schemas,
            options,
            compiled,
        })
    }

    pub fn kind(&self) -> FormatKind {
        self.kind
    }

    pub fn schemas(&self) -> &[TableSchema] {
        &self.schemas
    }

    /// A reader over `input`: a stream (`Box<dyn Read>`), or bytes in memory (`Vec<u8>`),
    /// which MessagePack, CBOR, Protobuf and Thrift read in place.
    ///
    /// # Errors
    /// A [`FormatError`] when the format's header (Arrow, Avro) cannot be read.
    pub fn open_source(
        &self,
        input: impl Into<SourceInput>,
    ) -> Result<Box<dyn RowSource>, FormatError> {
        let input = input.into();
        let schemas = &self.schemas[..];
        match &self.compiled {
            Compiled::Yson { tables, .. } => Ok(crate::yson::rows::source_over(
                tables.clone(),
                input.into_reader(),
            )),
            Compiled::Msgpack(tables) => crate::msgpack::rows::source_over(tables.clone(), input),
            Compiled::Cbor(tables) => crate::cbor::rows::source_over(tables.clone(), input),
            Compiled::ProtobufFields { tables, dynamic } => Ok(crate::protobuf::rows::source_over(
                tables.clone(),
                input,
                *dynamic,
            )),
            Compiled::Thrift(tables) => Ok(crate::thrift::rows::source_over(tables.clone(), input)),
            Compiled::ProtobufStatic => crate::protobuf::rows::source(schemas, input.into_reader()),
            Compiled::Skiff => crate::skiff::rows::source(
                schemas,
                input.into_reader(),
                self.options.skiff_system_columns,
            ),
            Compiled::Json(tables) => tables.source(input.into_reader()),
            Compiled::Arrow => crate::arrow::rows::source(schemas, input.into_reader()),
            Compiled::Avro => crate::avro::rows::source(schemas, input.into_reader()),
            Compiled::AvroDatums(datums) => Ok(datums.open_source(input)),
        }
    }

    /// A writer into `output`.
    ///
    /// # Errors
    /// None today for the formats in the registry; kept fallible for the constructor shape.
    pub fn open_sink(&self, output: Box<dyn Write>) -> Result<Box<dyn RowSink>, FormatError> {
        let schemas = &self.schemas[..];
        let sink = match &self.compiled {
            Compiled::Yson { tables, text } => {
                return Ok(crate::yson::rows::sink_over(tables.clone(), output, *text))
            }
            Compiled::Msgpack(tables) => {
                return crate::msgpack::rows::sink_over(tables.clone(), output)
            }
            Compiled::Cbor(tables) => return crate::cbor::rows::sink_over(tables.clone(), output),
            Compiled::Skiff => {
                return crate::skiff::rows::sink(schemas, output, self.options.skiff_system_columns)
            }
            Compiled::Json(tables) => return Ok(tables.sink(output)),
            // The formats below hold only the schema's columns.
            Compiled::ProtobufFields { tables, dynamic } => Ok(crate::protobuf::rows::sink_over(
                tables.clone(),
                output,
                *dynamic,
            )),
            Compiled::Thrift(tables) => Ok(crate::thrift::rows::sink_over(tables.clone(), output)),
            Compiled::ProtobufStatic => crate::protobuf::rows::sink(schemas, output),
            Compiled::Arrow => crate::arrow::rows::sink(schemas, output),
            Compiled::Avro => {
                crate::avro::rows::sink_with_codec(schemas, output, self.options.avro_codec)
            }
            Compiled::AvroDatums(datums) => Ok(datums.open_sink(output)),
        };
        schema_columns_only(self.kind, sink)
    }
}

/// A sink of a format whose rows hold only the schema's columns: other columns are refused
/// with an error naming the format (the trait's default can only say "this format").
fn schema_columns_only(
    kind: FormatKind,
    sink: Result<Box<dyn RowSink>, FormatError>,
) -> Result<Box<dyn RowSink>, FormatError> {
    struct SchemaColumnsOnly {
        kind: FormatKind,
        inner: Box<dyn RowSink>,
    }
    impl RowSink for SchemaColumnsOnly {
        #[inline]
        fn write_row(
            &mut self,
            position: &RowPosition,
            values: &[ValueRef<'_>],
        ) -> Result<(), FormatError> {
            self.inner.write_row(position, values)
        }
        fn write_row_with_other_columns(
            &mut self,
            position: &RowPosition,
            values: &[ValueRef<'_>],
            other_columns: Option<&[u8]>,
        ) -> Result<(), FormatError> {
            if let Some(bytes) = other_columns {
                other_columns::refuse(self.kind.name(), bytes)?;
            }
            self.inner.write_row(position, values)
        }
        #[inline]
        fn write_owned_row(
            &mut self,
            position: &RowPosition,
            values: &[Value],
        ) -> Result<(), FormatError> {
            self.inner.write_owned_row(position, values)
        }
        fn finish(&mut self) -> Result<(), FormatError> {
            self.inner.finish()
        }
    }
    Ok(Box::new(SchemaColumnsOnly { kind, inner: sink? }))
}

/// The formats a stream may be in, most likely first, judged from its first bytes (magic
/// numbers, the first structural byte); every format comes last in a fixed order, so a caller
/// can try each in turn.
pub fn sniff(bytes: &[u8]) -> Vec<FormatKind> {
    let first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
    let mut candidates = Vec::new();
    if bytes.starts_with(b"Obj\x01") {
        candidates.push(FormatKind::Avro);
    }
    if bytes.starts_with(&[0xff, 0xff, 0xff, 0xff]) || bytes.starts_with(b"ARROW1") {
        candidates.push(FormatKind::Arrow);
    }
    match first {
        Some(b'{') => {
            let line_end = bytes
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(bytes.len());
            if serde_json::from_slice::<serde_json::Value>(&bytes[..line_end]).is_ok() {
                candidates.push(FormatKind::Json);
            }
            if bytes.iter().take(4096).any(|&b| b < 0x09) {
                candidates.push(FormatKind::Yson);
            } else {
                candidates.push(FormatKind::YsonText);
            }
        }
        Some(b'<') => candidates.push(FormatKind::Yson),
        // MessagePack rows are arrays (0x90..0x9f, 0xdc, 0xdd), control records 1-maps (0x81);
        // CBOR rows are arrays (0x80..0x9b: from 0x90 the same bytes, so MessagePack is tried
        // first and CBOR second), control records 1-maps (0xa1).
        Some(0x81 | 0x90..=0x9f | 0xdc | 0xdd) => {
            candidates.extend([FormatKind::Msgpack, FormatKind::Cbor]);
        }
        Some(0x80 | 0x82..=0x8f | 0xa1) => {
            candidates.extend([FormatKind::Cbor, FormatKind::Msgpack])
        }
        _ => {}
    }
    for kind in [
        FormatKind::Msgpack,
        FormatKind::Cbor,
        FormatKind::Skiff,
        FormatKind::Protobuf,
        FormatKind::Json,
        FormatKind::Yson,
        FormatKind::Arrow,
        FormatKind::Avro,
        FormatKind::Thrift,
        FormatKind::ThriftCompact,
    ] {
        if !candidates.contains(&kind) {
            candidates.push(kind);
        }
    }
    candidates
}
