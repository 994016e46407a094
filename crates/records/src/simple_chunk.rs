//! Simple chunks ('r'): the record sizes and the concatenated record values, each in one
//! (possibly compressed) buffer.
//!
//! Layout of the chunk data: compression byte, `varint64(len(sizes buffer))`, the sizes
//! buffer (num_records varint64s once decompressed), the values buffer (decoded_data_size
//! bytes once decompressed). Decoding checks that the sizes add up to decoded_data_size and
//! that each buffer decodes to exactly its declared length, so a chunk that passed its hash
//! but disagrees with itself is rejected instead of producing shifted records.

use std::ops::Range;

use crate::compression::{
    decompress, decompress_payload, decompress_payload_to_vec, plausible_size, Compressor,
    Dictionary, ZSTD_WITH_DICTIONARY,
};
use crate::error::Malformed;
use crate::varint::{get_varint, put_varint};

/// Encodes records given as concatenated `values` and their `sizes` into chunk data.
pub(crate) fn encode(values: &[u8], sizes: &[u64], compressor: &Compressor) -> Vec<u8> {
    let mut size_bytes = Vec::with_capacity(sizes.len() * 2);
    for &size in sizes {
        put_varint(&mut size_bytes, size);
    }
    let compressed_sizes = if compressor.dictionary.is_some() {
        // The dictionary extension keeps sizes raw: a zstd frame around one or two bytes
        // would cost more than it saves.
        size_bytes
    } else {
        let mut compressed = Vec::with_capacity(size_bytes.len() + 16);
        compressor.compress_into(&size_bytes, &mut compressed);
        compressed
    };
    let mut out = Vec::with_capacity(values.len() / 2 + compressed_sizes.len() + 32);
    out.push(compressor.type_byte());
    put_varint(&mut out, compressed_sizes.len() as u64);
    out.extend_from_slice(&compressed_sizes);
    compressor.compress_into(values, &mut out);
    out
}

/// Sizes buffers up to this many bytes decode without an allocation.
const SMALL_SIZES: usize = 64;

/// Where the decoded values of a chunk live.
pub(crate) enum DecodedValues {
    /// Uncompressed: this range of the chunk data.
    InData(Range<usize>),
    /// Decompressed into a buffer of its own.
    Owned(Vec<u8>),
}

/// A decoded simple chunk: values and the end offset of every record in them.
pub(crate) struct DecodedSimpleChunk {
    pub values: DecodedValues,
    pub ends: Vec<u64>,
}

/// The sections of simple chunk data.
struct Sections<'d> {
    compression_byte: u8,
    sizes: &'d [u8],
    sizes_offset: u64,
    values_start: usize,
    values_offset: u64,
}

fn sections(data: &[u8], offset: u64) -> Result<Sections<'_>, Malformed> {
    let Some((&compression_byte, rest)) = data.split_first() else {
        return Err(Malformed::new(
            offset,
            "simple chunk has no compression byte",
        ));
    };
    let (sizes_len, prefix) = get_varint(rest, offset + 1)?;
    let sizes_start = 1 + prefix;
    if sizes_len > (data.len() - sizes_start) as u64 {
        return Err(Malformed::new(
            offset + 1,
            format!(
                "sizes buffer of {sizes_len} bytes overruns the chunk data ({} bytes)",
                data.len()
            ),
        ));
    }
    let sizes_end = sizes_start + sizes_len as usize;
    Ok(Sections {
        compression_byte,
        sizes: &data[sizes_start..sizes_end],
        sizes_offset: offset + sizes_start as u64,
        values_start: sizes_end,
        values_offset: offset + sizes_end as u64,
    })
}

