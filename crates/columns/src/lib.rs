//! shapeshift's columns layer: adaptive per-block encodings for numeric columns
//! ("shape-shifting" columns, after Druid's PR #6016, organised like Vortex/BtrBlocks).
//!
//! A column of `i32`, `i64`, `u32`, `u64`, `f32` or `f64` is cut into blocks of 2^k values
//! (4096..=65536). For every block an encoding-agnostic selection engine (`selection`)
//! computes exact statistics (min, max, runs, delta range, bit-width histogram) and a sample,
//! asks each scheme (`scheme::*`, one file per encoding) for its size, prices decode time from
//! a calibrated table (`cost_table`) and encodes the best candidate for the chosen `Target`.
//!
//! Invariants the whole crate relies on:
//! * every block starts 8-byte aligned in the column and every bit-packed structure starts
//!   8-byte aligned in its block, so packed words are read in place when the buffer is
//!   aligned (and copied once when it is not);
//! * a column is validated before use: header, table and metadata checksum in `Column::open`,
//!   plus each block's XXH3 checksum; decoders still bound-check every length and count
//!   against the block, so even a block with a valid checksum but hostile contents yields an
//!   `Error` with a byte offset, never a panic or an allocation sized by unchecked input;
//! * values are processed as unsigned "lanes" of the same width; decoding writes lanes in
//!   place into the caller's output.
//!
//! The byte layout is documented in `docs/columns.md` and in `layout`.
//!
//! ```
//! use shapeshift_columns::{encode, Column, EncodeOptions, Target};
//! let values: Vec<i64> = (0..100_000).map(|i| 1_700_000_000 + i * 10).collect();
//! let bytes = encode(&values, &EncodeOptions::new(Target::Balanced)).unwrap();
//! let column = Column::open(bytes).unwrap();
//! assert_eq!(column.get::<i64>(12_345).unwrap(), values[12_345]);
//! assert_eq!(column.decode::<i64>().unwrap(), values);
//! ```

#[cfg(target_endian = "big")]
compile_error!(
    "shapeshift-columns reads little-endian words in place; big-endian targets are not supported"
);

mod bytes;
mod cost_table;
mod error;
mod layout;
mod packed;
mod reader;
mod scheme;
mod selection;
mod statistics;
mod value;
mod writer;

pub use error::{Error, Result};
pub use reader::Column;
pub use scheme::{Encoding, ENCODING_COUNT};
pub use selection::Target;
pub use value::{ColumnValue, Lane, ValueType};
pub use writer::{encode, encode_baseline, EncodeOptions, BASELINE_BLOCK_SIZE};
