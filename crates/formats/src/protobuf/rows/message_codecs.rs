//! The lab's messages compiled into row codecs: what prost's generated code does for a
//! struct, done for a row of values.
//!
//! Each lab table ([`StaticMessage`]) has an encoder from a row of values (owned or views)
//! and a decoder into the row's views, written for its message the way prost generates
//! `encode_raw` and `merge_field`: the field tags are constants, every column's type is
//! known where it is handled, nothing is looked up per field. They are *fast paths* of the
//! general field table (`protobuf_dynamic/row_stream.rs`), not a second codec:
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

/// `Bm1Row`: 1000 columns cycling int8, int16, int32, int64, uint8, uint16, uint32,
/// uint64, float, double; column `i` is field `i + 1`.
#[derive(Clone, Debug)]
pub(crate) struct Bm1 {
    int8: Signed,
    int16: Signed,
    int32: Signed,
    uint8: u64,
    uint16: u64,
    uint32: u64,
    columns: usize,
}

/// The wire type of the `k`-th column of BM1's cycle.
const BM1_WIRE: [u8; 10] = [
    VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, FIXED32, FIXED64,
];

impl Bm1 {
    #[inline]
    fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        if values.len() != self.columns || values.len() % 10 != 0 {
            return false;
        }
        let start = out.len();
        // At most a 2-byte tag and a 10-byte varint per column.
        out.reserve(values.len() * 12);
        let mut field = 1u32;
        for chunk in values.chunks_exact(10) {
            let ok = self.signed(&chunk[0], self.int8, field, out)
                && self.signed(&chunk[1], self.int16, field + 1, out)
                && self.signed(&chunk[2], self.int32, field + 2, out)
                && self.signed(
                    &chunk[3],
                    Signed {
                        lo: i64::MIN,
                        hi: i64::MAX,
                    },
                    field + 3,
                    out,
                )
                && self.unsigned(&chunk[4], self.uint8, field + 4, out)
                && self.unsigned(&chunk[5], self.uint16, field + 5, out)
                && self.unsigned(&chunk[6], self.uint32, field + 6, out)
                && self.unsigned(&chunk[7], u64::MAX, field + 7, out);
            let ok = ok
                && match (chunk[8].double(), chunk[9].double()) {
                    (Some(float), Some(double)) if fits_f32(float) => {
                        put_tag(out, field + 8, FIXED32);
                        out.extend_from_slice(&(float as f32).to_le_bytes());
                        put_tag(out, field + 9, FIXED64);
                        out.extend_from_slice(&double.to_le_bytes());
                        true
                    }
                    _ => false,
                };
            if !ok {
                out.truncate(start);
                return false;
            }
            field += 10;
        }
        true
    }

    #[inline(always)]
    fn signed<C: Cell>(&self, cell: &C, range: Signed, field: u32, out: &mut Vec<u8>) -> bool {
        match cell.int64() {
            Some(v) if range.admits(v) => {
                if v != 0 {
                    put_tag(out, field, VARINT);
                    put_varint(out, v as u64);
                }
                true
            }
            _ => false,
        }
    }

    #[inline(always)]
    fn unsigned<C: Cell>(&self, cell: &C, hi: u64, field: u32, out: &mut Vec<u8>) -> bool {
        match cell.uint64() {
            Some(v) if v <= hi => {
                if v != 0 {
                    put_tag(out, field, VARINT);
                    put_varint(out, v);
                }
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        refs.reserve(self.columns);
        for index in 0..self.columns {
            let k = index % 10;
            let tag = ((index as u32 + 1) << 3) | u32::from(BM1_WIRE[k]);
            let present = match cursor.bytes.get(cursor.pos..) {
                Some([first, ..]) if tag < 0x80 => *first == tag as u8,
                Some([first, second, ..]) => {
                    *first == (tag as u8) | 0x80 && u32::from(*second) == tag >> 7
                }
                _ => false,
            };
            if !present {
                refs.push(match k {
                    0..=3 => ValueRef::Int64(0),
                    4..=7 => ValueRef::Uint64(0),
                    _ => ValueRef::Double(0.0),
                });
                continue;
            }
            cursor.pos += if tag < 0x80 { 1 } else { 2 };
            let view = match k {
                0..=3 => {
                    let Some(v) = varint(cursor) else {
                        return false;
                    };
                    let v = v as i64;
                    let range = match k {
                        0 => self.int8,
                        1 => self.int16,
                        2 => self.int32,
                        _ => Signed {
                            lo: i64::MIN,
                            hi: i64::MAX,
                        },
                    };
                    if !range.admits(v) {
                        return false;
                    }
                    ValueRef::Int64(v)
                }
                4..=7 => {
                    let Some(v) = varint(cursor) else {
                        return false;
                    };
                    let hi = match k {
                        4 => self.uint8,
                        5 => self.uint16,
                        6 => self.uint32,
                        _ => u64::MAX,
                    };
                    if v > hi {
                        return false;
                    }
                    ValueRef::Uint64(v)
                }
                8 => match fixed32(cursor) {
                    Some(bits) => ValueRef::Double(f64::from(f32::from_bits(bits))),
                    None => return false,
                },
                _ => match fixed64(cursor) {
                    Some(bits) => ValueRef::Double(f64::from_bits(bits)),
                    None => return false,
                },
            };
            refs.push(view);
        }
        cursor.at_end()
    }
}

/// `Bm2Row`: `id` uint32 (field 1), `data` string (field 2).
#[derive(Clone, Debug)]
pub(crate) struct Bm2 {
    id: u64,
}

impl Bm2 {
    #[inline]
    fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [id, data] = values else {
            return false;
        };
        let (Some(id), Some(data)) = (id.uint64(), data.bytes()) else {
            return false;
        };
        if id > self.id {
            return false;
        }
        out.reserve(16 + data.len());
        if id != 0 {
            out.push(tag(1, VARINT));
            put_varint(out, id);
        }
        if !data.is_empty() {
            put_bytes(out, tag(2, LEN), data);
        }
        true
    }

    #[inline]
    fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        let mut id = 0;
        let mut data: &[u8] = b"";
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            match tag_byte {
                t if t == tag(1, VARINT) => match varint(cursor) {
                    Some(v) if v <= self.id => id = v,
                    _ => return false,
                },
                t if t == tag(2, LEN) => match len_delimited(cursor) {
                    Some(bytes) => data = bytes,
                    None => return false,
                },
                _ => return false,
            }
        }
        refs.extend_from_slice(&[ValueRef::Uint64(id), ValueRef::String(data)]);
        cursor.at_end()
    }
}

