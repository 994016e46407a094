//! Reading the schema's protobuf message as serde values (the mapping: the parent module's
//! table).
//!
//! The invariant: this reader takes the messages every protobuf writer writes — fields in
//! increasing number, each once, a repeated field's occurrences in one run, numbers packed —
//! in one pass, positionally, as serde's derived `visit_seq` wants; a member whose field is
//! not next is absent and reads as proto3's default (`0`, empty, `None`, an empty list, a
//! message of defaults). Anything else protobuf allows (fields out of order or repeated, a
//! split or unpacked run, a field set twice in a oneof) cannot be told from an absent member
//! without looking ahead, so the reader stops with an *irregular* error instead, and so it
//! does for malformed bytes; the caller then reads the message with the dynamic codec, which
//! applies protobuf's merge rules exactly or says where the bytes are wrong (`RowCodec::
//! deserialize`). Errors about the value itself (out of its type's range, not UTF-8, not
//! fitting the Rust type) stand when the message was in order; before the disorder shows,
//! a member taken as absent may fail as its default, so the caller checks that too.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use shapeshift_types::PrimitiveType;

use super::plan::{Kind, Node, Range};
use crate::byte_items::ByteItems;
use crate::index_enum::IndexEnum;
use crate::protobuf::wire::{Cursor, WireError, FIXED32, FIXED64, LEN, VARINT};
use crate::serde_error::{error, SerdeError};

/// The format name of irregular errors: the message needs the dynamic codec.
pub(in crate::protobuf) const IRREGULAR: &str = "protobuf (irregular)";

/// Reads the message of `row` (a struct type: the table's columns) that is the whole of
/// `bytes` as the value of `seed`. An error whose format is [`IRREGULAR`] means the bytes
/// are malformed or in a layout this reader leaves to the dynamic codec; any other error
/// stands only for a message in number order (a member taken as absent may have come later).
pub(in crate::protobuf) fn from_slice_seed<'de, S: DeserializeSeed<'de>>(
    seed: S,
    row: &Node,
    bytes: &'de [u8],
) -> Result<S::Value, SerdeError> {
    let mut message = Message::new(Cursor::new(bytes, 0));
    seed.deserialize(ValueDe {
        m: &mut message,
        ty: row,
        at: At::Row.into(),
    })
}

#[cold]
fn irregular(e: WireError) -> SerdeError {
    SerdeError::new(IRREGULAR, Some(e.offset as usize), e.message)
}

#[cold]
fn irregular_at(m: &Message<'_>, message: &str) -> SerdeError {
    irregular(m.c.error(message))
}

/// Whether varint `v` is a value of an integer column of `range`: as a two's-complement
/// `i64` unless the column is `unsigned`.
#[inline(always)]
fn fits(range: Range, unsigned: bool, v: u64) -> bool {
    match unsigned {
        true => range.holds_unsigned(v),
        false => range.holds_signed(v as i64),
    }
}

#[cold]
fn at(offset: u64, message: impl Into<String>) -> SerdeError {
    SerdeError::new("", Some(offset as usize), message.into())
}

/// A tag: field number and wire type as on the wire, in one word (a tag stored as two
/// fields and loaded as one stalled store forwarding: perf, most of a struct member's time).
#[derive(Clone, Copy)]
struct Tag(u32);

impl Tag {
    #[inline(always)]
    fn field(self) -> u32 {
        self.0 >> 3
    }

    #[inline(always)]
    fn wire(self) -> u8 {
        (self.0 & 7) as u8
    }
}

/// The bytes of one message (or wrapper, entry, packed run). A tag is read ahead without
/// being kept: [`Message::peek`] gives it with the position past it, and [`Message::take`]
/// moves there. (A read-ahead tag stored in the message cost a store and a load per member,
/// on the position's dependency chain: perf, mesh's floats.)
struct Message<'de> {
    c: Cursor<'de>,
}

/// The next byte of a message, read alone ([`Message::next_byte`]).
#[derive(Clone, Copy)]
enum NextByte {
    End,
    Tag(Tag),
    Longer,
}

/// A tag read ahead, and the position past it.
#[derive(Clone, Copy)]
struct Peeked {
    tag: Tag,
    end: usize,
}

impl<'de> Message<'de> {
    #[inline(always)]
    fn new(c: Cursor<'de>) -> Message<'de> {
        Message { c }
    }

    /// A message the bytes leave out: every member absent.
    fn empty(base: u64) -> Message<'de> {
        Message::new(Cursor::new(&[], base))
    }

