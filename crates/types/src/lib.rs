//! shapeshift's types layer: the value and schema model every format maps to.
//!
//! - [`Node`]: the YSON data model (documents, type descriptions, `yson` values).
//! - [`Type`], [`PrimitiveType`]: YT's type_v3, in full; [`Type::to_node`] /
//!   [`Type::from_node`] give its canonical YSON form, [`Type::to_legacy`] /
//!   [`Type::from_legacy`] the legacy `type` + `required` pair, [`Type::validate`] YT's rules.
//! - [`TableSchema`], [`ColumnSchema`]: table schemas, as YSON with
//!   [`TableSchema::to_node`] / [`TableSchema::from_node`].
//! - [`Value`], [`ValueRef`]: owned values and borrowed views of them; [`value_to_node`],
//!   [`value_from_node`] and [`check_value`] relate values, types and YSON nodes.
//! - [`decimal_text_to_binary`], [`decimal_binary_to_text`]: YT's decimal encoding.
//! - `testing` (feature `testing`): proptest strategies for every layer's tests.
//!
//! Every fallible function returns a [`TypeError`] that names the path of the problem.

mod canonical;
mod decimal;
mod error;
mod logical_type;
mod node;
mod schema_yson;
mod table_schema;
mod typed_value;
mod value;

#[cfg(feature = "testing")]
pub mod testing;

pub use canonical::{LegacyType, MAX_DECIMAL_PRECISION, MAX_NAME_LENGTH, MAX_TYPE_DEPTH};
pub use decimal::{check_decimal_binary, decimal_binary_to_text, decimal_text_to_binary};
pub use error::TypeError;
pub use logical_type::{Member, PhysicalType, PrimitiveType, Type};
pub use node::{Bytes, Node, NodeValue};
pub use schema_yson::SchemaForm;
pub use table_schema::{ColumnSchema, SortOrder, TableSchema};
pub use typed_value::{
    check_value, signed_range, unsigned_max, value_from_node, value_to_node, StructForm,
};
pub use value::{Value, ValueRef};
