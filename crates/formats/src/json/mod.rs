//! JSON table streams in YT's JSON format conventions, lossless for every type.
//!
//! # The format
//! One JSON object per line per row, keys the column names: `{"id":1,"name":"x"}`. Control
//! records are entities with attributes: `{"$value":null,"$attributes":{"table_index":1}}`
//! (also `row_index`, `range_index`, `key_switch`). The rest is YT's `json` format with its
//! defaults:
//! - strings are bytes: with `encode_utf8` (YT's default, the only mode here) every byte is
//!   the code point of the same number (latin-1), so `"\u00ff"` is the byte 0xff and UTF-8
//!   text appears as its bytes (`é` as `"Ã©"`); a code point above 255 is an error. Map keys
//!   and column names are spelled the same way;
//! - integers are JSON numbers; the column type says signed or unsigned, so `uint64` values
//!   above `i64::MAX` and negative `int64` values both read back exactly;
//! - doubles are numbers written shortest-round-trip (always with `.` or an exponent); NaN and
//!   the infinities are the strings `"nan"`, `"inf"`, `"-inf"` (YT's
//!   `stringify_nan_and_infinity`);
//! - composite values are their YSON form (YT's `value_to_node`, named structs) as JSON:
//!   lists and tuples arrays, structs objects, variants `[name or index, value]`, dicts
//!   `[[key, value], ...]`, `optional<T>` of a nullable `T` `null` or `[value]`, decimals
//!   their binary form as a byte string;
//! - `yson` values are YSON nodes as JSON: `#` is `null`, attributes are
//!   `{"$attributes":{...},"$value":...}`, `uint64` nodes `{"$type":"uint64","$value":"5"}`
//!   (a plain number is int64, or uint64 when above `i64::MAX`), non-finite doubles
//!   `{"$type":"double","$value":"nan"}`, and a map key starting with `$` gets one more `$`.
//!
//! Reading: a missing column is null (an error for a non-nullable column); a key the schema
//! does not name is an error for a strict schema and skipped for a non-strict one. Every
//! value is checked against its column type. Errors name the byte offset of the row.
//!
//! - [`encode_row`]: one row as a line into a buffer.
//! - [`RowReader`]: rows of a stream in memory, as owned values.
//! - the common interface: `rows/`, opened through [`crate::registry`].

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use shapeshift_types::{
    check_value, Node, NodeValue, PhysicalType, PrimitiveType, TableSchema, Type, Value,
};

use crate::scalar_range::read_float;
use crate::table::position::{Control, PositionReader};
use crate::table::yson_binary;
use crate::table::{FormatError, RowPosition};

mod parse;
pub(crate) mod rows;
mod serde;

pub use self::serde::RowCodec;

use parse::{Json, Parser};

const FORMAT: &str = "json";

// ---------------------------------------------------------------------------------------
// Writing

/// Which bytes stand for themselves in a JSON string: printable ASCII but `"` and `\`.
const PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        plain[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    plain
};

/// The length of the run of [`PLAIN`] bytes at the start of `bytes`: sixteen at a time where
/// SSE2 is (every x86_64), then eight at a time.
#[inline]
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = bytes.get(at..at + 16) {
        let stops = sse2::stops(chunk.try_into().unwrap_or(&[0; 16]));
        if stops != 0 {
            return at + stops.trailing_zeros() as usize;
        }
        at += 16;
    }
    while let Some(chunk) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // A high bit per byte that is below 0x20, 0x7f or above, '"' or '\\' (bytes past
        // the first such may be flagged falsely; the byte loop below finds the first).
        let zero_in = |x: u64| x.wrapping_sub(ONES) & !x;
        let low = w.wrapping_sub(ONES * 0x20) & !w;
        let high = w | w.wrapping_add(ONES);
        let quote = zero_in(w ^ (ONES * u64::from(b'"')));
        let backslash = zero_in(w ^ (ONES * u64::from(b'\\')));
        if (low | high | quote | backslash) & HIGHS != 0 {
            break;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .take_while(|&&b| PLAIN[usize::from(b)])
        .count()
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// A bit per byte of `chunk` that is not [`super::PLAIN`], exactly: as signed bytes, a
    /// plain one is 0x20..=0x7e and neither `"` nor `\\` (0x80 and above are negative).
    #[inline(always)]
    pub(super) fn stops(chunk: &[u8; 16]) -> u32 {
        // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `chunk`, unaligned.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let low_or_high = _mm_cmpgt_epi8(_mm_set1_epi8(0x20), v);
            let delete = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            let stops = _mm_or_si128(
                _mm_or_si128(low_or_high, delete),
                _mm_or_si128(quote, backslash),
            );
            _mm_movemask_epi8(stops) as u32
        }
    }
}

