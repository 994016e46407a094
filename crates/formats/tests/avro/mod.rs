//! Avro: round trips, corruption, compatibility with apache-avro.

mod compatibility;
mod corruption;
mod roundtrip;