    /// The next tag, read ahead (nothing moves until [`Message::take`]); `None` at the end.
    #[inline(always)]
    fn peek(&self) -> Result<Option<Peeked>, SerdeError> {
        if self.c.at_end() {
            return Ok(None);
        }
        let mut ahead = Cursor {
            bytes: self.c.bytes,
            pos: self.c.pos,
            base: self.c.base,
        };
        let (field, wire) = ahead.tag().map_err(irregular)?;
        Ok(Some(Peeked {
            tag: Tag(field << 3 | u32::from(wire)),
            end: ahead.pos,
        }))
    }

    #[inline(always)]
    fn take(&mut self, peeked: Peeked) -> Tag {
        self.c.pos = peeked.end;
        peeked.tag
    }

    /// The body of the length-delimited field whose tag was taken.
    #[inline(always)]
    fn body(&mut self, wire: u8) -> Result<Message<'de>, SerdeError> {
        if wire != LEN {
            return Err(irregular_at(self, "a length-delimited field expected"));
        }
        Ok(Message::new(self.c.len_delimited().map_err(irregular)?))
    }

    /// Skips the fields left, which must all be past member `count` (unknown or not taken by
    /// the Rust type): a field at or before it is out of order.
    #[inline(always)]
    fn finish(&mut self, count: usize) -> Result<(), SerdeError> {
        // The common case: the members read to the end.
        if self.c.at_end() {
            return Ok(());
        }
        self.finish_rest(count)
    }

    fn finish_rest(&mut self, count: usize) -> Result<(), SerdeError> {
        while let Some(peeked) = self.peek()? {
            if peeked.tag.field() as usize <= count {
                return Err(irregular_at(self, "a field out of order or repeated"));
            }
            let tag = self.take(peeked);
            self.c.skip(tag.wire()).map_err(irregular)?;
        }
        Ok(())
    }

    /// Where the member with field `number` is: the next field when it is that one (its tag
    /// taken), else absent; a field before it means another order or a repeat (irregular).
    /// A one-byte tag (field numbers below 16: every field of a small message) is told
    /// inline, as a [`Spot`] word (an [`At`] went through a jump table to become one); the
    /// rest out of line.
    #[inline(always)]
    fn member(&mut self, number: u32) -> Result<Spot, SerdeError> {
        // `number` is at least 1: a one-byte tag of this field, or of a later one (this
        // member holds proto3's default and was left out).
        match self.next_byte() {
            NextByte::End => Ok(Spot::ABSENT),
            NextByte::Tag(tag) if tag.field() == number => {
                self.c.pos += 1;
                Ok(Spot(tag.0))
            }
            NextByte::Tag(tag) if tag.field() > number => Ok(Spot::ABSENT),
            _ => self.member_in_general(number),
        }
    }

    /// What the next byte is, read alone: the end, a whole tag (below 0x80, so a field
    /// below 16: the one-byte shortcuts of [`Message::member`] and [`ListAccess`]), or the
    /// start of anything else (a longer tag), which only [`Message::peek`] reads.
    #[inline(always)]
    fn next_byte(&self) -> NextByte {
        match self.c.bytes.get(self.c.pos) {
            None => NextByte::End,
            Some(&byte) if byte < 0x80 => NextByte::Tag(Tag(u32::from(byte))),
            Some(_) => NextByte::Longer,
        }
    }

    #[inline(never)]
    fn member_in_general(&mut self, number: u32) -> Result<Spot, SerdeError> {
        match self.peek()? {
            Some(peeked) if peeked.tag.field() == number => Ok(Spot(self.take(peeked).0)),
            Some(peeked) if peeked.tag.field() < number => {
                Err(irregular_at(self, "a field out of order or repeated"))
            }
            _ => Ok(Spot::ABSENT),
        }
    }

    /// The offset of the next byte in the input.
    fn offset(&self) -> u64 {
        self.c.base + self.c.pos as u64
    }
}

/// Where a value is in the bytes.
#[derive(Clone, Copy)]
enum At {
    /// The row: the members are the message itself.
    Row,
    /// An item of a packed run.
    Packed,
    /// A field whose tag was taken: the value follows.
    Field(Tag),
    /// Not in the message: proto3's default.
    Absent,
}

/// An [`At`] in one word, as values pass through memory between serde's calls (an enum
/// stored as its parts and loaded whole stalled store forwarding): 0 absent, 1 the row, 2 a
/// packed item, else a field's tag (at least 8: field numbers start at 1).
#[derive(Clone, Copy)]
struct Spot(u32);

impl From<At> for Spot {
    #[inline(always)]
    fn from(at: At) -> Spot {
        Spot(match at {
            At::Absent => 0,
            At::Row => 1,
            At::Packed => 2,
            At::Field(tag) => tag.0,
        })
    }
}

impl Spot {
    const ABSENT: Spot = Spot(0);

    #[inline(always)]
    fn is_absent(self) -> bool {
        self.0 == 0
    }

