//! A small JSON reader for table rows: objects keep every key in order (duplicates too, as
//! YSON maps may have them), integers stay exact as `i64` or `u64`, other numbers are read
//! with the standard library's correctly rounded parser.
//!
//! Invariants: `pos` only moves forward over bytes that were checked; nesting is limited to
//! [`MAX_DEPTH`]; no allocation is sized by anything but bytes actually present.

use super::{decode_string, plain_run};

pub(crate) const MAX_DEPTH: usize = 256;

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer above `i64::MAX`.
    Uint(u64),
    Float(f64),
    String(String),
    Array(Vec<Json>),
    /// Entries in document order, duplicates kept.
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) | Json::Uint(_) | Json::Float(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// The last entry named `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match *self {
            Json::Int(v) => u64::try_from(v).ok(),
            Json::Uint(v) => Some(v),
            _ => None,
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match *self {
            Json::Int(v) => Some(v),
            _ => None,
        }
    }
}

/// A syntax error: byte offset and what was expected.
pub(crate) struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

pub(crate) struct Parser<'a> {
    input: &'a [u8],
    pub pos: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(input: &'a [u8], pos: usize) -> Parser<'a> {
        Parser { input, pos }
    }

    fn fail<T>(&self, at: usize, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            offset: at,
            message: message.into(),
        })
    }

    pub(crate) fn skip_whitespace(&mut self) {
        while self.pos < self.input.len()
            && matches!(self.input[self.pos], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.pos += 1;
        }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), SyntaxError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.fail(
                self.pos,
                format!("expected '{}', found {}", byte as char, self.describe()),
            )
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the input".into(),
            Some(b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(b) => format!("byte 0x{b:02x}"),
        }
    }

    /// One value, after optional whitespace.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        self.skip_whitespace();
        if depth > MAX_DEPTH {
            return self.fail(self.pos, format!("nesting deeper than {MAX_DEPTH}"));
        }
        let start = self.pos;
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                self.skip_whitespace();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Json::Object(entries));
                }
                loop {
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return self.fail(
                            self.pos,
                            format!("expected a key string, found {}", self.describe()),
                        );
                    }
                    let key = self.string()?;
                    self.expect(b':')?;
                    let value = self.value(depth + 1)?;
                    entries.push((key, value));
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Json::Object(entries));
                        }
                        _ => {
                            return self.fail(
                                self.pos,
                                format!("expected ',' or '}}', found {}", self.describe()),
                            )
                        }
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => {
                            return self.fail(
                                self.pos,
                                format!("expected ',' or ']', found {}", self.describe()),
                            )
                        }
                    }
                }
            }
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fail(
                start,
                format!("expected a JSON value, found {}", self.describe()),
            ),
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json, SyntaxError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            self.fail(
                self.pos,
                format!("expected {}", String::from_utf8_lossy(word)),
            )
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Json, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        if self.digits() == 0 {
            return self.fail(self.pos, "expected a digit");
        }
        if self.input[int_start] == b'0' && self.pos - int_start > 1 {
            return self.fail(int_start, "a number cannot start with 0");
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            integer = false;
            if self.digits() == 0 {
                return self.fail(self.pos, "expected a digit after '.'");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            integer = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.fail(self.pos, "expected a digit in the exponent");
            }
        }
        // The bytes are ASCII digits and signs: valid UTF-8.
        let text = std::str::from_utf8(&self.input[start..self.pos]).unwrap_or("");
        if integer {
            if let Ok(v) = text.parse::<i64>() {
                return Ok(Json::Int(v));
            }
            if let Ok(v) = text.parse::<u64>() {
                return Ok(Json::Uint(v));
            }
        }
        match text.parse::<f64>() {
            Ok(v) => Ok(Json::Float(v)),
            Err(_) => self.fail(start, format!("bad number {text}")),
        }
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let at = self.pos;
        let digits = self.input.get(self.pos..self.pos + 4).ok_or(SyntaxError {
            offset: at,
            message: "truncated \\u escape".into(),
        })?;
        let text = std::str::from_utf8(digits)
            .ok()
            .filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit()));
        let value = text
            .and_then(|t| u32::from_str_radix(t, 16).ok())
            .ok_or(SyntaxError {
                offset: at,
                message: "expected 4 hex digits after \\u".into(),
            })?;
        self.pos += 4;
        Ok(value)
    }

    /// A string at `pos` (its opening quote), unescaped.
    pub(crate) fn string(&mut self) -> Result<String, SyntaxError> {
        let open = self.pos;
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let run = self.pos;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.pos += 1;
            }
            match std::str::from_utf8(&self.input[run..self.pos]) {
                Ok(text) => out.push_str(text),
                Err(e) => return self.fail(run + e.valid_up_to(), "invalid UTF-8 in a string"),
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let at = self.pos;
                    let escaped = self.peek();
                    self.pos += 1;
                    match escaped {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let first = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&first) {
                                if !self.input[self.pos..].starts_with(b"\\u") {
                                    return self
                                        .fail(self.pos, "expected the low surrogate of a pair");
                                }
                                self.pos += 2;
                                let second = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&second) {
                                    return self.fail(self.pos - 4, "expected a low surrogate");
                                }
                                0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                            } else {
                                first
                            };
                            match char::from_u32(code) {
                                Some(c) => out.push(c),
                                None => return self.fail(at, "a lone surrogate"),
                            }
                        }
                        _ => return self.fail(at, "unknown escape"),
                    }
                }
                None => return self.fail(open, "unterminated string"),
                Some(b) => {
                    return self.fail(self.pos, format!("control byte 0x{b:02x} in a string"))
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tokens read in place, for the fast paths (the interface's row scan, the serde path): each
// reads exactly what the parser above reads, or says `None` and leaves it to the parser.

/// A string at `*at` (its `"`) decoded (escapes, U+0080..U+00FF as bytes), its bytes
/// appended to `scratch`: `start..end` there; `None` for anything the row reader's parser
/// would refuse.
pub(crate) fn decoded_string(
    input: &[u8],
    at: &mut usize,
    scratch: &mut Vec<u8>,
) -> Option<(usize, usize)> {
    decoded_string_after(input, at, 0, scratch)
}

/// [`decoded_string`] of a string whose first `plain` bytes are a plain run already scanned.
#[cold]
#[inline(never)]
fn decoded_string_after(
    input: &[u8],
    at: &mut usize,
    plain: usize,
    scratch: &mut Vec<u8>,
) -> Option<(usize, usize)> {
    let start = scratch.len();
    let mut end = *at;
    if decode_string(input, &mut end, plain, scratch).is_none() {
        scratch.truncate(start);
        return None;
    }
    *at = end;
    Some((start, scratch.len()))
}

/// Where a string token's bytes are: in the input, or decoded into the scratch buffer.
pub(crate) enum StringAt {
    Input(usize, usize),
    Scratch(usize, usize),
}

/// The string at `*at` (its `"`): in place when printable ASCII without escapes
/// ([`plain_string`]), else decoded into `scratch` ([`decoded_string`]) without scanning its
/// plain start twice. `None` for anything the row reader's parser would refuse.
#[inline(always)]
pub(crate) fn string_at(input: &[u8], at: &mut usize, scratch: &mut Vec<u8>) -> Option<StringAt> {
    let start = *at + 1;
    let rest = input.get(start..)?;
    let length = plain_run(rest);
    if rest.get(length) == Some(&b'"') {
        *at = start + length + 1;
        return Some(StringAt::Input(start, start + length));
    }
    decoded_string_after(input, at, length, scratch).map(|(s, e)| StringAt::Scratch(s, e))
}

/// A string at `*at` (its `"`) of printable ASCII without escapes: its bytes, `start..end`.
/// Such bytes are their own code points, so they are the string's bytes.
#[inline(always)]
pub(crate) fn plain_string(input: &[u8], at: &mut usize) -> Option<(usize, usize)> {
    let start = *at + 1;
    let rest = input.get(start..)?;
    let length = plain_run(rest);
    if rest.get(length) != Some(&b'"') {
        // An escape, a control byte or a byte above ASCII: decoded by the reader's parser.
        return None;
    }
    *at = start + length + 1;
    Some((start, start + length))
}

/// `input.starts_with(prefix)` for short prefixes (keys), eight bytes at a time without a
/// call to `memcmp`.
#[inline]
pub(crate) fn starts_with(input: &[u8], prefix: &[u8]) -> bool {
    let Some(head) = input.get(..prefix.len()) else {
        return false;
    };
    let mut a = head.chunks_exact(8);
    let mut b = prefix.chunks_exact(8);
    for (x, y) in (&mut a).zip(&mut b) {
        if u64::from_le_bytes(x.try_into().unwrap_or_default())
            != u64::from_le_bytes(y.try_into().unwrap_or_default())
        {
            return false;
        }
    }
    a.remainder().iter().zip(b.remainder()).all(|(x, y)| x == y)
}

/// `significand * 10^exponent` when one IEEE operation on exact operands gives it, so it is
/// correctly rounded (Clinger's fast path: the significand below 2^53, the power of ten at
/// most 10^22, the largest exactly a double); `None` otherwise, for the full parse. The
/// shortest round-trip text of any f32, and of most doubles written from data, is this case.
#[inline(always)]
fn exact_float(significand: u64, exponent: i64) -> Option<f64> {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if significand >= 1 << 53 {
        return None;
    }
    let power = *POWERS.get(exponent.unsigned_abs() as usize)?;
    let v = significand as f64;
    Some(if exponent < 0 { v / power } else { v * power })
}

/// A number token as the row reader's parser classifies it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    /// An integer above `i64::MAX`.
    Uint(u64),
    Float(f64),
}

/// The number at `*at`, by the row reader's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?
/// [0-9]+)?`) and classification; `None` for anything it would refuse.
#[inline(always)]
pub(crate) fn number(input: &[u8], at: &mut usize) -> Option<Number> {
    let start = *at;
    let mut pos = start;
    let negative = input[pos] == b'-';
    if negative {
        pos += 1;
    }
    let int_start = pos;
    let mut magnitude = 0u64;
    while let Some(&digit @ b'0'..=b'9') = input.get(pos) {
        // Exact up to 19 digits; longer integers are parsed from their text below.
        magnitude = magnitude
            .wrapping_mul(10)
            .wrapping_add(u64::from(digit - b'0'));
        pos += 1;
    }
    let int_digits = pos - int_start;
    if int_digits == 0 || (input[int_start] == b'0' && int_digits > 1) {
        return None;
    }
    let mut integer = true;
    // The fraction's digits go on into the significand, for the exact case below.
    let mut fraction_digits = 0;
    if input.get(pos) == Some(&b'.') {
        pos += 1;
        integer = false;
        let digits = pos;
        while let Some(&digit @ b'0'..=b'9') = input.get(pos) {
            magnitude = magnitude
                .wrapping_mul(10)
                .wrapping_add(u64::from(digit - b'0'));
            pos += 1;
        }
        fraction_digits = pos - digits;
        if fraction_digits == 0 {
            return None;
        }
    }
    let mut exponent = 0i64;
    if matches!(input.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        integer = false;
        let exponent_negative = input.get(pos) == Some(&b'-');
        if matches!(input.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let digits = pos;
        while let Some(&digit @ b'0'..=b'9') = input.get(pos) {
            // Saturating: any exponent this large leaves the exact case anyway.
            exponent = (exponent * 10 + i64::from(digit - b'0')).min(1 << 20);
            pos += 1;
        }
        if pos == digits {
            return None;
        }
        if exponent_negative {
            exponent = -exponent;
        }
    }
    *at = pos;
    if integer && int_digits <= 18 {
        // At most 18 digits: no overflow, and within i64 either sign.
        let v = magnitude as i64;
        return Some(Number::Int(if negative { -v } else { v }));
    }
    if !integer && int_digits + fraction_digits <= 19 {
        if let Some(v) = exact_float(magnitude, exponent - fraction_digits as i64) {
            return Some(Number::Float(if negative { -v } else { v }));
        }
    }
    // ASCII digits and signs: valid UTF-8.
    let text = std::str::from_utf8(&input[start..pos]).ok()?;
    if integer {
        if let Ok(v) = text.parse::<i64>() {
            return Some(Number::Int(v));
        }
        if let Ok(v) = text.parse::<u64>() {
            return Some(Number::Uint(v));
        }
    }
    text.parse::<f64>().ok().map(Number::Float)
}
