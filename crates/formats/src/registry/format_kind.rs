//! The formats reachable through the common interface, and their command-line names.

use std::fmt;

/// A row format the common interface can open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// Binary YSON (reading accepts text too).
    Yson,
    /// Text YSON.
    YsonText,
    Skiff,
    /// Protobuf with messages compiled for the lab's tables.
    Protobuf,
    /// Protobuf with messages built at run time from the table schema.
    ProtobufDynamic,
    /// Arrow IPC stream.
    Arrow,
    /// YT's JSON table format: one object per line.
    Json,
    Msgpack,
    Cbor,
    /// Avro object container file.
    Avro,
    /// Thrift structs in the binary protocol, in YT's protobuf framing.
    Thrift,
    /// Thrift structs in the compact protocol, in YT's protobuf framing.
    ThriftCompact,
}

impl FormatKind {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [FormatKind; 12] = [
        FormatKind::Yson,
        FormatKind::YsonText,
        FormatKind::Skiff,
        FormatKind::Protobuf,
        FormatKind::ProtobufDynamic,
        FormatKind::Arrow,
        FormatKind::Json,
        FormatKind::Msgpack,
        FormatKind::Cbor,
        FormatKind::Avro,
        FormatKind::Thrift,
        FormatKind::ThriftCompact,
    ];

    /// The command-line name (`"yson-text"`, `"protobuf-dynamic"`, ...), also used in errors.
    pub fn name(self) -> &'static str {
        match self {
            FormatKind::Yson => "yson",
            FormatKind::YsonText => "yson-text",
            FormatKind::Skiff => "skiff",
            FormatKind::Protobuf => "protobuf",
            FormatKind::ProtobufDynamic => "protobuf-dynamic",
            FormatKind::Arrow => "arrow",
            FormatKind::Json => "json",
            FormatKind::Msgpack => "msgpack",
            FormatKind::Cbor => "cbor",
            FormatKind::Avro => "avro",
            FormatKind::Thrift => "thrift",
            FormatKind::ThriftCompact => "thrift-compact",
        }
    }

    /// The format named `name` (as [`FormatKind::name`] spells it; `_` works for `-`).
    pub fn from_name(name: &str) -> Option<FormatKind> {
        let name = name.replace('_', "-");
        FormatKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for FormatKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
