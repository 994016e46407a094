//! MessagePack (and, through the shared tree codec, CBOR): streaming reads through a refilled
//! window give what one-piece reads give.

mod streaming;
