//! Protobuf (static and dynamic): round trips against prost, corruption.

mod corruption;
mod roundtrip;
