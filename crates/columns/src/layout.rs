//! The column container: header, block table, shared dictionary, blocks.
//!
//! ```text
//! offset  size  field
//!  0       8    magic "SSCOLUMN"
//!  8       2    format version (4; versions 1 to 3 are still read), u16 LE
//! 10       1    value type code (1 i32, 2 i64, 3 u32, 4 u64, 5 f32, 6 f64)
//! 11       1    log2 of the block size (12..=16)
//! 12       1    target the writer used (0 smaller, 1 balanced, 2 faster, 3 baseline)
//! 13       3    zero
//! 16       8    value count, u64 LE
//! 24       4    block count, u32 LE (= ceil(value count / block size))
//! 28       4    shared dictionary entries E, u32 LE (0: none; always 0 before version 4)
//! 32     128    composition: 32 × u32 LE, blocks per encoding tag (unused tags zero);
//!               version 1: 16 × u32 (64 bytes), so its table starts at 96
//! 160  16×B     block table, one entry per block:
//!                 end offset u64 LE (relative to the blocks' start, exclusive),
//!                 checksum u32 LE (low 32 bits of XXH3-64 of the block's bytes),
//!                 encoding tag u8, 3 zero bytes
//! version 4:
//! T        8    shared dictionary length S, u64 LE (a multiple of 8; 0 when E = 0), T = H+16B
//! T+8      4    shared dictionary checksum (XXH3-64 low 32 bits of its S bytes; 0 when none)
//! T+12     4    metadata checksum: low 32 bits of XXH3-64 of bytes [0, T+12)
//! T+16     S    shared dictionary: one nested vector of E values (`scheme::nested`)
//! T+16+S  ...   blocks
//! versions 1 to 3:
//! T        4    metadata checksum of bytes [0, T); H = 160 (96 in version 1)
//! T+4      4    zero (so the blocks start 8-byte aligned)
//! T+8     ...   blocks
//! ```
//!
//! Block i spans [end[i-1], end[i]) from the blocks' start (end[-1] = 0), each a multiple of
//! 8 bytes long; the column ends exactly at the last block's end.
//!
//! Invariants checked by `parse` before any block is touched: magic, version, known value
//! type, block size in range, block count consistent with the value count, table inside the
//! buffer, metadata checksum, block ends non-decreasing and 8-byte multiples, the last end at
//! the end of the buffer, known tags, composition equal to the tags' histogram, a shared
//! dictionary exactly when blocks refer to one, its entries at most the value count.

use crate::bytes::ByteReader;
use crate::error::{corrupt, Error, Result};
use crate::scheme::shared_dictionary::SharedSection;
use crate::scheme::Encoding;
use crate::value::ValueType;

pub(crate) const MAGIC: &[u8; 8] = b"SSCOLUMN";
/// Version 4 added the column's shared dictionary (tag 17 and the section after the table);
/// version 3 put a frame table (widths, references) in front of `chunked_bit_packed` blocks
/// and parts instead of a header per chunk; version 2
/// added the cascading encodings (tags 14..=16) and 32 composition slots.
pub(crate) const VERSION: u16 = 4;
pub(crate) const ENTRY_SIZE: usize = 16;
/// Composition slots in the current version (version 1 had 16: tags 0..=13 existed).
pub(crate) const COMPOSITION_SLOTS: usize = 32;
const VERSION_1_COMPOSITION_SLOTS: usize = 16;

/// Header bytes before the block table for a version's composition slots.
fn header_size(slots: usize) -> usize {
    32 + 4 * slots
}
pub(crate) const MIN_BLOCK_LOG2: u8 = 12;
pub(crate) const MAX_BLOCK_LOG2: u8 = 16;
/// The first version with a shared dictionary section.
const SHARED_DICTIONARY_VERSION: u16 = 4;
/// Writer code for the Druid-like baseline.
pub(crate) const BASELINE_TARGET: u8 = 3;

pub(crate) fn checksum(bytes: &[u8]) -> u32 {
    twox_hash::XxHash3_64::oneshot(bytes) as u32
}

/// One block as the writer produced it.
pub(crate) struct EncodedBlock {
    pub(crate) encoding: Encoding,
    pub(crate) bytes: Vec<u8>,
}

