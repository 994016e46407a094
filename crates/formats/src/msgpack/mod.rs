//! MessagePack table streams: typed rows as MessagePack items, lossless for every type.
//!
//! The mapping (shared with CBOR, see docs/formats/msgpack.md): a row is an array of its column
//! values in schema order, a control record is a map (`{"table_index": 1}`), integers keep
//! their sign class (`int` families for signed types, `uint` for unsigned), doubles are
//! always float64 (bit-exact), `string`/`uuid`/decimals are `bin`, `utf8`/`json` are `str`,
//! structs and tuples are positional arrays, variants `[index, value]`, dicts MessagePack
//! maps with keys of their own type, `optional<T>` of a nullable `T` is `nil` or `[value]`,
//! and `yson` values are extension type [`YSON_EXT_TYPE`] holding binary YSON.
//!
//! Encoding writes the shortest forms straight into the buffer (the `rmp` crate's writer for
//! the rare extension item); decoding matches the marker byte itself (one inlined match;
//! `rmp`'s marker table for the rare extension items) and checks every length against the
//! bytes that remain.
//!
//! - [`to_vec`] / [`from_slice`]: a program's own serde types as MessagePack, no row in
//!   between (the typed fast path; the mapping in [`crate::tree::serde_format`]).
//! - [`encode_row`]: one row into a buffer, the fast path for writing.
//! - [`ItemReader`]: the lowest-level reader, item by item with no schema.
//! - [`RowReader`]: rows of a stream in memory, as owned values.
//! - the common interface: [`crate::table::open_source`] / [`crate::table::open_sink`].

use rmp::Marker;
use shapeshift_types::{TableSchema, Value};

use crate::table::FormatError;
pub use crate::tree::serde_format::SerdeError;
pub use crate::tree::Item;
use crate::tree::{self, put_head, Dialect, TreeError};

pub(crate) mod rows;

const FORMAT: &str = "msgpack";

/// The MessagePack extension type of `yson` values (payload: binary YSON). ASCII `Y`.
pub const YSON_EXT_TYPE: i8 = 0x59;

/// The MessagePack spelling of the tree mapping (the type parameter of [`RowReader`] and
/// [`ItemReader`]).
pub struct MsgPack;

impl Dialect for MsgPack {
    const NAME: &'static str = FORMAT;
    const NIL: u8 = 0xc0;
    const TINY_UINT_MAX: u8 = 0x7f;
    const FLOAT32_HEAD: u8 = 0xca;
    const FALSE: u8 = 0xc2;

