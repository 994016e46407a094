//! Arrow: round trips against arrow-rs, corruption, blocks, projected reads.

mod blocks;
mod corruption;
mod projected;
mod roundtrip;
