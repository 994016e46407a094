//! Riegeli's physical layout: 64 KiB blocks, block headers and chunk headers.
//!
//! Invariants this module keeps, for writing and reading alike:
//! - A 24-byte block header sits at every multiple of 65,536; it may interrupt any chunk,
//!   including its 40-byte header. Chunk contents are "logical" bytes: the file bytes with
//!   the block headers taken out.
//! - A chunk starting at `begin` ends at [`chunk_end`]: after its header, data and
//!   intervening block headers, padded so that it spans at least `num_records` bytes and
//!   never ends inside or right after a block header. Writers pad with zeros; readers never
//!   look at padding.
//! - Every length read from a file is checked against the file size before it is used to
//!   slice or allocate, so a hostile header yields [`Malformed`] and not a panic.

use std::borrow::Cow;

use crate::error::Malformed;
use crate::hash::{riegeli_hash, RiegeliHasher};

pub(crate) const BLOCK_SIZE: u64 = 1 << 16;
pub(crate) const BLOCK_HEADER_SIZE: u64 = 24;
pub(crate) const USABLE_BLOCK_SIZE: u64 = BLOCK_SIZE - BLOCK_HEADER_SIZE;
pub(crate) const CHUNK_HEADER_SIZE: u64 = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkType {
    Signature,
    Metadata,
    Padding,
    Simple,
    Transposed,
    /// shapeshift's extension: a shared zstd dictionary (not readable by array_record).
    ZstdDictionary,
    Unknown(u8),
}

impl ChunkType {
    pub fn from_byte(byte: u8) -> ChunkType {
        match byte {
            b's' => ChunkType::Signature,
            b'm' => ChunkType::Metadata,
            b'p' => ChunkType::Padding,
            b'r' => ChunkType::Simple,
            b't' => ChunkType::Transposed,
            b'D' => ChunkType::ZstdDictionary,
            other => ChunkType::Unknown(other),
        }
    }

    pub fn byte(self) -> u8 {
        match self {
            ChunkType::Signature => b's',
            ChunkType::Metadata => b'm',
            ChunkType::Padding => b'p',
            ChunkType::Simple => b'r',
            ChunkType::Transposed => b't',
            ChunkType::ZstdDictionary => b'D',
            ChunkType::Unknown(other) => other,
        }
    }
}

/// The fields of a 40-byte chunk header (its two hashes are checked, not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkHeader {
    pub data_size: u64,
    pub data_hash: u64,
    pub chunk_type: ChunkType,
    pub num_records: u64,
    pub decoded_data_size: u64,
}

impl ChunkHeader {
    pub fn for_data(
        data: &[u8],
        chunk_type: ChunkType,
        num_records: u64,
        decoded_data_size: u64,
    ) -> Self {
        ChunkHeader {
            data_size: data.len() as u64,
            data_hash: riegeli_hash(data),
            chunk_type,
            num_records,
            decoded_data_size,
        }
    }

    pub fn encode(&self) -> [u8; CHUNK_HEADER_SIZE as usize] {
        let mut out = [0u8; CHUNK_HEADER_SIZE as usize];
        out[8..16].copy_from_slice(&self.data_size.to_le_bytes());
        out[16..24].copy_from_slice(&self.data_hash.to_le_bytes());
        let type_and_count = u64::from(self.chunk_type.byte()) | (self.num_records << 8);
        out[24..32].copy_from_slice(&type_and_count.to_le_bytes());
        out[32..40].copy_from_slice(&self.decoded_data_size.to_le_bytes());
        let header_hash = riegeli_hash(&out[8..]);
        out[0..8].copy_from_slice(&header_hash.to_le_bytes());
        out
    }

    /// Parses and verifies a header; `offset` is where the chunk begins, for errors.
    pub fn decode(
        bytes: &[u8; CHUNK_HEADER_SIZE as usize],
        offset: u64,
    ) -> Result<Self, Malformed> {
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        if riegeli_hash(&bytes[8..]) != word(0) {
            return Err(Malformed::new(
                offset,
                "chunk header hash mismatch (corrupt chunk header, or no chunk starts here)",
            ));
        }
        let type_and_count = word(24);
        Ok(ChunkHeader {
            data_size: word(8),
            data_hash: word(16),
            chunk_type: ChunkType::from_byte(type_and_count as u8),
            num_records: type_and_count >> 8,
            decoded_data_size: word(32),
        })
    }
}