    /// Whether a field of wire type `wire` is here (the test of [`ValueDe`]'s inline scalar
    /// paths, on the word itself).
    #[inline(always)]
    fn is_field_of(self, wire: u8) -> bool {
        (self.0 & 7) as u8 == wire && self.0 >= 8
    }

    #[inline(always)]
    fn is_packed(self) -> bool {
        self.0 == 2
    }

    #[inline(always)]
    fn get(self) -> At {
        match self.0 {
            0 => At::Absent,
            1 => At::Row,
            2 => At::Packed,
            tag => At::Field(Tag(tag)),
        }
    }
}

/// A value in the bytes.
struct ValueDe<'a, 'de, 't> {
    m: &'a mut Message<'de>,
    ty: &'t Node,
    at: Spot,
}

/// What serde asked for, where one value has several spellings.
#[derive(Clone, Copy, PartialEq)]
enum Hint {
    Any,
    Str,
    Bytes,
    Seq,
    Enum,
    Unit,
}

/// Reads the wrapper message `{value = 1}` at `at` (a field of `m`) and hands its content to
/// `read` as a value of `ty`.
fn wrapped<'de, R>(
    m: &mut Message<'de>,
    at: At,
    ty: &Node,
    read: impl FnOnce(ValueDe<'_, 'de, '_>) -> Result<R, SerdeError>,
) -> Result<R, SerdeError> {
    let At::Field(tag) = at else {
        return Err(irregular_at(m, "a wrapper message expected"));
    };
    let mut inner = m.body(tag.wire())?;
    let at = inner.member(1)?;
    let value = read(ValueDe {
        m: &mut inner,
        ty,
        at,
    })?;
    inner.finish(1)?;
    Ok(value)
}

impl<'de> ValueDe<'_, 'de, '_> {
    /// The varint of an integer or bool.
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, SerdeError> {
        match self.at.get() {
            At::Field(tag) if tag.wire() == VARINT => self.m.c.varint().map_err(irregular),
            At::Packed => self.m.c.varint().map_err(irregular),
            At::Absent => Ok(0),
            _ => Err(irregular_at(self.m, "a varint field expected")),
        }
    }

    #[inline(always)]
    fn int(&mut self) -> Result<(u64, Range), SerdeError> {
        let Kind::Int {
            primitive,
            unsigned,
            range,
        } = self.ty.kind
        else {
            return Err(error(format!("an integer read from type {:?}", self.ty.ty)));
        };
        let start = self.m.offset();
        let v = self.varint()?;
        if !fits(range, unsigned, v) {
            let shown = match unsigned {
                true => v.to_string(),
                false => (v as i64).to_string(),
            };
            return Err(at(
                start,
                format!("{shown} is out of range for {}", primitive.name()),
            ));
        }
        Ok((v, range))
    }

    #[inline(always)]
    fn float(&mut self, narrow: bool) -> Result<f64, SerdeError> {
        let (want, width) = match narrow {
            true => (FIXED32, 4),
            false => (FIXED64, 8),
        };
        match self.at.get() {
            At::Field(tag) if tag.wire() == want => {}
            At::Packed => {}
            At::Absent => return Ok(0.0),
            _ => return Err(irregular_at(self.m, "a fixed-width field expected")),
        }
        let bytes = self.m.c.take(width).map_err(irregular)?;
        Ok(match narrow {
            true => f64::from(f32::from_le_bytes(bytes.try_into().unwrap_or_default())),
            false => f64::from_le_bytes(bytes.try_into().unwrap_or_default()),
        })
    }

    /// The bytes of a length-delimited scalar; `default` when absent.
    #[inline(always)]
    fn bytes(&mut self, default: &'static [u8]) -> Result<&'de [u8], SerdeError> {
        match self.at.get() {
            At::Field(tag) if tag.wire() == LEN => Ok(self.m.body(LEN)?.c.bytes),
            At::Absent => Ok(default),
            _ => Err(irregular_at(self.m, "a length-delimited field expected")),
        }
    }

    /// The message of a struct, tuple or variant: the row itself, a field's body, or empty.
    /// (Inlined: a message returned through memory and copied whole stalled store
    /// forwarding, half of a nested struct's read in perf.)
    #[inline(always)]
    fn message(&mut self) -> Result<Option<Message<'de>>, SerdeError> {
        // The common case first, on the word: a nested message's field.
        if self.at.is_field_of(LEN) {
            let body = self.m.c.len_delimited().map_err(irregular)?;
            return Ok(Some(Message::new(body)));
        }
        match self.at.get() {
            At::Row => Ok(None),
            At::Field(tag) => self.m.body(tag.wire()).map(Some),
            At::Absent => Ok(Some(Message::empty(self.m.offset()))),
            At::Packed => Err(irregular_at(self.m, "a message in a packed run")),
        }
    }

