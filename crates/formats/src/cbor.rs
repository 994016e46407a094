//! CBOR (RFC 8949) table streams: typed rows as CBOR items, lossless for every type.
//!
//! The mapping is MessagePack's (see [`crate::msgpack`] and docs/formats.md): a row is an
//! array in schema order, a control record a map (`{"table_index": 1}`), signed types are
//! CBOR integers of either major type, unsigned ones major type 0, doubles always float64
//! (bit-exact), `string`/`uuid`/decimals byte strings, `utf8`/`json` text strings, structs
//! and tuples positional arrays, variants `[index, value]`, dicts CBOR maps with keys of their
//! own type, `optional<T>` of a nullable `T` null or `[value]`, and `yson` values tag
//! [`YSON_TAG`] over a byte string of binary YSON. Only definite lengths are written or read.
//!
//! Encoding and decoding go through the `minicbor` crate (its `Encoder` into a buffer, its
//! `Decoder` over a slice, which checks every length against the input).

use std::io::{Read, Write};

use minicbor::data::{Tag, Type as CborType};
use minicbor::{Decoder, Encoder};
use shapeshift_types::{TableSchema, Value};

pub use crate::table::tree_codec::Item;
use crate::table::tree_codec::{self, Dialect, TreeError, TreeSink, TreeSource};
use crate::table::{FormatError, RowSink, RowSource};

const FORMAT: &str = "cbor";

/// The CBOR tag of `yson` values (its item: a byte string of binary YSON). Not registered
/// with IANA; the bytes spell "YSON".
pub const YSON_TAG: u64 = 0x5953_4f4e;

/// The CBOR spelling of the tree mapping (the type parameter of [`RowReader`] and
/// [`ItemReader`]).
pub struct Cbor;

impl Dialect for Cbor {
    const NAME: &'static str = FORMAT;

    // Encoding into a Vec cannot fail: its error type is `Infallible`.
    fn nil(out: &mut Vec<u8>) {
        let _ = Encoder::new(out).null();
    }
    fn boolean(out: &mut Vec<u8>, v: bool) {
        let _ = Encoder::new(out).bool(v);
    }
    fn int(out: &mut Vec<u8>, v: i64) {
        let _ = Encoder::new(out).i64(v);
    }
    fn uint(out: &mut Vec<u8>, v: u64) {
        let _ = Encoder::new(out).u64(v);
    }
    fn double(out: &mut Vec<u8>, v: f64) {
        let _ = Encoder::new(out).f64(v);
    }
    fn bytes(out: &mut Vec<u8>, v: &[u8]) {
        let _ = Encoder::new(out).bytes(v);
    }
    fn text(out: &mut Vec<u8>, v: &[u8]) {
        // A text string header (major type 3, shortest length form), then the bytes, whose
        // UTF-8 the caller has checked (minicbor's `str` wants a `&str`).
        let len = v.len() as u64;
        match len {
            0..=23 => out.push(0x60 | len as u8),
            24..=0xff => out.extend_from_slice(&[0x78, len as u8]),
            0x100..=0xffff => {
                out.push(0x79);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0x7a);
                out.extend_from_slice(&(len as u32).to_be_bytes());
            }
            _ => {
                out.push(0x7b);
                out.extend_from_slice(&len.to_be_bytes());
            }
        }
        out.extend_from_slice(v);
    }
    fn array(out: &mut Vec<u8>, len: usize) {
        let _ = Encoder::new(out).array(len as u64);
    }
    fn map(out: &mut Vec<u8>, len: usize) {
        let _ = Encoder::new(out).map(len as u64);
    }
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]) {
        let _ = Encoder::new(out)
            .tag(Tag::new(YSON_TAG))
            .and_then(|e| e.bytes(binary_yson));
    }

    #[inline(always)]
    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError> {
        let start = *pos;
        let mut d = Decoder::new(input);
        d.set_position(start);
        let fail = |e: minicbor::decode::Error| {
            let at = e.position().unwrap_or(start);
            // The offset travels apart (a streaming reader adds the window's place in the
            // stream to it); minicbor's message would repeat it relative to the window.
            let message = e.to_string().replacen(&format!(" at position {at}"), "", 1);
            if e.is_end_of_input() {
                TreeError::end_of_input(at, message)
            } else {
                TreeError::new(at, message)
            }
        };
        let item = match d.datatype().map_err(fail)? {
            CborType::Bool => Item::Bool(d.bool().map_err(fail)?),
            CborType::Null => {
                d.null().map_err(fail)?;
                Item::Nil
            }
            CborType::U8 | CborType::U16 | CborType::U32 | CborType::U64 => Item::Uint(d.u64().map_err(fail)?),
            CborType::I8 | CborType::I16 | CborType::I32 | CborType::I64 => Item::Int(d.i64().map_err(fail)?),
            CborType::Int => return Err(TreeError::new(start, "an integer outside the 64-bit range")),
            CborType::F32 | CborType::F64 => Item::Double(d.f64().map_err(fail)?),
            CborType::Bytes => Item::Bytes(d.bytes().map_err(fail)?),
            CborType::String => Item::Text(d.str().map_err(fail)?.as_bytes()),
            CborType::Array => match d.array().map_err(fail)? {
                Some(n) => Item::Array(n),
                None => return Err(TreeError::new(start, "indefinite-length arrays are not used")),
            },
            CborType::Map => match d.map().map_err(fail)? {
                Some(n) => Item::Map(n),
                None => return Err(TreeError::new(start, "indefinite-length maps are not used")),
            },
            CborType::Tag => {
                let tag = d.tag().map_err(fail)?;
                if tag.as_u64() != YSON_TAG {
                    return Err(TreeError::new(start, format!("unknown tag {} (only {YSON_TAG}, yson, is defined)", tag.as_u64())));
                }
                Item::Yson(d.bytes().map_err(fail)?)
            }
            other => {
                return Err(TreeError::new(start, format!("unexpected CBOR item {other} (indefinite lengths, simple values, half floats and undefined are not used)")))
            }
        };
        *pos = d.position();
        Ok(item)
    }
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
    crate::msgpack::encode_row_with::<Cbor>(FORMAT, schema, values, out)
}

/// Reads the rows of a CBOR stream held in memory, as owned values (see
/// [`crate::msgpack::RowReader`]).
pub type RowReader<'a> = tree_codec::RowReader<'a, Cbor>;

/// Reads a CBOR stream item by item with no schema (the lowest level).
pub type ItemReader<'a> = tree_codec::ItemReader<'a, Cbor>;

pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(TreeSource::<Cbor>::open(schemas, input)?))
}

pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(TreeSink::<Cbor>::new(schemas, output)))
}