    // The shortest forms, written straight into the Vec: through `rmp`'s writers (a `Write`
    // call per marker and per argument) the serde path spent a third of its serialize time in
    // `uint`, `text` and `write_marker` (perf, rust_serialization_benchmark's log). The bytes
    // are the same (the golden and peer tests check them).
    #[inline]
    fn nil(out: &mut Vec<u8>) {
        out.push(Self::NIL);
    }
    #[inline]
    fn boolean(out: &mut Vec<u8>, v: bool) {
        out.push(if v { 0xc3 } else { 0xc2 });
    }
    #[inline]
    fn int(out: &mut Vec<u8>, v: i64) {
        if v >= 0 {
            Self::uint(out, v as u64);
        } else if v >= -32 {
            out.push(v as u8);
        } else if v >= i64::from(i8::MIN) {
            out.extend_from_slice(&[0xd0, v as u8]);
        } else if v >= i64::from(i16::MIN) {
            put_head(out, 0xd1, (v as i16).to_be_bytes());
        } else if v >= i64::from(i32::MIN) {
            put_head(out, 0xd2, (v as i32).to_be_bytes());
        } else {
            put_head(out, 0xd3, v.to_be_bytes());
        }
    }
    #[inline]
    fn uint(out: &mut Vec<u8>, v: u64) {
        if v < 0x80 {
            out.push(v as u8);
        } else if v <= u64::from(u8::MAX) {
            out.extend_from_slice(&[0xcc, v as u8]);
        } else if v <= u64::from(u16::MAX) {
            put_head(out, 0xcd, (v as u16).to_be_bytes());
        } else if v <= u64::from(u32::MAX) {
            put_head(out, 0xce, (v as u32).to_be_bytes());
        } else {
            put_head(out, 0xcf, v.to_be_bytes());
        }
    }
    #[inline]
    fn double(out: &mut Vec<u8>, v: f64) {
        put_head(out, 0xcb, v.to_bits().to_be_bytes());
    }
    #[inline]
    fn single(out: &mut Vec<u8>, v: f32) {
        put_head(out, Self::FLOAT32_HEAD, v.to_bits().to_be_bytes());
    }
    #[inline]
    fn bytes(out: &mut Vec<u8>, v: &[u8]) {
        out.reserve(v.len() + 5);
        length_head(out, v.len(), [None, Some(0xc4), Some(0xc5), Some(0xc6)]);
        out.extend_from_slice(v);
    }
    #[inline]
    fn text(out: &mut Vec<u8>, v: &[u8]) {
        out.reserve(v.len() + 5);
        length_head(
            out,
            v.len(),
            [Some(0xa0), Some(0xd9), Some(0xda), Some(0xdb)],
        );
        out.extend_from_slice(v);
    }
    #[inline]
    fn array(out: &mut Vec<u8>, len: usize) {
        length_head(out, len, [Some(0x90), None, Some(0xdc), Some(0xdd)]);
    }
    #[inline]
    fn map(out: &mut Vec<u8>, len: usize) {
        length_head(out, len, [Some(0x80), None, Some(0xde), Some(0xdf)]);
    }
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]) {
        let _ = rmp::encode::write_ext_meta(out, binary_yson.len() as u32, YSON_EXT_TYPE);
        out.extend_from_slice(binary_yson);
    }

    // The hot path of every reader: inlined into the row decoders, one match on the marker
    // byte; the rare items (extensions, errors) are out of line.
    #[inline(always)]
    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError> {
        let start = *pos;
        let Some(&marker) = input.get(start) else {
            return Err(truncated(input, start, start, 1));
        };
        let at = start + 1;
        // `n` bytes after the marker (and the header bytes before them, `skip`).
        let take = |skip: usize, n: usize| -> Result<&'a [u8], TreeError> {
            let from = at + skip;
            match input.get(from..from.wrapping_add(n)) {
                Some(bytes) if from.checked_add(n).is_some() => Ok(bytes),
                _ => Err(truncated(input, start, from, n)),
            }
        };
        let (item, end) = match marker {
            0x00..=0x7f => (Item::Uint(u64::from(marker)), at),
            0x80..=0x8f => (Item::Map(u64::from(marker & 0x0f)), at),
            0x90..=0x9f => (Item::Array(u64::from(marker & 0x0f)), at),
            0xa0..=0xbf => {
                let n = usize::from(marker & 0x1f);
                (Item::Text(take(0, n)?), at + n)
            }
            0xc0 => (Item::Nil, at),
            0xc2 => (Item::Bool(false), at),
            0xc3 => (Item::Bool(true), at),
            0xc4 | 0xd9 => {
                let n = usize::from(fixed::<1>(input, start, at)?[0]);
                let bytes = take(1, n)?;
                (string_item(marker, bytes), at + 1 + n)
            }
            0xc5 | 0xda => {
                let n = usize::from(u16::from_be_bytes(fixed::<2>(input, start, at)?));
                let bytes = take(2, n)?;
                (string_item(marker, bytes), at + 2 + n)
            }
            0xc6 | 0xdb => {
                let n = u32::from_be_bytes(fixed::<4>(input, start, at)?) as usize;
                let bytes = take(4, n)?;
                (string_item(marker, bytes), at + 4 + n)
            }
            0xca => {
                let bits = u32::from_be_bytes(fixed::<4>(input, start, at)?);
                (Item::Double(f64::from(f32::from_bits(bits))), at + 4)
            }
            0xcb => {
                let bits = u64::from_be_bytes(fixed::<8>(input, start, at)?);
                (Item::Double(f64::from_bits(bits)), at + 8)
            }
            0xcc => (
                Item::Uint(u64::from(fixed::<1>(input, start, at)?[0])),
                at + 1,
            ),
            0xcd => {
                let v = u16::from_be_bytes(fixed::<2>(input, start, at)?);
                (Item::Uint(u64::from(v)), at + 2)
            }
            0xce => {
                let v = u32::from_be_bytes(fixed::<4>(input, start, at)?);
                (Item::Uint(u64::from(v)), at + 4)
            }
            0xcf => {
                let v = u64::from_be_bytes(fixed::<8>(input, start, at)?);
                (Item::Uint(v), at + 8)
            }
            0xd0 => (
                Item::Int(i64::from(fixed::<1>(input, start, at)?[0] as i8)),
                at + 1,
            ),
            0xd1 => {
                let v = i16::from_be_bytes(fixed::<2>(input, start, at)?);
                (Item::Int(i64::from(v)), at + 2)
            }
            0xd2 => {
                let v = i32::from_be_bytes(fixed::<4>(input, start, at)?);
                (Item::Int(i64::from(v)), at + 4)
            }
            0xd3 => {
                let v = i64::from_be_bytes(fixed::<8>(input, start, at)?);
                (Item::Int(v), at + 8)
            }
            0xdc => {
                let v = u16::from_be_bytes(fixed::<2>(input, start, at)?);
                (Item::Array(u64::from(v)), at + 2)
            }
            0xdd => {
                let v = u32::from_be_bytes(fixed::<4>(input, start, at)?);
                (Item::Array(u64::from(v)), at + 4)
            }
            0xde => {
                let v = u16::from_be_bytes(fixed::<2>(input, start, at)?);
                (Item::Map(u64::from(v)), at + 2)
            }
            0xdf => {
                let v = u32::from_be_bytes(fixed::<4>(input, start, at)?);
                (Item::Map(u64::from(v)), at + 4)
            }
            0xe0..=0xff => (Item::Int(i64::from(marker as i8)), at),
            _ => return read_rare(input, pos),
        };
        *pos = end;
        Ok(item)
    }
}

