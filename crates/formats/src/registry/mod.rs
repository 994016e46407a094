//! The registry: the one module that names every format.
//!
//! The row interface (`crate::table`) and the formats below it know nothing of each other's
//! names; here each [`FormatKind`] is tied to its reader and writer ([`open_source`],
//! [`open_sink`]), its settings ([`FormatOptions`]) and its magic bytes ([`sniff`]). Adding a
//! format means a folder of its own and one arm in each match below.

use std::io::{Read, Write};

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::{other_columns, FormatError, RowPosition, RowSink, RowSource, SourceInput};
use crate::thrift::Protocol;

mod format_kind;

pub use format_kind::FormatKind;

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
}

/// [`open_source`] with [`FormatOptions`].
///
/// # Errors
/// As [`open_source`].
pub fn open_source_with(
    kind: FormatKind,
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    options: &FormatOptions,
) -> Result<Box<dyn RowSource>, FormatError> {
    if schemas.is_empty() {
        return Err(FormatError::new(kind.name(), "no table schema given"));
    }
    match kind {
        FormatKind::Yson | FormatKind::YsonText => crate::yson::rows::source(schemas, input),
        FormatKind::Skiff => {
            crate::skiff::rows::source(schemas, input, options.skiff_system_columns)
        }
        FormatKind::Json => crate::json::rows::source(schemas, input),
        FormatKind::Msgpack => crate::msgpack::rows::source(schemas, input),
        FormatKind::Cbor => crate::cbor::rows::source(schemas, input),
        FormatKind::Protobuf => crate::protobuf::rows::source(schemas, input),
        FormatKind::ProtobufDynamic => crate::protobuf::rows::dynamic_source(schemas, input),
        FormatKind::Arrow => crate::arrow::rows::source(schemas, input),
        FormatKind::Avro => crate::avro::rows::source(schemas, input),
        FormatKind::Thrift => crate::thrift::rows::source(schemas, input, Protocol::Binary),
        FormatKind::ThriftCompact => crate::thrift::rows::source(schemas, input, Protocol::Compact),
    }
}

