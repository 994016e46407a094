//! Skiff: round trips, corruption, the test vectors, schemas, rows through the interface, blocks.

mod blocks;
mod corruption;
mod roundtrip;
mod rows;
mod schema;
mod vectors;
