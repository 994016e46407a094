//! YAML documents: YSON -> YAML -> YSON round trips, the convention's tags, real configs,
//! bad and hostile input.

mod documents;
mod roundtrip;