/// Writes `bytes` as a JSON string, each byte the code point of its value.
fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let plain = plain_run(bytes);
    for (i, &b) in bytes.iter().enumerate().skip(plain) {
        if PLAIN[usize::from(b)] {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        write_escaped(out, b);
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Writes the byte `b`, which is not [`PLAIN`], as its escape or code point.
#[inline]
fn write_escaped(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0..=0x1f | 0x7f => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        }
        _ => {
            // U+0080..U+00FF in UTF-8.
            out.push(0xc0 | (b >> 6));
            out.push(0x80 | (b & 0x3f));
        }
    }
}

/// A map key: `$` doubled at the start so keys never look like `$value` / `$attributes`.
fn write_key(out: &mut Vec<u8>, key: &[u8]) {
    if key.first() == Some(&b'$') {
        let mut escaped = Vec::with_capacity(key.len() + 1);
        escaped.push(b'$');
        escaped.extend_from_slice(key);
        write_bytes(out, &escaped);
    } else {
        write_bytes(out, key);
    }
    out.push(b':');
}

fn write_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// A finite double, shortest round trip, always with `.` or an exponent, a positive one
/// signed (`1e+16`): serde_json's spelling, zmij's.
fn write_finite(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
}

fn non_finite_name(v: f64) -> &'static str {
    if v.is_nan() {
        "nan"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

fn write_double(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        write_finite(out, v);
    } else {
        write_bytes(out, non_finite_name(v).as_bytes());
    }
}

/// A `float` column's value is an f32: its shortest round trip as an f32 ("0.3", where the
/// f64 it widens to would need "0.30000001192092896"), which reads back as the same f32.
fn write_float(out: &mut Vec<u8>, v: f32) {
    if v.is_finite() {
        out.extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
    } else {
        write_bytes(out, non_finite_name(f64::from(v)).as_bytes());
    }
}

/// A number read for a `float` column, as the f32 it names; a finite number beyond f32's
/// range stays as read, for the column check to refuse.
fn narrow_float(v: f64) -> f64 {
    read_float(v).map_or(v, f64::from)
}

/// Writes a YSON node with the annotations that keep it lossless.
fn write_node(out: &mut Vec<u8>, node: &Node) {
    if !node.attributes.is_empty() {
        out.extend_from_slice(b"{\"$attributes\":{");
        for (i, (key, value)) in node.attributes.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_key(out, key);
            write_node(out, value);
        }
        out.extend_from_slice(b"},\"$value\":");
        write_node_value(out, &node.value);
        out.push(b'}');
    } else {
        write_node_value(out, &node.value);
    }
}

fn write_node_value(out: &mut Vec<u8>, value: &NodeValue) {
    match value {
        NodeValue::Entity => out.extend_from_slice(b"null"),
        NodeValue::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
        NodeValue::Int64(v) => write_i64(out, *v),
        NodeValue::Uint64(v) => {
            let _ = write!(out, "{{\"$type\":\"uint64\",\"$value\":\"{v}\"}}");
        }
        NodeValue::Double(v) if v.is_finite() => write_finite(out, *v),
        NodeValue::Double(v) => {
            let _ = write!(
                out,
                "{{\"$type\":\"double\",\"$value\":\"{}\"}}",
                non_finite_name(*v)
            );
        }
        NodeValue::String(v) => write_bytes(out, v),
        NodeValue::List(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_node(out, item);
            }
            out.push(b']');
        }
        NodeValue::Map(entries) => {
            out.push(b'{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_key(out, key);
                write_node(out, item);
            }
            out.push(b'}');
        }
    }
}