/// Decodes the sizes section into record end offsets, checking them against the header.
fn record_ends(
    sections: &Sections<'_>,
    num_records: u64,
    decoded_data_size: u64,
    dictionary: Option<&Dictionary>,
) -> Result<Vec<u64>, Malformed> {
    let sizes_offset = sections.sizes_offset;
    // One-record chunks have a sizes buffer of a few bytes: decode those on the stack.
    let mut small = [0u8; SMALL_SIZES];
    let size_bytes: std::borrow::Cow<'_, [u8]> =
        if sections.compression_byte == 0 || sections.compression_byte == ZSTD_WITH_DICTIONARY {
            std::borrow::Cow::Borrowed(sections.sizes)
        } else {
            let (declared, prefix) = get_varint(sections.sizes, sizes_offset)?;
            if declared <= SMALL_SIZES as u64 {
                let out = &mut small[..declared as usize];
                decompress_payload(
                    sections.compression_byte,
                    &sections.sizes[prefix..],
                    sizes_offset + prefix as u64,
                    dictionary,
                    out,
                )?;
                std::borrow::Cow::Borrowed(&small[..declared as usize])
            } else {
                std::borrow::Cow::Owned(decompress(
                    sections.compression_byte,
                    sections.sizes,
                    sizes_offset,
                    dictionary,
                )?)
            }
        };
    // Every varint takes at least one byte: this bounds the allocation below.
    if num_records > size_bytes.len() as u64 {
        return Err(Malformed::new(
            sizes_offset,
            format!(
                "chunk declares {num_records} records but its sizes buffer has only {} bytes",
                size_bytes.len()
            ),
        ));
    }
    let mut ends = Vec::with_capacity(num_records as usize);
    let mut cursor = 0usize;
    let mut total = 0u64;
    for _ in 0..num_records {
        let (size, len) = get_varint(&size_bytes[cursor..], sizes_offset)?;
        cursor += len;
        total = total
            .checked_add(size)
            .filter(|&t| t <= decoded_data_size)
            .ok_or_else(|| {
                Malformed::new(
                    sizes_offset,
                    format!(
                        "record sizes exceed the chunk's decoded size of {decoded_data_size} bytes"
                    ),
                )
            })?;
        ends.push(total);
    }
    if cursor != size_bytes.len() {
        return Err(Malformed::new(
            sizes_offset,
            format!(
                "sizes buffer has {} bytes left after {num_records} sizes",
                size_bytes.len() - cursor
            ),
        ));
    }
    if total != decoded_data_size {
        return Err(Malformed::new(
            sizes_offset,
            format!("record sizes add up to {total} bytes, the chunk declares {decoded_data_size}"),
        ));
    }
    Ok(ends)
}

/// The values payload: its declared decoded size, the payload bytes and their offset.
fn values_payload<'d>(
    data: &'d [u8],
    sections: &Sections<'_>,
) -> Result<(u64, &'d [u8], u64), Malformed> {
    let values = &data[sections.values_start..];
    if sections.compression_byte == 0 {
        return Ok((values.len() as u64, values, sections.values_offset));
    }
    let (size, prefix) = get_varint(values, sections.values_offset)?;
    Ok((
        size,
        &values[prefix..],
        sections.values_offset + prefix as u64,
    ))
}

fn check_values_size(
    sections: &Sections<'_>,
    declared: u64,
    payload_len: usize,
    decoded_data_size: u64,
) -> Result<(), Malformed> {
    if declared != decoded_data_size {
        return Err(Malformed::new(
            sections.values_offset,
            format!("values buffer holds {declared} bytes, the chunk declares {decoded_data_size}"),
        ));
    }
    if sections.compression_byte != b'b'
        && declared > plausible_size(sections.compression_byte, payload_len)
    {
        return Err(Malformed::new(
            sections.values_offset,
            format!("a compressed buffer of {payload_len} bytes cannot decode to {declared} bytes"),
        ));
    }
    Ok(())
}