    /// A message's members as a sequence. Inlined, with `deserialize_struct`'s shortcut
    /// here, into the caller's `visit_seq`: a nested struct returned through memory stalled
    /// store forwarding on its fields (perf, mesh's triangles).
    #[inline(always)]
    fn members<V: Visitor<'de>>(
        mut self,
        members: &[Node],
        names: &[String],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        let mut owned = self.message()?;
        let body = match owned.as_mut() {
            Some(body) => body,
            None => &mut *self.m,
        };
        let mut fields = StructAccess {
            m: body,
            members,
            names,
            next: 0,
        };
        let value = visitor.visit_seq(&mut fields)?;
        fields.m.finish(fields.next)?;
        Ok(value)
    }

    fn read<V: Visitor<'de>>(mut self, visitor: V, hint: Hint) -> Result<V::Value, SerdeError> {
        let ty = self.ty;
        let start = self.m.offset();
        match &ty.kind {
            Kind::Optional(item) => match self.at.get() {
                At::Absent if hint == Hint::Unit => visitor.visit_unit(),
                At::Absent => Err(at(start, "a null where the Rust type needs a value")),
                _ if item.may_be_empty => wrapped(self.m, self.at.get(), item, |inner| {
                    inner.read(visitor, hint)
                }),
                at => ValueDe {
                    m: self.m,
                    ty: item,
                    at: at.into(),
                }
                .read(visitor, hint),
            },
            Kind::Null => match self.at.get() {
                At::Absent => visitor.visit_unit(),
                _ => Err(irregular_at(self.m, "a field for a null-typed value")),
            },
            Kind::Bool => visitor.visit_bool(self.varint()? != 0),
            Kind::Int { .. } => {
                let (v, range) = self.int()?;
                match (hint, range) {
                    (Hint::Enum, _) => {
                        let index = u32::try_from(v).map_err(|_| {
                            at(start, format!("{v} is not an enum's variant index"))
                        })?;
                        visitor.visit_enum(IndexEnum(index))
                    }
                    (_, Range::Unsigned(_)) => visitor.visit_u64(v),
                    _ => visitor.visit_i64(v as i64),
                }
            }
            Kind::Float { narrow } => visit_float(visitor, *narrow, self.float(*narrow)?),
            Kind::Bytes(p) => {
                let bytes = self.bytes(b"")?;
                visit_bytes(*p, bytes, start, visitor, hint)
            }
            Kind::Yson => {
                // A yson field left out is the entity `#`.
                let bytes = self.bytes(b"#")?;
                crate::yson::from_slice(bytes)
                    .map_err(|e| at(start, format!("yson value: {e}")))?;
                visitor.visit_borrowed_bytes(bytes)
            }
            Kind::Decimal { precision, scale } => {
                let bytes = self.bytes(b"")?;
                shapeshift_types::check_decimal_binary(bytes, *precision, *scale)
                    .map_err(|e| at(start, e.to_string()))?;
                visitor.visit_borrowed_bytes(bytes)
            }
            Kind::List { item, packed } => match (self.at.get(), packed) {
                (At::Absent, _) => visitor.visit_seq(&mut ListAccess::empty(item)),
                (At::Field(tag), Some(width)) => {
                    let mut run = self.m.body(tag.wire())?;
                    let value = visitor.visit_seq(PackedAccess {
                        m: &mut run,
                        item,
                        width: *width,
                    })?;
                    if !run.c.at_end() {
                        return Err(at(run.offset(), "more items than the Rust type took"));
                    }
                    Ok(value)
                }
                (At::Field(tag), None) => {
                    let mut items = ListAccess {
                        m: Some(&mut *self.m),
                        item,
                        field: tag.field(),
                        first: Some(tag),
                    };
                    let value = visitor.visit_seq(&mut items)?;
                    if items.next_tag()?.is_some() {
                        return Err(at(start, "more items than the Rust type took"));
                    }
                    Ok(value)
                }
                _ => Err(irregular_at(self.m, "a list in a packed run")),
            },
            Kind::Dict { key, value } => {
                let (m, first) = match self.at.get() {
                    At::Field(tag) => (Some(&mut *self.m), Some(tag)),
                    At::Absent => (None, None),
                    _ => return Err(irregular_at(self.m, "a dict in a packed run")),
                };
                let field = first.map_or(0, |t| t.field());
                let mut entries = DictAccess {
                    list: ListAccess {
                        m,
                        item: key,
                        field,
                        first,
                    },
                    value,
                    entry: None,
                };
                let map = visitor.visit_map(&mut entries)?;
                if entries.list.next_tag()?.is_some() {
                    return Err(at(start, "more dict entries than the Rust type took"));
                }
                Ok(map)
            }
            Kind::Message { members, names } => self.members(members, names, visitor),
            Kind::Variant { alternatives } => {
                let Some(mut body) = self.message()? else {
                    return Err(at(start, "a variant as the row"));
                };
                // Left out: the first alternative, itself left out.
                let (index, payload_at) = match body.peek()? {
                    None if matches!(self.at.get(), At::Absent) => (0, At::Absent),
                    Some(peeked) if peeked.tag.field() as usize <= alternatives.len() => {
                        let tag = body.take(peeked);
                        (tag.field() as usize - 1, At::Field(tag))
                    }
                    _ => return Err(irregular_at(&body, "a variant with no alternative set")),
                };
                let alt = alternatives
                    .get(index)
                    .ok_or_else(|| at(start, "a variant with no alternatives"))?;
                let value = visitor.visit_enum(VariantDe {
                    m: &mut body,
                    alt,
                    index: index as u32,
                    at: payload_at.into(),
                })?;
                body.finish(alternatives.len())?;
                Ok(value)
            }
        }
    }
}