/// `Bm3Row`: id, counter (int64), user (string), score (double), active (bool), country
/// (string), created (timestamp), code (int32), ratio (float), comment (utf8): fields 1..10.
#[derive(Clone, Debug)]
pub(crate) struct Bm3 {
    created: u64,
    code: Signed,
}

impl Bm3 {
    #[inline]
    fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [id, counter, user, score, active, country, created, code, ratio, comment] = values
        else {
            return false;
        };
        let (
            Some(id),
            Some(counter),
            Some(user),
            Some(score),
            Some(active),
            Some(country),
            Some(created),
            Some(code),
            Some(ratio),
            Some(comment),
        ) = (
            id.int64(),
            counter.int64(),
            user.bytes(),
            score.double(),
            active.boolean(),
            country.bytes(),
            created.uint64(),
            code.int64(),
            ratio.double(),
            comment.bytes(),
        )
        else {
            return false;
        };
        if created > self.created
            || !self.code.admits(code)
            || !fits_f32(ratio)
            || std::str::from_utf8(comment).is_err()
        {
            return false;
        }
        // Tags, varints and lengths: well under 80 bytes.
        out.reserve(80 + user.len() + country.len() + comment.len());
        if id != 0 {
            out.push(tag(1, VARINT));
            put_varint(out, id as u64);
        }
        if counter != 0 {
            out.push(tag(2, VARINT));
            put_varint(out, counter as u64);
        }
        if !user.is_empty() {
            put_bytes(out, tag(3, LEN), user);
        }
        out.push(tag(4, FIXED64));
        out.extend_from_slice(&score.to_le_bytes());
        if active {
            out.extend_from_slice(&[tag(5, VARINT), 1]);
        }
        if !country.is_empty() {
            put_bytes(out, tag(6, LEN), country);
        }
        if created != 0 {
            out.push(tag(7, VARINT));
            put_varint(out, created);
        }
        if code != 0 {
            out.push(tag(8, VARINT));
            put_varint(out, code as u64);
        }
        out.push(tag(9, FIXED32));
        out.extend_from_slice(&(ratio as f32).to_le_bytes());
        if !comment.is_empty() {
            put_bytes(out, tag(10, LEN), comment);
        }
        true
    }

    #[inline]
    fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        let mut row = [
            ValueRef::Int64(0),
            ValueRef::Int64(0),
            ValueRef::String(b""),
            ValueRef::Double(0.0),
            ValueRef::Bool(false),
            ValueRef::String(b""),
            ValueRef::Uint64(0),
            ValueRef::Int64(0),
            ValueRef::Double(0.0),
            ValueRef::String(b""),
        ];
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            let view = match tag_byte {
                t if t == tag(1, VARINT) || t == tag(2, VARINT) => match varint(cursor) {
                    Some(v) => ValueRef::Int64(v as i64),
                    None => return false,
                },
                t if t == tag(3, LEN) || t == tag(6, LEN) => match len_delimited(cursor) {
                    Some(bytes) => ValueRef::String(bytes),
                    None => return false,
                },
                t if t == tag(4, FIXED64) => match fixed64(cursor) {
                    Some(bits) => ValueRef::Double(f64::from_bits(bits)),
                    None => return false,
                },
                t if t == tag(5, VARINT) => match varint(cursor) {
                    Some(v) => ValueRef::Bool(v != 0),
                    None => return false,
                },
                t if t == tag(7, VARINT) => match varint(cursor) {
                    Some(v) if v <= self.created => ValueRef::Uint64(v),
                    _ => return false,
                },
                t if t == tag(8, VARINT) => match varint(cursor) {
                    Some(v) if self.code.admits(v as i64) => ValueRef::Int64(v as i64),
                    _ => return false,
                },
                t if t == tag(9, FIXED32) => match fixed32(cursor) {
                    Some(bits) => ValueRef::Double(f64::from(f32::from_bits(bits))),
                    None => return false,
                },
                t if t == tag(10, LEN) => match len_delimited(cursor) {
                    Some(bytes) if std::str::from_utf8(bytes).is_ok() => ValueRef::String(bytes),
                    _ => return false,
                },
                _ => return false,
            };
            row[usize::from(tag_byte >> 3) - 1] = view;
        }
        refs.extend_from_slice(&row);
        cursor.at_end()
    }
}

