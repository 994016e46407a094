//! shapeshift's formats layer: row codecs over the types layer's value model.
//!
//! Each format is a module with its own public low-level API (its fast path).

pub mod protobuf;
pub mod protobuf_dynamic;
mod row_bridge;
pub mod skiff;
pub mod table;
pub mod yson;
