//! Thrift rows: each row a Thrift struct in the binary or compact protocol, in YT's
//! length-prefixed stream framing (the protobuf format's, `crate::table::framing`).
//!
//! The mapping (docs/formats/thrift.md has the table): column `i` is field `i + 1` of the
//! row struct. `int8..int64` are `i8`/`i16`/`i32`/`i64`; unsigned types take the next wider
//! signed type (`uint8` `i16`, `uint16` `i32`, `uint32` `i64`), `uint64` the bit pattern of
//! an `i64`; `float`/`double` `double`; `string`, `uuid`, decimals (YT's binary) and `yson`
//! (binary YSON) `binary`; `utf8`/`json` `string` (the same bytes on the wire); `date` and
//! `date32` `i32`, the other time types `i64`. `optional<T>` is the field left out when
//! null (a one-field wrapper struct `{1: T}` when `T` is nullable); `null`/`void` are never
//! written; `list` is `list`; struct and tuple a struct (member `i` field `i + 1`); a variant
//! a union struct (alternative `i` field `i + 1`); a dict a `list<struct{1: key, 2: value}>`
//! (order and duplicates kept); tags change nothing. List elements and variant payloads
//! cannot be left out, so there a nullable type is the wrapper struct too.
//!
//! - [`wire`]: the protocols' field headers, scalars and collection headers.
//! - [`RowCodec`]: one row struct to and from bytes, the fast path.
//! - `rows/`: the row interface over the framing.

use shapeshift_types::{TableSchema, Type, Value, ValueRef};

use crate::row_size_hint::RowSizeHint;

pub(crate) mod mapping;
pub mod rows;
mod serde;
pub mod wire;

pub use crate::serde_error::SerdeError;
pub use wire::{DecodeError, Protocol};

/// The registry name (and error label) of the binary protocol's rows.
pub const BINARY_FORMAT: &str = "thrift";
/// The registry name (and error label) of the compact protocol's rows.
pub const COMPACT_FORMAT: &str = "thrift-compact";

/// The format name of a protocol's rows.
pub fn format_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Binary => BINARY_FORMAT,
        Protocol::Compact => COMPACT_FORMAT,
    }
}

/// Encodes and decodes the row structs of one table.
#[derive(Clone, Debug)]
pub struct RowCodec {
    protocol: Protocol,
    types: Vec<Type>,
    names: Vec<String>,
    /// The row struct compiled for the serde path.
    row: std::sync::Arc<serde::Node>,
    /// The serde path's room for the next row.
    size_hint: RowSizeHint,
}