/// `Bm5Row`: `maybe` optional<string> (field 1), `values` list<double> (2, packed),
/// `pair` struct<foo: int32, bar: string> (3, a message of fields 1 and 2), `dict`
/// dict<int64, string> (4, repeated entries of key 1 and value 2).
#[derive(Clone, Debug)]
pub(crate) struct Bm5 {
    foo: Signed,
    /// Binary YSON of the member names, `=` included.
    foo_key: Box<[u8]>,
    bar_key: Box<[u8]>,
    /// Binary YSON of the absent composite columns.
    empty_list: Box<[u8]>,
    empty_pair: Box<[u8]>,
    empty_dict: Box<[u8]>,
}

impl Bm5 {
    #[inline]
    fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [maybe, list, pair, dict] = values else {
            return false;
        };
        let maybe = if maybe.is_null() {
            None
        } else {
            match maybe.bytes() {
                Some(bytes) => Some(bytes),
                None => return false,
            }
        };
        let start = out.len();
        if let Some(bytes) = maybe {
            put_bytes(out, tag(1, LEN), bytes);
        }
        let written = match (list.owned(), list.composite()) {
            (Some(Value::List(items)), _) => {
                put_doubles(items.len(), items.iter().map(Cell::double), out)
            }
            (None, Some(yson)) => put_yson_doubles(yson, out),
            _ => false,
        } && match (pair.owned(), pair.composite()) {
            (Some(Value::Tuple(members)), _) => match members.as_slice() {
                [foo, bar] => match (foo.int64(), bar.bytes()) {
                    (Some(foo), Some(bar)) => self.put_pair(foo, bar, out),
                    _ => false,
                },
                _ => false,
            },
            (None, Some(yson)) => self.put_yson_pair(yson, out),
            _ => false,
        } && match (dict.owned(), dict.composite()) {
            (Some(Value::Dict(entries)), _) => {
                entries
                    .iter()
                    .all(|(key, value)| match (key.int64(), value.bytes()) {
                        (Some(key), Some(value)) => {
                            put_entry(key, value, out);
                            true
                        }
                        _ => false,
                    })
            }
            (None, Some(yson)) => put_yson_entries(yson, out),
            _ => false,
        };
        if !written {
            out.truncate(start);
        }
        written
    }

    /// The pair's message: its body's length is known before it is written.
    #[inline]
    fn put_pair(&self, foo: i64, bar: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.foo.admits(foo) {
            return false;
        }
        put_entry_at(tag(3, LEN), foo, bar, out);
        true
    }

    /// The pair from its canonical binary YSON: `{"foo"=<int64>;"bar"=<string>;}`.
    fn put_yson_pair(&self, yson: &[u8], out: &mut Vec<u8>) -> bool {
        let mut reader = YsonReader {
            bytes: yson,
            pos: 0,
        };
        let parsed = (|| {
            reader.expect(b"{")?;
            reader.expect(&self.foo_key)?;
            let foo = reader.int64()?;
            reader.expect(b";")?;
            reader.expect(&self.bar_key)?;
            let bar = reader.string()?;
            reader.expect(b";}")?;
            reader.at_end().then_some((foo, bar))
        })();
        match parsed {
            Some((foo, bar)) => self.put_pair(foo, bar, out),
            None => false,
        }
    }

    #[inline]
    fn decode<'a>(
        &'a self,
        cursor: &mut Cursor<'a>,
        refs: &mut Vec<ValueRef<'a>>,
        arena: &mut Vec<u8>,
        composites: &mut Vec<(usize, Range<usize>)>,
    ) -> bool {
        let mut maybe = ValueRef::Null;
        let mut list = None;
        let mut pair = None;
        let mut dict_start = None;
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            match tag_byte {
                t if t == tag(1, LEN) => match len_delimited(cursor) {
                    Some(bytes) => maybe = ValueRef::String(bytes),
                    None => return false,
                },
                t if t == tag(2, LEN) => {
                    let Some(run) = len_delimited(cursor) else {
                        return false;
                    };
                    if run.len() % 8 != 0 {
                        return false;
                    }
                    let start = arena.len();
                    arena.reserve(2 + run.len() / 8 * 10);
                    arena.push(b'[');
                    for bits in run.chunks_exact(8) {
                        arena.push(0x03);
                        arena.extend_from_slice(bits);
                        arena.push(b';');
                    }
                    arena.push(b']');
                    list = Some(start..arena.len());
                }
                t if t == tag(3, LEN) => {
                    let Some(body) = len_delimited(cursor) else {
                        return false;
                    };
                    let mut body = Cursor::new(body, 0);
                    let (Some(foo), Some(bar)) = (
                        optional_varint(&mut body, tag(1, VARINT)),
                        optional_bytes(&mut body, tag(2, LEN)),
                    ) else {
                        return false;
                    };
                    let foo = foo as i64;
                    if !body.at_end() || !self.foo.admits(foo) {
                        return false;
                    }
                    let start = arena.len();
                    arena.push(b'{');
                    arena.extend_from_slice(&self.foo_key);
                    yson_binary::int64(arena, foo);
                    arena.push(b';');
                    arena.extend_from_slice(&self.bar_key);
                    yson_binary::string(arena, bar);
                    arena.extend_from_slice(b";}");
                    pair = Some(start..arena.len());
                }
                t if t == tag(4, LEN) => {
                    // A dict is every entry occurrence: the run of them, then nothing else
                    // (the field order stays strictly increasing).
                    let start = arena.len();
                    arena.push(b'[');
                    loop {
                        let Some(body) = len_delimited(cursor) else {
                            return false;
                        };
                        let mut body = Cursor::new(body, 0);
                        let (Some(key), Some(value)) = (
                            optional_varint(&mut body, tag(1, VARINT)),
                            optional_bytes(&mut body, tag(2, LEN)),
                        ) else {
                            return false;
                        };
                        if !body.at_end() {
                            return false;
                        }
                        arena.push(b'[');
                        yson_binary::int64(arena, key as i64);
                        arena.push(b';');
                        yson_binary::string(arena, value);
                        arena.extend_from_slice(b";];");
                        if cursor.bytes.get(cursor.pos) == Some(&tag(4, LEN)) {
                            cursor.pos += 1;
                        } else {
                            break;
                        }
                    }
                    arena.push(b']');
                    dict_start = Some(start..arena.len());
                }
                _ => return false,
            }
        }
        if !cursor.at_end() {
            return false;
        }
        refs.extend_from_slice(&[maybe, ValueRef::Null, ValueRef::Null, ValueRef::Null]);
        for (column, span, empty) in [
            (1, list, &self.empty_list),
            (2, pair, &self.empty_pair),
            (3, dict_start, &self.empty_dict),
        ] {
            match span {
                Some(span) => composites.push((column, span)),
                None => refs[column] = ValueRef::Composite(empty),
            }
        }
        true
    }
}

