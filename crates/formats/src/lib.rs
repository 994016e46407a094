//! shapeshift's formats layer: row codecs over the types layer's value model.
//!
//! Each format is a module with its own public low-level API (its fast path).

pub mod arrow;
pub mod avro;
pub mod cbor;
pub mod json;
pub mod msgpack;
pub mod protobuf;
pub mod protobuf_dynamic;
mod row_bridge;
pub mod skiff;
mod skiff_rows;
pub mod table;
pub mod yson;
mod yson_rows;