pub(crate) fn block_header(
    previous_chunk: u64,
    next_chunk: u64,
) -> [u8; BLOCK_HEADER_SIZE as usize] {
    let mut out = [0u8; BLOCK_HEADER_SIZE as usize];
    out[8..16].copy_from_slice(&previous_chunk.to_le_bytes());
    out[16..24].copy_from_slice(&next_chunk.to_le_bytes());
    let hash = riegeli_hash(&out[8..]);
    out[0..8].copy_from_slice(&hash.to_le_bytes());
    out
}

pub(crate) fn remaining_in_block(pos: u64) -> u64 {
    (BLOCK_SIZE - pos % BLOCK_SIZE) % BLOCK_SIZE
}

// `u64::is_multiple_of` needs Rust 1.87; the workspace supports 1.85.
#[allow(clippy::manual_is_multiple_of)]
pub(crate) fn is_block_boundary(pos: u64) -> bool {
    pos % BLOCK_SIZE == 0
}

/// `pos + size` logical bytes later, counting the block headers crossed; `None` on overflow.
pub(crate) fn add_with_overhead(pos: u64, size: u64) -> Option<u64> {
    let overhead_blocks =
        size.checked_add((pos + USABLE_BLOCK_SIZE - 1) % BLOCK_SIZE)? / USABLE_BLOCK_SIZE;
    pos.checked_add(size)?
        .checked_add(overhead_blocks.checked_mul(BLOCK_HEADER_SIZE)?)
}

fn round_up_to_possible_chunk_boundary(pos: u64) -> Option<u64> {
    pos.checked_add(remaining_in_block(pos).saturating_sub(USABLE_BLOCK_SIZE - 1))
}

/// Where a chunk beginning at `begin` ends (the next chunk's beginning).
pub(crate) fn chunk_end(begin: u64, data_size: u64, num_records: u64) -> Option<u64> {
    let content_end = add_with_overhead(begin, CHUNK_HEADER_SIZE.checked_add(data_size)?)?;
    let record_end = round_up_to_possible_chunk_boundary(begin.checked_add(num_records)?)?;
    Some(content_end.max(record_end))
}

/// One run of a chunk's bytes as laid out in the file, in file order.
pub(crate) enum LaidOut<'a> {
    /// Bytes of the layout itself: a block header, (part of) the chunk header, zero fill.
    Made(&'a [u8]),
    /// This range of the chunk's data.
    Data(std::ops::Range<usize>),
}

/// Zeros for the fill at the end of a chunk (never past a block boundary) and for the data
/// of padding chunks (shorter than a block).
static ZEROS: [u8; BLOCK_SIZE as usize] = [0; BLOCK_SIZE as usize];