/// Hands a float to the visitor as the type of its column: an f32 as itself (serde's f32
/// visitor takes it as it is; others widen it, exactly), a double as an f64.
#[inline(always)]
fn visit_float<'de, V: Visitor<'de>>(
    visitor: V,
    narrow: bool,
    v: f64,
) -> Result<V::Value, SerdeError> {
    match narrow {
        // Exact: `v` is an f32 widened.
        true => visitor.visit_f32(v as f32),
        false => visitor.visit_f64(v),
    }
}

/// Hands a byte string to the visitor in the spelling serde asked for.
fn visit_bytes<'de, V: Visitor<'de>>(
    p: PrimitiveType,
    bytes: &'de [u8],
    start: u64,
    visitor: V,
    hint: Hint,
) -> Result<V::Value, SerdeError> {
    if p == PrimitiveType::Uuid && bytes.len() != 16 {
        return Err(at(start, format!("{} bytes for a uuid of 16", bytes.len())));
    }
    let text = |bytes| {
        crate::utf8::text(bytes)
            .map_err(|e| at(start, format!("{} value is not UTF-8: {e}", p.name())))
    };
    match (p, hint) {
        (PrimitiveType::Utf8 | PrimitiveType::Json, Hint::Bytes) => {
            visitor.visit_borrowed_bytes(text(bytes)?.as_bytes())
        }
        (PrimitiveType::Utf8 | PrimitiveType::Json, _) | (_, Hint::Str) => {
            visitor.visit_borrowed_str(text(bytes)?)
        }
        (_, Hint::Seq) => {
            let mut items = ByteItems { bytes, index: 0 };
            let value = visitor.visit_seq(&mut items)?;
            if items.index < bytes.len() {
                let left = bytes.len() - items.index;
                return Err(at(
                    start,
                    format!("{left} more bytes than the Rust type took"),
                ));
            }
            Ok(value)
        }
        _ => visitor.visit_borrowed_bytes(bytes),
    }
}

macro_rules! by_schema {
    ($($method:ident($($arg:ident: $ty:ty),*) => $hint:expr;)*) => {
        $(fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, SerdeError> {
            $(let _ = $arg;)*
            self.read(visitor, $hint)
        })*
    };
}

macro_rules! scalars {
    (float: $($float:ident),*; int: $($int:ident),*; bool: $($bool:ident),*;) => {
        // A Rust float, integer or bool whose column is of its kind and in place (or absent)
        // is read here, inlined into the caller's `visit_seq` (a float returned through memory
        // and merged with its neighbours as one word stalled store forwarding: perf, mesh);
        // everything else in `scalar`. Each method holds only its own kind's path: with all
        // three in each, LLVM left a struct's third float a call (perf, mesh's `Vector3`).
        $(#[inline(always)]
        fn $float<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, SerdeError> {
            match self.ty.kind {
                Kind::Float { narrow: true } => {
                    if let Some(bytes) = self.fixed_in_place::<4>(FIXED32) {
                        return visitor.visit_f32(f32::from_le_bytes(bytes));
                    }
                }
                Kind::Float { narrow: false } => {
                    if let Some(bytes) = self.fixed_in_place::<8>(FIXED64) {
                        return visitor.visit_f64(f64::from_le_bytes(bytes));
                    }
                }
                _ => {}
            }
            self.scalar(visitor)
        })*
        $(#[inline(always)]
        fn $int<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, SerdeError> {
            if let Kind::Int { range, unsigned, .. } = self.ty.kind {
                if let Some(v) = self.int_in_place(range, unsigned) {
                    return match range {
                        Range::Unsigned(_) => visitor.visit_u64(v),
                        Range::Signed(..) => visitor.visit_i64(v as i64),
                    };
                }
            }
            self.scalar(visitor)
        })*
        $(#[inline(always)]
        fn $bool<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, SerdeError> {
            if let Kind::Bool = self.ty.kind {
                if let Some(v) = self.bool_in_place() {
                    return visitor.visit_bool(v);
                }
            }
            self.scalar(visitor)
        })*
    };
}

