//! Each format's serde path, named in one place: a program's own types as one row of a table
//! (a struct whose fields are the columns, in order) and back, with no row of `Value`s in
//! between. The schema formats (JSON, Thrift, Protobuf, Avro) are guided by the table schema
//! and write the bytes their row codec writes for the same row; MessagePack and CBOR are
//! self-describing and take serde's data model as it comes (a struct as an array of its
//! fields in order, what their row writers write), so a caller that needs the columns' YT types checked there
//! checks them itself (the Python face's typed codec does).

use serde::de::DeserializeSeed;
use serde::Serialize;
use shapeshift_types::TableSchema;

use super::FormatKind;
use crate::serde_error::SerdeError;
use crate::table::FormatError;
use crate::thrift::Protocol;
use crate::{avro, cbor, json, msgpack, protobuf, thrift};

/// One format's serde path for one table schema, compiled once.
#[derive(Debug)]
pub enum SerdeRowCodec {
    Json(json::RowCodec),
    Thrift(thrift::RowCodec),
    Protobuf(protobuf::dynamic::RowCodec),
    Avro(avro::RowCodec),
    Msgpack,
    Cbor,
}

impl SerdeRowCodec {
    /// The serde path of `kind` for `schema`'s rows; `None` for a format without one (YSON,
    /// Skiff and Arrow: their rows go through the row interface).
    ///
    /// # Errors
    /// A schema the format cannot hold (Thrift's field count).
    pub fn new(
        kind: FormatKind,
        schema: &TableSchema,
    ) -> Result<Option<SerdeRowCodec>, FormatError> {
        let thrift = |protocol| {
            thrift::RowCodec::new(schema, protocol).map_err(|message| FormatError {
                format: kind.name(),
                offset: None,
                row: None,
                message,
            })
        };
        Ok(Some(match kind {
            FormatKind::Json => SerdeRowCodec::Json(json::RowCodec::new(schema)),
            FormatKind::Thrift => SerdeRowCodec::Thrift(thrift(Protocol::Binary)?),
            FormatKind::ThriftCompact => SerdeRowCodec::Thrift(thrift(Protocol::Compact)?),
            FormatKind::Protobuf | FormatKind::ProtobufDynamic => {
                SerdeRowCodec::Protobuf(protobuf::dynamic::RowCodec::new(schema))
            }
            FormatKind::Avro => SerdeRowCodec::Avro(avro::RowCodec::new(schema)),
            FormatKind::Msgpack => SerdeRowCodec::Msgpack,
            FormatKind::Cbor => SerdeRowCodec::Cbor,
            FormatKind::Yson | FormatKind::YsonText | FormatKind::Skiff | FormatKind::Arrow => {
                return Ok(None)
            }
        }))
    }

    /// Appends the message of one row, `value`, to `out`: for JSON a line, for Thrift,
    /// Protobuf and Avro the struct, message or datum without a frame.
    ///
    /// # Errors
    /// The format's [`SerdeError`]: a value that does not fit its column (schema formats),
    /// or the value's own `Serialize` error. Schema formats leave `out` as it was.
    pub fn serialize<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), SerdeError> {
        match self {
            SerdeRowCodec::Json(codec) => codec.serialize(value, out),
            SerdeRowCodec::Thrift(codec) => codec.serialize(value, out),
            SerdeRowCodec::Protobuf(codec) => codec.serialize(value, out),
            SerdeRowCodec::Avro(codec) => codec.serialize(value, out),
            SerdeRowCodec::Msgpack => msgpack::to_vec_into(value, out),
            SerdeRowCodec::Cbor => cbor::to_vec_into(value, out),
        }
    }

    /// Reads the one row that is the whole of `bytes` as the value of `seed` (cloned for
    /// Protobuf's second reading of a message out of field order).
    ///
    /// # Errors
    /// The format's [`SerdeError`] with the byte offset: malformed or truncated bytes, a value
    /// outside its column's type (schema formats), one the seed refuses, or bytes after it.
    pub fn deserialize_seed<S, V>(&self, seed: S, bytes: &[u8]) -> Result<V, SerdeError>
    where
        S: for<'de> DeserializeSeed<'de, Value = V> + Clone,
    {
        match self {
            SerdeRowCodec::Json(codec) => codec.deserialize_seed(seed, bytes),
            SerdeRowCodec::Thrift(codec) => codec.deserialize_seed(seed, bytes),
            SerdeRowCodec::Protobuf(codec) => codec.deserialize_seed(seed, bytes),
            SerdeRowCodec::Avro(codec) => codec.deserialize_seed(seed, bytes),
            SerdeRowCodec::Msgpack => msgpack::from_slice_seed(seed, bytes),
            SerdeRowCodec::Cbor => cbor::from_slice_seed(seed, bytes),
        }
    }
}
