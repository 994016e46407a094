//! Protobuf wire primitives: varints, tags, length-delimited fields, skipping.

/// Wire types.
pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

pub(crate) use crate::varint::put as put_varint;

#[inline]
pub(crate) fn put_tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Appends a few bytes inline: `extend_from_slice` of a short array was left as a call to
/// memmove in large callers (perf: 3% of a Python object's message in a two-byte copy).
#[inline(always)]
pub(crate) fn put_array<const N: usize>(out: &mut Vec<u8>, bytes: [u8; N]) {
    out.reserve(N);
    let len = out.len();
    for (spare, b) in out.spare_capacity_mut()[..N].iter_mut().zip(bytes) {
        spare.write(b);
    }
    // SAFETY: the `N` bytes after `len` are within the capacity reserved and were written.
    unsafe { out.set_len(len + N) };
}

/// Starts a length-delimited field: writes the tag and a one-byte length placeholder;
/// returns where the body starts, for [`end_len`].
#[inline]
pub(crate) fn begin_len(out: &mut Vec<u8>, field: u32) -> usize {
    put_tag(out, field, LEN);
    out.push(0);
    out.len()
}

/// Ends a length-delimited field begun at `body_start`: fills in the length, moving the
/// body when the length needs more than one byte.
#[inline]
pub(crate) fn end_len(out: &mut Vec<u8>, body_start: usize) {
    let len = out.len() - body_start;
    if len < 0x80 {
        out[body_start - 1] = len as u8;
    } else {
        end_long_len(out, body_start, len);
    }
}

/// The length of a body of 128 bytes or more: the body moves right by the length's extra
/// bytes (one copy, no allocation).
#[cold]
fn end_long_len(out: &mut Vec<u8>, body_start: usize, len: usize) {
    let mut varint = [0u8; 10];
    let mut width = 0;
    let mut v = len as u64;
    while v >= 0x80 {
        varint[width] = (v as u8) | 0x80;
        v >>= 7;
        width += 1;
    }
    varint[width] = v as u8;
    width += 1;
    let end = out.len();
    out.resize(end + width - 1, 0);
    out.copy_within(body_start..end, body_start + width - 1);
    out[body_start - 1..body_start - 1 + width].copy_from_slice(&varint[..width]);
}

/// A cursor over one message's bytes; errors carry the offset relative to `base`.
pub(crate) struct Cursor<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
    /// Offset of `bytes[0]` in the whole input, for error messages.
    pub(crate) base: u64,
}

/// A decode error: offset in the input and what was wrong.
#[derive(Debug)]
pub(crate) struct WireError {
    pub(crate) offset: u64,
    pub(crate) message: String,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: u64) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> WireError {
        WireError {
            offset: self.base + self.pos as u64,
            message: message.into(),
        }
    }

    /// The next `N` bytes, taken; `None` (nothing taken) when fewer are left.
    #[inline(always)]
    pub(crate) fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let chunk = *self.bytes.get(self.pos..)?.first_chunk::<N>()?;
        self.pos += N;
        Some(chunk)
    }

    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Reads a varint. One- and two-byte varints, and varints with ten bytes left in the
    /// message (every varint but the message's last few), take paths without per-byte
    /// bounds checks; the rest take the checked byte loop. Both accept and refuse the same
    /// inputs (the tests below compare them on random bytes).
    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Result<u64, WireError> {
        let rest = &self.bytes[self.pos.min(self.bytes.len())..];
        match *rest {
            [byte, ..] if byte < 0x80 => {
                self.pos += 1;
                Ok(u64::from(byte))
            }
            // Two bytes (a length or value below 16384) without needing ten left: the
            // last fields of small messages.
            [low, high, ..] if high < 0x80 => {
                self.pos += 2;
                Ok(u64::from(low & 0x7f) | u64::from(high) << 7)
            }
            _ => match rest.first_chunk::<10>() {
                Some(chunk) => self.varint_unrolled(chunk),
                None => self.varint_checked(),
            },
        }
    }

    #[inline(always)]
    fn varint_unrolled(&mut self, chunk: &[u8; 10]) -> Result<u64, WireError> {
        let mut value = u64::from(chunk[0] & 0x7f);
        for (i, &byte) in chunk.iter().enumerate().skip(1) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                if i == 9 && byte > 1 {
                    break;
                }
                self.pos += i + 1;
                return Ok(value);
            }
        }
        self.varint_checked()
    }

    fn varint_checked(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.error("message ends inside a varint"));
            };
            self.pos += 1;
            if i == 9 && byte > 1 {
                return Err(self.error("varint longer than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    /// Reads a tag: (field number, wire type).
    #[inline(always)]
    pub(crate) fn tag(&mut self) -> Result<(u32, u8), WireError> {
        let start = self.pos;
        let tag = self.varint()?;
        let field = tag >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            self.pos = start;
            return Err(self.error(format!("invalid field number {field}")));
        }
        Ok((field as u32, (tag & 7) as u8))
    }

    #[inline]
    pub(crate) fn fixed32(&mut self) -> Result<u32, WireError> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    #[inline]
    pub(crate) fn fixed64(&mut self) -> Result<u64, WireError> {
        let bytes = self.take(8)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        Ok(u64::from_le_bytes(b))
    }

    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.bytes.len() - self.pos < n {
            return Err(self.error(format!(
                "field of {n} bytes runs past the end of its message ({} left)",
                self.bytes.len() - self.pos
            )));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    /// The body of a length-delimited field, as a cursor of its own.
    #[inline(always)]
    pub(crate) fn len_delimited(&mut self) -> Result<Cursor<'a>, WireError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| self.error("length does not fit memory"))?;
        let base = self.base + self.pos as u64;
        let bytes = self.take(len)?;
        Ok(Cursor::new(bytes, base))
    }

    /// Skips a field's value of `wire_type` (unknown fields are skipped, as protobuf does).
    pub(crate) fn skip(&mut self, wire_type: u8) -> Result<(), WireError> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.len_delimited().map(drop),
            FIXED32 => self.take(4).map(drop),
            other => Err(self.error(format!("unsupported wire type {other} (groups are not)"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn unrolled_varints_read_as_the_checked_loop(bytes in proptest::collection::vec(any::<u8>(), 0..24), at in 0usize..24) {
            let at = at.min(bytes.len());
            let mut fast = Cursor::new(&bytes, 7);
            fast.pos = at;
            let mut slow = Cursor::new(&bytes, 7);
            slow.pos = at;
            let fast_result = fast.varint().map_err(|e| (e.offset, e.message));
            let slow_result = slow.varint_checked().map_err(|e| (e.offset, e.message));
            prop_assert_eq!(fast_result, slow_result);
            prop_assert_eq!(fast.pos, slow.pos);
        }

        #[test]
        fn written_varints_read_back(v in any::<u64>(), tail in proptest::collection::vec(any::<u8>(), 0..12)) {
            let mut bytes = Vec::new();
            put_varint(&mut bytes, v);
            let len = bytes.len();
            bytes.extend_from_slice(&tail);
            let mut cursor = Cursor::new(&bytes, 0);
            prop_assert_eq!(cursor.varint().unwrap(), v);
            prop_assert_eq!(cursor.pos, len);
        }
    }
}