/// Assembles a column from encoded blocks (each block's length a multiple of 8).
pub(crate) fn assemble(
    value_type: ValueType,
    block_log2: u8,
    target_code: u8,
    value_count: usize,
    shared: Option<&SharedSection>,
    blocks: &[EncodedBlock],
) -> Vec<u8> {
    let shared_bytes: &[u8] = shared.map_or(&[], |s| &s.bytes);
    debug_assert_eq!(shared_bytes.len() % 8, 0);
    let data_length: usize = blocks.iter().map(|b| b.bytes.len()).sum();
    let metadata_length = header_size(COMPOSITION_SLOTS) + ENTRY_SIZE * blocks.len();
    let mut out = Vec::with_capacity(metadata_length + 16 + shared_bytes.len() + data_length);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(value_type.code());
    out.push(block_log2);
    out.push(target_code);
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(value_count as u64).to_le_bytes());
    out.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
    out.extend_from_slice(&(shared.map_or(0, |s| s.entries) as u32).to_le_bytes());
    let mut composition = [0u32; COMPOSITION_SLOTS];
    for block in blocks {
        composition[block.encoding.tag() as usize] += 1;
    }
    for count in composition {
        out.extend_from_slice(&count.to_le_bytes());
    }
    let mut end = 0u64;
    for block in blocks {
        debug_assert_eq!(block.bytes.len() % 8, 0);
        end += block.bytes.len() as u64;
        out.extend_from_slice(&end.to_le_bytes());
        out.extend_from_slice(&checksum(&block.bytes).to_le_bytes());
        out.push(block.encoding.tag());
        out.extend_from_slice(&[0; 3]);
    }
    out.extend_from_slice(&(shared_bytes.len() as u64).to_le_bytes());
    let shared_checksum = if shared_bytes.is_empty() {
        0
    } else {
        checksum(shared_bytes)
    };
    out.extend_from_slice(&shared_checksum.to_le_bytes());
    let metadata_checksum = checksum(&out);
    out.extend_from_slice(&metadata_checksum.to_le_bytes());
    out.extend_from_slice(shared_bytes);
    for block in blocks {
        out.extend_from_slice(&block.bytes);
    }
    out
}

/// Where the shared dictionary is (absolute offsets) and what it holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SharedPlace {
    pub(crate) entries: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) checksum: u32,
}

/// A block's place in the column.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockEntry {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) checksum: u32,
    pub(crate) encoding: Encoding,
}

