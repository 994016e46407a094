//! CBOR (RFC 8949) table streams: typed rows as CBOR items, lossless for every type.
//!
//! The mapping is MessagePack's (see [`crate::msgpack`] and docs/formats/msgpack.md): a row is an
//! array in schema order, a control record a map (`{"table_index": 1}`), signed types are
//! CBOR integers of either major type, unsigned ones major type 0, doubles always float64
//! (bit-exact), `string`/`uuid`/decimals byte strings, `utf8`/`json` text strings, structs
//! and tuples positional arrays, variants `[index, value]`, dicts CBOR maps with keys of their
//! own type, `optional<T>` of a nullable `T` null or `[value]`, and `yson` values tag
//! [`YSON_TAG`] over a byte string of binary YSON. Only definite lengths are written or read.
//!
//! Encoding writes each item's head in its shortest form straight into the buffer (the bytes
//! `minicbor`'s `Encoder` writes, tested against it). Decoding reads the item heads itself (major type, additional information, argument: one
//! inlined match in the row decoders' hot loop) and checks every length against the bytes
//! that remain. Text strings are not checked for UTF-8 here: a `utf8`/`json` column checks
//! its value, a `string` column takes any bytes (as MessagePack's `str` items).

use shapeshift_types::{TableSchema, Value};

use crate::table::FormatError;
pub use crate::tree::serde_format::SerdeError;
pub use crate::tree::Item;
use crate::tree::{self, put_head, Dialect, TreeError};

pub(crate) mod rows;

const FORMAT: &str = "cbor";

/// The CBOR tag of `yson` values (its item: a byte string of binary YSON). Not registered
/// with IANA; the bytes spell "YSON".
pub const YSON_TAG: u64 = 0x5953_4f4e;

// Major types (RFC 8949 section 3.1).
const UNSIGNED: u8 = 0;
const NEGATIVE: u8 = 1;
const BYTES: u8 = 2;
const TEXT: u8 = 3;
const ARRAY: u8 = 4;
const MAP: u8 = 5;
const TAG: u8 = 6;

/// An item head: major type `major` and the argument `v` in its shortest form (what
/// deterministic encoding asks, and what `minicbor` writes: tested byte for byte).
#[inline]
fn head(out: &mut Vec<u8>, major: u8, v: u64) {
    let m = major << 5;
    match v {
        0..=23 => out.push(m | v as u8),
        24..=0xff => out.extend_from_slice(&[m | 24, v as u8]),
        0x100..=0xffff => put_head(out, m | 25, (v as u16).to_be_bytes()),
        0x1_0000..=0xffff_ffff => put_head(out, m | 26, (v as u32).to_be_bytes()),
        _ => put_head(out, m | 27, v.to_be_bytes()),
    }
}

/// The CBOR spelling of the tree mapping (the type parameter of [`RowReader`] and
/// [`ItemReader`]).
pub struct Cbor;

impl Dialect for Cbor {
    const NAME: &'static str = FORMAT;
    const NIL: u8 = 0xf6;
    const TINY_UINT_MAX: u8 = 0x17;
    const FLOAT32_HEAD: u8 = 0xfa;
    const FALSE: u8 = 0xf4;

    // The writers are `#[inline]`: the serde path's generic code is compiled in the caller's
    // crate, where a non-generic method without it stays a call (CBOR mesh writing ran at a
    // third of MessagePack's speed through the same serializer).