/// Decodes simple chunk `data` (verified by its hash) declaring `num_records` records
/// of `decoded_data_size` bytes in total. `offset` is the file offset of `data[0]`.
/// Compressed values are decoded into `buffer` (a recycled buffer, or an empty one).
pub(crate) fn decode(
    data: &[u8],
    offset: u64,
    num_records: u64,
    decoded_data_size: u64,
    dictionary: Option<&Dictionary>,
    buffer: Vec<u8>,
) -> Result<DecodedSimpleChunk, Malformed> {
    let sections = sections(data, offset)?;
    let ends = record_ends(&sections, num_records, decoded_data_size, dictionary)?;
    let (declared, payload, payload_offset) = values_payload(data, &sections)?;
    check_values_size(&sections, declared, payload.len(), decoded_data_size)?;
    let values = if sections.compression_byte == 0 {
        DecodedValues::InData(sections.values_start..data.len())
    } else if sections.compression_byte == b'b' && declared > plausible_size(b'b', payload.len()) {
        // Larger than brotli buffers are preallocated for: decoded as the output grows.
        DecodedValues::Owned(decompress(
            b'b',
            &data[sections.values_start..],
            sections.values_offset,
            None,
        )?)
    } else {
        DecodedValues::Owned(decompress_payload_to_vec(
            sections.compression_byte,
            payload,
            payload_offset,
            dictionary,
            declared as usize,
            buffer,
        )?)
    };
    Ok(DecodedSimpleChunk { values, ends })
}

/// Decodes a one-record chunk straight into `out` (whose length is the chunk's decoded
/// size), with the same checks as [`decode`].
pub(crate) fn decode_single_into(
    data: &[u8],
    offset: u64,
    dictionary: Option<&Dictionary>,
    out: &mut [u8],
) -> Result<(), Malformed> {
    let decoded_data_size = out.len() as u64;
    let sections = sections(data, offset)?;
    record_ends(&sections, 1, decoded_data_size, dictionary)?;
    let (declared, payload, payload_offset) = values_payload(data, &sections)?;
    check_values_size(&sections, declared, payload.len(), decoded_data_size)?;
    decompress_payload(
        sections.compression_byte,
        payload,
        payload_offset,
        dictionary,
        out,
    )
}

/// A simple chunk whose record sizes are decoded and checked and whose values buffer is
/// located but not yet decompressed: the first half of decoding, which tells a caller how
/// large each record is before it allocates destinations for them. (A transposed chunk is
/// decoded whole instead, see [`PreparedSimpleChunk::decoded`].)
pub(crate) struct PreparedSimpleChunk {
    /// End offset of every record in the decoded values.
    pub ends: Vec<u64>,
    compression_byte: u8,
    /// Where the values payload (after its size prefix) starts in the chunk data.
    payload_start: usize,
    payload_offset: u64,
    /// Brotli values whose declared size is too large to preallocate on trust: decoded
    /// already, with the output growing only as data actually decodes.
    predecoded: Option<Vec<u8>>,
}

impl PreparedSimpleChunk {
    /// A chunk decoded whole while preparing (a transposed chunk, whose record sizes are
    /// only known once its records are rebuilt): `values` are its records, concatenated.
    pub fn decoded(ends: Vec<u64>, values: Vec<u8>) -> PreparedSimpleChunk {
        PreparedSimpleChunk {
            ends,
            compression_byte: 0,
            payload_start: 0,
            payload_offset: 0,
            predecoded: Some(values),
        }
    }

    /// The decoded values when no decompression is needed (uncompressed chunks, and brotli
    /// buffers decoded while preparing); `data` is the chunk data given to [`prepare`].
    pub fn values_in_place<'d>(&'d self, data: &'d [u8]) -> Option<&'d [u8]> {
        match (&self.predecoded, self.compression_byte) {
            (Some(values), _) => Some(values),
            (None, 0) => Some(&data[self.payload_start..]),
            _ => None,
        }
    }

    /// Where the values start in the chunk data when they are stored uncompressed (so that
    /// records can be copied straight from the file); `None` if they need decoding.
    pub fn stored_values_start(&self) -> Option<usize> {
        (self.predecoded.is_none() && self.compression_byte == 0).then_some(self.payload_start)
    }

