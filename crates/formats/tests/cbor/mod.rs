//! CBOR: the item reader against the spec and minicbor.

mod items;