/// A packed run of `count` doubles (field 2 of `Bm5Row`); nothing when empty.
#[inline]
fn put_doubles(count: usize, items: impl Iterator<Item = Option<f64>>, out: &mut Vec<u8>) -> bool {
    if count == 0 {
        return true;
    }
    out.push(tag(2, LEN));
    put_varint(out, count as u64 * 8);
    out.reserve(count * 8);
    for item in items {
        match item {
            Some(v) => out.extend_from_slice(&v.to_le_bytes()),
            None => return false,
        }
    }
    true
}

/// The doubles from their canonical binary YSON: `[` then `03 <8 bytes> ;` each, `]`.
fn put_yson_doubles(yson: &[u8], out: &mut Vec<u8>) -> bool {
    let [b'[', items @ .., b']'] = yson else {
        return false;
    };
    if items.len() % 10 != 0 {
        return false;
    }
    let items = items.chunks_exact(10);
    if items.clone().any(|item| item[0] != 0x03 || item[9] != b';') {
        return false;
    }
    put_doubles(
        items.len(),
        items.map(|item| {
            Some(f64::from_le_bytes(
                item[1..9].try_into().unwrap_or_default(),
            ))
        }),
        out,
    )
}

/// One dict entry message (field 4 of `Bm5Row`).
#[inline]
fn put_entry(key: i64, value: &[u8], out: &mut Vec<u8>) {
    put_entry_at(tag(4, LEN), key, value, out);
}