/// Lays out a chunk of `data_len` data bytes beginning at file position `begin`: hands
/// `emit` its runs in file order (block headers and the trailing zero fill included) and
/// returns the chunk's end position. The one description of the layout that copying a
/// chunk into a buffer ([`append_chunk`]) and writing it from its pieces share.
pub(crate) fn lay_out_chunk(
    begin: u64,
    header: &ChunkHeader,
    data_len: usize,
    mut emit: impl FnMut(LaidOut<'_>),
) -> u64 {
    let end = chunk_end(begin, header.data_size, header.num_records)
        .expect("a chunk built in memory has a representable end");
    let mut pos = begin;
    let encoded_header = header.encode();
    // (run start, run end, whether the run is the chunk header's) for the header then data.
    for (mut start, stop, is_header) in [(0, encoded_header.len(), true), (0, data_len, false)] {
        while start < stop {
            if is_block_boundary(pos) {
                emit(LaidOut::Made(&block_header(pos - begin, end - pos)));
                pos += BLOCK_HEADER_SIZE;
            }
            let take = (remaining_in_block(pos) as usize).min(stop - start);
            emit(if is_header {
                LaidOut::Made(&encoded_header[start..start + take])
            } else {
                LaidOut::Data(start..start + take)
            });
            start += take;
            pos += take as u64;
        }
    }
    while pos < end {
        if is_block_boundary(pos) {
            emit(LaidOut::Made(&block_header(pos - begin, end - pos)));
            pos += BLOCK_HEADER_SIZE;
        }
        let take = remaining_in_block(pos).min(end - pos);
        emit(LaidOut::Made(&ZEROS[..take as usize]));
        pos += take;
    }
    end
}

/// Appends a chunk beginning at file position `begin` to `out` (whose last byte, if any, is
/// the one before `begin`); block headers and padding included. Returns the chunk's end
/// position. (`out` may hold bytes that are not part of the file before its tail: the
/// writer keeps its output buffer's file data at an aligned address behind a few of them.)
pub(crate) fn append_chunk(
    out: &mut Vec<u8>,
    begin: u64,
    header: &ChunkHeader,
    data: &[u8],
) -> u64 {
    lay_out_chunk(begin, header, data.len(), |run| match run {
        LaidOut::Made(bytes) => out.extend_from_slice(bytes),
        LaidOut::Data(range) => out.extend_from_slice(&data[range]),
    })
}

/// Appends a padding chunk at file position `pos` bringing the position to a block boundary
/// (nothing if already there); a gap too short for a chunk header extends into the next
/// block. Returns the position after it.
pub(crate) fn append_padding_to_block_boundary(out: &mut Vec<u8>, pos: u64) -> u64 {
    let mut length = remaining_in_block(pos);
    if length == 0 {
        return pos;
    }
    if length < CHUNK_HEADER_SIZE {
        length += USABLE_BLOCK_SIZE;
    }
    // Under a block plus a chunk header, so the zeros are a slice of ZEROS.
    let zeros = &ZEROS[..(length - CHUNK_HEADER_SIZE) as usize];
    let header = ChunkHeader::for_data(zeros, ChunkType::Padding, 0, 0);
    append_chunk(out, pos, &header, zeros)
}

/// A chunk read from a file: verified header and verified data.
pub(crate) struct RawChunk<'a> {
    pub header: ChunkHeader,
    /// The data with block headers removed: borrowed when it lies inside one block.
    pub data: Cow<'a, [u8]>,
    /// File offset of the first data byte (after any block header), for error messages.
    pub data_offset: u64,
}

/// Calls `piece` with each run of `len` logical bytes at physical position `pos` that lies
/// inside one block, in order, skipping block headers; returns the physical position after
/// them. The caller has checked that they lie inside `file`
/// (`add_with_overhead(pos, len) <= file.len()`). The one walk over block pieces that
/// gathering, copying and hashing logical bytes share.
fn for_each_logical_piece(
    file: &[u8],
    mut pos: u64,
    len: u64,
    mut piece: impl FnMut(&[u8]),
) -> u64 {
    let mut left = len;
    while left > 0 {
        if is_block_boundary(pos) {
            pos += BLOCK_HEADER_SIZE;
        }
        let take = remaining_in_block(pos).min(left);
        piece(&file[pos as usize..(pos + take) as usize]);
        pos += take;
        left -= take;
    }
    pos
}

/// Appends `len` logical bytes at physical position `pos` to `out`, skipping block
/// headers; returns the physical position after them. The caller has checked that they lie
/// inside `file` (`add_with_overhead(pos, len) <= file.len()`).
pub(crate) fn gather_logical(file: &[u8], pos: u64, len: u64, out: &mut Vec<u8>) -> u64 {
    out.reserve(len as usize);
    for_each_logical_piece(file, pos, len, |piece| out.extend_from_slice(piece))
}

/// Fills `out` with the logical bytes that begin `logical` bytes into the data starting at
/// physical position `data_start` (the first data byte, after any block header), skipping
/// block headers: a part of a chunk's data copied without gathering the rest. The caller
/// has checked that the bytes lie inside `file` (they belong to a chunk read before).
pub(crate) fn copy_logical(file: &[u8], data_start: u64, logical: u64, out: &mut [u8]) {
    debug_assert!(data_start % BLOCK_SIZE >= BLOCK_HEADER_SIZE);
    let block_start = data_start - data_start % BLOCK_SIZE;
    // Index among the usable (non-header) bytes counted from `block_start`.
    let usable = data_start % BLOCK_SIZE - BLOCK_HEADER_SIZE + logical;
    let pos = block_start
        + usable / USABLE_BLOCK_SIZE * BLOCK_SIZE
        + BLOCK_HEADER_SIZE
        + usable % USABLE_BLOCK_SIZE;
    let mut done = 0;
    for_each_logical_piece(file, pos, out.len() as u64, |piece| {
        out[done..done + piece.len()].copy_from_slice(piece);
        done += piece.len();
    });
}

