//! Avro: round trips, corruption, compatibility with apache-avro, the serde path.

mod compatibility;
mod corruption;
mod roundtrip;
mod serde;
