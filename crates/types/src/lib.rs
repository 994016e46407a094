//! shapeshift's types layer: the value and schema model every format maps to.
//!
//! - [`Node`]: the YSON data model (documents, type descriptions, `yson` values).
//! - [`Type`], [`PrimitiveType`]: YT's type_v3, in full.
//! - [`TableSchema`], [`ColumnSchema`]: table schemas.
//! - [`Value`], [`ValueRef`]: owned values and borrowed views of them.

mod logical_type;
mod node;
mod table_schema;
mod value;

pub use logical_type::{Member, PhysicalType, PrimitiveType, Type};
pub use node::{Bytes, Node, NodeValue};
pub use table_schema::{ColumnSchema, SortOrder, TableSchema};
pub use value::{Value, ValueRef};
