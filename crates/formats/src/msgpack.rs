//! MessagePack table streams: typed rows as MessagePack items, lossless for every type.
//!
//! The mapping (shared with CBOR, see docs/formats.md): a row is an array of its column
//! values in schema order, a control record is a map (`{"table_index": 1}`), integers keep
//! their sign class (`int` families for signed types, `uint` for unsigned), doubles are
//! always float64 (bit-exact), `string`/`uuid`/decimals are `bin`, `utf8`/`json` are `str`,
//! structs and tuples are positional arrays, variants `[index, value]`, dicts MessagePack
//! maps with keys of their own type, `optional<T>` of a nullable `T` is `nil` or `[value]`,
//! and `yson` values are extension type [`YSON_EXT_TYPE`] holding binary YSON.
//!
//! Encoding goes through the `rmp` crate's writers (shortest forms); decoding reads
//! `rmp`'s markers from a slice and checks every length against the bytes that remain.
//!
//! - [`encode_row`]: one row into a buffer, the fast path for writing.
//! - [`ItemReader`]: the lowest-level reader, item by item with no schema.
//! - [`RowReader`]: rows of a stream in memory, as owned values.
//! - the common interface: [`crate::table::open_source`] / [`crate::table::open_sink`].

use std::io::{Read, Write};

use rmp::Marker;
use shapeshift_types::{check_value, TableSchema, Value};

pub use crate::table::tree_codec::Item;
use crate::table::tree_codec::{self, Dialect, TreeError, TreeSink, TreeSource};
use crate::table::{FormatError, RowSink, RowSource};

const FORMAT: &str = "msgpack";

/// The MessagePack extension type of `yson` values (payload: binary YSON). ASCII `Y`.
pub const YSON_EXT_TYPE: i8 = 0x59;

/// The MessagePack spelling of the tree mapping (the type parameter of [`RowReader`] and
/// [`ItemReader`]).
pub struct MsgPack;

impl Dialect for MsgPack {
    const NAME: &'static str = FORMAT;

