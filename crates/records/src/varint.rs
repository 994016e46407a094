//! LEB128 varint64, the integer encoding of Riegeli chunk data.

use crate::error::Malformed;

pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
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
        assert!(get_varint(&[0xff; 10], 0).is_err());
    }
}
