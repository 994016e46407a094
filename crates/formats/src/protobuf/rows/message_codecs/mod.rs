//! The lab's messages compiled into row codecs: what prost's generated code does for a
//! struct, done for a row of values.
//!
//! Each lab table ([`StaticMessage`]) has an encoder from a row of values (owned or views)
//! and a decoder into the row's views, written for its message the way prost generates
//! `encode_raw` and `merge_field`: the field tags are constants, every column's type is
//! known where it is handled, nothing is looked up per field. They are *fast paths* of the
//! general field table (`protobuf/dynamic/field_table.rs`), not a second codec:
//!
//! - an encoder handles a row only when every value has the kind its column stores and
//!   passes the column's check (ranges of narrow integers and timestamps, floats that fit
//!   f32, UTF-8; BM5's composite columns as owned lists, structs and dicts, or as views in
//!   the canonical binary YSON the sources write, `[03 <8 bytes>;...]`,
//!   `{"foo"=<int64>;"bar"=<string>;}`, `[[<int64>;<string>;];...]`), and then writes
//!   exactly the bytes the general table writes (proto3
//!   defaults left out, floats and an optional's item always written, fields in column
//!   order); anything else returns `false` with the output untouched, and the caller hands
//!   the row to the general table, which writes it or names what is wrong;
//! - a decoder handles a message only when its fields come in strictly increasing field
//!   order, each once, with the wire type of its column, with values that pass the column's
//!   check, and (composite columns) in the canonical layout the encoders write: one packed
//!   run of doubles, a struct's and a dict entry's members in order. Then its views are
//!   exactly those of the general table (an absent field reads as the column's default).
//!   Anything else — an unknown field, a repeated or out-of-order field, a split list, a
//!   truncated or malformed value, a value out of range — returns `false`, and the caller
//!   decodes the message with the general table, which merges what protobuf merges and
//!   reports errors with their byte offset.
//!
//! So the fast paths decide nothing on their own: on the inputs they accept they agree
//! with the general table byte for byte and view for view (the tests below compare the two
//! on random rows and on every single-byte corruption of their messages), and they refuse
//! everything else. Bounds of narrow types are taken from the column types when the codec
//! is built (as the general table takes them), not written down here a second time.

use std::ops::Range;

use shapeshift_types::{check_value, TableSchema, Type, Value, ValueRef};

use crate::protobuf::wire::{Cursor, FIXED32, FIXED64, LEN, VARINT};
use crate::protobuf::StaticMessage;
use crate::table::values::{signed_bounds, unsigned_bound};
use crate::table::yson_binary;
use crate::varint::{len as varint_len, put as put_varint};

/// A row value as the encoders read it: owned or borrowed.
pub(crate) trait Cell {
    fn int64(&self) -> Option<i64>;
    fn uint64(&self) -> Option<u64>;
    fn double(&self) -> Option<f64>;
    fn boolean(&self) -> Option<bool>;
    fn bytes(&self) -> Option<&[u8]>;
    /// The owned value, where the encoder needs its composite structure.
    fn owned(&self) -> Option<&Value>;
    /// A composite view's binary YSON.
    fn composite(&self) -> Option<&[u8]>;
    fn is_null(&self) -> bool;
}