    // Writing into a Vec cannot fail; rmp's results carry only the sink's error.
    fn nil(out: &mut Vec<u8>) {
        let _ = rmp::encode::write_nil(out);
    }
    fn boolean(out: &mut Vec<u8>, v: bool) {
        let _ = rmp::encode::write_bool(out, v);
    }
    fn int(out: &mut Vec<u8>, v: i64) {
        let _ = rmp::encode::write_sint(out, v);
    }
    fn uint(out: &mut Vec<u8>, v: u64) {
        let _ = rmp::encode::write_uint(out, v);
    }
    fn double(out: &mut Vec<u8>, v: f64) {
        let _ = rmp::encode::write_f64(out, v);
    }
    fn bytes(out: &mut Vec<u8>, v: &[u8]) {
        let _ = rmp::encode::write_bin(out, v);
    }
    fn text(out: &mut Vec<u8>, v: &[u8]) {
        // rmp's `write_str` wants a `&str`; the caller has checked the UTF-8 already.
        let _ = rmp::encode::write_str_len(&mut *out, v.len() as u32);
        out.extend_from_slice(v);
    }
    fn array(out: &mut Vec<u8>, len: usize) {
        let _ = rmp::encode::write_array_len(out, len as u32);
    }
    fn map(out: &mut Vec<u8>, len: usize) {
        let _ = rmp::encode::write_map_len(out, len as u32);
    }
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]) {
        let _ = rmp::encode::write_ext_meta(out, binary_yson.len() as u32, YSON_EXT_TYPE);
        out.extend_from_slice(binary_yson);
    }

    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError> {
        let start = *pos;
        let take = |pos: &mut usize, n: usize| -> Result<&'a [u8], TreeError> {
            let end = pos
                .checked_add(n)
                .filter(|&e| e <= input.len())
                .ok_or_else(|| {
                    TreeError::new(
                        start,
                        format!(
                            "truncated: {n} more bytes expected at byte {}, the input ends at {}",
                            *pos,
                            input.len()
                        ),
                    )
                })?;
            let bytes = &input[*pos..end];
            *pos = end;
            Ok(bytes)
        };
        let be = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let marker = take(pos, 1)?[0];
        Ok(match Marker::from_u8(marker) {
            Marker::FixPos(v) => Item::Uint(u64::from(v)),
            Marker::FixNeg(v) => Item::Int(i64::from(v)),
            Marker::Null => Item::Nil,
            Marker::False => Item::Bool(false),
            Marker::True => Item::Bool(true),
            Marker::U8 => Item::Uint(be(take(pos, 1)?)),
            Marker::U16 => Item::Uint(be(take(pos, 2)?)),
            Marker::U32 => Item::Uint(be(take(pos, 4)?)),
            Marker::U64 => Item::Uint(be(take(pos, 8)?)),
            Marker::I8 => Item::Int(i64::from(take(pos, 1)?[0] as i8)),
            Marker::I16 => Item::Int(i64::from(be(take(pos, 2)?) as u16 as i16)),
            Marker::I32 => Item::Int(i64::from(be(take(pos, 4)?) as u32 as i32)),
            Marker::I64 => Item::Int(be(take(pos, 8)?) as i64),
            Marker::F32 => Item::Double(f64::from(f32::from_bits(be(take(pos, 4)?) as u32))),
            Marker::F64 => Item::Double(f64::from_bits(be(take(pos, 8)?))),
            Marker::FixStr(n) => Item::Text(take(pos, usize::from(n))?),
            Marker::Str8
            | Marker::Str16
            | Marker::Str32
            | Marker::Bin8
            | Marker::Bin16
            | Marker::Bin32 => {
                let width = match Marker::from_u8(marker) {
                    Marker::Str8 | Marker::Bin8 => 1,
                    Marker::Str16 | Marker::Bin16 => 2,
                    _ => 4,
                };
                let len = be(take(pos, width)?) as usize;
                let bytes = take(pos, len)?;
                if matches!(
                    Marker::from_u8(marker),
                    Marker::Str8 | Marker::Str16 | Marker::Str32
                ) {
                    Item::Text(bytes)
                } else {
                    Item::Bytes(bytes)
                }
            }
            Marker::FixArray(n) => Item::Array(u64::from(n)),
            Marker::Array16 => Item::Array(be(take(pos, 2)?)),
            Marker::Array32 => Item::Array(be(take(pos, 4)?)),
            Marker::FixMap(n) => Item::Map(u64::from(n)),
            Marker::Map16 => Item::Map(be(take(pos, 2)?)),
            Marker::Map32 => Item::Map(be(take(pos, 4)?)),
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                let len = match Marker::from_u8(marker) {
                    Marker::FixExt1 => 1,
                    Marker::FixExt2 => 2,
                    Marker::FixExt4 => 4,
                    Marker::FixExt8 => 8,
                    Marker::FixExt16 => 16,
                    Marker::Ext8 => be(take(pos, 1)?) as usize,
                    Marker::Ext16 => be(take(pos, 2)?) as usize,
                    _ => be(take(pos, 4)?) as usize,
                };
                let ext_type = take(pos, 1)?[0] as i8;
                if ext_type != YSON_EXT_TYPE {
                    return Err(TreeError::new(start, format!("unknown extension type {ext_type} (only {YSON_EXT_TYPE}, yson, is defined)")));
                }
                Item::Yson(take(pos, len)?)
            }
            Marker::Reserved => {
                return Err(TreeError::new(
                    start,
                    "the reserved byte 0xc1 is not a MessagePack item",
                ))
            }
        })
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
    encode_row_with::<MsgPack>(FORMAT, schema, values, out)
}

pub(crate) fn encode_row_with<D: Dialect>(
    format: &'static str,
    schema: &TableSchema,
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    if values.len() != schema.columns.len() {
        return Err(FormatError::new(
            format,
            format!(
                "the schema has {} columns, the row has {} values",
                schema.columns.len(),
                values.len()
            ),
        ));
    }
    let start = out.len();
    D::array(out, values.len());
    for (value, column) in values.iter().zip(&schema.columns) {
        let result = check_value(value, &column.ty)
            .map_err(|e| e.to_string())
            .and_then(|()| tree_codec::encode_value::<D>(out, value, &column.ty));
        if let Err(e) = result {
            out.truncate(start);
            return Err(FormatError::new(
                format,
                format!("column \"{}\": {e}", column.name),
            ));
        }
    }
    Ok(())
}

/// Reads the rows of a MessagePack stream held in memory, as owned values:
/// `RowReader::new(schemas, input)`, then `next_row(&mut values)` until `None`;
/// `other_columns()` gives the last row's columns outside a non-strict schema.
pub type RowReader<'a> = tree_codec::RowReader<'a, MsgPack>;

/// Reads a MessagePack stream item by item with no schema (the lowest level):
/// `ItemReader::new(input)`, then `next_item()` until `None`.
pub type ItemReader<'a> = tree_codec::ItemReader<'a, MsgPack>;

pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(TreeSource::<MsgPack>::open(schemas, input)?))
}

pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(TreeSink::<MsgPack>::new(schemas, output)))
}
