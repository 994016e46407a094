//! Protobuf (static and dynamic): round trips against prost, corruption, the serde path.

mod corruption;
mod roundtrip;
mod serde;