    /// Decompresses the values into `out`, whose length must be the chunk's decoded size
    /// (`ends.last()`); the payload must decode to exactly that many bytes.
    pub fn decompress_values_into(
        &self,
        data: &[u8],
        dictionary: Option<&Dictionary>,
        out: &mut [u8],
    ) -> Result<(), Malformed> {
        if let Some(values) = self.values_in_place(data) {
            if values.len() != out.len() {
                return Err(Malformed::new(
                    self.payload_offset,
                    format!(
                        "values buffer holds {} bytes, {} expected",
                        values.len(),
                        out.len()
                    ),
                ));
            }
            out.copy_from_slice(values);
            return Ok(());
        }
        decompress_payload(
            self.compression_byte,
            &data[self.payload_start..],
            self.payload_offset,
            dictionary,
            out,
        )
    }
}

/// Bytes at the start of the chunk data that hold everything but the values: the
/// compression byte, the sizes buffer's length and the sizes buffer. `head` is the first
/// [`STORED_HEAD_BYTES`] data bytes (or all of them, if fewer); `offset` is the file offset
/// of `head[0]`. May exceed the data size for a damaged chunk: the caller checks.
pub(crate) fn sizes_section_end(head: &[u8], offset: u64) -> Result<u64, Malformed> {
    let Some((_, rest)) = head.split_first() else {
        return Err(Malformed::new(
            offset,
            "simple chunk has no compression byte",
        ));
    };
    let (sizes_len, prefix) = get_varint(rest, offset + 1)?;
    Ok((1 + prefix as u64).saturating_add(sizes_len))
}

/// Data bytes [`sizes_section_end`] needs to see.
pub(crate) const STORED_HEAD_BYTES: usize = 11;

/// [`prepare`] for an uncompressed chunk (compression byte 0) whose values stay where they
/// are: `sizes_section` is the chunk data up to the end of the sizes buffer (see
/// [`sizes_section_end`]) and `data_len` the length of the whole data. The same checks as
/// [`prepare`]; the values are only counted, they are read later from the file.
pub(crate) fn prepare_stored(
    sizes_section: &[u8],
    data_len: u64,
    offset: u64,
    num_records: u64,
    decoded_data_size: u64,
) -> Result<PreparedSimpleChunk, Malformed> {
    let sections = sections(sizes_section, offset)?;
    if sections.compression_byte != 0 || sections.values_start != sizes_section.len() {
        return Err(Malformed::new(
            offset,
            "prepare_stored needs the sizes section of an uncompressed chunk",
        ));
    }
    let ends = record_ends(&sections, num_records, decoded_data_size, None)?;
    let declared = data_len
        .checked_sub(sections.values_start as u64)
        .ok_or_else(|| {
            Malformed::new(
                sections.values_offset,
                "sizes buffer overruns the chunk data",
            )
        })?;
    check_values_size(&sections, declared, declared as usize, decoded_data_size)?;
    Ok(PreparedSimpleChunk {
        ends,
        compression_byte: 0,
        payload_start: sections.values_start,
        payload_offset: sections.values_offset,
        predecoded: None,
    })
}

/// First half of [`decode`]: sizes decoded and checked against the header, the values
/// payload located and its declared size checked (bounded before anything is allocated).
pub(crate) fn prepare(
    data: &[u8],
    offset: u64,
    num_records: u64,
    decoded_data_size: u64,
    dictionary: Option<&Dictionary>,
) -> Result<PreparedSimpleChunk, Malformed> {
    let sections = sections(data, offset)?;
    let ends = record_ends(&sections, num_records, decoded_data_size, dictionary)?;
    let (declared, payload, payload_offset) = values_payload(data, &sections)?;
    check_values_size(&sections, declared, payload.len(), decoded_data_size)?;
    let payload_start = data.len() - payload.len();
    let predecoded =
        if sections.compression_byte == b'b' && declared > plausible_size(b'b', payload.len()) {
            Some(decompress(
                b'b',
                &data[sections.values_start..],
                sections.values_offset,
                None,
            )?)
        } else {
            None
        };
    Ok(PreparedSimpleChunk {
        ends,
        compression_byte: sections.compression_byte,
        payload_start,
        payload_offset,
        predecoded,
    })
}