    #[inline]
    fn nil(out: &mut Vec<u8>) {
        out.push(Self::NIL);
    }
    #[inline]
    fn boolean(out: &mut Vec<u8>, v: bool) {
        out.push(if v { 0xf5 } else { 0xf4 });
    }
    #[inline]
    fn int(out: &mut Vec<u8>, v: i64) {
        match u64::try_from(v) {
            Ok(v) => head(out, UNSIGNED, v),
            // Major type 1 holds -1 - n: for a negative v that is !v, never negative.
            Err(_) => head(out, NEGATIVE, !v as u64),
        }
    }
    #[inline]
    fn uint(out: &mut Vec<u8>, v: u64) {
        head(out, UNSIGNED, v);
    }
    #[inline]
    fn double(out: &mut Vec<u8>, v: f64) {
        put_head(out, 0xfb, v.to_be_bytes());
    }
    #[inline]
    fn single(out: &mut Vec<u8>, v: f32) {
        put_head(out, Self::FLOAT32_HEAD, v.to_be_bytes());
    }
    #[inline]
    fn bytes(out: &mut Vec<u8>, v: &[u8]) {
        head(out, BYTES, v.len() as u64);
        out.extend_from_slice(v);
    }
    #[inline]
    fn text(out: &mut Vec<u8>, v: &[u8]) {
        // The bytes' UTF-8 the caller has checked.
        head(out, TEXT, v.len() as u64);
        out.extend_from_slice(v);
    }
    #[inline]
    fn array(out: &mut Vec<u8>, len: usize) {
        head(out, ARRAY, len as u64);
    }
    #[inline]
    fn map(out: &mut Vec<u8>, len: usize) {
        head(out, MAP, len as u64);
    }
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]) {
        head(out, TAG, YSON_TAG);
        Self::bytes(out, binary_yson);
    }

    // The hot path of every reader, inlined into the row decoders: the initial byte's
    // major type and additional information, then the argument (see `header`).
    #[inline(always)]
    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError> {
        let start = *pos;
        let (major, info, argument, at) = header(input, start)?;
        let item = match major {
            MAJOR_UNSIGNED => Item::Uint(argument),
            MAJOR_NEGATIVE if argument <= i64::MAX as u64 => Item::Int(!(argument as i64)),
            MAJOR_BYTES | MAJOR_TEXT => {
                let bytes = payload(input, start, at, argument)?;
                *pos = at + bytes.len();
                return Ok(if major == MAJOR_BYTES {
                    Item::Bytes(bytes)
                } else {
                    Item::Text(bytes)
                });
            }
            MAJOR_ARRAY => Item::Array(argument),
            MAJOR_MAP => Item::Map(argument),
            MAJOR_SIMPLE => match info {
                SIMPLE_FALSE => Item::Bool(false),
                SIMPLE_TRUE => Item::Bool(true),
                SIMPLE_NULL => Item::Nil,
                FLOAT16 => Item::Double(half_to_f64(argument as u16)),
                FLOAT32 => Item::Double(f64::from(f32::from_bits(argument as u32))),
                FLOAT64 => Item::Double(f64::from_bits(argument)),
                _ => return Err(unsupported(start, major, info)),
            },
            _ => return read_rare(input, pos, major, argument, at),
        };
        *pos = at;
        Ok(item)
    }
}

const MAJOR_UNSIGNED: u8 = 0;
const MAJOR_NEGATIVE: u8 = 1;
const MAJOR_BYTES: u8 = 2;
const MAJOR_TEXT: u8 = 3;
const MAJOR_ARRAY: u8 = 4;
const MAJOR_MAP: u8 = 5;
const MAJOR_TAG: u8 = 6;
const MAJOR_SIMPLE: u8 = 7;
const SIMPLE_FALSE: u8 = 20;
const SIMPLE_TRUE: u8 = 21;
const SIMPLE_NULL: u8 = 22;
const FLOAT16: u8 = 25;
const FLOAT32: u8 = 26;

/// An IEEE 754 half-precision float (CBOR's shortest float, which serde CBOR crates write when
/// a value fits) as the double it is exactly.
#[cold]
fn half_to_f64(bits: u16) -> f64 {
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    let magnitude = match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (mantissa + 1024.0) * 2f64.powi(exponent - 25),
    };
    if bits & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}
const FLOAT64: u8 = 27;

/// The head of the data item at `start` (RFC 8949 section 3): its major type, additional
/// information and argument (the value of the additional information or of the 1, 2, 4 or
/// 8 big-endian bytes after the initial byte it announces; for major type 7, a float's bits),
/// and the offset after the head.
///
/// # Errors
/// A truncated head; the reserved additional information 28..30 and indefinite lengths
/// (31), which this mapping never writes.
#[inline(always)]
fn header(input: &[u8], start: usize) -> Result<(u8, u8, u64, usize), TreeError> {
    let Some(&initial) = input.get(start) else {
        return Err(truncated(input, start, start, 1));
    };
    let (major, info) = (initial >> 5, initial & 0x1f);
    let at = start + 1;
    let argument = match info {
        0..=23 => return Ok((major, info, u64::from(info), at)),
        24 => input.get(at).map(|&b| u64::from(b)),
        25 => input
            .get(at..at + 2)
            .map(|b| u64::from(u16::from_be_bytes([b[0], b[1]]))),
        26 => input
            .get(at..at + 4)
            .map(|b| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))),
        27 => input
            .get(at..at + 8)
            .map(|b| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
        _ => return Err(unsupported(start, major, info)),
    };
    let width = 1usize << (info - 24);
    match argument {
        Some(argument) => Ok((major, info, argument, at + width)),
        None => Err(truncated(input, start, at, width)),
    }
}

/// The `length` bytes of a byte or text string whose payload starts at `at` (the item at
/// `start`), checked against the bytes that remain.
#[inline(always)]
fn payload(input: &[u8], start: usize, at: usize, length: u64) -> Result<&[u8], TreeError> {
    // `at <= input.len()` (the head was read), so the subtraction cannot wrap.
    if length > (input.len() - at) as u64 {
        return Err(truncated(input, start, at, length));
    }
    Ok(&input[at..at + length as usize])
}

