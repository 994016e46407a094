//! The cursor over a datum: varints, lengths and block counts checked against the bytes
//! left, the YT range of integers, the checks of bytes-like values.

use crate::avro::codec::{IntRange, Plan, MAX_EMPTY_ITEMS};
use crate::avro::FORMAT;
use crate::serde_error::SerdeError;

type Result<T> = std::result::Result<T, SerdeError>;

/// The datum being read: the bytes, the cursor, and where the value read last began (the
/// offset of errors raised by visitors, which know no position).
pub(super) struct Input<'de> {
    bytes: &'de [u8],
    pub(super) pos: usize,
    pub(super) item: usize,
}

/// The bytes of a bytes-like value: borrowed from the input, or (a decimal, whose sign bit
/// the wire flips) copied to the caller's buffer.
pub(super) enum Raw<'de, 'b> {
    Borrowed(&'de [u8]),
    Copied(&'b [u8]),
}

impl<'de> Input<'de> {
    pub(super) fn new(bytes: &'de [u8]) -> Input<'de> {
        Input {
            bytes,
            pos: 0,
            item: 0,
        }
    }

    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    pub(super) fn item(&self) -> usize {
        self.item
    }

    #[cold]
    pub(super) fn fail(&self, at: usize, message: impl Into<String>) -> SerdeError {
        SerdeError::new(FORMAT, Some(at), message.into())
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    #[inline]
    pub(super) fn long(&mut self) -> Result<i64> {
        let start = self.pos;
        let mut z = 0u64;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.fail(start, "input ends inside a varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.fail(start, "varint longer than 64 bits"));
            }
            z |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                break;
            }
        }
        Ok(crate::varint::unzigzag(z))
    }

    #[inline]
    pub(super) fn take(&mut self, n: usize) -> Result<&'de [u8]> {
        if self.remaining() < n {
            let message = format!("{n} bytes needed, {} left", self.remaining());
            return Err(self.fail(self.pos, message));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    #[inline]
    pub(super) fn bytes_field(&mut self) -> Result<&'de [u8]> {
        let start = self.pos;
        let len = self.long()?;
        match usize::try_from(len) {
            Ok(len) if len <= self.remaining() => self.take(len),
            _ => {
                let message = format!("length {len} with {} bytes left", self.remaining());
                Err(self.fail(start, message))
            }
        }
    }

    pub(super) fn str_field(&mut self) -> Result<&'de str> {
        let start = self.pos;
        let bytes = self.bytes_field()?;
        crate::utf8::text(bytes).map_err(|_| self.fail(start, "invalid UTF-8 in a string"))
    }

    /// An integer of the column's YT type.
    #[inline]
    pub(super) fn integer(&mut self, unsigned: bool, range: &IntRange) -> Result<i64> {
        let start = self.pos;
        let v = self.long()?;
        let fits = if unsigned {
            v as u64 <= range.max
        } else {
            v >= range.min && (v < 0 || v as u64 <= range.max)
        };
        if !fits {
            let message = format!(
                "{v} is out of range for {} ({}..={})",
                range.ty.name(),
                range.min,
                range.max
            );
            return Err(self.fail(start, message));
        }
        Ok(v)
    }

    /// The branch of an optional's union: whether the value is present.
    #[inline]
    pub(super) fn present(&mut self) -> Result<bool> {
        match self.bytes.get(self.pos) {
            Some(0) => {
                self.pos += 1;
                Ok(false)
            }
            Some(2) => {
                self.pos += 1;
                Ok(true)
            }
            _ => {
                let start = self.pos;
                let branch = self.long()?;
                Err(self.fail(start, format!("union branch {branch} of an optional")))
            }
        }
    }

    /// The item count of the next block (0 at the end); a negative count is followed by
    /// the block's byte size. Items of `min` bytes must fit the bytes left; items that may
    /// be empty are capped at `MAX_EMPTY_ITEMS`.
    pub(super) fn block_count(&mut self, min: usize) -> Result<usize> {
        let start = self.pos;
        let count = self.long()?;
        let count = if count < 0 {
            let size = self.long()?;
            if size < 0 {
                return Err(self.fail(start, format!("block of {size} bytes")));
            }
            count.unsigned_abs()
        } else {
            count as u64
        };
        let fits = if min == 0 {
            count <= MAX_EMPTY_ITEMS
        } else {
            count.saturating_mul(min as u64) <= self.remaining() as u64
        };
        if !fits {
            let message = format!("block of {count} items cannot fit the input left");
            return Err(self.fail(start, message));
        }
        Ok(count as usize)
    }

    /// The checked bytes of a bytes-like `plan`; `None` for other plans.
    pub(super) fn raw<'b>(
        &mut self,
        plan: &Plan,
        buf: &'b mut [u8; 32],
    ) -> Result<Option<Raw<'de, 'b>>> {
        let start = self.pos;
        Ok(Some(match plan {
            Plan::Bytes => Raw::Borrowed(self.bytes_field()?),
            Plan::String => Raw::Borrowed(self.str_field()?.as_bytes()),
            Plan::Fixed(n) => Raw::Borrowed(self.take(*n)?),
            Plan::Yson => {
                let bytes = self.bytes_field()?;
                if let Err(e) = crate::yson::from_slice(bytes) {
                    return Err(self.fail(start, format!("yson value: {e}")));
                }
                Raw::Borrowed(bytes)
            }
            Plan::Decimal {
                width,
                precision,
                scale,
            } => {
                let yt = &mut buf[..*width];
                yt.copy_from_slice(self.take(*width)?);
                yt[0] ^= 0x80;
                if let Err(e) = shapeshift_types::check_decimal_binary(yt, *precision, *scale) {
                    return Err(self.fail(start, e.message));
                }
                Raw::Copied(yt)
            }
            _ => return Ok(None),
        }))
    }
}
