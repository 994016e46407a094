//! Bounds-checked reading of little-endian fields, with absolute byte offsets for errors,
//! and the matching writers. Structures inside a block that hold bit-packed words start at
//! 8-byte aligned positions relative to the block start; blocks start 8-byte aligned in the
//! column, so those words can be read in place when the column buffer itself is aligned.

use crate::error::{corrupt, Error, Result};
use crate::value::Lane;

/// A cursor over one block (or the column header) that never reads past its slice.
#[derive(Clone)]
pub(crate) struct ByteReader<'a> {
    bytes: &'a [u8],
    position: usize,
    /// Absolute offset of `bytes[0]` in the column, for error messages.
    base: usize,
    /// Format version of the column the bytes belong to (block layouts differ by version).
    version: u16,
}

impl<'a> ByteReader<'a> {
    /// A reader over bytes of a column in the current format version.
    pub(crate) fn new(bytes: &'a [u8], base: usize) -> Self {
        Self::of_version(bytes, base, crate::layout::VERSION)
    }

    /// A reader over bytes of a column written in format `version`.
    pub(crate) fn of_version(bytes: &'a [u8], base: usize, version: u16) -> Self {
        ByteReader {
            bytes,
            position: 0,
            base,
            version,
        }
    }

    /// A reader over `bytes` (at absolute offset `base`) inside the same column, such as a
    /// nested part or a decompressed block: same format version.
    pub(crate) fn inner(&self, bytes: &'a [u8], base: usize) -> Self {
        Self::of_version(bytes, base, self.version)
    }

    /// Format version of the column being read.
    pub(crate) fn version(&self) -> u16 {
        self.version
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.position
    }

    /// The next byte, if any, without consuming it.
    pub(crate) fn peek_u8(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub(crate) fn take(&mut self, length: usize, what: &'static str) -> Result<&'a [u8]> {
        if length > self.remaining() {
            return Err(Error::Truncated {
                offset: self.offset(),
                needed: length - self.remaining(),
                what,
            });
        }
        let slice = &self.bytes[self.position..self.position + length];
        self.position += length;
        Ok(slice)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// Skips the zero padding up to the next 8-byte boundary of the block.
    pub(crate) fn align8(&mut self, what: &'static str) -> Result<()> {
        let padding = (8 - self.position % 8) % 8;
        self.take(padding, what).map(|_| ())
    }

    /// Reads a count field and checks it against an upper bound before anyone allocates.
    pub(crate) fn count(&mut self, limit: usize, what: &'static str) -> Result<usize> {
        let at = self.offset();
        let value = self.u32(what)? as usize;
        if value > limit {
            return Err(corrupt(at, format!("{what} is {value}, more than {limit}")));
        }
        Ok(value)
    }
}

pub(crate) fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

pub(crate) fn put_lanes<L: Lane>(out: &mut Vec<u8>, lanes: &[L]) {
    out.reserve(lanes.len() * L::BYTES);
    for &lane in lanes {
        out.extend_from_slice(&lane.to_u64().to_le_bytes()[..L::BYTES]);
    }
}

pub(crate) fn lane_from_le<L: Lane>(bytes: &[u8]) -> L {
    let mut word = [0u8; 8];
    word[..L::BYTES].copy_from_slice(&bytes[..L::BYTES]);
    L::truncate_u64(u64::from_le_bytes(word))
}

/// Copies little-endian lanes into `out` (`bytes.len() == out.len() * L::BYTES`).
pub(crate) fn copy_lanes_from_le<L: Lane>(bytes: &[u8], out: &mut [L]) {
    debug_assert_eq!(bytes.len(), out.len() * L::BYTES);
    // SAFETY: `out` is a plain integer slice; viewing it as bytes of the same total length is
    // valid for any contents, and the target is little-endian (checked in lib.rs).
    let out_bytes = unsafe {
        std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(out))
    };
    out_bytes.copy_from_slice(bytes);
}
