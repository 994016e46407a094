//! MessagePack (and, through the shared tree codec, CBOR): streaming reads through a refilled
//! window give what one-piece reads give; the typed fast path (serde) round-trips, agrees
//! with the row mapping and the crates users pick, and refuses bad input with its offset.

mod serde_format;
mod streaming;