fn mismatch(value: &Value, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

/// Writes `value` of `ty` (checked by the caller).
fn write_value(out: &mut Vec<u8>, value: &Value, ty: &Type) -> Result<(), String> {
    match (ty, value) {
        (Type::Tagged { item, .. }, _) => write_value(out, value, item)?,
        (_, Value::Null) => out.extend_from_slice(b"null"),
        (_, Value::Any(node)) => write_node(out, node),
        (Type::Optional(item), Value::Some(inner)) if item.is_nullable() => {
            out.push(b'[');
            write_value(out, inner, item)?;
            out.push(b']');
        }
        (Type::Optional(item), _) => write_value(out, value, item)?,
        (_, Value::Bool(v)) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
        (_, Value::Int64(v)) => write_i64(out, *v),
        (_, Value::Uint64(v)) => write_u64(out, *v),
        (Type::Primitive(PrimitiveType::Float), Value::Double(v)) => write_float(out, *v as f32),
        (_, Value::Double(v)) => write_double(out, *v),
        (_, Value::String(v)) => write_bytes(out, v),
        (Type::List(item), Value::List(items)) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, v, item)?;
            }
            out.push(b']');
        }
        (Type::Struct(members), Value::Tuple(items)) if members.len() == items.len() => {
            out.push(b'{');
            for (i, (member, v)) in members.iter().zip(items).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_key(out, member.name.as_bytes());
                write_value(out, v, &member.ty)?;
            }
            out.push(b'}');
        }
        (Type::Tuple(elements), Value::Tuple(items)) if elements.len() == items.len() => {
            out.push(b'[');
            for (i, (element, v)) in elements.iter().zip(items).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, v, element)?;
            }
            out.push(b']');
        }
        (Type::VariantStruct(members), Value::Variant(index, v)) => {
            let member = members
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            out.push(b'[');
            write_bytes(out, member.name.as_bytes());
            out.push(b',');
            write_value(out, v, &member.ty)?;
            out.push(b']');
        }
        (Type::VariantTuple(elements), Value::Variant(index, v)) => {
            let element = elements
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            out.push(b'[');
            write_u64(out, u64::from(*index));
            out.push(b',');
            write_value(out, v, element)?;
            out.push(b']');
        }
        (Type::Dict { key, value: item }, Value::Dict(pairs)) => {
            out.push(b'[');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'[');
                write_value(out, k, key)?;
                out.push(b',');
                write_value(out, v, item)?;
                out.push(b']');
            }
            out.push(b']');
        }
        _ => return Err(mismatch(value, ty)),
    }
    Ok(())
}

fn write_control(out: &mut Vec<u8>, control: Control) {
    let _ = match control {
        Control::TableIndex(i) => writeln!(
            out,
            "{{\"$value\":null,\"$attributes\":{{\"table_index\":{i}}}}}"
        ),
        Control::RowIndex(i) => writeln!(
            out,
            "{{\"$value\":null,\"$attributes\":{{\"row_index\":{i}}}}}"
        ),
        Control::RangeIndex(i) => writeln!(
            out,
            "{{\"$value\":null,\"$attributes\":{{\"range_index\":{i}}}}}"
        ),
        Control::KeySwitch => writeln!(
            out,
            "{{\"$value\":null,\"$attributes\":{{\"key_switch\":true}}}}"
        ),
    };
}

/// Appends one row of `schema` (values in schema order) to `out` as a line, checked
/// against the column types. On error `out` is left as it was.
///
/// # Errors
/// A [`FormatError`] naming the column whose value does not fit.
pub fn encode_row(
    schema: &TableSchema,
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    if values.len() != schema.columns.len() {
        return Err(FormatError::new(
            FORMAT,
            format!(
                "the schema has {} columns, the row has {} values",
                schema.columns.len(),
                values.len()
            ),
        ));
    }
    let start = out.len();
    out.push(b'{');
    for (i, (value, column)) in values.iter().zip(&schema.columns).enumerate() {
        let result = check_value(value, &column.ty)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                if i > 0 {
                    out.push(b',');
                }
                write_key(out, column.name.as_bytes());
                write_value(out, value, &column.ty)
            });
        if let Err(e) = result {
            out.truncate(start);
            return Err(FormatError::new(
                FORMAT,
                format!("column \"{}\": {e}", column.name),
            ));
        }
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Reading

/// The bytes of a JSON string, each code point one byte.
fn string_bytes(text: &str) -> Result<Vec<u8>, String> {
    text.chars()
        .map(|c| {
            u8::try_from(u32::from(c)).map_err(|_| {
                format!("code point U+{:04X} is above U+00FF: strings are bytes as code points (encode_utf8)", u32::from(c))
            })
        })
        .collect()
}