/// The head of a length-prefixed item in its shortest form: the markers for a fixed form
/// (length in the low bits; up to 31 for `str`, 15 for arrays and maps), an 8-, 16- and
/// 32-bit length, each `None` where the item has no such form. MessagePack has no length past
/// 32 bits: the serde path refuses such items before writing them; the row writers' lengths
/// were cut to 32 bits here, as through `rmp`'s `u32` length arguments before.
#[inline(always)]
fn length_head(out: &mut Vec<u8>, len: usize, markers: [Option<u8>; 4]) {
    let fixed_limit = if markers[1].is_some() { 32 } else { 16 };
    match (markers, len) {
        ([Some(fixed), ..], n) if n < fixed_limit => out.push(fixed | n as u8),
        ([_, Some(m8), ..], n) if n <= usize::from(u8::MAX) => {
            out.extend_from_slice(&[m8, n as u8])
        }
        ([_, _, Some(m16), _], n) if n <= usize::from(u16::MAX) => {
            put_head(out, m16, (n as u16).to_be_bytes());
        }
        ([_, _, _, Some(m32)], n) => {
            put_head(out, m32, (n as u32).to_be_bytes());
        }
        _ => unreachable!("every item has a 32-bit length form"),
    }
}

/// A `str` (text) or `bin` (bytes) item of the marker that introduced it.
#[inline(always)]
fn string_item(marker: u8, bytes: &[u8]) -> Item<'_> {
    if marker >= 0xd9 {
        Item::Text(bytes)
    } else {
        Item::Bytes(bytes)
    }
}