impl RowCodec {
    /// The codec of rows of `schema` in `protocol`.
    ///
    /// # Errors
    /// When the table has more columns than Thrift has field ids (32767).
    pub fn new(schema: &TableSchema, protocol: Protocol) -> Result<RowCodec, String> {
        if schema.columns.len() > i16::MAX as usize {
            return Err(format!(
                "{} columns, but a Thrift struct has at most {} fields",
                schema.columns.len(),
                i16::MAX
            ));
        }
        Ok(RowCodec {
            protocol,
            types: schema.columns.iter().map(|c| c.ty.clone()).collect(),
            names: schema.columns.iter().map(|c| c.name.clone()).collect(),
            row: std::sync::Arc::new(serde::Node::compile(&schema.row_type())),
            size_hint: RowSizeHint::new(),
        })
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Appends the row struct of `values` (one per column, each already a value of its
    /// column's type) to `out`.
    ///
    /// # Errors
    /// When a value does not fit its column's Thrift type; `out` may then hold part of it.
    pub fn encode(&self, values: &[Value], out: &mut Vec<u8>) -> Result<(), String> {
        let types: Vec<&Type> = self.types.iter().collect();
        let mut encoder = wire::Encoder {
            protocol: self.protocol,
            out,
        };
        mapping::write_struct(&mut encoder, &types, values)
    }

    /// Appends the row struct of the row interface's borrowed `values` (one per column, each
    /// scalar already checked against its column's type) to `out`; `owned(column, value)`
    /// makes the owned value of a composite (binary YSON) or other value that needs one.
    /// The bytes are [`RowCodec::encode`]'s for the same values.
    ///
    /// # Errors
    /// As [`RowCodec::encode`], and `owned`'s.
    pub fn encode_refs(
        &self,
        values: &[ValueRef<'_>],
        owned: impl Fn(usize, ValueRef<'_>) -> Result<Value, String>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if values.len() != self.types.len() {
            return Err(format!(
                "the schema has {} columns, the row has {} values",
                self.types.len(),
                values.len()
            ));
        }
        let mut encoder = wire::Encoder {
            protocol: self.protocol,
            out,
        };
        mapping::write_row_refs(&mut encoder, &self.types, values, owned)
    }

    /// Appends the row struct of `value`, a program's own serde type whose fields are the
    /// table's columns in order (the typed path: no row in between; the mapping in
    /// docs/formats/thrift.md). The bytes are [`RowCodec::encode`]'s for the same row.
    ///
    /// # Errors
    /// A value that does not fit its column's type (the error names the member path), a
    /// struct with other than its type's member count, or the value's own `Serialize` error;
    /// `out` is then left as it was.
    pub fn serialize<T: ::serde::Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), SerdeError> {
        self.size_hint.append(out, |out| {
            serde::to_vec_into(self.protocol, &self.row, value, out)
        })
    }

    /// Reads the row struct that is the whole of `bytes` as a `T` (the typed path).
    ///
    /// # Errors
    /// Truncated or corrupt bytes, wire types other than the schema's, fields out of id
    /// order, a missing required field, a value out of its YT type's range or that does not
    /// fit `T`, or bytes after the struct; the error gives the byte offset.
    pub fn deserialize<'de, T: ::serde::Deserialize<'de>>(
        &self,
        bytes: &'de [u8],
    ) -> Result<T, SerdeError> {
        self.deserialize_seed(std::marker::PhantomData, bytes)
    }

    /// Reads the row struct that is the whole of `bytes` as the value of `seed` (a caller's
    /// own builder, such as the Python face's objects of a class).
    ///
    /// # Errors
    /// As [`RowCodec::deserialize`].
    pub fn deserialize_seed<'de, S: ::serde::de::DeserializeSeed<'de>>(
        &self,
        seed: S,
        bytes: &'de [u8],
    ) -> Result<S::Value, SerdeError> {
        serde::from_slice_seed(seed, self.protocol, &self.row, bytes)
    }

    /// Reads the row struct that is the whole of `bytes` into `arena` (the row interface's
    /// reading, no owned row in between) when it has the common shape; `None` otherwise,
    /// with the arena partly filled: [`RowCodec::decode`] then reads it or says what is wrong.
    /// `checks` are the columns' compiled checks, in column order.
    pub(crate) fn decode_into(
        &self,
        bytes: &[u8],
        checks: &[crate::table::values::ColumnCheck],
        arena: &mut crate::table::row_arena::RowArena,
    ) -> Option<()> {
        let mut decoder = wire::Decoder::new(self.protocol, bytes);
        let format = format_name(self.protocol);
        mapping::read_row_into(&mut decoder, &self.types, checks, arena, format)
    }

    /// The values of the row struct that is the whole of `bytes`.
    ///
    /// # Errors
    /// A [`DecodeError`] with the offset in `bytes` for truncated or corrupt input, wire
    /// types that differ from the schema's, a missing required field, or bytes after the
    /// struct.
    pub fn decode(&self, bytes: &[u8]) -> Result<Vec<Value>, DecodeError> {
        let types: Vec<&Type> = self.types.iter().collect();
        let mut decoder = wire::Decoder::new(self.protocol, bytes);
        let values = mapping::read_struct(&mut decoder, &types)?;
        if decoder.remaining() > 0 {
            return Err(decoder.error_at(
                decoder.pos,
                format!("{} bytes after the row struct", decoder.remaining()),
            ));
        }
        for ((value, ty), name) in values.iter().zip(&self.types).zip(&self.names) {
            shapeshift_types::check_value(value, ty).map_err(|e| {
                decoder.error_at(
                    0,
                    format!("column \"{name}\": decoded value does not fit: {e}"),
                )
            })?;
        }
        Ok(values)
    }
}
