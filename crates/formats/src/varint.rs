//! LEB128 varints and zigzag, as YSON, Protobuf and Avro spell integers: the one writer every
//! codec uses (a leaf module: it imports nothing of the crate).

/// Appends `v` as a varint: seven bits a byte, low first, the top bit set on all but the last.
#[inline(always)]
pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    // Byte by byte: a copy of a variable-length local would call memcpy.
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The number of bytes [`put`] writes for `v`.
#[inline(always)]
pub(crate) fn len(v: u64) -> usize {
    // 1 + floor(log2(v) / 7), with 0 taking one byte.
    ((64 - (v | 1).leading_zeros() as usize) + 6) / 7
}

/// Zigzag: small negative and positive numbers both to small unsigned ones.
#[inline(always)]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The varint at the start of `bytes` and its length; `None` when it is cut short or does
/// not fit 64 bits.
#[inline]
pub(crate) fn get(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return None;
        }
        v |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The inverse of [`zigzag`].
#[inline(always)]
pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_match_the_written_bytes_at_every_boundary() {
        for shift in 0..64 {
            for v in [
                (1u64 << shift) - 1,
                1u64 << shift,
                (1u64 << shift) + 1,
                u64::MAX,
            ] {
                let mut out = Vec::new();
                put(&mut out, v);
                assert_eq!(out.len(), len(v), "{v}");
                assert!(out[..out.len() - 1].iter().all(|b| b & 0x80 != 0));
                assert_eq!(out.last().map(|b| b & 0x80), Some(0));
            }
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        for v in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            put(&mut out, zigzag(v));
            assert_eq!(
                get(&out).map(|(u, n)| (unzigzag(u), n)),
                Some((v, out.len()))
            );
            assert_eq!(get(&out[..out.len() - 1]), None);
        }
        assert_eq!(
            get(&[0xff; 9].iter().chain(&[0x02]).copied().collect::<Vec<_>>()),
            None
        );
    }
}