/// [`open_sink`] with [`FormatOptions`].
///
/// # Errors
/// As [`open_sink`].
pub fn open_sink_with(
    kind: FormatKind,
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    options: &FormatOptions,
) -> Result<Box<dyn RowSink>, FormatError> {
    if schemas.is_empty() {
        return Err(FormatError::new(kind.name(), "no table schema given"));
    }
    match kind {
        FormatKind::Yson => crate::yson::rows::sink(schemas, output, false),
        FormatKind::YsonText => crate::yson::rows::sink(schemas, output, true),
        FormatKind::Skiff => {
            crate::skiff::rows::sink(schemas, output, options.skiff_system_columns)
        }
        FormatKind::Json => crate::json::rows::sink(schemas, output),
        FormatKind::Msgpack => crate::msgpack::rows::sink(schemas, output),
        FormatKind::Cbor => crate::cbor::rows::sink(schemas, output),
        FormatKind::Protobuf => {
            schema_columns_only(kind, crate::protobuf::rows::sink(schemas, output))
        }
        FormatKind::ProtobufDynamic => {
            schema_columns_only(kind, crate::protobuf::rows::dynamic_sink(schemas, output))
        }
        FormatKind::Arrow => schema_columns_only(kind, crate::arrow::rows::sink(schemas, output)),
        FormatKind::Avro => schema_columns_only(
            kind,
            crate::avro::rows::sink_with_codec(schemas, output, options.avro_codec),
        ),
        FormatKind::Thrift => schema_columns_only(
            kind,
            crate::thrift::rows::sink(schemas, output, Protocol::Binary),
        ),
        FormatKind::ThriftCompact => schema_columns_only(
            kind,
            crate::thrift::rows::sink(schemas, output, Protocol::Compact),
        ),
    }
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

/// What [`PreparedFormat`] keeps of a format's compile.
#[derive(Clone)]
enum Compiled {
    Tree(crate::tree::rows::TreeTables),
    Protobuf(crate::protobuf::rows::FieldTables),
    Thrift(std::sync::Arc<crate::thrift::rows::ThriftTables>),
    Yson(crate::yson::rows::YsonTables),
    AtOpen,
}

impl PreparedFormat {
    /// Compiles `schemas` for `kind`.
    ///
    /// # Errors
    /// A [`FormatError`] when `schemas` is empty, or (Thrift) a schema cannot be expressed
    /// in the format.
    pub fn new(
        kind: FormatKind,
        schemas: Vec<TableSchema>,
        options: FormatOptions,
    ) -> Result<PreparedFormat, FormatError> {
        if schemas.is_empty() {
            return Err(FormatError::new(kind.name(), "no table schema given"));
        }
        let compiled = match kind {
            FormatKind::Msgpack | FormatKind::Cbor => {
                Compiled::Tree(crate::tree::rows::compile_tables(&schemas))
            }
            FormatKind::Protobuf | FormatKind::ProtobufDynamic => {
                let dynamic = kind == FormatKind::ProtobufDynamic;
                crate::protobuf::rows::compile(&schemas, dynamic)
                    .map_or(Compiled::AtOpen, Compiled::Protobuf)
            }
            FormatKind::Thrift => {
                Compiled::Thrift(crate::thrift::rows::compile(&schemas, Protocol::Binary)?)
            }
            FormatKind::ThriftCompact => {
                Compiled::Thrift(crate::thrift::rows::compile(&schemas, Protocol::Compact)?)
            }
            FormatKind::Yson | FormatKind::YsonText => {
                Compiled::Yson(crate::yson::rows::compile(&schemas))
            }
            _ => Compiled::AtOpen,
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

    /// A reader over `input`, as [`open_source_with`]: a stream (`Box<dyn Read>`), or bytes
    /// in memory (`Vec<u8>`), which MessagePack, CBOR, Protobuf and Thrift read in place.
    ///
    /// # Errors
    /// As [`open_source_with`].
    pub fn open_source(
        &self,
        input: impl Into<SourceInput>,
    ) -> Result<Box<dyn RowSource>, FormatError> {
        let input = input.into();
        let dynamic = self.kind == FormatKind::ProtobufDynamic;
        match (&self.compiled, self.kind) {
            (Compiled::Tree(tables), FormatKind::Msgpack) => {
                crate::msgpack::rows::source_over(tables.clone(), input)
            }
            (Compiled::Tree(tables), FormatKind::Cbor) => {
                crate::cbor::rows::source_over(tables.clone(), input)
            }
            (Compiled::Protobuf(tables), _) => Ok(crate::protobuf::rows::source_over(
                tables.clone(),
                input,
                dynamic,
            )),
            (Compiled::Thrift(tables), _) => {
                Ok(crate::thrift::rows::source_over(tables.clone(), input))
            }
            (Compiled::Yson(tables), _) => Ok(crate::yson::rows::source_over(
                tables.clone(),
                input.into_reader(),
            )),
            _ => open_source_with(self.kind, &self.schemas, input.into_reader(), &self.options),
        }
    }

    /// A writer into `output`, as [`open_sink_with`].
    ///
    /// # Errors
    /// As [`open_sink_with`].
    pub fn open_sink(&self, output: Box<dyn Write>) -> Result<Box<dyn RowSink>, FormatError> {
        let dynamic = self.kind == FormatKind::ProtobufDynamic;
        match (&self.compiled, self.kind) {
            (Compiled::Tree(tables), FormatKind::Msgpack) => {
                crate::msgpack::rows::sink_over(tables.clone(), output)
            }
            (Compiled::Tree(tables), FormatKind::Cbor) => {
                crate::cbor::rows::sink_over(tables.clone(), output)
            }
            (Compiled::Protobuf(tables), _) => schema_columns_only(
                self.kind,
                Ok(crate::protobuf::rows::sink_over(
                    tables.clone(),
                    output,
                    dynamic,
                )),
            ),
            (Compiled::Thrift(tables), _) => schema_columns_only(
                self.kind,
                Ok(crate::thrift::rows::sink_over(tables.clone(), output)),
            ),
            (Compiled::Yson(tables), kind) => Ok(crate::yson::rows::sink_over(
                tables.clone(),
                output,
                kind == FormatKind::YsonText,
            )),
            _ => open_sink_with(self.kind, &self.schemas, output, &self.options),
        }
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
