//! YSON: round trips, corruption, the test vectors, table streams.

mod corruption;
mod roundtrip;
mod tables;
mod vectors;
