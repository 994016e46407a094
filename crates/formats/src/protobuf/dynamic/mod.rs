//! Dynamic Protobuf: row messages laid out from any table schema at run time, in YT's
//! protobuf stream framing.
//!
//! YT's "dynamic protobuf" builds message descriptors from the table schema; shapeshift
//! compiles the schema straight to a wire codec instead (a [`RowCodec`]): no descriptor
//! objects, no reflection, one pass per row — what YT's own C++ writer does. The layout is
//! what a `.proto` file written by the mapping rules would give (column `i` is field `i + 1`;
//! [`proto_schema`] prints that file), so any protobuf library reads the rows with it.
//! The mapping of every type, and the presence rules behind the wrapper messages, are in
//! docs/formats/protobuf.md and in `plan.rs`.
//!
//! Framing (length prefixes, control markers for table/range/row index and key switches)
//! is shared with the static codec, see [`crate::protobuf`].

use std::sync::Arc;

use shapeshift_types::{TableSchema, Value};

use crate::protobuf::serde as typed;
use crate::row_size_hint::RowSizeHint;
use crate::serde_error::SerdeError;

use crate::table::row_arena::check_row;
use crate::table::{value_from_ref, FormatError};

pub(crate) mod field_table;
mod plan;
mod proto_text;
mod to_yson;

use field_table::FieldTable;
use plan::{encode_members, Plan};
pub use proto_text::proto_schema;

const FORMAT: &str = "protobuf-dynamic";

/// A table schema compiled to its row message codec.
#[derive(Clone, Debug)]
pub struct RowCodec {
    schema: TableSchema,
    plans: Vec<Plan>,
    fields: FieldTable,
    /// The row message compiled for the serde path.
    row: Arc<typed::Node>,
    /// The serde path's room for the next message.
    size_hint: RowSizeHint,
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
            fields: FieldTable::new(schema),
            row: Arc::new(typed::Node::compile(&schema.row_type())),
            size_hint: RowSizeHint::new(),
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

    /// Appends the row message of `value`, a program's own serde type whose fields are the
    /// table's columns in order (the typed path: no row in between; the mapping in
    /// docs/formats/protobuf.md, "The serde path"). The bytes are [`RowCodec::encode_row`]'s
    /// for the same row.
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
        self.size_hint
            .append(out, |out| typed::to_vec_into(&self.row, value, out))
    }

    /// Reads the row message that is the whole of `message` as a `T` (the typed path).
    /// Messages as protobuf writers write them (fields in number order, numbers packed) are
    /// read in one pass; any other layout protobuf allows is first read with protobuf's
    /// merge rules by [`RowCodec::decode_row`] and written back in number order (also to
    /// tell whether an error of the one pass stands).
    ///
    /// # Errors
    /// Malformed bytes (the offset and what is wrong, as [`RowCodec::decode_row`] says), a
    /// value out of its YT type's range, or one that does not fit `T` (the offset, and the
    /// member path).
    pub fn deserialize<T: ::serde::de::DeserializeOwned>(
        &self,
        message: &[u8],
    ) -> Result<T, SerdeError> {
        self.deserialize_seed(std::marker::PhantomData::<T>, message)
    }

    /// Reads the row message that is the whole of `message` as the value of `seed` (a
    /// caller's own builder, such as the Python face's objects of a class); the seed is
    /// cloned for the second reading a message out of number order takes.
    ///
    /// # Errors
    /// As [`RowCodec::deserialize`].
    pub fn deserialize_seed<S, V>(&self, seed: S, message: &[u8]) -> Result<V, SerdeError>
    where
        S: for<'de> ::serde::de::DeserializeSeed<'de, Value = V> + Clone,
    {
        let first = match typed::from_slice_seed(seed.clone(), &self.row, message) {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        // The one-pass reader may stop early at a message in another field order: a member
        // it took as absent may come later. The row codec's reading settles it.
        let values = self
            .decode_row(message)
            .map_err(|e| SerdeError::new("protobuf", e.offset.map(|o| o as usize), e.message))?;
        let mut ordered = Vec::with_capacity(message.len());
        // The values decode_row gives are checked already: no second `check_row`.
        encode_members(&self.plans, &values, &mut ordered)
            .map_err(|e| SerdeError::new("protobuf", None, e))?;
        if ordered == message && first.format() != typed::IRREGULAR {
            // The message was in order: the error stands, with its offset.
            return Err(first.located("protobuf", None));
        }
        // Offsets into the rewritten message would point nowhere in the input.
        typed::from_slice_seed(seed, &self.row, &ordered).map_err(|e| {
            SerdeError::new(
                "protobuf",
                None,
                format!(
                    "{} (the message's fields read in number order)",
                    e.message()
                ),
            )
            .in_member(e.path())
        })
    }

    /// Decodes one row message into owned values (schema order).
    ///
    /// # Errors
    /// A [`FormatError`] naming the byte offset in `message` for malformed messages or
    /// values that do not fit their column.
    pub fn decode_row(&self, message: &[u8]) -> Result<Vec<Value>, FormatError> {
        let mut refs = Vec::with_capacity(self.schema.columns.len());
        let mut arena = Vec::new();
        let mut state = field_table::ReadState::default();
        self.fields
            .read_row(message, 0, &mut state, &mut arena, &mut refs)
            .map_err(|e| error(Some(e.offset), e.message))?;
        refs.iter()
            .zip(&self.schema.columns)
            .map(|(view, column)| {
                value_from_ref(*view, &column.ty)
                    .map_err(|e| error(None, format!("column {:?}: {e}", column.name)))
            })
            .collect()
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
