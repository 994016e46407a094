//! JSON: the spelling of YT's `json` format, exact bytes per convention.

mod serde;
mod vectors;
