//! YT's decimal values: text (`"-12.34"`) and binary (what rows, YSON and Skiff carry).
//!
//! A `decimal(p, s)` value is the integer `v = text * 10^s`, |v| <= 10^p - 1, stored as a
//! big-endian two's-complement integer of 4, 8, 16 or 32 bytes (by precision: up to 9, 18,
//! 38, 76 digits) with the top bit flipped, so that the bytes compare like the numbers.
//! Three special values sit at the top of the integer range of each width `W` bits:
//! `nan` = 2^(W-1) - 1, `inf` = 2^(W-1) - 2, `-inf` = -(2^(W-1) - 2).
//!
//! Arithmetic here is on a 256-bit magnitude (four little-endian u64 limbs) plus a sign:
//! enough for 76 digits (10^76 < 2^253) at every width, with no dependency.

use crate::error::TypeError;
use crate::Type;

/// A 256-bit unsigned magnitude, least significant limb first.
type Magnitude = [u64; 4];

fn mul10_add(m: &mut Magnitude, digit: u64) {
    let mut carry = u128::from(digit);
    for limb in m.iter_mut() {
        let wide = u128::from(*limb) * 10 + carry;
        *limb = wide as u64;
        carry = wide >> 64;
    }
}

/// Divides by 10 in place, returns the remainder.
fn divmod10(m: &mut Magnitude) -> u8 {
    let mut rem = 0u128;
    for limb in m.iter_mut().rev() {
        let wide = (rem << 64) | u128::from(*limb);
        *limb = (wide / 10) as u64;
        rem = wide % 10;
    }
    rem as u8
}

fn is_zero(m: &Magnitude) -> bool {
    m.iter().all(|&l| l == 0)
}

/// 10^precision - 1: the largest magnitude a decimal of this precision holds.
fn max_magnitude(precision: u8) -> Magnitude {
    let mut m = [0u64; 4];
    for _ in 0..precision {
        mul10_add(&mut m, 9);
    }
    m
}

fn less_or_equal(a: &Magnitude, b: &Magnitude) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    true
}

/// 2^(bits-1) - 1 - `below`, as a magnitude: the special values' magnitudes.
fn top_magnitude(bits: usize, below: u64) -> Magnitude {
    let mut m = [0u64; 4];
    // 2^(bits-1) - 1: all ones in the low bits-1 bits.
    for (i, limb) in m.iter_mut().enumerate() {
        let lo = i * 64;
        if bits > lo + 64 {
            *limb = u64::MAX;
        } else if bits - 1 > lo {
            *limb = (1u64 << (bits - 1 - lo)) - 1;
        }
    }
    // Subtracting a small number from a value whose low limb is all ones never borrows.
    m[0] -= below;
    m
}

/// A decoded decimal: a finite value or one of the specials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decoded {
    Finite {
        negative: bool,
        magnitude: Magnitude,
    },
    Nan,
    PlusInf,
    MinusInf,
}

fn check_params(precision: u8, scale: u8) -> Result<(), TypeError> {
    Type::Decimal { precision, scale }.validate()
}

/// Converts decimal text (`"-12.34"`, `"5"`, `"+0.5"`, `"nan"`, `"inf"`, `"-inf"`) to the
/// binary form of `decimal(precision, scale)`. Fewer fraction digits than `scale` are padded
/// with zeros; more are an error (no silent rounding). Leading zeros do not count against the
/// precision.
///
/// # Errors
///
/// A [`TypeError`] when the parameters are invalid, the text is not a decimal number, has
/// more than `scale` fraction digits, or needs more than `precision` digits.
pub fn decimal_text_to_binary(text: &str, precision: u8, scale: u8) -> Result<Vec<u8>, TypeError> {
    check_params(precision, scale)?;
    let invalid = |why: &str| {
        TypeError::new(
            "",
            format!("{text:?} is not a valid decimal({precision},{scale}): {why}"),
        )
    };
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let decoded = if body.eq_ignore_ascii_case("inf") {
        if negative {
            Decoded::MinusInf
        } else {
            Decoded::PlusInf
        }
    } else if body.eq_ignore_ascii_case("nan") {
        if negative {
            return Err(invalid("nan has no sign"));
        }
        Decoded::Nan
    } else {
        let (int_part, frac_part) = match body.split_once('.') {
            Some((i, f)) => (i, f),
            None => (body, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid("no digits"));
        }
        if let Some(bad) = int_part
            .chars()
            .chain(frac_part.chars())
            .find(|c| !c.is_ascii_digit())
        {
            return Err(invalid(&format!("unexpected character {bad:?}")));
        }
        if frac_part.len() > usize::from(scale) {
            return Err(invalid(&format!(
                "{} digits after the point, the scale is {scale}",
                frac_part.len()
            )));
        }
        let significant_int = int_part.trim_start_matches('0');
        if significant_int.len() + usize::from(scale) > usize::from(precision) {
            return Err(invalid("too many digits before the point"));
        }
        let mut magnitude = [0u64; 4];
        for c in significant_int.bytes().chain(frac_part.bytes()) {
            mul10_add(&mut magnitude, u64::from(c - b'0'));
        }
        for _ in frac_part.len()..usize::from(scale) {
            mul10_add(&mut magnitude, 0);
        }
        Decoded::Finite {
            negative: negative && !is_zero(&magnitude),
            magnitude,
        }
    };
    Ok(encode(decoded, Type::decimal_byte_width(precision)))
}