/// Where `len` logical bytes at physical position `pos` begin (after a block header that
/// sits at `pos`), checked to lie inside `file` with the block headers they span.
fn locate_logical(file: &[u8], pos: u64, len: u64) -> Result<u64, Malformed> {
    let file_len = file.len() as u64;
    let first = if is_block_boundary(pos) && len > 0 {
        pos + BLOCK_HEADER_SIZE
    } else {
        pos
    };
    add_with_overhead(first, len)
        .filter(|&end| end <= file_len)
        .ok_or_else(|| {
            Malformed::new(
                first,
                format!("truncated: {len} bytes needed here, the file has {file_len} bytes"),
            )
        })?;
    Ok(first)
}

/// HighwayHash (Riegeli's key) of `len` logical bytes starting at physical position `pos`,
/// hashed piece by piece from the blocks: the same value as hashing the gathered bytes,
/// without the copy. The caller has checked that they lie inside `file`.
pub(crate) fn hash_logical(file: &[u8], pos: u64, len: u64) -> u64 {
    let mut hasher = RiegeliHasher::new();
    for_each_logical_piece(file, pos, len, |piece| hasher.append(piece));
    hasher.finish()
}

/// Reads `len` logical bytes at physical position `pos`, skipping block headers: borrowed
/// from `file` when they lie inside one block, otherwise gathered into `scratch` (cleared
/// first; reused by the caller) or, without one, into a new buffer.
fn read_logical<'a>(
    file: &'a [u8],
    mut pos: u64,
    len: u64,
    scratch: Option<&'a mut Vec<u8>>,
) -> Result<(Cow<'a, [u8]>, u64, u64), Malformed> {
    pos = locate_logical(file, pos, len)?;
    let first = pos;
    if len <= remaining_in_block(pos) {
        let slice = &file[pos as usize..(pos + len) as usize];
        return Ok((Cow::Borrowed(slice), first, pos + len));
    }
    let (data, after) = match scratch {
        Some(scratch) => {
            scratch.clear();
            let after = gather_logical(file, pos, len, scratch);
            (Cow::Borrowed(scratch.as_slice()), after)
        }
        None => {
            let mut out = Vec::new();
            let after = gather_logical(file, pos, len, &mut out);
            (Cow::Owned(out), after)
        }
    };
    debug_assert!(add_with_overhead(first, len).is_some_and(|end| after <= end));
    Ok((data, first, after))
}

/// Reads and verifies the chunk beginning at `begin`.
pub(crate) fn read_chunk(file: &[u8], begin: u64) -> Result<RawChunk<'_>, Malformed> {
    read_chunk_in(file, begin, None)
}

/// [`read_chunk`] gathering data that spans blocks into `scratch` (if given) instead of a
/// new buffer; the data is then borrowed from `scratch`.
pub(crate) fn read_chunk_in<'a>(
    file: &'a [u8],
    begin: u64,
    scratch: Option<&'a mut Vec<u8>>,
) -> Result<RawChunk<'a>, Malformed> {
    let (header, after_header) = read_chunk_header(file, begin)?;
    let (data, data_offset, _) = read_logical(file, after_header, header.data_size, scratch)?;
    if riegeli_hash(&data) != header.data_hash {
        return Err(data_hash_mismatch(&header, begin, data_offset));
    }
    Ok(RawChunk {
        header,
        data,
        data_offset,
    })
}

/// A chunk whose header and data are verified, with the data left in the file.
pub(crate) struct ChunkInPlace {
    pub header: ChunkHeader,
    /// File offset of the first data byte (after any block header).
    pub data_offset: u64,
}

/// The header of the chunk at `begin` (verified by its hash) and where its data begins,
/// with the data's extent checked against the file but the data not verified yet: enough
/// to choose how to read it. Finish with [`verify_in_place`] before trusting any data byte.
pub(crate) fn locate_chunk(file: &[u8], begin: u64) -> Result<(ChunkHeader, u64), Malformed> {
    let (header, after_header) = read_chunk_header(file, begin)?;
    let data_offset = locate_logical(file, after_header, header.data_size)?;
    Ok((header, data_offset))
}