/// A nested message `{int64 = 1; bytes = 2}` with tag `tag` (proto3 defaults left out),
/// its length computed before it is written.
#[inline]
fn put_entry_at(tag_byte: u8, number: i64, bytes: &[u8], out: &mut Vec<u8>) {
    let number_len = if number != 0 {
        1 + varint_len(number as u64)
    } else {
        0
    };
    let bytes_len = if bytes.is_empty() {
        0
    } else {
        1 + varint_len(bytes.len() as u64) + bytes.len()
    };
    out.push(tag_byte);
    put_varint(out, (number_len + bytes_len) as u64);
    if number != 0 {
        out.push(tag(1, VARINT));
        put_varint(out, number as u64);
    }
    if !bytes.is_empty() {
        put_bytes(out, tag(2, LEN), bytes);
    }
}

/// The dict's entries from their canonical binary YSON: `[` then `[<int64>;<string>;];`
/// each, `]`.
fn put_yson_entries(yson: &[u8], out: &mut Vec<u8>) -> bool {
    let mut reader = YsonReader {
        bytes: yson,
        pos: 0,
    };
    if reader.expect(b"[").is_none() {
        return false;
    }
    while reader.bytes.get(reader.pos) == Some(&b'[') {
        reader.pos += 1;
        let entry = (|| {
            let key = reader.int64()?;
            reader.expect(b";")?;
            let value = reader.string()?;
            reader.expect(b";];")?;
            Some((key, value))
        })();
        match entry {
            Some((key, value)) => put_entry(key, value, out),
            None => return false,
        }
    }
    reader.expect(b"]").is_some() && reader.at_end()
}

