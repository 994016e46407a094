//! The formats crate's integration tests, as one test binary: one folder per format
//! (and `table/` for the row interface across formats), one file per property it checks
//! (roundtrip, corruption, vectors or compatibility, blocks, ...).
//!
//! One binary instead of one per file: every test binary links the whole crate graph
//! (Arrow, prost, ...) with thin LTO. In a fresh-clone `make test` with 44 test binaries
//! (27 of them here), building the tests took 20 minutes of a 27-minute run on 2 cores.
//! Run one file's tests with
//! `cargo test --release -p shapeshift-formats --test formats <format>::<property>::`.
//! Throughput figures are not taken here: `shapeshift bench` (crates/lab) measures every
//! format against its peers in the same run.

mod arrow;
mod avro;
mod cbor;
mod json;
mod layout;
mod msgpack;
mod protobuf;
mod serde_record;
mod skiff;
mod support;
mod table;
mod thrift;
mod yaml;
mod yson;
