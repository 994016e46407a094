//! ArrayRecord's index: the footer chunk and the postscript (messages of array_record's
//! `layout.proto`, defined here with prost derive).
//!
//! The footer chunk is a simple chunk whose first record is a `RiegeliFooterMetadata` and
//! whose following records are one `ArrayRecordFooter` per data chunk. The postscript
//! chunk (uncompressed, at the start of the file's last 64 KiB block) holds the same
//! `RiegeliPostscript` three times: the footer's offset and ArrayRecord's magic number.

/// ArrayRecord's magic number in the postscript.
pub(crate) const ARRAY_RECORD_MAGIC: u64 = 0x7193_0e70_4fda_e05e;
/// The only ArrayRecord layout version.
pub(crate) const ARRAY_RECORD_VERSION: u32 = 1;

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ArrayRecordFooter {
    #[prost(uint64, optional, tag = "1")]
    pub chunk_offset: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub decoded_data_size: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub num_records: Option<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ArrayRecordMetadata {
    #[prost(uint32, optional, tag = "1")]
    pub version: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub num_chunks: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub num_records: Option<u64>,
    #[prost(string, optional, tag = "4")]
    pub writer_options: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RiegeliFooterMetadata {
    #[prost(message, optional, tag = "1")]
    pub array_record_metadata: Option<ArrayRecordMetadata>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RiegeliPostscript {
    #[prost(uint64, optional, tag = "1")]
    pub footer_offset: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub magic: Option<u64>,
}