/// Reads the canonical binary YSON the interface's sources write for composite values;
/// `None` for anything else (which the general table then parses).
struct YsonReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> YsonReader<'a> {
    #[inline]
    fn expect(&mut self, expected: &[u8]) -> Option<()> {
        let end = self.pos.checked_add(expected.len())?;
        (self.bytes.get(self.pos..end)? == expected).then(|| self.pos = end)
    }

    fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// A varint of at most ten bytes whose value fits 64 bits.
    #[inline]
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.bytes.get(self.pos)?;
            self.pos += 1;
            if i == 9 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some(value);
            }
        }
        None
    }

    #[inline]
    fn zigzag(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    #[inline]
    fn int64(&mut self) -> Option<i64> {
        self.expect(&[0x02])?;
        self.zigzag()
    }

    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(&[0x01])?;
        let len = usize::try_from(self.zigzag()?).ok()?;
        let end = self.pos.checked_add(len)?;
        let bytes = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }
}

/// An optional varint member with one-byte tag `tag` at `body` (0 when absent).
#[inline(always)]
fn optional_varint(body: &mut Cursor<'_>, tag: u8) -> Option<u64> {
    if body.bytes.get(body.pos) == Some(&tag) {
        body.pos += 1;
        varint(body)
    } else {
        Some(0)
    }
}

/// An optional bytes member with one-byte tag `tag` at `body` (empty when absent).
#[inline(always)]
fn optional_bytes<'a>(body: &mut Cursor<'a>, tag: u8) -> Option<&'a [u8]> {
    if body.bytes.get(body.pos) == Some(&tag) {
        body.pos += 1;
        len_delimited(body)
    } else {
        Some(b"")
    }
}

#[cfg(test)]
mod tests {
    //! The compiled codecs against the general table: same bytes, same views, and on any
    //! input the compiled decoder accepts, the general table's reading of it.

    use super::*;
    use crate::protobuf::dynamic::field_table::{FieldTable, ReadState};
    use proptest::prelude::*;
    use shapeshift_types::testing::arb_value;

    /// A row's views as comparable text (`NaN` equals itself there).
    fn spelled(refs: &[ValueRef<'_>]) -> Vec<String> {
        refs.iter().map(|v| format!("{v:?}")).collect()
    }

    fn general_read(table: &FieldTable, message: &[u8]) -> Result<Vec<String>, String> {
        let mut state = ReadState::default();
        let mut arena = Vec::new();
        let mut refs = Vec::new();
        table
            .read_row(message, 0, &mut state, &mut arena, &mut refs)
            .map_err(|e| e.message)?;
        Ok(spelled(&refs))
    }

    fn compiled_read(codec: &MessageCodec, message: &[u8]) -> Option<Vec<String>> {
        let mut refs = Vec::new();
        let mut arena = Vec::new();
        let mut composites = Vec::new();
        if !codec.decode(message, &mut refs, &mut arena, &mut composites) {
            return None;
        }
        for (column, span) in composites {
            refs[column] = ValueRef::Composite(&arena[span]);
        }
        Some(spelled(&refs))
    }

    fn rows(message: StaticMessage) -> impl Strategy<Value = Vec<Value>> {
        message
            .schema()
            .columns
            .iter()
            .map(|c| arb_value(&c.ty))
            .collect::<Vec<_>>()
    }

    fn views(row: &[Value]) -> Option<Vec<ValueRef<'_>>> {
        row.iter()
            .map(|v| match v {
                Value::Null => Some(ValueRef::Null),
                Value::Bool(b) => Some(ValueRef::Bool(*b)),
                Value::Int64(i) => Some(ValueRef::Int64(*i)),
                Value::Uint64(u) => Some(ValueRef::Uint64(*u)),
                Value::Double(d) => Some(ValueRef::Double(*d)),
                Value::String(s) => Some(ValueRef::String(s)),
                _ => None,
            })
            .collect()
    }

