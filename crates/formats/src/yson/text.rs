//! How YT spells scalars in text YSON, byte for byte (learned from `yt.yson.dumps`, see
//! docs/formats/yson.md): strings always quoted with C escapes, doubles in shortest round-trip digits.

/// Appends `value` as YT writes a double in text: shortest round-trip digits; fixed notation when
/// the decimal exponent is in -10..=20 (with a trailing `.` when there is no fraction, `1.`),
/// else `1e+21`/`1.5e-11`; `%nan`, `%inf`, `%-inf`.
pub fn format_double(value: f64, out: &mut Vec<u8>) {
    if value.is_nan() {
        out.extend_from_slice(b"%nan");
        return;
    }
    if value.is_infinite() {
        out.extend_from_slice(if value > 0.0 { b"%inf" } else { b"%-inf" });
        return;
    }
    // `{:e}` gives the shortest digits that round-trip: "-1.2345e-7", "1e21", "0e0". When the
    // value lies exactly halfway between two such spellings (562949953421312.25 between
    // ...312.2 and ...312.3) it takes the upper one, where YT (double-conversion) and
    // Python's repr take the one ending in an even digit. Rust's fixed-precision `{:.Ne}` is
    // exact and rounds ties to even, so an odd last digit is spelled again at that length and
    // kept when it reads back as the same double.
    let mut scientific = [0u8; 40];
    let mut length = spell_scientific(&mut scientific, format_args!("{value:e}"));
    let mantissa_end = scientific[..length]
        .iter()
        .position(|&b| b == b'e')
        .unwrap_or(length);
    if mantissa_end > 0 && scientific[mantissa_end - 1] % 2 == 1 {
        let fraction_digits = scientific[..mantissa_end]
            .iter()
            .position(|&b| b == b'.')
            .map_or(0, |dot| mantissa_end - dot - 1);
        let mut even = [0u8; 40];
        let even_length = spell_scientific(&mut even, format_args!("{value:.fraction_digits$e}"));
        // Just above a power of two the lower neighbour is nearer, so the lower spelling of a
        // tie may not read back (2^-24: ...0625 is spelled ...063, ...062 is another double).
        let reads_back = std::str::from_utf8(&even[..even_length])
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            == Some(value);
        if reads_back {
            scientific = even;
            length = even_length;
        }
    }
    let text = &scientific[..length];
    let (negative, text) = match text {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let e_index = text.iter().position(|&b| b == b'e').unwrap_or(text.len());
    let mut digits = [0u8; 24];
    let mut digit_count = 0;
    for &b in &text[..e_index] {
        if b != b'.' && digit_count < digits.len() {
            digits[digit_count] = b;
            digit_count += 1;
        }
    }
    let digits = &digits[..digit_count];
    let exponent: i32 = std::str::from_utf8(&text[(e_index + 1).min(text.len())..])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if negative {
        out.push(b'-');
    }
    if (-10..21).contains(&exponent) {
        if exponent >= 0 {
            let integer_digits = exponent as usize + 1;
            if digits.len() <= integer_digits {
                out.extend_from_slice(digits);
                out.resize(out.len() + integer_digits - digits.len(), b'0');
                out.push(b'.');
            } else {
                out.extend_from_slice(&digits[..integer_digits]);
                out.push(b'.');
                out.extend_from_slice(&digits[integer_digits..]);
            }
        } else {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + (-exponent - 1) as usize, b'0');
            out.extend_from_slice(digits);
        }
    } else {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        format_u64(exponent.unsigned_abs() as u64, out);
    }
}

/// Writes `args` (an `f64` in `{:e}` form) into `buffer`; returns the length.
fn spell_scientific(buffer: &mut [u8; 40], args: std::fmt::Arguments<'_>) -> usize {
    use std::io::Write;
    let mut cursor = std::io::Cursor::new(&mut buffer[..]);
    // 40 bytes hold any f64 in `{:e}` form (at most 24 bytes).
    let _ = cursor.write_fmt(args);
    cursor.position() as usize
}

