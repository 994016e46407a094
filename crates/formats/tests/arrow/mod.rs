//! Arrow: round trips against arrow-rs, corruption, blocks.

mod blocks;
mod corruption;
mod roundtrip;