/// Decodes the string at `*at` (its opening quote) into `out`, each code point one byte,
/// moving `*at` past the closing quote; its first `plain` bytes are known to be plain (a run
/// the caller scanned already). `None`, with `*at` and `out`'s length unspecified,
/// for anything the row reader's parser with [`string_bytes`] would refuse (which then says
/// why) — and, conservatively, for nothing else: escapes, U+0080..U+00FF as two UTF-8 bytes.
fn decode_string(input: &[u8], at: &mut usize, plain: usize, out: &mut Vec<u8>) -> Option<()> {
    let mut pos = *at + 1;
    out.extend_from_slice(input.get(pos..pos + plain)?);
    pos += plain;
    loop {
        // The byte first: a plain run is scanned only where one starts (text that is
        // mostly non-ASCII is pair after pair, with no run between them).
        let byte = *input.get(pos)?;
        if PLAIN[usize::from(byte)] {
            let rest = &input[pos..];
            let run = plain_run(rest);
            out.extend_from_slice(&rest[..run]);
            pos += run;
            continue;
        }
        match byte {
            b'"' => {
                *at = pos + 1;
                return Some(());
            }
            b'\\' => {
                let byte = match *input.get(pos + 1)? {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        let hex = std::str::from_utf8(input.get(pos + 2..pos + 6)?).ok()?;
                        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            return None;
                        }
                        // Above U+00FF (surrogates included) is refused.
                        let code = u8::try_from(u32::from_str_radix(hex, 16).ok()?).ok()?;
                        pos += 4;
                        code
                    }
                    _ => return None,
                };
                out.push(byte);
                pos += 2;
            }
            0x7f => {
                out.push(0x7f);
                pos += 1;
            }
            lead @ (0xc2 | 0xc3) => {
                let next = *input.get(pos + 1)?;
                if next & 0xc0 != 0x80 {
                    return None;
                }
                out.push(((lead & 0x1f) << 6) | (next & 0x3f));
                pos += 2;
            }
            _ => return None,
        }
    }
}

fn unescape_key(key: &str) -> Result<Vec<u8>, String> {
    let bytes = string_bytes(key)?;
    if bytes.first() == Some(&b'$') {
        if bytes.get(1) == Some(&b'$') {
            return Ok(bytes[1..].to_vec());
        }
        return Err(format!(
            "unexpected key \"{key}\" (a key starting with $ is written $$)"
        ));
    }
    Ok(bytes)
}

