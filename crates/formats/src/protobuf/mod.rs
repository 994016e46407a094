//! Protobuf rows in YT's protobuf stream framing, one format with two entry points.
//!
//! - **Static** ([`compiled`]): messages compiled at build time with prost; the lab's tables
//!   have them.
//! - **Dynamic** ([`dynamic`]): YT's "dynamic protobuf", message layouts built at run time from
//!   any table schema (column `i` is field `i + 1`); [`dynamic::proto_schema`] prints the
//!   `.proto` file of that layout, so any protobuf library reads the rows with it.
//!
//! Both write the same bytes for the same row. The wire primitives (`wire.rs`) and the
//! framing (`crate::table::framing`) are shared: a u32 LE length then the message; control markers
//! `FFFFFFFF` + u32 table index, `FFFFFFFE` key switch, `FFFFFFFD` + u32 range index,
//! `FFFFFFFC` + u64 row index, `FFFFFFFB` end of stream. `rows/` adapts both to the row
//! interface: errors of the static entry point are labelled `protobuf`, of the dynamic one
//! `protobuf-dynamic`.

pub mod compiled;
pub mod dynamic;
pub mod rows;
mod serde;
pub(crate) mod wire;

pub use compiled::{messages, LabMessage, StaticMessage};
