//! UTF-8 checking of the text values rows are made of, the one check of the typed readers
//! and writers and of YSON's row scan (the row interface's column check keeps core's: this
//! one inlined there made JSON's row scan slower).
//!
//! Most text is short ASCII (names, addresses, dates, URLs), where `core::str::from_utf8`
//! is an out-of-line call that walks the bytes one at a time until it reaches an aligned
//! word. Here a string of at most [`INLINE`] bytes is tested for ASCII in a few word loads,
//! inlined into the caller; any other string (longer, or with a byte above 0x7f) goes to
//! core's check, so the result and the error are always core's. A leaf: it imports nothing
//! of the crate.

use std::str::Utf8Error;

/// The longest string tested inline.
const INLINE: usize = 64;

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// `bytes` as text, as `std::str::from_utf8` says.
///
/// # Errors
/// `std::str::from_utf8`'s, when `bytes` is not UTF-8.
#[inline(always)]
pub(crate) fn text(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.len() <= INLINE && short_ascii(bytes) {
        // SAFETY: every byte is below 0x80, and ASCII is UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

/// Whether every byte of `bytes` (at most [`INLINE`] of them) is ASCII: whole words OR-ed
/// together, the last word overlapping the one before when the length is not a multiple.
#[inline(always)]
fn short_ascii(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 8 {
        let mut seen = word(&bytes[n - 8..]);
        let mut at = 0;
        while at + 8 < n {
            seen |= word(&bytes[at..]);
            at += 8;
        }
        seen & HIGH_BITS == 0
    } else if n >= 4 {
        let seen = half(bytes) | half(&bytes[n - 4..]);
        seen & 0x8080_8080 == 0
    } else {
        bytes.iter().fold(0u8, |seen, &b| seen | b) < 0x80
    }
}

#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[..8]);
    u64::from_ne_bytes(w)
}

#[inline(always)]
fn half(bytes: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[..4]);
    u32::from_ne_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same answer as core's check, for any bytes of any length around the inline
        /// limit: mostly ASCII with a stray high byte or a UTF-8 sequence (cut or whole) at
        /// any place, which is where a word-wise test could go wrong.
        #[test]
        fn agrees_with_core(
            mut bytes in proptest::collection::vec(0u8..0x80, 0..200),
            stray in proptest::option::of((any::<prop::sample::Index>(), 0x80u8..=0xff)),
            sequence in proptest::option::of((any::<prop::sample::Index>(), any::<char>())),
        ) {
            if let Some((at, b)) = stray {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] = b;
                }
            }
            if let Some((at, c)) = sequence {
                let i = at.index(bytes.len() + 1);
                let mut utf8 = [0; 4];
                bytes.splice(i..i, c.encode_utf8(&mut utf8).bytes());
            }
            prop_assert_eq!(text(&bytes), std::str::from_utf8(&bytes));
        }
    }

    #[test]
    fn every_length_and_place_of_a_high_byte() {
        for n in 0..=2 * INLINE + 10 {
            let ascii = vec![b'a'; n];
            assert_eq!(
                text(&ascii),
                Ok(std::str::from_utf8(&ascii).unwrap()),
                "{n}"
            );
            for at in 0..n {
                let mut bytes = ascii.clone();
                bytes[at] = 0x80;
                assert!(text(&bytes).is_err(), "a lone 0x80 at {at} of {n}");
                bytes[at] = 0x7f;
                assert!(text(&bytes).is_ok(), "0x7f at {at} of {n}");
            }
        }
    }
}