/// Converts the binary form of a `decimal(precision, scale)` to text, exactly `scale`
/// fraction digits (`"-12.30"`, `"0.05"`, `"7"`), or `nan`, `inf`, `-inf`.
///
/// # Errors
///
/// A [`TypeError`] when the parameters are invalid, the byte length is not the width of
/// this precision, or the value needs more than `precision` digits.
pub fn decimal_binary_to_text(bytes: &[u8], precision: u8, scale: u8) -> Result<String, TypeError> {
    let decoded = decode_checked(bytes, precision, scale)?;
    Ok(match decoded {
        Decoded::Nan => "nan".to_owned(),
        Decoded::PlusInf => "inf".to_owned(),
        Decoded::MinusInf => "-inf".to_owned(),
        Decoded::Finite {
            negative,
            mut magnitude,
        } => {
            let mut digits = Vec::with_capacity(80);
            while !is_zero(&magnitude) {
                digits.push(b'0' + divmod10(&mut magnitude));
            }
            // At least one digit before the point.
            while digits.len() <= usize::from(scale) {
                digits.push(b'0');
            }
            let mut text = String::with_capacity(digits.len() + 2);
            if negative {
                text.push('-');
            }
            for (i, d) in digits.iter().rev().enumerate() {
                if i == digits.len() - usize::from(scale) {
                    text.push('.');
                }
                text.push(char::from(*d));
            }
            text
        }
    })
}

/// Checks that `bytes` is a valid binary `decimal(precision, scale)` value.
///
/// # Errors
///
/// As [`decimal_binary_to_text`].
pub fn check_decimal_binary(bytes: &[u8], precision: u8, scale: u8) -> Result<(), TypeError> {
    decode_checked(bytes, precision, scale).map(|_| ())
}

fn decode_checked(bytes: &[u8], precision: u8, scale: u8) -> Result<Decoded, TypeError> {
    check_params(precision, scale)?;
    let width = Type::decimal_byte_width(precision);
    if bytes.len() != width {
        return Err(TypeError::new(
            "",
            format!(
                "a decimal({precision},{scale}) is {width} bytes, found {}",
                bytes.len()
            ),
        ));
    }
    let decoded = decode(bytes);
    if let Decoded::Finite { magnitude, .. } = decoded {
        if !less_or_equal(&magnitude, &max_magnitude(precision)) {
            return Err(TypeError::new(
                "",
                format!("decimal value does not fit in decimal({precision},{scale})"),
            ));
        }
    }
    Ok(decoded)
}

fn encode(decoded: Decoded, width: usize) -> Vec<u8> {
    let bits = width * 8;
    let (negative, magnitude) = match decoded {
        Decoded::Finite {
            negative,
            magnitude,
        } => (negative, magnitude),
        Decoded::Nan => (false, top_magnitude(bits, 0)),
        Decoded::PlusInf => (false, top_magnitude(bits, 1)),
        Decoded::MinusInf => (true, top_magnitude(bits, 1)),
    };
    // Two's complement over 256 bits, then keep the low `width` bytes.
    let mut limbs = magnitude;
    if negative {
        let mut carry = 1u128;
        for limb in limbs.iter_mut() {
            let wide = u128::from(!*limb) + carry;
            *limb = wide as u64;
            carry = wide >> 64;
        }
    }
    let mut full = [0u8; 32];
    for (i, limb) in limbs.iter().enumerate() {
        full[32 - 8 * (i + 1)..32 - 8 * i].copy_from_slice(&limb.to_be_bytes());
    }
    let mut out = full[32 - width..].to_vec();
    out[0] ^= 0x80;
    out
}