/// The parsed and validated metadata of a column.
#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    /// Format version the column was written in (block layouts depend on it).
    pub(crate) version: u16,
    pub(crate) value_type: ValueType,
    pub(crate) block_log2: u8,
    pub(crate) target_code: u8,
    pub(crate) value_count: usize,
    pub(crate) composition: [u32; COMPOSITION_SLOTS],
    pub(crate) shared: Option<SharedPlace>,
    pub(crate) blocks: Vec<BlockEntry>,
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Metadata> {
    let mut reader = ByteReader::new(bytes, 0);
    let magic = reader.take(8, "magic")?;
    if magic != MAGIC {
        return Err(corrupt(0, "not a shapeshift column (bad magic)"));
    }
    let version = reader.u16("version")?;
    let slots = match version {
        1 => VERSION_1_COMPOSITION_SLOTS,
        2 | 3 | VERSION => COMPOSITION_SLOTS,
        _ => return Err(corrupt(8, format!("unsupported format version {version}"))),
    };
    let header_size = header_size(slots);
    let type_code = reader.u8("value type")?;
    let value_type = ValueType::from_code(type_code)
        .ok_or_else(|| corrupt(10, format!("unknown value type code {type_code}")))?;
    let block_log2 = reader.u8("block size")?;
    if !(MIN_BLOCK_LOG2..=MAX_BLOCK_LOG2).contains(&block_log2) {
        return Err(corrupt(
            11,
            format!("block size 2^{block_log2} out of range"),
        ));
    }
    let target_code = reader.u8("target")?;
    reader.take(3, "reserved")?;
    let value_count = reader.u64("value count")?;
    let block_count = reader.u32("block count")? as u64;
    let shared_entries = reader.u32("shared dictionary entries")? as u64;
    // The writer keeps a shared dictionary to `MAX_ENTRIES`; a reader decodes it whole, so a
    // larger count is refused before anything is allocated.
    let entry_limit = value_count.min(crate::scheme::dictionary::MAX_ENTRIES as u64);
    if shared_entries > 0 && (version < SHARED_DICTIONARY_VERSION || shared_entries > entry_limit) {
        return Err(corrupt(
            28,
            format!("a shared dictionary of {shared_entries} entries in a version-{version} column of {value_count} values"),
        ));
    }
    let expected_blocks = value_count.div_ceil(1u64 << block_log2);
    if block_count != expected_blocks {
        return Err(corrupt(
            24,
            format!("{block_count} blocks for {value_count} values of blocks of 2^{block_log2}"),
        ));
    }
    let mut composition = [0u32; COMPOSITION_SLOTS];
    for slot in composition.iter_mut().take(slots) {
        *slot = reader.u32("composition")?;
    }
    let block_count = block_count as usize; // < 2^32, and the table must fit in the buffer
    let table_length = ENTRY_SIZE * block_count;
    let trailer_length = if version >= SHARED_DICTIONARY_VERSION {
        16
    } else {
        8
    };
    if bytes.len() < header_size + table_length + trailer_length {
        return Err(Error::Truncated {
            offset: bytes.len(),
            needed: header_size + table_length + trailer_length - bytes.len(),
            what: "block table",
        });
    }
    let table = reader.take(table_length, "block table")?;
    let shared_at = reader.offset();
    let (shared_length, shared_checksum) = if version >= SHARED_DICTIONARY_VERSION {
        let length = reader.u64("shared dictionary length")?;
        (length, reader.u32("shared dictionary checksum")?)
    } else {
        (0, 0)
    };
    let checksum_at = reader.offset();
    let stored = reader.u32("metadata checksum")?;
    let computed = checksum(&bytes[..checksum_at]);
    if stored != computed {
        return Err(Error::Checksum {
            region: "header and block table",
            offset: checksum_at,
            stored,
            computed,
        });
    }
    if version < SHARED_DICTIONARY_VERSION {
        reader.take(4, "padding")?;
    }
    if shared_length % 8 != 0 || (shared_length == 0) != (shared_entries == 0) {
        return Err(corrupt(
            shared_at,
            format!("a shared dictionary of {shared_length} bytes for {shared_entries} entries"),
        ));
    }
    let shared = if shared_entries > 0 {
        let start = reader.offset();
        if shared_length > reader.remaining() as u64 {
            return Err(Error::Truncated {
                offset: bytes.len(),
                needed: (shared_length - reader.remaining() as u64) as usize,
                what: "shared dictionary",
            });
        }
        reader.take(shared_length as usize, "shared dictionary")?;
        Some(SharedPlace {
            entries: shared_entries as usize,
            start,
            end: reader.offset(),
            checksum: shared_checksum,
        })
    } else {
        None
    };
    let data_start = reader.offset();
    let data_length = bytes.len() - data_start;
    let mut blocks = Vec::with_capacity(block_count);
    let mut seen = [0u32; COMPOSITION_SLOTS];
    let mut previous_end = 0u64;
    for (index, entry) in table.chunks_exact(ENTRY_SIZE).enumerate() {
        let at = header_size + index * ENTRY_SIZE;
        let end = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
        if end < previous_end || end > data_length as u64 || end % 8 != 0 {
            return Err(corrupt(
                at,
                format!("block {index} ends at {end} (previous end {previous_end}, data length {data_length})"),
            ));
        }
        let tag = entry[12];
        let encoding = Encoding::from_tag(tag)
            .filter(|e| version > 1 || !e.cascades())
            .filter(|&e| {
                e != Encoding::SharedDictionary
                    || (version >= SHARED_DICTIONARY_VERSION && shared_entries > 0)
            })
            .ok_or_else(|| {
                corrupt(
                    at + 12,
                    format!("encoding tag {tag} is unknown in a version-{version} column or needs a shared dictionary it lacks"),
                )
            })?;
        seen[tag as usize] += 1;
        blocks.push(BlockEntry {
            start: data_start + previous_end as usize,
            end: data_start + end as usize,
            checksum: u32::from_le_bytes(entry[8..12].try_into().expect("4 bytes")),
            encoding,
        });
        previous_end = end;
    }
    if previous_end != data_length as u64 {
        return Err(corrupt(
            bytes.len(),
            format!("blocks end at {previous_end} but the data is {data_length} bytes"),
        ));
    }
    if shared.is_some() && seen[Encoding::SharedDictionary.tag() as usize] == 0 {
        return Err(corrupt(28, "a shared dictionary that no block refers to"));
    }
    if seen != composition {
        return Err(corrupt(
            32,
            "composition counts differ from the block table",
        ));
    }
    Ok(Metadata {
        version,
        value_type,
        block_log2,
        target_code,
        value_count: usize::try_from(value_count)
            .map_err(|_| corrupt(16, "value count exceeds the address space"))?,
        composition,
        shared,
        blocks,
    })
}
