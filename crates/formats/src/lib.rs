//! shapeshift's formats layer: row codecs over the types layer's value model.
//!
//! Three layers, each importing only those below it (`tests/layout.rs` checks), over leaf
//! helpers all share (`varint`, `read_buffer`, `serde_error`, `byte_items`, `utf8`, ...):
//! - [`table`], the row interface every format implements: traits, positions, the value
//!   convention, the shared row buffer. It names no format; it uses the binary YSON codec
//!   for composite values, as YT's own rows do.
//! - one folder per format, each the same shape: the codec with its own public low-level API
//!   (the format's fast path) and `rows/`, its adapter to the row interface. MessagePack and
//!   CBOR share the self-describing tree codec in `tree/`.
//! - [`registry`], the only module that names every format: names, options, opening a
//!   reader or writer of any format, sniffing a format from its first bytes.

pub mod table;

pub mod arrow;
pub mod avro;
mod byte_items;
pub mod cbor;
mod index_enum;
pub mod json;
pub mod msgpack;
pub mod protobuf;
mod read_buffer;
mod row_size_hint;
mod scalar_range;
mod serde_error;
pub mod skiff;
pub mod thrift;
mod tree;
mod utf8;
mod varint;
pub mod yson;

/// Document codecs (whole nodes, not rows): YAML.
pub mod yaml;

pub mod registry;