fn decode(bytes: &[u8]) -> Decoded {
    let width = bytes.len();
    let bits = width * 8;
    let negative = bytes[0] & 0x80 == 0; // the flipped sign bit: 0 means negative
    let mut full = [if negative { 0xFF } else { 0x00 }; 32];
    full[32 - width..].copy_from_slice(bytes);
    full[32 - width] ^= 0x80;
    let mut limbs = [0u64; 4];
    for (i, limb) in limbs.iter_mut().enumerate() {
        let mut chunk = [0u8; 8];
        chunk.copy_from_slice(&full[32 - 8 * (i + 1)..32 - 8 * i]);
        *limb = u64::from_be_bytes(chunk);
    }
    if negative {
        let mut carry = 1u128;
        for limb in limbs.iter_mut() {
            let wide = u128::from(!*limb) + carry;
            *limb = wide as u64;
            carry = wide >> 64;
        }
    }
    if !negative && limbs == top_magnitude(bits, 0) {
        Decoded::Nan
    } else if limbs == top_magnitude(bits, 1) {
        if negative {
            Decoded::MinusInf
        } else {
            Decoded::PlusInf
        }
    } else {
        Decoded::Finite {
            negative,
            magnitude: limbs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_binary_forms() {
        // decimal(3,2): 4 bytes. 1.23 -> 123 -> 0x0000007B, top bit flipped.
        assert_eq!(
            decimal_text_to_binary("1.23", 3, 2).unwrap(),
            vec![0x80, 0, 0, 0x7B]
        );
        // -1.23 -> -123 -> 0xFFFFFF85 -> 0x7FFFFF85
        assert_eq!(
            decimal_text_to_binary("-1.23", 3, 2).unwrap(),
            vec![0x7F, 0xFF, 0xFF, 0x85]
        );
        assert_eq!(
            decimal_text_to_binary("nan", 3, 2).unwrap(),
            vec![0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(
            decimal_text_to_binary("inf", 3, 2).unwrap(),
            vec![0xFF, 0xFF, 0xFF, 0xFE]
        );
        assert_eq!(
            decimal_text_to_binary("-inf", 3, 2).unwrap(),
            vec![0x00, 0x00, 0x00, 0x02]
        );
        assert_eq!(
            decimal_text_to_binary("0", 3, 2).unwrap(),
            vec![0x80, 0, 0, 0]
        );
    }

    #[test]
    fn text_round_trips_at_every_width() {
        for (precision, scale, text) in [
            (3u8, 2u8, "-9.99"),
            (9, 0, "999999999"),
            (18, 6, "-123456789012.345678"),
            (38, 2, "-999999999999999999999999999999999999.99"),
            (
                76,
                10,
                "123456789012345678901234567890123456789012345678901234567890.1234567890",
            ),
            (
                76,
                0,
                "-9999999999999999999999999999999999999999999999999999999999999999999999999999",
            ),
            (10, 3, "0.005"),
            (35, 5, "-inf"),
            (76, 5, "nan"),
        ] {
            let bin = decimal_text_to_binary(text, precision, scale).unwrap();
            assert_eq!(bin.len(), Type::decimal_byte_width(precision));
            assert_eq!(
                decimal_binary_to_text(&bin, precision, scale).unwrap(),
                text,
                "{precision},{scale}"
            );
        }
    }

    #[test]
    fn normalises_text() {
        let bin = decimal_text_to_binary("+001.5", 5, 3).unwrap();
        assert_eq!(decimal_binary_to_text(&bin, 5, 3).unwrap(), "1.500");
        let bin = decimal_text_to_binary("-0.0", 5, 3).unwrap();
        assert_eq!(decimal_binary_to_text(&bin, 5, 3).unwrap(), "0.000");
        let bin = decimal_text_to_binary(".5", 5, 1).unwrap();
        assert_eq!(decimal_binary_to_text(&bin, 5, 1).unwrap(), "0.5");
    }

    #[test]
    fn rejects_bad_text_and_bytes() {
        assert!(decimal_text_to_binary("1.234", 5, 2).is_err());
        assert!(decimal_text_to_binary("1000", 5, 2).is_err());
        assert!(decimal_text_to_binary("1e5", 5, 2).is_err());
        assert!(decimal_text_to_binary("", 5, 2).is_err());
        assert!(decimal_text_to_binary("-", 5, 2).is_err());
        assert!(decimal_text_to_binary("-nan", 5, 2).is_err());
        // YT accepts a plus sign on nan, like on inf.
        assert_eq!(
            decimal_text_to_binary("+NaN", 3, 2).unwrap(),
            vec![0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert!(decimal_text_to_binary("1", 0, 0).is_err());
        assert!(decimal_text_to_binary("1", 77, 0).is_err());
        assert!(decimal_text_to_binary("1", 5, 6).is_err());
        assert!(decimal_binary_to_text(&[0x80, 0, 0], 3, 2).is_err());
        // 1000 does not fit decimal(3, 0).
        assert!(decimal_binary_to_text(&[0x80, 0, 0x03, 0xE8], 3, 0).is_err());
    }
}
