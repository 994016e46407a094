//! The peer libraries used directly, on the same work as the common interface: arrow-rs
//! (builders, `StreamWriter`, `StreamReader`) and apache-avro (`Writer`, `Reader` of
//! `apache_avro::types::Value`). These are the "own API" arms of the format benchmark for
//! Arrow and Avro (`format_bench`), and the reference the interface is held to; prost and
//! prost-reflect are the arms for the two Protobuf entry points ([`protobuf`]).
//!
//! The same work on both sides:
//! - *write*: from the table's owned rows to the format's bytes in memory. arrow-rs: one
//!   typed builder per column (resolved once), rows appended value by value, a
//!   `RecordBatch` cut every [`DEFAULT_BATCH_ROWS`] rows, `StreamWriter`; a string column is
//!   built with a dictionary builder when the interface's rule picks a dictionary (at most a
//!   quarter of the first 1024 values distinct), so both write the same stream.
//!   apache-avro: each row converted to an `apache_avro::types::Value` record and appended to
//!   a `Writer` of the interface's Avro schema.
//! - *read*: from the bytes to every value of every row, touched (the lab's checksum).
//!   arrow-rs: `StreamReader` batches, each column downcast once per batch, then row by row,
//!   column by column (the row-at-a-time work the interface does); the column-at-a-time
//!   variant ([`arrow_read_columnwise`]) is a reference figure. A composite value (list,
//!   struct, dict) counts as one composite in the checksum, as through the interface, and
//!   its leaves are read too (into a side sum), so it is fully decoded on both sides.
//!   apache-avro: `Reader` values, touched the same way.

pub mod arrow;
pub mod avro;
pub mod protobuf;

pub use arrow::{
    arrow_read, arrow_read_columnwise, arrow_read_spelling_composites, arrow_supported, arrow_write,
};
pub use avro::{avro_read, avro_write};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasets::{Cardinality, Dataset};
    use crate::peer_baselines::arrow::arrow_read_columnwise;

    #[test]
    fn arrow_baselines_read_what_they_write_row_and_column_wise_alike() {
        for dataset in Dataset::ALL {
            let schema = dataset.schema();
            let rows = dataset.rows(300, 3, Cardinality::High);
            assert!(arrow_supported(&schema), "{}", dataset.name());
            let bytes = arrow_write(&schema, &rows).unwrap();
            let by_rows = arrow_read(&bytes).unwrap();
            assert_eq!(by_rows.0, rows.len());
            assert_eq!(arrow_read_columnwise(&bytes).unwrap(), by_rows);
            assert_eq!(arrow_read_spelling_composites(&bytes).unwrap(), by_rows);
            let avro = avro_write(&schema, &rows).unwrap();
            assert_eq!(avro_read(&avro).unwrap(), by_rows, "{}", dataset.name());
        }
    }
}
