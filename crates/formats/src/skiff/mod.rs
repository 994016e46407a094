//! Skiff, YTsaurus's schema-driven binary row format.
//!
//! # The format
//! A Skiff stream is a sequence of rows. Each row starts with a little-endian u16 table index
//! choosing one of the format's table schemas; the table schema is a `tuple` whose children
//! are the row's fields in order, each encoded by its wire type (see [`WireType`]):
//! fixed-width little-endian numbers, u32-length-prefixed strings and YSON, variants (a tag
//! then one alternative) and repeated variants (tagged items ended by an all-ones tag).
//! Nothing else frames a row: its length follows from the schema and the data.
//! Children named `$key_switch`, `$row_index`, `$range_index`, `$sparse_columns` and
//! `$other_columns` are system fields, not columns.
//!
//! # This module
//! - [`SkiffSchema`] / [`SkiffFormat`]: schemas and the `skiff` format description, to and from
//!   YSON nodes (registry references resolved, cycles and dangling names reported).
//! - [`skiff_schema_for_table`]: the Skiff schema YT uses for a table schema.
//! - [`ArrowScan`]: rows straight into Arrow batches of the columns a query reads.
//! - [`Codec`]: a compiled format; [`Codec::reader`] (zero-copy over a slice),
//!   [`Codec::stream_reader`] (over any `Read`), [`Codec::writer`], [`Codec::encode_row`].
//! - [`RowView`] / [`FieldRef`] / [`LazyField`]: rows and fields read in place;
//!   [`OwnedRow`] / [`SystemFields`]: owned rows; [`RowBuffer`]: a row's bytes edited in place.
//!
//! # Invariants
//! A [`RowView`] is only ever built over bytes the scanner validated against the row's table
//! plan: every length fits, every tag names an alternative, every boolean is 0 or 1. Reading
//! fields out of a view therefore cannot fail and does not re-check. Errors on bad input carry
//! the byte offset (from the start of the input), the row number and the column. No allocation
//! is sized by a length read from the input: strings are borrowed, and the stream reader's
//! buffer grows only by bytes actually read.

mod convert;
mod error;
mod mapping;
mod owned_row;
mod plan;
mod reader;
mod row;
mod scan;
mod schema;
mod wire_type;
mod writer;
mod yson_bridge;

pub(crate) mod rows;

pub use rows::ArrowScan;

pub use error::{SkiffError, SkiffErrorKind};
pub use mapping::{skiff_schema_for_table, skiff_schema_for_type, MappingOptions};
pub use owned_row::{OwnedRow, SystemFields};
pub use plan::{Codec, FieldPlan, TablePlan, ValueShape};
pub use reader::{SliceReader, StreamReader};
pub use row::{FieldRef, LazyField, RepeatedItems, RowBuffer, RowView, TupleFields};
pub use schema::{SkiffFormat, SkiffSchema, MAX_SCHEMA_DEPTH};
pub use wire_type::WireType;
pub use writer::{encode_value, encode_value_ref, RowWriter};
