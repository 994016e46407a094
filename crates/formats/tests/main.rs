//! The formats crate's integration tests, as one test binary: each file is a module named
//! after the property it checks (compatibility, corruption, round trips, blocks, ...).
//!
//! One binary instead of one per file: every test binary links the whole crate graph
//! (Arrow, prost, ...) with thin LTO. In a fresh-clone `make test` with 44 test binaries
//! (27 of them here), building the tests took 20 minutes of a 27-minute run on 2 cores.
//! Run one file's tests with
//! `cargo test --release -p shapeshift-formats --test formats <module>::`.

mod arrow_blocks;
mod arrow_corruption;
mod arrow_roundtrip;
mod avro_codecs;
mod avro_corruption;
mod avro_roundtrip;
mod cbor_items;
mod protobuf_bench;
mod protobuf_corruption;
mod protobuf_roundtrip;
mod row_blocks;
mod skiff_bench;
mod skiff_blocks;
mod skiff_corruption;
mod skiff_roundtrip;
mod skiff_rows;
mod skiff_schema;
mod skiff_vectors;
mod table_corruption;
mod table_other_columns;
mod table_roundtrip;
mod tree_codec_bench;
mod tree_streaming;
mod yson_corruption;
mod yson_roundtrip;
mod yson_tables;
mod yson_vectors;