/// Verifies the data of a chunk located by [`locate_chunk`] where it lies, hashing it piece
/// by piece across block headers (no gathering copy).
pub(crate) fn verify_in_place(
    file: &[u8],
    begin: u64,
    header: ChunkHeader,
    data_offset: u64,
) -> Result<ChunkInPlace, Malformed> {
    if hash_logical(file, data_offset, header.data_size) != header.data_hash {
        return Err(data_hash_mismatch(&header, begin, data_offset));
    }
    Ok(ChunkInPlace {
        header,
        data_offset,
    })
}

/// Reads and checks the 40-byte header of the chunk at `begin`; returns it and the physical
/// position after it.
fn read_chunk_header(file: &[u8], begin: u64) -> Result<(ChunkHeader, u64), Malformed> {
    if !is_block_boundary(begin) && (begin % BLOCK_SIZE) < BLOCK_HEADER_SIZE {
        return Err(Malformed::new(
            begin,
            "a chunk cannot begin inside a block header",
        ));
    }
    let (header_bytes, _, after_header) = read_logical(file, begin, CHUNK_HEADER_SIZE, None)?;
    let header_bytes: &[u8; CHUNK_HEADER_SIZE as usize] = header_bytes
        .as_ref()
        .try_into()
        .expect("40 bytes were read");
    Ok((ChunkHeader::decode(header_bytes, begin)?, after_header))
}

fn data_hash_mismatch(header: &ChunkHeader, begin: u64, data_offset: u64) -> Malformed {
    Malformed::new(
        data_offset,
        format!(
            "chunk data hash mismatch ({} data bytes of the chunk at byte {begin} are corrupt)",
            header.data_size
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_end_follows_the_specification_examples() {
        // The signature chunk: 40 header bytes after the first block header.
        assert_eq!(chunk_end(0, 0, 0), Some(64));
        assert_eq!(chunk_end(64, 42, 1), Some(146));
        // Many tiny records force padding up to num_records bytes.
        assert_eq!(chunk_end(64, 10, 1000), Some(1064));
        // A chunk never ends right after a block header.
        assert_eq!(
            chunk_end(64, 0, BLOCK_SIZE - 64 + 10),
            Some(BLOCK_SIZE + 25)
        );
    }

    #[test]
    fn written_chunks_read_back_across_block_boundaries() {
        let mut out = Vec::new();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let header = ChunkHeader::for_data(&data, ChunkType::Simple, 3, 9);
        let end = append_chunk(&mut out, 0, &header, &data);
        assert_eq!(end, out.len() as u64);
        let chunk = read_chunk(&out, 0).unwrap();
        assert_eq!(chunk.header, header);
        assert_eq!(chunk.data.as_ref(), &data[..]);
        let end = append_padding_to_block_boundary(&mut out, end);
        assert_eq!(end % BLOCK_SIZE, 0);
        assert_eq!(end, out.len() as u64);
    }

    #[test]
    fn copied_parts_of_chunk_data_equal_the_gathered_data() {
        // Start mid-block, so that the data crosses several block headers.
        let mut out = vec![0u8; 1000];
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13 + i / 251) as u8).collect();
        let header = ChunkHeader::for_data(&data, ChunkType::Simple, 1, data.len() as u64);
        append_chunk(&mut out, 1000, &header, &data);
        let chunk = read_chunk(&out, 1000).unwrap();
        assert_eq!(chunk.data.as_ref(), &data[..]);
        // Hashing the pieces in place equals hashing the gathered data.
        let (located, data_offset) = locate_chunk(&out, 1000).unwrap();
        assert_eq!(data_offset, chunk.data_offset);
        assert_eq!(
            hash_logical(&out, data_offset, data.len() as u64),
            riegeli_hash(&data)
        );
        assert!(verify_in_place(&out, 1000, located, data_offset).is_ok());
        let mut damaged = out.clone();
        damaged[200_000] ^= 1;
        assert!(verify_in_place(&damaged, 1000, located, data_offset).is_err());
        let starts = [0usize, 1, 64_000, 64_535, 64_536, 65_000, 131_000, 299_999];
        let lengths = [0usize, 1, 23, 24, 25, 65_512, 65_536, 140_000];
        for &start in &starts {
            for &length in &lengths {
                let length = length.min(data.len() - start);
                let mut part = vec![0u8; length];
                copy_logical(&out, chunk.data_offset, start as u64, &mut part);
                assert!(part == data[start..start + length], "{start} + {length}");
            }
        }
    }
}
