//! shapeshift's records layer: ArrayRecord-compatible record files.
//!
//! An ArrayRecord file is a Riegeli/records file with an index. Riegeli cuts the file into
//! 64 KiB blocks, each opened by a 24-byte block header, and stores records in chunks: a
//! 40-byte header with two HighwayHash-64 hashes, then data. ArrayRecord writes one simple
//! chunk per `group_size` records, then a footer chunk listing every chunk's offset, then a
//! postscript in the last block pointing at the footer. Record `i` lives in chunk
//! `i / group_size`, so a reader seeks straight to it.
//!
//! This crate reads and writes that format byte-compatibly with array_record 0.8.6 (same
//! chunking, compression framing and padding), verifies every hash and size it reads, and
//! adds one extension that array_record cannot read: a shared zstd dictionary
//! (`zstd_dictionary` option) for small chunks. See `docs/records.md`.
//!
//! ```no_run
//! # fn main() -> shapeshift_records::Result<()> {
//! use shapeshift_records::{Reader, Writer};
//! let mut writer = Writer::create("data.array_record", "group_size:1,zstd:3")?;
//! writer.write(b"hello")?;
//! writer.close()?;
//! let reader = Reader::open("data.array_record")?;
//! assert_eq!(reader.read(0)?, b"hello");
//! # Ok(()) }
//! ```

mod block;
mod brotli_c;
mod compression;
mod error;
mod footer;
mod hash;
mod options;
mod prepared;
mod reader;
mod sequential;
mod simple_chunk;
mod transposed_chunk;
mod varint;
mod writer;

pub use compression::Compression;
pub use error::{Error, Result};
pub use options::{ReaderOptions, WriterOptions, DEFAULT_DICTIONARY_SIZE};
pub use prepared::PreparedBatch;
pub use reader::{is_record_file, FileInfo, Reader, RecordBatch};
pub use sequential::SequentialReader;
pub use writer::Writer;