impl Cell for Value {
    #[inline(always)]
    fn int64(&self) -> Option<i64> {
        match self {
            Value::Int64(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn uint64(&self) -> Option<u64> {
        match self {
            Value::Uint64(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn double(&self) -> Option<f64> {
        match self {
            Value::Double(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn boolean(&self) -> Option<bool> {
        match self {
            Value::Bool(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    #[inline(always)]
    fn owned(&self) -> Option<&Value> {
        Some(self)
    }
    #[inline(always)]
    fn composite(&self) -> Option<&[u8]> {
        None
    }
    #[inline(always)]
    fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

impl Cell for ValueRef<'_> {
    #[inline(always)]
    fn int64(&self) -> Option<i64> {
        match self {
            ValueRef::Int64(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn uint64(&self) -> Option<u64> {
        match self {
            ValueRef::Uint64(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn double(&self) -> Option<f64> {
        match self {
            ValueRef::Double(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn boolean(&self) -> Option<bool> {
        match self {
            ValueRef::Bool(v) => Some(*v),
            _ => None,
        }
    }
    #[inline(always)]
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            ValueRef::String(s) => Some(s),
            _ => None,
        }
    }
    #[inline(always)]
    fn owned(&self) -> Option<&Value> {
        None
    }
    #[inline(always)]
    fn composite(&self) -> Option<&[u8]> {
        match self {
            ValueRef::Composite(bytes) => Some(bytes),
            _ => None,
        }
    }
    #[inline(always)]
    fn is_null(&self) -> bool {
        matches!(self, ValueRef::Null)
    }
}

/// The range a signed column admits, from its type.
#[derive(Clone, Copy, Debug)]
struct Signed {
    lo: i64,
    hi: i64,
}

impl Signed {
    fn of(ty: &Type) -> Signed {
        let (lo, hi) = signed_bounds(ty);
        Signed { lo, hi }
    }
    #[inline(always)]
    fn admits(self, v: i64) -> bool {
        self.lo <= v && v <= self.hi
    }
}

/// Whether a double fits a `float` column (the general table's rule: finite values up to
/// f32's largest; infinities and NaN pass).
#[inline(always)]
fn fits_f32(v: f64) -> bool {
    !(v.is_finite() && v.abs() > f64::from(f32::MAX))
}

// ---- wire writing ----

/// A tag of a field below 2048 (at most two bytes; the lab's messages have 1000 fields).
#[inline(always)]
fn put_tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    let tag = (field << 3) | u32::from(wire_type);
    if tag < 0x80 {
        out.push(tag as u8);
    } else {
        put_varint(out, u64::from(tag));
    }
}

#[inline(always)]
fn put_bytes(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

// ---- wire reading ----

/// The one-byte tag of field `field` (below 16) with `wire_type`.
const fn tag(field: u8, wire_type: u8) -> u8 {
    (field << 3) | wire_type
}

/// Reads a varint at `cursor`; `None` on a malformed or truncated one.
#[inline(always)]
fn varint(cursor: &mut Cursor<'_>) -> Option<u64> {
    cursor.varint().ok()
}

#[inline(always)]
fn fixed64(cursor: &mut Cursor<'_>) -> Option<u64> {
    let bytes = cursor.bytes.get(cursor.pos..cursor.pos + 8)?;
    cursor.pos += 8;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

#[inline(always)]
fn fixed32(cursor: &mut Cursor<'_>) -> Option<u32> {
    let bytes = cursor.bytes.get(cursor.pos..cursor.pos + 4)?;
    cursor.pos += 4;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

#[inline(always)]
fn len_delimited<'a>(cursor: &mut Cursor<'a>) -> Option<&'a [u8]> {
    let len = usize::try_from(varint(cursor)?).ok()?;
    let end = cursor.pos.checked_add(len)?;
    let bytes = cursor.bytes.get(cursor.pos..end)?;
    cursor.pos = end;
    Some(bytes)
}

/// The next one-byte tag, if it is above `after` (fields strictly increasing) and one of
/// the message's; `None` ends the fast path.
#[inline(always)]
fn next_tag(cursor: &Cursor<'_>, after: u8) -> Option<u8> {
    let byte = *cursor.bytes.get(cursor.pos)?;
    (byte < 0x80 && (byte >> 3) > (after >> 3)).then_some(byte)
}

/// A lab table compiled (see the module docs).
#[derive(Clone, Debug)]
pub(crate) enum MessageCodec {
    Bm1(Bm1),
    Bm2(Bm2),
    Bm3(Bm3),
    Bm5(Bm5),
}

impl MessageCodec {
    /// The codec of `message`, whose table is `schema` (as [`StaticMessage::for_schema`]
    /// matched them).
    pub(crate) fn new(message: StaticMessage, schema: &TableSchema) -> MessageCodec {
        let ty = |i: usize| &schema.columns[i].ty;
        match message {
            StaticMessage::Bm1 => MessageCodec::Bm1(Bm1 {
                int8: Signed::of(ty(0)),
                int16: Signed::of(ty(1)),
                int32: Signed::of(ty(2)),
                uint8: unsigned_bound(ty(4)),
                uint16: unsigned_bound(ty(5)),
                uint32: unsigned_bound(ty(6)),
                columns: schema.columns.len(),
            }),
            StaticMessage::Bm2 => MessageCodec::Bm2(Bm2 {
                id: unsigned_bound(ty(0)),
            }),
            StaticMessage::Bm3 => MessageCodec::Bm3(Bm3 {
                created: unsigned_bound(ty(6)),
                code: Signed::of(ty(7)),
            }),
            StaticMessage::Bm5 => {
                let Type::Struct(members) = ty(2).untagged() else {
                    unreachable!("Bm5's pair is a struct")
                };
                let default_of = |value: Value, ty: &Type| {
                    let mut bytes = Vec::new();
                    check_value(&value, ty).expect("the default is a value of the type");
                    yson_binary::value(&mut bytes, &value, ty).expect("the default writes");
                    bytes.into_boxed_slice()
                };
                MessageCodec::Bm5(Bm5 {
                    foo: Signed::of(&members[0].ty),
                    foo_key: yson_key(&members[0].name),
                    bar_key: yson_key(&members[1].name),
                    empty_list: default_of(Value::List(Vec::new()), ty(1)),
                    empty_pair: default_of(
                        Value::Tuple(vec![Value::Int64(0), Value::String(Vec::new())]),
                        ty(2),
                    ),
                    empty_dict: default_of(Value::Dict(Vec::new()), ty(3)),
                })
            }
        }
    }

    /// Appends the message of `values` to `out`; `false` (and `out` as it was) when the
    /// row needs the general table.
    #[inline]
    pub(crate) fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        match self {
            MessageCodec::Bm1(codec) => codec.encode(values, out),
            MessageCodec::Bm2(codec) => codec.encode(values, out),
            MessageCodec::Bm3(codec) => codec.encode(values, out),
            MessageCodec::Bm5(codec) => codec.encode(values, out),
        }
    }

    /// Decodes `message` into `refs` (and composite values into `arena`, their columns and
    /// spans into `composites`); `false` when the message needs the general table (then
    /// `refs`, `arena` and `composites` hold garbage the caller clears).
    #[inline]
    pub(crate) fn decode<'a>(
        &'a self,
        message: &'a [u8],
        refs: &mut Vec<ValueRef<'a>>,
        arena: &mut Vec<u8>,
        composites: &mut Vec<(usize, Range<usize>)>,
    ) -> bool {
        let mut cursor = Cursor::new(message, 0);
        match self {
            MessageCodec::Bm1(codec) => codec.decode(&mut cursor, refs),
            MessageCodec::Bm2(codec) => codec.decode(&mut cursor, refs),
            MessageCodec::Bm3(codec) => codec.decode(&mut cursor, refs),
            MessageCodec::Bm5(codec) => codec.decode(&mut cursor, refs, arena, composites),
        }
    }
}

/// The binary YSON of a struct member's name followed by `=`.
fn yson_key(name: &str) -> Box<[u8]> {
    let mut bytes = Vec::new();
    yson_binary::string(&mut bytes, name.as_bytes());
    bytes.push(b'=');
    bytes.into_boxed_slice()
}

mod bm1;
mod bm2;
mod bm3;
mod bm5;
#[cfg(test)]
mod tests;

pub(crate) use bm1::Bm1;
pub(crate) use bm2::Bm2;
pub(crate) use bm3::Bm3;
pub(crate) use bm5::Bm5;
