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

use shapeshift_types::{TableSchema, Value};

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
