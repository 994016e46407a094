//! The MessagePack/CBOR tree codec: streaming reads through a refilled window.

mod streaming;