/// Appends the decimal digits of `value`.
#[inline]
pub fn format_u64(mut value: u64, out: &mut Vec<u8>) {
    let mut buffer = [0u8; 20];
    let mut position = buffer.len();
    loop {
        position -= 1;
        buffer[position] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&buffer[position..]);
}

/// Appends `value` in decimal with a leading `-` when negative.
#[inline]
pub fn format_i64(value: i64, out: &mut Vec<u8>) {
    if value < 0 {
        out.push(b'-');
    }
    format_u64(value.unsigned_abs(), out);
}

/// Bytes copied as they are inside quotes: printable ASCII except `"` and `\`.
#[inline(always)]
fn is_plain(byte: u8) -> bool {
    (0x20..0x7f).contains(&byte) && byte != b'"' && byte != b'\\'
}

/// Appends `bytes` as a quoted text YSON string, escaped exactly as YT does (util's EscapeC):
/// `\"`, `\\`, `\t`, `\n`, `\r`; other bytes outside printable ASCII as `\xHH` (upper case),
/// except that bytes below 8 are a single octal digit when no octal digit follows, and a
/// three-digit octal escape is used instead of `\x` when a hex digit follows.
pub fn write_quoted(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut index = 0;
    while index < bytes.len() {
        let run_start = index;
        while index < bytes.len() && is_plain(bytes[index]) {
            index += 1;
        }
        out.extend_from_slice(&bytes[run_start..index]);
        if index == bytes.len() {
            break;
        }
        let byte = bytes[index];
        let next = bytes.get(index + 1).copied();
        index += 1;
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => {
                let next_is_octal = matches!(next, Some(b'0'..=b'7'));
                let next_is_hex = next.is_some_and(|b| b.is_ascii_hexdigit());
                if byte < 8 && !next_is_octal {
                    out.extend_from_slice(&[b'\\', b'0' + byte]);
                } else if next_is_hex {
                    out.extend_from_slice(&[
                        b'\\',
                        b'0' + (byte >> 6),
                        b'0' + ((byte >> 3) & 7),
                        b'0' + (byte & 7),
                    ]);
                } else {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    out.extend_from_slice(&[
                        b'\\',
                        b'x',
                        HEX[(byte >> 4) as usize],
                        HEX[(byte & 15) as usize],
                    ]);
                }
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(v: f64) -> String {
        let mut out = Vec::new();
        format_double(v, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn doubles_are_spelled_as_yt_does() {
        assert_eq!(double(1.0), "1.");
        assert_eq!(double(-0.0), "-0.");
        assert_eq!(double(0.0), "0.");
        assert_eq!(double(1e20), "100000000000000000000.");
        assert_eq!(double(1e21), "1e+21");
        assert_eq!(double(1e-7), "0.0000001");
        assert_eq!(double(1e-10), "0.0000000001");
        assert_eq!(double(1e-11), "1e-11");
        assert_eq!(double(1.5e-30), "1.5e-30");
        assert_eq!(double(9.999999999999998e16), "99999999999999980.");
        assert_eq!(double(5e-324), "5e-324");
        // Halfway between two shortest spellings: the even last digit, as YT and Python do.
        assert_eq!(double(562949953421312.25), "562949953421312.2");
        assert_eq!(double(562949953421312.75), "562949953421312.8");
        assert_eq!(double(0.3), "0.3");
        // A tie just above a power of two: only the upper spelling reads back.
        assert_eq!(double(5.960464477539063e-08), "0.00000005960464477539063");
        assert_eq!(double(f64::NAN), "%nan");
        assert_eq!(double(f64::NEG_INFINITY), "%-inf");
    }

    #[test]
    fn strings_are_escaped_as_yt_does() {
        let quoted = |b: &[u8]| {
            let mut out = Vec::new();
            write_quoted(b, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(quoted(b"\x001"), r#""\0001""#);
        assert_eq!(quoted(b"\x008"), r#""\08""#);
        assert_eq!(quoted(b"\x08a"), r#""\010a""#);
        assert_eq!(quoted(b"\x08g"), r#""\x08g""#);
        assert_eq!(quoted(b"\x7f"), r#""\x7F""#);
        assert_eq!(quoted(b"a\"b\\"), r#""a\"b\\""#);
    }
}