/// `n` bytes from `from` run past the end of `input` (the item starts at `start`).
#[cold]
fn truncated(input: &[u8], start: usize, from: usize, n: impl std::fmt::Display) -> TreeError {
    // Says nothing of offsets but the item's own (added by the caller): a streaming reader
    // decodes from a window of the stream, where `from` and the length are the window's.
    TreeError::end_of_input(
        start,
        format!(
            "truncated: the item needs {n} more bytes, {} remain",
            input.len().saturating_sub(from)
        ),
    )
}

/// The error of an item this mapping does not use: indefinite lengths, reserved heads,
/// simple values other than booleans and null, `undefined`.
#[cold]
fn unsupported(start: usize, major: u8, info: u8) -> TreeError {
    let what = match (major, info) {
        (_, 28..=30) => format!("the reserved additional information {info}"),
        (MAJOR_SIMPLE, 31) => "a break code outside an indefinite-length item".to_owned(),
        (_, 31) => format!("an indefinite-length item of major type {major}"),
        (MAJOR_SIMPLE, 23) => "undefined".to_owned(),
        (MAJOR_SIMPLE, _) => format!("a simple value (additional information {info})"),
        _ => format!("an item of major type {major} with additional information {info}"),
    };
    TreeError::new(
        start,
        format!("unexpected CBOR item: {what} (indefinite lengths, simple values and undefined are not used)"),
    )
}

/// The items [`Cbor::read`] leaves out of its hot path: integers below -2^63 and tags (the
/// `yson` one, over a byte string).
#[cold]
#[inline(never)]
fn read_rare<'a>(
    input: &'a [u8],
    pos: &mut usize,
    major: u8,
    argument: u64,
    at: usize,
) -> Result<Item<'a>, TreeError> {
    let start = *pos;
    if major == MAJOR_NEGATIVE {
        return Err(TreeError::new(start, "an integer outside the 64-bit range"));
    }
    debug_assert_eq!(major, MAJOR_TAG);
    if argument != YSON_TAG {
        return Err(TreeError::new(
            start,
            format!("unknown tag {argument} (only {YSON_TAG}, yson, is defined)"),
        ));
    }
    // A cut inside the wrapped head is a cut of this item: the error is at its start.
    let (major, info, length, payload_at) = header(input, at).map_err(|e| {
        if e.end_of_input {
            TreeError::end_of_input(start, e.message)
        } else {
            e
        }
    })?;
    if major != MAJOR_BYTES {
        let found = if major == MAJOR_SIMPLE && info == 31 {
            "a break code".to_owned()
        } else {
            format!("an item of major type {major}")
        };
        return Err(TreeError::new(
            at,
            format!("the yson tag must wrap a byte string, found {found}"),
        ));
    }
    let bytes = payload(input, start, payload_at, length)?;
    *pos = payload_at + bytes.len();
    Ok(Item::Yson(bytes))
}

/// Appends one row of `schema` (values in schema order) to `out`, checked against the
/// column types. On error `out` is left as it was.
///
/// # Errors
/// A [`FormatError`] naming the column whose value does not fit.
pub fn encode_row(
    schema: &TableSchema,
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    tree::encode_row::<Cbor>(FORMAT, schema, values, out)
}

/// Reads the rows of a CBOR stream held in memory, as owned values (see
/// [`crate::msgpack::RowReader`]).
pub type RowReader<'a> = tree::RowReader<'a, Cbor>;

/// Reads a CBOR stream item by item with no schema (the lowest level).
pub type ItemReader<'a> = tree::ItemReader<'a, Cbor>;

/// A serde value as CBOR (structs as arrays of their fields, enums by index; the mapping of
/// [`crate::msgpack::to_vec`], docs/formats/msgpack.md, "serde").
///
/// # Errors
/// A value the mapping cannot carry without loss (`Some(None)`, a skipped struct field), or
/// the value's own `Serialize` error.
pub fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, SerdeError> {
    let mut out = Vec::with_capacity(128);
    to_vec_into(value, &mut out)?;
    Ok(out)
}

/// Appends `value` to `out` as [`to_vec`] writes it (a buffer reused across calls keeps its
/// capacity). On error `out` holds what was written before it.
///
/// # Errors
/// As [`to_vec`].
pub fn to_vec_into<T: serde::Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    tree::serde_format::to_vec_into::<Cbor, T>(value, out)
}

/// A serde value from CBOR bytes holding exactly one item (definite lengths).
///
/// # Errors
/// Bytes that are not CBOR, an item that does not fit `T`, or bytes after it; the error gives
/// the byte offset.
pub fn from_slice<'de, T: serde::Deserialize<'de>>(input: &'de [u8]) -> Result<T, SerdeError> {
    tree::serde_format::from_slice::<Cbor, T>(input)
}

/// The value of `seed` (a caller's own builder) from bytes holding exactly one item.
///
/// # Errors
/// As [`from_slice`].
pub fn from_slice_seed<'de, S: serde::de::DeserializeSeed<'de>>(
    seed: S,
    input: &'de [u8],
) -> Result<S::Value, SerdeError> {
    tree::serde_format::from_slice_seed::<Cbor, S>(seed, input)
}