impl<'de> ValueDe<'_, 'de, '_> {
    /// The bytes of a fixed-width value of wire type `wire` here (a field or a packed item),
    /// zeros when absent; `None` (nothing read) for anything else, which [`ValueDe::float`]
    /// reads or refuses.
    #[inline(always)]
    fn fixed_in_place<const N: usize>(&mut self, wire: u8) -> Option<[u8; N]> {
        // A field first: the common case in two tests.
        if self.at.is_field_of(wire) || self.at.is_packed() {
            return self.m.c.fixed::<N>();
        }
        self.at.is_absent().then_some([0; N])
    }

    /// An absent integer (0) or one whose varint is in `range`; `None`
    /// (nothing read) for anything else, which [`ValueDe::int`] reads or refuses.
    #[inline(always)]
    fn int_in_place(&mut self, range: Range, unsigned: bool) -> Option<u64> {
        self.varint_in_place(|v| fits(range, unsigned, v))
    }

    /// An absent bool (false) or one whose varint is here (any value but 0 is true, as
    /// [`ValueDe::scalar`] reads it); `None` (nothing read) for anything else.
    #[inline(always)]
    fn bool_in_place(&mut self) -> Option<bool> {
        self.varint_in_place(|_| true).map(|v| v != 0)
    }

    /// An absent varint (0) or the one here, when `accept` takes it; `None` with nothing
    /// read for anything else (another wire type, a malformed varint, one not accepted).
    #[inline(always)]
    fn varint_in_place(&mut self, accept: impl FnOnce(u64) -> bool) -> Option<u64> {
        if !(self.at.is_field_of(VARINT) || self.at.is_packed()) {
            return match self.at.is_absent() {
                true => accept(0).then_some(0),
                false => None,
            };
        }
        let c = &mut self.m.c;
        let start = c.pos;
        match c.varint() {
            Ok(v) if accept(v) => Some(v),
            _ => {
                c.pos = start;
                None
            }
        }
    }

    // Kept out of line: small inline paths are what let the caller inline them.
    #[inline(never)]
    fn scalar<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.ty.kind {
            Kind::Float { narrow } => visit_float(visitor, narrow, self.float(narrow)?),
            Kind::Int { .. } => match self.int()? {
                (v, Range::Unsigned(_)) => visitor.visit_u64(v),
                (v, Range::Signed(..)) => visitor.visit_i64(v as i64),
            },
            Kind::Bool => visitor.visit_bool(self.varint()? != 0),
            _ => self.read(visitor, Hint::Any),
        }
    }
}

impl<'de> de::Deserializer<'de> for ValueDe<'_, 'de, '_> {
    type Error = SerdeError;

    fn is_human_readable(&self) -> bool {
        false
    }

    by_schema! {
        deserialize_any() => Hint::Any;
        deserialize_i128() => Hint::Any;
        deserialize_u128() => Hint::Any;
        deserialize_char() => Hint::Str;
        deserialize_bytes() => Hint::Bytes;
        deserialize_byte_buf() => Hint::Bytes;
        deserialize_unit() => Hint::Unit;
        deserialize_unit_struct(_name: &'static str) => Hint::Unit;
        deserialize_seq() => Hint::Seq;
        deserialize_tuple(_len: usize) => Hint::Seq;
        deserialize_tuple_struct(_name: &'static str, _len: usize) => Hint::Seq;
        deserialize_map() => Hint::Any;
        deserialize_identifier() => Hint::Any;
        deserialize_ignored_any() => Hint::Any;
    }

    // Scalars of a plain type are read inline (the common case); anything else takes the
    // general path.
    scalars! {
        float: deserialize_f32, deserialize_f64;
        int: deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_u8,
            deserialize_u16, deserialize_u32, deserialize_u64;
        bool: deserialize_bool;
    }

    #[inline(always)]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        if let Kind::Message { members, names } = &self.ty.kind {
            return self.members(members, names, visitor);
        }
        self.read(visitor, Hint::Any)
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, SerdeError> {
        if let Kind::Bytes(PrimitiveType::String | PrimitiveType::Utf8 | PrimitiveType::Json) =
            self.ty.kind
        {
            let start = self.m.offset();
            let bytes = self.bytes(b"")?;
            let text = crate::utf8::text(bytes)
                .map_err(|e| at(start, format!("a string value that is not UTF-8: {e}")))?;
            return visitor.visit_borrowed_str(text);
        }
        self.read(visitor, Hint::Str)
    }

    #[inline]
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        self.deserialize_str(visitor)
    }

    /// A unit enum of an integer column (or a present optional one): the varint here is the
    /// variant's index, read inline; anything else as [`ValueDe::read`] reads it.
    #[inline]
    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        if !self.at.is_absent() {
            let kind = match &self.ty.kind {
                Kind::Optional(item) => &item.kind,
                kind => kind,
            };
            if let Kind::Int {
                range, unsigned, ..
            } = *kind
            {
                let index =
                    self.varint_in_place(|v| fits(range, unsigned, v) && u32::try_from(v).is_ok());
                if let Some(index) = index {
                    return visitor.visit_enum(IndexEnum(index as u32));
                }
            }
        }
        self.read(visitor, Hint::Enum)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        let ty = self.ty;
        match (&ty.kind, self.at.get()) {
            (Kind::Optional(_) | Kind::Null, At::Absent) => visitor.visit_none(),
            (Kind::Optional(item), at) if item.may_be_empty => {
                wrapped(self.m, at, item, |inner| visitor.visit_some(inner))
            }
            (Kind::Optional(item), at) => visitor.visit_some(ValueDe {
                m: self.m,
                ty: item,
                at: at.into(),
            }),
            (Kind::Null, _) => Err(irregular_at(self.m, "a field for a null-typed value")),
            // An `Option` where the type requires a value: always `Some`.
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        visitor.visit_newtype_struct(self)
    }
}

