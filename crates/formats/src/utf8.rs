//! UTF-8 checking of the text values rows are made of, the one check of the typed readers
//! and writers and of YSON's row scan (the row interface's column check keeps core's: this
//! one inlined there made JSON's row scan slower).
//!
//! Most text is ASCII (names, addresses, dates, URLs, descriptions), where
//! `core::str::from_utf8` walks the bytes one at a time until it reaches an aligned word,
//! then two words a step. Here a string of at most [`INLINE`] bytes is tested for ASCII in a
//! few word loads, inlined into the caller; any other string four words a step, out of line
//! ([`other_text`]), and from the first block holding a byte above 0x7f a short rest is
//! checked byte by byte (the Unicode Standard's table of well-formed sequences), a long one
//! by core. An error is always core's own, for the whole string. A leaf: it imports nothing
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
    other_text(bytes)
}

/// Bytes a step of [`other_text`]'s ASCII test: four words.
const BLOCK: usize = 32;

/// [`text`] of a string that is not short ASCII: a short one checked by [`short_utf8`]; a
/// longer one's whole blocks tested for ASCII, the rest (the tail, or everything from the
/// first block with a byte above 0x7f) checked by [`short_utf8`] when short, else by core.
/// An error is core's, for the whole string.
#[inline(never)]
fn other_text(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.len() <= INLINE {
        // Not ASCII (`text` tested it): byte by byte, without testing it again.
        return match short_utf8(bytes) {
            // SAFETY: `short_utf8` accepts only UTF-8.
            true => Ok(unsafe { std::str::from_utf8_unchecked(bytes) }),
            false => std::str::from_utf8(bytes),
        };
    }
    let mut ascii = 0;
    for block in bytes.chunks_exact(BLOCK) {
        let seen = word(block) | word(&block[8..]) | word(&block[16..]) | word(&block[24..]);
        if seen & HIGH_BITS != 0 {
            break;
        }
        ascii += BLOCK;
    }
    let rest = &bytes[ascii..];
    let valid = match rest.len() <= INLINE {
        // The tail of ASCII text, or a few bytes from the first above 0x7f.
        true => short_ascii(rest) || short_utf8(rest),
        false => std::str::from_utf8(rest).is_ok(),
    };
    match valid {
        // SAFETY: ASCII up to `ascii`, UTF-8 from there, and ASCII ends no sequence.
        true => Ok(unsafe { std::str::from_utf8_unchecked(bytes) }),
        false => std::str::from_utf8(bytes),
    }
}

/// Whether `bytes` are UTF-8, byte by byte: the well-formed sequences of the Unicode
/// Standard's table 3-7 (no overlong forms, no surrogates, nothing above U+10FFFF). For a
/// few bytes this is a loop where core's check is a call that sets up its word loop first.
fn short_utf8(bytes: &[u8]) -> bool {
    let mut at = 0;
    while let Some(&lead) = bytes.get(at) {
        if lead < 0x80 {
            at += 1;
            continue;
        }
        // The sequence's width and the range of its second byte.
        let (width, low, high) = match lead {
            0xc2..=0xdf => (2, 0x80, 0xbf),
            0xe0 => (3, 0xa0, 0xbf),
            0xe1..=0xec | 0xee..=0xef => (3, 0x80, 0xbf),
            0xed => (3, 0x80, 0x9f),
            0xf0 => (4, 0x90, 0xbf),
            0xf1..=0xf3 => (4, 0x80, 0xbf),
            0xf4 => (4, 0x80, 0x8f),
            _ => return false,
        };
        let Some(sequence) = bytes.get(at..at + width) else {
            return false;
        };
        if !(low..=high).contains(&sequence[1]) || sequence[2..].iter().any(|&b| b & 0xc0 != 0x80) {
            return false;
        }
        at += width;
    }
    true
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

        /// The byte-wise check says what core says of any bytes: arbitrary ones (mostly
        /// invalid) and text of any characters, cut anywhere.
        #[test]
        fn short_utf8_agrees_with_core(
            bytes in proptest::collection::vec(any::<u8>(), 0..12),
            chars in proptest::collection::vec(any::<char>(), 0..6),
            cut in any::<prop::sample::Index>(),
        ) {
            prop_assert_eq!(short_utf8(&bytes), std::str::from_utf8(&bytes).is_ok());
            let text: String = chars.into_iter().collect();
            let cut = &text.as_bytes()[..cut.index(text.len() + 1)];
            prop_assert_eq!(short_utf8(cut), std::str::from_utf8(cut).is_ok());
            prop_assert_eq!(short_utf8(text.as_bytes()), true);
        }
    }

    /// Every lead byte above 0x7f with every second byte, and with third and fourth bytes at
    /// the edges of the continuation range: the byte-wise check and core agree (the edges of
    /// table 3-7 are in the first two bytes).
    #[test]
    fn short_utf8_agrees_with_core_on_every_sequence_start() {
        for a in 0x80..=0xffu8 {
            for b in 0..=0xffu8 {
                let two = [a, b];
                assert_eq!(
                    short_utf8(&two),
                    std::str::from_utf8(&two).is_ok(),
                    "{two:x?}"
                );
                for c in [0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xff] {
                    let three = [a, b, c];
                    assert_eq!(
                        short_utf8(&three),
                        std::str::from_utf8(&three).is_ok(),
                        "{three:x?}"
                    );
                    for d in [0x7f, 0x80, 0xbf, 0xc0] {
                        let four = [a, b, c, d];
                        assert_eq!(
                            short_utf8(&four),
                            std::str::from_utf8(&four).is_ok(),
                            "{four:x?}"
                        );
                    }
                }
            }
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
