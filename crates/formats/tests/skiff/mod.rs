//! Skiff: the scan into Arrow, round trips, corruption, the test vectors, schemas, rows through the interface, blocks.

mod arrow_scan;
mod blocks;
mod corruption;
mod roundtrip;
mod rows;
mod schema;
mod vectors;