/// A packed run's items.
struct PackedAccess<'a, 'de, 't> {
    m: &'a mut Message<'de>,
    item: &'t Node,
    /// The width of an item: 4 or 8, 0 for varints.
    width: usize,
}

impl<'de> de::SeqAccess<'de> for PackedAccess<'_, 'de, '_> {
    type Error = SerdeError;

    #[inline(always)]
    fn next_element<T: de::Deserialize<'de>>(&mut self) -> Result<Option<T>, SerdeError> {
        self.next_element_seed(std::marker::PhantomData)
    }

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, SerdeError> {
        if self.m.c.at_end() {
            return Ok(None);
        }
        seed.deserialize(ValueDe {
            m: &mut *self.m,
            ty: self.item,
            at: At::Packed.into(),
        })
        .map(Some)
    }

    /// The items left, exactly (a varint ends at each byte below 0x80), so that a `Vec`
    /// is allocated once.
    fn size_hint(&self) -> Option<usize> {
        let rest = self.m.c.bytes.get(self.m.c.pos..).unwrap_or_default();
        Some(match self.width {
            0 => rest.iter().filter(|&&b| b < 0x80).count(),
            width => rest.len() / width,
        })
    }
}

/// The occurrences of a repeated field in one run: a list's items (each in its wrapper when
/// the item type may be empty), or a dict's entries.
struct ListAccess<'a, 'de, 't> {
    /// The message holding the run; `None` when the field is absent.
    m: Option<&'a mut Message<'de>>,
    item: &'t Node,
    field: u32,
    /// The first occurrence's tag, already taken.
    first: Option<Tag>,
}

impl<'a, 'de, 't> ListAccess<'a, 'de, 't> {
    fn empty(item: &'t Node) -> ListAccess<'a, 'de, 't> {
        ListAccess {
            m: None,
            item,
            field: 0,
            first: None,
        }
    }

    /// The tag of the run's next occurrence (taken), `None` past the run.
    #[inline]
    fn next_tag(&mut self) -> Result<Option<Tag>, SerdeError> {
        if let Some(tag) = self.first.take() {
            return Ok(Some(tag));
        }
        let Some(m) = self.m.as_deref_mut() else {
            return Ok(None);
        };
        // A one-byte tag: the run's next occurrence, or the next field (the run is over).
        match m.next_byte() {
            NextByte::End => return Ok(None),
            NextByte::Tag(tag) if tag.field() == self.field => {
                m.c.pos += 1;
                return Ok(Some(tag));
            }
            NextByte::Tag(_) => return Ok(None),
            NextByte::Longer => {}
        }
        match m.peek()? {
            Some(peeked) if peeked.tag.field() == self.field => Ok(Some(m.take(peeked))),
            _ => Ok(None),
        }
    }
}

impl<'de> de::SeqAccess<'de> for &mut ListAccess<'_, 'de, '_> {
    type Error = SerdeError;