/// The `N` bytes at `at` (a fixed-width argument of the item at `start`).
#[inline(always)]
fn fixed<const N: usize>(input: &[u8], start: usize, at: usize) -> Result<[u8; N], TreeError> {
    // `at` is at most one past the input's end, so `at + N` does not overflow.
    match input.get(at..at + N) {
        Some(bytes) => Ok(bytes.try_into().unwrap_or([0; N])),
        None => Err(truncated(input, start, at, N)),
    }
}

/// `n` bytes from `from` run past the end of `input` (the item starts at `start`).
#[cold]
fn truncated(input: &[u8], start: usize, from: usize, n: usize) -> TreeError {
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

/// The items [`MsgPack::read`] leaves out of its hot path: extensions (the `yson` one) and
/// the reserved marker; decoded through `rmp`'s marker table.
#[cold]
#[inline(never)]
fn read_rare<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError> {
    let start = *pos;
    let take = |pos: &mut usize, n: usize| -> Result<&'a [u8], TreeError> {
        let end = pos
            .checked_add(n)
            .filter(|&e| e <= input.len())
            .ok_or_else(|| truncated(input, start, *pos, n))?;
        let bytes = &input[*pos..end];
        *pos = end;
        Ok(bytes)
    };
    let be = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let marker = take(pos, 1)?[0];
    let len = match Marker::from_u8(marker) {
        Marker::FixExt1 => 1,
        Marker::FixExt2 => 2,
        Marker::FixExt4 => 4,
        Marker::FixExt8 => 8,
        Marker::FixExt16 => 16,
        Marker::Ext8 => be(take(pos, 1)?) as usize,
        Marker::Ext16 => be(take(pos, 2)?) as usize,
        Marker::Ext32 => be(take(pos, 4)?) as usize,
        _ => {
            return Err(TreeError::new(
                start,
                "the reserved byte 0xc1 is not a MessagePack item",
            ))
        }
    };
    let ext_type = take(pos, 1)?[0] as i8;
    if ext_type != YSON_EXT_TYPE {
        return Err(TreeError::new(
            start,
            format!("unknown extension type {ext_type} (only {YSON_EXT_TYPE}, yson, is defined)"),
        ));
    }
    Ok(Item::Yson(take(pos, len)?))
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
    tree::encode_row::<MsgPack>(FORMAT, schema, values, out)
}

/// Reads the rows of a MessagePack stream held in memory, as owned values:
/// `RowReader::new(schemas, input)`, then `next_row(&mut values)` until `None`;
/// `other_columns()` gives the last row's columns outside a non-strict schema.
pub type RowReader<'a> = tree::RowReader<'a, MsgPack>;

/// Reads a MessagePack stream item by item with no schema (the lowest level):
/// `ItemReader::new(input)`, then `next_item()` until `None`.
pub type ItemReader<'a> = tree::ItemReader<'a, MsgPack>;

/// A serde value as MessagePack (structs as arrays of their fields, enums by index; see
/// docs/formats/msgpack.md, "serde").
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
    tree::serde_format::to_vec_into::<MsgPack, T>(value, out)
}

/// A serde value from MessagePack bytes holding exactly one item.
///
/// # Errors
/// Bytes that are not MessagePack, an item that does not fit `T`, or bytes after it; the
/// error gives the byte offset.
pub fn from_slice<'de, T: serde::Deserialize<'de>>(input: &'de [u8]) -> Result<T, SerdeError> {
    tree::serde_format::from_slice::<MsgPack, T>(input)
}

/// The value of `seed` (a caller's own builder) from bytes holding exactly one item.
///
/// # Errors
/// As [`from_slice`].
pub fn from_slice_seed<'de, S: serde::de::DeserializeSeed<'de>>(
    seed: S,
    input: &'de [u8],
) -> Result<S::Value, SerdeError> {
    tree::serde_format::from_slice_seed::<MsgPack, S>(seed, input)
}
