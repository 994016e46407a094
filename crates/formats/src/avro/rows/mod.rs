//! Avro rows through the common interface: object container files ([`source`], [`sink`],
//! [`sink_with_codec`]) and raw datum streams ([`datum_source`], [`datum_sink`]).

mod container;
mod datum;

pub use container::{sink, sink_with_codec, source};
pub use datum::{datum_sink, datum_source, PreparedDatums};