    // Inlined into serde's `Vec` visitor, as `StructAccess`'s (serde's default is a call).
    #[inline(always)]
    fn next_element<T: de::Deserialize<'de>>(&mut self) -> Result<Option<T>, SerdeError> {
        self.next_element_seed(std::marker::PhantomData)
    }

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, SerdeError> {
        let Some(tag) = self.next_tag()? else {
            return Ok(None);
        };
        let (Some(m), item) = (self.m.as_deref_mut(), self.item) else {
            return Ok(None);
        };
        let at = At::Field(tag);
        if item.may_be_empty {
            return wrapped(m, at, item, |inner| seed.deserialize(inner)).map(Some);
        }
        seed.deserialize(ValueDe {
            m,
            ty: item,
            at: at.into(),
        })
        .map(Some)
    }
}

/// A dict's entries, each a message `{key = 1; value = 2}` (the list's items are the keys).
struct DictAccess<'a, 'de, 't> {
    list: ListAccess<'a, 'de, 't>,
    value: &'t Node,
    /// The entry whose key was read.
    entry: Option<Message<'de>>,
}

impl<'de> de::MapAccess<'de> for &mut DictAccess<'_, 'de, '_> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, SerdeError> {
        let Some(tag) = self.list.next_tag()? else {
            return Ok(None);
        };
        let Some(m) = self.list.m.as_deref_mut() else {
            return Ok(None);
        };
        let entry = self.entry.insert(m.body(tag.wire())?);
        let at = entry.member(1)?;
        seed.deserialize(ValueDe {
            m: entry,
            ty: self.list.item,
            at,
        })
        .map(Some)
        .map_err(|e| e.in_member("key"))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, SerdeError> {
        let Some(entry) = self.entry.as_mut() else {
            return Err(error("a dict value before its key"));
        };
        let at = entry.member(2)?;
        let value = seed
            .deserialize(ValueDe {
                m: &mut *entry,
                ty: self.value,
                at,
            })
            .map_err(|e| e.in_member("value"))?;
        entry.finish(2)?;
        Ok(value)
    }
}

/// A struct's members in order: member `i` is field `i + 1`, absent unless it comes next.
struct StructAccess<'a, 'de, 't> {
    m: &'a mut Message<'de>,
    members: &'t [Node],
    names: &'t [String],
    /// The members handed out.
    next: usize,
}

impl<'de> de::SeqAccess<'de> for &mut StructAccess<'_, 'de, '_> {
    type Error = SerdeError;

    // Inlined into the derived `visit_seq` (serde's default is a call): a member's result
    // returned through memory, written as parts and loaded whole, stalled store forwarding.
    #[inline(always)]
    fn next_element<T: de::Deserialize<'de>>(&mut self) -> Result<Option<T>, SerdeError> {
        self.next_element_seed(std::marker::PhantomData)
    }

    #[inline(always)]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, SerdeError> {
        let Some(ty) = self.members.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let number = self.next as u32;
        let at = self.m.member(number)?;
        seed.deserialize(ValueDe {
            m: &mut *self.m,
            ty,
            at,
        })
        .map(Some)
        .map_err(|e| e.in_member(&self.names[self.next - 1]))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len() - self.next)
    }
}

/// A variant's alternative: its index and where its field is.
struct VariantDe<'a, 'de, 't> {
    m: &'a mut Message<'de>,
    alt: &'t Node,
    index: u32,
    at: Spot,
}

impl<'a, 'de, 't> de::EnumAccess<'de> for VariantDe<'a, 'de, 't> {
    type Error = SerdeError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self), SerdeError> {
        let variant = seed.deserialize(self.index.into_deserializer())?;
        Ok((variant, self))
    }
}

impl<'de> VariantDe<'_, 'de, '_> {
    /// Reads the payload (in its wrapper when the alternative may be empty).
    fn payload<R>(
        self,
        read: impl FnOnce(ValueDe<'_, 'de, '_>) -> Result<R, SerdeError>,
    ) -> Result<R, SerdeError> {
        match (self.alt.may_be_empty, self.at.get()) {
            (true, At::Field(_)) => wrapped(self.m, self.at.get(), self.alt, read),
            _ => read(ValueDe {
                m: self.m,
                ty: self.alt,
                at: self.at,
            }),
        }
    }
}

impl<'de> de::VariantAccess<'de> for VariantDe<'_, 'de, '_> {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<(), SerdeError> {
        let start = self.m.offset();
        // Only a nullable alternative can be a unit, and then only when null.
        let nullable = self.alt.nullable;
        let carried = !nullable
            || self
                .payload(|v| <Option<de::IgnoredAny> as de::Deserialize>::deserialize(v))?
                .is_some();
        if carried {
            return Err(at(
                start,
                "the variant's alternative carries a value; the Rust variant is a unit",
            ));
        }
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, SerdeError> {
        self.payload(|v| seed.deserialize(v))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        self.payload(|v| de::Deserializer::deserialize_tuple(v, len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        self.payload(|v| de::Deserializer::deserialize_struct(v, "", fields, visitor))
    }
}