    /// Encodes `row` both ways, checks the bytes agree and both decoders read them alike,
    /// then checks every one-byte change and every truncation of the message: whatever the
    /// compiled decoder accepts, the general table reads the same.
    fn agree(message: StaticMessage, row: &[Value]) -> Result<(), TestCaseError> {
        let schema = message.schema();
        let codec = MessageCodec::new(message, &schema);
        let general = FieldTable::new(&schema);
        let mut expected = Vec::new();
        general
            .write_owned(row, &mut expected)
            .map_err(TestCaseError::fail)?;
        let mut compiled = vec![0xAA];
        prop_assert!(codec.encode(row, &mut compiled), "refused a valid row");
        prop_assert_eq!(&compiled[1..], &expected[..]);
        if let Some(views) = views(row) {
            let mut from_views = Vec::new();
            prop_assert!(codec.encode(&views, &mut from_views));
            prop_assert_eq!(&from_views, &expected);
        }
        let read = general_read(&general, &expected).map_err(TestCaseError::fail)?;
        prop_assert_eq!(compiled_read(&codec, &expected), Some(read));
        // The views read back (composites as the YSON the sources write) encode to the
        // same message.
        let (mut state, mut arena, mut refs) = (ReadState::default(), Vec::new(), Vec::new());
        general
            .read_row(&expected, 0, &mut state, &mut arena, &mut refs)
            .map_err(|e| TestCaseError::fail(e.message))?;
        let mut from_read_views = Vec::new();
        prop_assert!(
            codec.encode(&refs, &mut from_read_views),
            "refused read views"
        );
        prop_assert_eq!(&from_read_views, &expected);
        let mut changed = expected.clone();
        for at in 0..expected.len() {
            for byte in [
                0x00,
                0x01,
                0x7f,
                0x80,
                0xff,
                expected[at] ^ 0x08,
                expected[at] ^ 0x02,
            ] {
                changed[at] = byte;
                if let Some(fast) = compiled_read(&codec, &changed) {
                    prop_assert_eq!(Ok(fast), general_read(&general, &changed));
                }
            }
            changed[at] = expected[at];
            if let Some(fast) = compiled_read(&codec, &expected[..at]) {
                prop_assert_eq!(Ok(fast), general_read(&general, &expected[..at]));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn bm2_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm2)) {
            agree(StaticMessage::Bm2, &row)?;
        }

        #[test]
        fn bm3_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm3)) {
            agree(StaticMessage::Bm3, &row)?;
        }

        #[test]
        fn bm5_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm5)) {
            agree(StaticMessage::Bm5, &row)?;
        }

        #[test]
        fn random_messages_read_as_the_general_table_reads_them(
            bytes in proptest::collection::vec(any::<u8>(), 0..48),
            which in 0usize..4,
        ) {
            let message = StaticMessage::ALL[which];
            let schema = message.schema();
            let codec = MessageCodec::new(message, &schema);
            if let Some(fast) = compiled_read(&codec, &bytes) {
                prop_assert_eq!(Ok(fast), general_read(&FieldTable::new(&schema), &bytes));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4))]

        #[test]
        fn bm1_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm1)) {
            agree(StaticMessage::Bm1, &row)?;
        }
    }

    /// Rows whose values do not fit are left to the general table, output untouched.
    #[test]
    fn values_that_do_not_fit_are_refused_untouched() {
        let cases: Vec<(StaticMessage, usize, Value)> = vec![
            (StaticMessage::Bm1, 0, Value::Int64(200)),
            (StaticMessage::Bm1, 994, Value::Uint64(1 << 32)),
            (StaticMessage::Bm1, 998, Value::Double(1e300)),
            (StaticMessage::Bm1, 3, Value::Uint64(1)),
            (StaticMessage::Bm2, 0, Value::Uint64(1 << 32)),
            (StaticMessage::Bm2, 1, Value::Null),
            (StaticMessage::Bm3, 6, Value::Uint64(u64::MAX)),
            (StaticMessage::Bm3, 7, Value::Int64(1 << 40)),
            (StaticMessage::Bm3, 9, Value::String(vec![0xff, 0xfe])),
            (StaticMessage::Bm5, 0, Value::Int64(1)),
            (StaticMessage::Bm5, 1, Value::List(vec![Value::Int64(1)])),
            (
                StaticMessage::Bm5,
                2,
                Value::Tuple(vec![Value::Int64(1 << 40), Value::String(vec![])]),
            ),
            (
                StaticMessage::Bm5,
                3,
                Value::Dict(vec![(Value::Uint64(1), Value::String(vec![]))]),
            ),
        ];
        for (message, column, bad) in cases {
            let schema = message.schema();
            let codec = MessageCodec::new(message, &schema);
            // The row of an empty message: every column's default.
            let mut state = ReadState::default();
            let (mut arena, mut refs) = (Vec::new(), Vec::new());
            let general = FieldTable::new(&schema);
            general
                .read_row(&[], 0, &mut state, &mut arena, &mut refs)
                .unwrap();
            let mut row: Vec<Value> = refs
                .iter()
                .zip(&schema.columns)
                .map(|(view, c)| crate::table::value_from_ref(*view, &c.ty).unwrap())
                .collect();
            row[column] = bad;
            let mut out = vec![1, 2, 3];
            assert!(!codec.encode(&row, &mut out), "{message:?} column {column}");
            assert_eq!(out, [1, 2, 3]);
            assert!(general.write_owned(&row, &mut Vec::new()).is_err());
        }
    }

    /// Composite views in any form but the canonical one are left to the general table.
    #[test]
    fn other_yson_spellings_of_composites_are_refused_untouched() {
        let schema = StaticMessage::Bm5.schema();
        let codec = MessageCodec::new(StaticMessage::Bm5, &schema);
        let general = FieldTable::new(&schema);
        let mut list = Vec::new();
        let mut pair = Vec::new();
        let mut dict = Vec::new();
        crate::table::yson_binary::value(&mut list, &Value::List(vec![]), &schema.columns[1].ty)
            .unwrap();
        crate::table::yson_binary::value(
            &mut pair,
            &Value::Tuple(vec![Value::Int64(7), Value::String(b"x".to_vec())]),
            &schema.columns[2].ty,
        )
        .unwrap();
        crate::table::yson_binary::value(&mut dict, &Value::Dict(vec![]), &schema.columns[3].ty)
            .unwrap();
        let canonical = [
            ValueRef::Null,
            ValueRef::Composite(&list),
            ValueRef::Composite(&pair),
            ValueRef::Composite(&dict),
        ];
        let mut expected = Vec::new();
        general.write_views(&canonical, &mut expected).unwrap();
        let mut out = Vec::new();
        assert!(codec.encode(&canonical, &mut out));
        assert_eq!(out, expected);
        // Text YSON, the positional form of the struct, an int where a double goes, a
        // trailing byte: all refused by the codec.
        let others: [(usize, &[u8]); 5] = [
            (1, b"[1.5]"),
            (2, b"[\x02\x0e;\x01\x02x;]"),
            (1, b"[\x02\x02;]"),
            (2, &[pair.as_slice(), b" "].concat()),
            (3, b"[[\x02\x02;\x01\x02x;];"),
        ];
        for (column, yson) in others {
            let mut row = canonical;
            row[column] = ValueRef::Composite(yson);
            let mut out = vec![9];
            assert!(!codec.encode(&row, &mut out), "{column}: {yson:?}");
            assert_eq!(out, [9]);
        }
    }

    #[test]
    fn varint_lengths_match_the_written_varints() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(varint_len(v), out.len(), "{v}");
        }
    }
}
