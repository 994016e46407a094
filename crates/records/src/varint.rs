//! LEB128 varint64, the integer encoding of Riegeli chunk data.

use crate::error::Malformed;

pub(crate) fn put_varint(out: &mut Vec<u8>, value: u64) {
    let mut bytes = [0u8; 10];
    let len = encode_varint(value, &mut bytes);
    out.extend_from_slice(&bytes[..len]);
}

/// Writes `value` as a varint at the start of `out`; returns its length.
pub(crate) fn encode_varint(mut value: u64, out: &mut [u8; 10]) -> usize {
    let mut len = 0;
    while value >= 0x80 {
        out[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    out[len] = value as u8;
    len + 1
}

#[cfg(test)]
pub(crate) fn varint_len(mut value: u64) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

/// Decodes a varint64 at the start of `bytes`; returns the value and its length.
/// `base` is the file offset of `bytes[0]`, used in errors.
pub(crate) fn get_varint(bytes: &[u8], base: u64) -> Result<(u64, usize), Malformed> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        let payload = u64::from(byte & 0x7f);
        if i == 9 && byte > 1 {
            return Err(Malformed::new(base, "varint64 overflows 64 bits"));
        }
        value |= payload << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if bytes.len() < 10 {
        Err(Malformed::new(
            base + bytes.len() as u64,
            "varint64 is cut off by the end of its buffer",
        ))
    } else {
        Err(Malformed::new(base, "varint64 longer than 10 bytes"))
    }
}

/// Decodes a varint32 (at most 5 bytes, at most `u32::MAX`) at the start of `bytes`, as
/// Riegeli's transposed chunks store tags, indices and lengths.
pub(crate) fn get_varint32(bytes: &[u8], base: u64) -> Result<(u32, usize), Malformed> {
    let (value, len) = get_varint(bytes, base)?;
    match u32::try_from(value) {
        Ok(value) if len <= 5 => Ok((value, len)),
        _ => Err(Malformed::new(base, "varint32 exceeds 32 bits")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value));
            assert_eq!(get_varint(&out, 0).unwrap(), (value, out.len()));
        }
        assert!(get_varint(&[0x80], 0).is_err());
        assert_eq!(
            get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x0f], 0).unwrap(),
            (u32::MAX, 5)
        );
        assert!(get_varint32(&[0x80, 0x80, 0x80, 0x80, 0x10], 0).is_err());
        assert!(get_varint32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 0).is_err());
        assert!(get_varint(&[0xff; 10], 0).is_err());
    }
}