fn non_finite(text: &str) -> Option<f64> {
    match text {
        "nan" | "NaN" => Some(f64::NAN),
        "inf" | "+inf" | "Infinity" => Some(f64::INFINITY),
        "-inf" | "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// One YSON node as a JSON document, in the convention of `yson` values above (a document
/// codec for `shapeshift convert`; rows use [`encode_row`]).
pub fn node_to_document(node: &Node) -> Vec<u8> {
    let mut out = Vec::new();
    write_node(&mut out, node);
    out
}

/// The YSON node of a JSON document written as [`node_to_document`] writes it (any JSON
/// reads: plain strings are bytes, see the convention above).
///
/// # Errors
/// A [`FormatError`] with the byte offset of malformed JSON, trailing bytes, or a value the
/// convention does not allow.
pub fn node_from_document(input: &[u8]) -> Result<Node, FormatError> {
    let mut parser = Parser::new(input, 0);
    let json = parser.value(0).map_err(|e| {
        FormatError::new(FORMAT, format!("malformed JSON: {}", e.message)).at(e.offset as u64)
    })?;
    parser.skip_whitespace();
    if !parser.at_end() {
        return Err(FormatError::new(FORMAT, "bytes after the JSON document").at(parser.pos as u64));
    }
    node_from_json(&json).map_err(|message| FormatError::new(FORMAT, message).at(0))
}

/// A YSON node from its JSON form.
fn node_from_json(json: &Json) -> Result<Node, String> {
    Ok(Node::new(match json {
        Json::Null => NodeValue::Entity,
        Json::Bool(v) => NodeValue::Bool(*v),
        Json::Int(v) => NodeValue::Int64(*v),
        Json::Uint(v) => NodeValue::Uint64(*v),
        Json::Float(v) => NodeValue::Double(*v),
        Json::String(s) => NodeValue::String(string_bytes(s)?),
        Json::Array(items) => {
            NodeValue::List(items.iter().map(node_from_json).collect::<Result<_, _>>()?)
        }
        Json::Object(entries) => {
            if let Some(value) = json.get("$value") {
                let mut node = match json.get("$type") {
                    Some(Json::String(ty)) => Node::new(typed_scalar(ty, value)?),
                    Some(other) => {
                        return Err(format!("$type must be a string, found {}", other.kind()))
                    }
                    None => node_from_json(value)?,
                };
                match json.get("$attributes") {
                    None => {}
                    Some(Json::Object(attributes)) => {
                        node.attributes = attributes
                            .iter()
                            .map(|(k, v)| Ok((unescape_key(k)?, node_from_json(v)?)))
                            .collect::<Result<_, String>>()?;
                    }
                    Some(other) => {
                        return Err(format!(
                            "$attributes must be an object, found {}",
                            other.kind()
                        ))
                    }
                }
                if let Some((key, _)) = entries
                    .iter()
                    .find(|(k, _)| !matches!(k.as_str(), "$value" | "$type" | "$attributes"))
                {
                    return Err(format!("unexpected key \"{key}\" beside $value"));
                }
                return Ok(node);
            }
            NodeValue::Map(
                entries
                    .iter()
                    .map(|(k, v)| Ok((unescape_key(k)?, node_from_json(v)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
    }))
}

/// `{"$type": ty, "$value": value}`.
fn typed_scalar(ty: &str, value: &Json) -> Result<NodeValue, String> {
    let text = match value {
        Json::String(s) => s.clone(),
        Json::Int(v) => v.to_string(),
        Json::Uint(v) => v.to_string(),
        Json::Float(v) => v.to_string(),
        Json::Bool(b) => b.to_string(),
        other => {
            return Err(format!(
                "a $type'd $value must be a scalar, found {}",
                other.kind()
            ))
        }
    };
    let bad = || format!("\"{text}\" is not a {ty}");
    Ok(match ty {
        "uint64" => NodeValue::Uint64(text.parse().map_err(|_| bad())?),
        "int64" => NodeValue::Int64(text.parse().map_err(|_| bad())?),
        "double" => NodeValue::Double(match non_finite(&text) {
            Some(v) => v,
            None => text.parse().map_err(|_| bad())?,
        }),
        "boolean" => NodeValue::Bool(text.parse().map_err(|_| bad())?),
        "string" => NodeValue::String(string_bytes(&text)?),
        other => return Err(format!("unknown $type \"{other}\"")),
    })
}

fn variant_index(json: &Json, count: usize) -> Result<usize, String> {
    json.as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .filter(|&i| i < count)
        .ok_or_else(|| {
            format!(
                "bad variant index: expected 0..{count}, found {}",
                json.kind()
            )
        })
}

/// A value of `ty` from its JSON form (not yet checked against ranges).
fn value_from_json(json: &Json, ty: &Type) -> Result<Value, String> {
    let wrong = || {
        Err(format!(
            "expected a value of type {ty:?}, found {}",
            json.kind()
        ))
    };
    Ok(match ty {
        Type::Tagged { item, .. } => return value_from_json(json, item),
        Type::Optional(item) => match json {
            Json::Null => Value::Null,
            Json::Array(items) if item.is_nullable() && items.len() == 1 => {
                Value::Some(Box::new(value_from_json(&items[0], item)?))
            }
            _ if item.is_nullable() => return wrong(),
            _ => match value_from_json(json, item)? {
                Value::Any(node)
                    if node.attributes.is_empty() && matches!(node.value, NodeValue::Entity) =>
                {
                    Value::Null
                }
                value => value,
            },
        },
        Type::Primitive(p) => match (p.physical(), json) {
            (PhysicalType::Null, Json::Null) => Value::Null,
            (PhysicalType::Bool, Json::Bool(v)) => Value::Bool(*v),
            (PhysicalType::Int64, Json::Int(v)) => Value::Int64(*v),
            (PhysicalType::Uint64, Json::Int(_) | Json::Uint(_)) => match json.as_u64() {
                Some(v) => Value::Uint64(v),
                None => return Err("a negative number is not a uint64".into()),
            },
            (PhysicalType::Double, Json::Float(v)) if *p == PrimitiveType::Float => {
                Value::Double(narrow_float(*v))
            }
            (PhysicalType::Double, Json::Int(v)) if *p == PrimitiveType::Float => {
                Value::Double(narrow_float(*v as f64))
            }
            (PhysicalType::Double, Json::Float(v)) => Value::Double(*v),
            (PhysicalType::Double, Json::Int(v)) => Value::Double(*v as f64),
            (PhysicalType::Double, Json::String(s)) => match non_finite(s) {
                Some(v) => Value::Double(v),
                None => {
                    return Err(format!(
                        "\"{s}\" is not a double (non-finite ones are \"nan\", \"inf\", \"-inf\")"
                    ))
                }
            },
            (PhysicalType::String, Json::String(s)) => Value::String(string_bytes(s)?),
            (PhysicalType::Any, _) if *p == PrimitiveType::Yson => {
                Value::Any(node_from_json(json)?)
            }
            _ => return wrong(),
        },
        Type::Decimal { .. } => match json {
            Json::String(s) => Value::String(string_bytes(s)?),
            _ => return wrong(),
        },
        Type::List(item) => match json {
            Json::Array(items) => Value::List(
                items
                    .iter()
                    .map(|i| value_from_json(i, item))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong(),
        },
        Type::Struct(members) => match json {
            // The usual object: every member once, in order; nothing to respell or look up.
            Json::Object(entries)
                if entries.len() == members.len()
                    && entries
                        .iter()
                        .zip(members)
                        .all(|((key, _), member)| is_json_key_of(key, &member.name)) =>
            {
                let mut items = Vec::with_capacity(members.len());
                for ((_, value), member) in entries.iter().zip(members) {
                    items.push(value_from_json(value, &member.ty)?);
                }
                Value::Tuple(items)
            }
            Json::Object(entries) => {
                for (key, _) in entries {
                    let name = unescape_key(key)?;
                    if !members.iter().any(|m| m.name.as_bytes() == name.as_slice()) {
                        return Err(format!("unknown struct member \"{key}\""));
                    }
                }
                let mut items = Vec::with_capacity(members.len());
                for member in members {
                    items.push(match json.get(&json_key(&member.name)) {
                        Some(v) => value_from_json(v, &member.ty)?,
                        None if member.ty.is_nullable() => Value::Null,
                        None => {
                            return Err(format!("struct member \"{}\" is missing", member.name))
                        }
                    });
                }
                Value::Tuple(items)
            }
            Json::Array(items) if items.len() == members.len() => Value::Tuple(
                items
                    .iter()
                    .zip(members)
                    .map(|(i, m)| value_from_json(i, &m.ty))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong(),
        },
        Type::Tuple(elements) => match json {
            Json::Array(items) if items.len() == elements.len() => Value::Tuple(
                items
                    .iter()
                    .zip(elements)
                    .map(|(i, t)| value_from_json(i, t))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong(),
        },
        Type::VariantStruct(_) | Type::VariantTuple(_) => {
            let Json::Array(pair) = json else {
                return wrong();
            };
            let [alternative, item] = pair.as_slice() else {
                return wrong();
            };
            let (index, item_type) = match (ty, alternative) {
                (Type::VariantStruct(members), Json::String(name)) => {
                    let name = string_bytes(name)?;
                    members
                        .iter()
                        .enumerate()
                        .find(|(_, m)| m.name.as_bytes() == name.as_slice())
                        .map(|(i, m)| (i, &m.ty))
                        .ok_or_else(|| {
                            format!("no variant member \"{}\"", String::from_utf8_lossy(&name))
                        })?
                }
                (Type::VariantStruct(members), number) => {
                    let i = variant_index(number, members.len())?;
                    (i, &members[i].ty)
                }
                (Type::VariantTuple(elements), number) => {
                    let i = variant_index(number, elements.len())?;
                    (i, &elements[i])
                }
                _ => return wrong(),
            };
            Value::Variant(index as u32, Box::new(value_from_json(item, item_type)?))
        }
        Type::Dict { key, value } => match json {
            Json::Array(pairs) => Value::Dict(
                pairs
                    .iter()
                    .map(|pair| match pair {
                        Json::Array(kv) if kv.len() == 2 => Ok((
                            value_from_json(&kv[0], key)?,
                            value_from_json(&kv[1], value)?,
                        )),
                        other => Err(format!(
                            "expected a [key, value] pair, found {}",
                            other.kind()
                        )),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong(),
        },
    })
}

/// Whether `key` is [`json_key`]`(name)`, without building it.
fn is_json_key_of(key: &str, name: &str) -> bool {
    let mut chars = key.chars();
    if name.starts_with('$') && chars.next() != Some('$') {
        return false;
    }
    let mut bytes = name.bytes();
    loop {
        match (chars.next(), bytes.next()) {
            (None, None) => return true,
            (Some(c), Some(b)) if c == char::from(b) => {}
            _ => return false,
        }
    }
}

/// The JSON key of a column or member name (bytes as code points, `$` doubled at the start).
fn json_key(name: &str) -> String {
    let prefix = if name.starts_with('$') { "$" } else { "" };
    let spelled: String = name.bytes().map(char::from).collect();
    format!("{prefix}{spelled}")
}

/// A table's schema with its columns by JSON key, compiled once and shared by the readers
/// opened over it.
pub(crate) struct Table {
    schema: TableSchema,
    /// Column index by JSON key.
    columns: HashMap<String, usize>,
}

/// Reads rows from a whole JSON stream in memory.
struct JsonRows {
    tables: Arc<[Table]>,
    positions: PositionReader,
    pos: usize,
    rows: u64,
    found: Vec<Option<usize>>,
    /// The last row's columns outside its non-strict schema, as a binary YSON map (empty:
    /// none).
    others: Vec<u8>,
}

/// The tables of `schemas`, for [`JsonRows`].
pub(crate) fn compile_tables(schemas: &[TableSchema]) -> Arc<[Table]> {
    schemas
        .iter()
        .map(|s| Table {
            columns: s
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (json_key(&c.name), i))
                .collect(),
            schema: s.clone(),
        })
        .collect()
}

impl JsonRows {
    fn new(tables: Arc<[Table]>) -> JsonRows {
        JsonRows {
            tables,
            positions: PositionReader::default(),
            pos: 0,
            rows: 0,
            found: Vec::new(),
            others: Vec::new(),
        }
    }

    fn next_row(
        &mut self,
        input: &[u8],
        values: &mut Vec<Value>,
    ) -> Result<Option<(RowPosition, usize)>, FormatError> {
        loop {
            let mut parser = Parser::new(input, self.pos);
            parser.skip_whitespace();
            if parser.at_end() {
                return Ok(None);
            }
            let start = parser.pos;
            let rows = self.rows;
            let fail = |message: String, at: usize| {
                FormatError::new(FORMAT, message).at(at as u64).in_row(rows)
            };
            let json = parser
                .value(0)
                .map_err(|e| fail(format!("malformed JSON: {}", e.message), e.offset))?;
            self.pos = parser.pos;
            let Json::Object(entries) = &json else {
                return Err(fail(
                    format!("expected a row (an object), found {}", json.kind()),
                    start,
                ));
            };
            if json.get("$value").is_some() || json.get("$attributes").is_some() {
                self.control(&json).map_err(|m| fail(m, start))?;
                continue;
            }
            let table_index = self.positions.table();
            let table = &self.tables[table_index];
            self.found.clear();
            self.found.resize(table.schema.columns.len(), None);
            self.others.clear();
            for (entry, (key, json)) in entries.iter().enumerate() {
                match table.columns.get(key) {
                    // The guard records the entry; a second one for the column fails.
                    Some(&column) if self.found[column].replace(entry).is_some() => {
                        return Err(fail(
                            format!("column \"{key}\" appears twice in the row"),
                            start,
                        ));
                    }
                    Some(_) => {}
                    None if table.schema.strict => {
                        return Err(fail(format!("column \"{key}\" is not in the strict schema of table {table_index}"), start));
                    }
                    None => {
                        let other = unescape_key(key)
                            .and_then(|name| Ok((name, node_from_json(json)?)))
                            .map_err(|m| fail(format!("column \"{key}\": {m}"), start))?;
                        if self.others.is_empty() {
                            self.others.push(b'{');
                        }
                        yson_binary::string(&mut self.others, &other.0);
                        self.others.push(b'=');
                        yson_binary::node(&mut self.others, &other.1);
                        self.others.push(b';');
                    }
                }
            }
            if !self.others.is_empty() {
                self.others.push(b'}');
            }
            values.clear();
            for (column, found) in table.schema.columns.iter().zip(&self.found) {
                let value = match found {
                    Some(entry) => value_from_json(&entries[*entry].1, &column.ty).and_then(|v| {
                        check_value(&v, &column.ty)
                            .map(|()| v)
                            .map_err(|e| e.to_string())
                    }),
                    None if column.ty.is_nullable() => Ok(Value::Null),
                    None => Err("the required column is missing".to_owned()),
                };
                values.push(
                    value.map_err(|m| fail(format!("column \"{}\": {m}", column.name), start))?,
                );
            }
            self.rows += 1;
            return Ok(Some((self.positions.next_row(), table_index)));
        }
    }

    fn control(&mut self, json: &Json) -> Result<(), String> {
        let Json::Object(entries) = json else {
            return Err("expected a control record".into());
        };
        if !matches!(json.get("$value"), Some(Json::Null)) || entries.len() != 2 {
            return Err("expected a control record {\"$value\":null,\"$attributes\":{...}}".into());
        }
        let Some(Json::Object(attributes)) = json.get("$attributes") else {
            return Err("a control record's $attributes must be an object".into());
        };
        for (key, value) in attributes {
            let control = match (key.as_str(), value) {
                ("table_index", _) => {
                    let index = value
                        .as_u64()
                        .and_then(|i| usize::try_from(i).ok())
                        .filter(|&i| i < self.tables.len())
                        .ok_or_else(|| format!("table index is not in 0..{}", self.tables.len()))?;
                    Control::TableIndex(index)
                }
                ("row_index", _) => {
                    Control::RowIndex(value.as_i64().ok_or("the row index is not an int64")?)
                }
                ("range_index", _) => {
                    Control::RangeIndex(value.as_i64().ok_or("the range index is not an int64")?)
                }
                ("key_switch", Json::Bool(true)) => Control::KeySwitch,
                ("key_switch", Json::Bool(false)) => continue,
                _ => {
                    return Err(format!(
                        "unknown control attribute \"{key}\" = {}",
                        value.kind()
                    ))
                }
            };
            self.positions.control(control);
        }
        Ok(())
    }
}

/// Reads the rows of a JSON stream held in memory, as owned values.
pub struct RowReader<'a> {
    input: &'a [u8],
    rows: JsonRows,
}

impl<'a> RowReader<'a> {
    /// A reader of `input`, whose rows belong to `schemas` (table index = position).
    pub fn new(schemas: &[TableSchema], input: &'a [u8]) -> RowReader<'a> {
        RowReader {
            input,
            rows: JsonRows::new(compile_tables(schemas)),
        }
    }

    /// Decodes the next row into `values` (cleared first); its position, or `None` at the end.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset of the row and its number for malformed input.
    pub fn next_row(
        &mut self,
        values: &mut Vec<Value>,
    ) -> Result<Option<RowPosition>, FormatError> {
        Ok(self
            .rows
            .next_row(self.input, values)?
            .map(|(position, _)| position))
    }

    /// The binary YSON map of the columns the last row carries outside its (non-strict)
    /// schema; `None` when it has none.
    pub fn other_columns(&self) -> Option<&[u8]> {
        (!self.rows.others.is_empty()).then_some(self.rows.others.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_plain_run_is_the_prefix_of_plain_bytes(
            bytes in proptest::collection::vec(
                prop_oneof![16 => 0x20u8..0x7f, 1 => any::<u8>()],
                0..80,
            ),
        ) {
            let naive = bytes.iter().take_while(|&&b| PLAIN[usize::from(b)]).count();
            prop_assert_eq!(plain_run(&bytes), naive);
        }

        #[test]
        fn a_key_matches_a_name_exactly_when_it_is_the_names_json_key(
            name in "\\$?\\$?[a-zé$]{0,4}",
            other in "\\$?\\$?[a-zÃ©©$]{0,5}",
        ) {
            let key = json_key(&name);
            prop_assert!(is_json_key_of(&key, &name));
            prop_assert_eq!(is_json_key_of(&other, &name), other == key);
        }
    }
}
