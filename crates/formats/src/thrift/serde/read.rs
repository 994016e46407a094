//! Reading the schema's Thrift values as serde values (the mapping: the parent module's table).
//!
//! The schema drives: each value is visited as its YT type says (serde's hints only choose
//! between spellings of the same value: text or bytes, bytes or a sequence of u8, an integer
//! or an enum's variant). A struct's fields are handed to serde in member order; a field the
//! bytes leave out is handed as absent ([`Absent`]), which only `None` or unit accept.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use shapeshift_types::PrimitiveType;

use super::plan::{fits_float, Kind, Node, Range};
use super::{field_id, format_name};
use crate::byte_items::ByteItems;
use crate::index_enum::IndexEnum;
use crate::serde_error::{error, SerdeError};
use crate::thrift::wire::{DecodeError, Decoder, FieldHeader, Protocol, WireType};

/// Reads the struct of `row` (a struct type: the table's columns) that is the whole of
/// `bytes` as the value of `seed`.
pub(in crate::thrift) fn from_slice_seed<'de, S: DeserializeSeed<'de>>(
    seed: S,
    protocol: Protocol,
    row: &Node,
    bytes: &'de [u8],
) -> Result<S::Value, SerdeError> {
    let name = format_name(protocol);
    let mut d = Decoder::new(protocol, bytes);
    let value = seed
        .deserialize(ValueDe {
            d: &mut d,
            ty: row,
            field: None,
        })
        .map_err(|e| e.located(name, Some(d.pos)))?;
    if d.remaining() > 0 {
        let message = format!("{} bytes after the row struct", d.remaining());
        return Err(SerdeError::new(name, Some(d.pos), message));
    }
    Ok(value)
}

#[cold]
fn wire(e: DecodeError) -> SerdeError {
    SerdeError::new("", Some(e.offset), e.message)
}

#[cold]
fn at(offset: usize, message: impl Into<String>) -> SerdeError {
    SerdeError::new("", Some(offset), message.into())
}

/// A value in the bytes: a present field (its header read) or an element.
struct ValueDe<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    ty: &'t Node,
    field: Option<FieldHeader>,
}

/// A present value once optionals and wrappers are resolved: `ty` untagged, not nullable;
/// `closes` wrapper structs end after it.
struct Body<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    ty: &'t Node,
    bool_value: Option<bool>,
    closes: u32,
}

/// What serde asked for, where one value has several spellings.
#[derive(Clone, Copy, PartialEq)]
enum Hint {
    Any,
    Str,
    Bytes,
    Seq,
    Enum,
}

/// The one field of a wrapper struct `{1: ty}`, `None` when it is left out (the stop field
/// read).
fn wrapper_field(d: &mut Decoder<'_>, ty: &Node) -> Result<Option<FieldHeader>, SerdeError> {
    let start = d.pos;
    let mut last = 0;
    let Some(header) = d.field(&mut last).map_err(wire)? else {
        return Ok(None);
    };
    if header.id != 1 || Some(header.ty) != ty.field_wire {
        return Err(at(
            start,
            format!(
                "field {} of type {} in the wrapper struct of a nullable value",
                header.id,
                header.ty.name()
            ),
        ));
    }
    Ok(Some(header))
}

/// The stop fields that end `count` wrapper structs.
fn close(d: &mut Decoder<'_>, count: u32) -> Result<(), SerdeError> {
    for _ in 0..count {
        let start = d.pos;
        if d.field(&mut 1).map_err(wire)?.is_some() {
            return Err(at(
                start,
                "a second field in the wrapper struct of a nullable value",
            ));
        }
    }
    Ok(())
}

impl<'a, 'de, 't> ValueDe<'a, 'de, 't> {
    fn present(self) -> Result<Body<'a, 'de, 't>, SerdeError> {
        let ValueDe {
            d,
            mut ty,
            mut field,
        } = self;
        let mut closes = 0;
        loop {
            match (field, &ty.kind) {
                (Some(_), Kind::Optional(item)) if item.nullable => {
                    let start = d.pos;
                    field = Some(wrapper_field(d, item)?.ok_or_else(|| {
                        at(
                            start,
                            "a null inside an optional where the Rust type needs a value",
                        )
                    })?);
                    closes += 1;
                    ty = item;
                }
                (Some(_), Kind::Optional(item)) => ty = item,
                (Some(h), _) => {
                    return Ok(Body {
                        d,
                        ty,
                        bool_value: h.bool_value,
                        closes,
                    })
                }
                (None, _) if ty.nullable => {
                    let start = d.pos;
                    match wrapper_field(d, ty)? {
                        Some(header) => {
                            field = Some(header);
                            closes += 1;
                        }
                        // The empty wrapper of a `null` element: a unit.
                        None if matches!(ty.kind, Kind::Null) => {
                            return Ok(Body {
                                d,
                                ty,
                                bool_value: None,
                                closes,
                            })
                        }
                        None => {
                            return Err(at(
                                start,
                                "a null element where the Rust type needs a value",
                            ))
                        }
                    }
                }
                (None, _) => {
                    return Ok(Body {
                        d,
                        ty,
                        bool_value: None,
                        closes,
                    })
                }
            }
        }
    }

    fn read<V: Visitor<'de>>(self, visitor: V, hint: Hint) -> Result<V::Value, SerdeError> {
        self.present()?.read(visitor, hint)
    }
}

impl<'de> Body<'_, 'de, '_> {
    fn read<V: Visitor<'de>>(self, visitor: V, hint: Hint) -> Result<V::Value, SerdeError> {
        let Body {
            d,
            ty,
            bool_value,
            closes,
        } = self;
        let start = d.pos;
        let value = match &ty.kind {
            Kind::Bool => visitor.visit_bool(match bool_value {
                Some(v) => v,
                None => d.bool().map_err(wire)?,
            })?,
            Kind::Double { narrow } => visitor.visit_f64(read_double(d, *narrow)?)?,
            Kind::Null => visitor.visit_unit()?,
            Kind::Binary(p) => {
                let bytes = d.binary().map_err(wire)?;
                check_bytes(*p, bytes).map_err(|m| at(start, m))?;
                let text = |bytes| {
                    crate::utf8::text(bytes)
                        .map_err(|e| at(start, format!("{} value is not UTF-8: {e}", p.name())))
                };
                match (p, hint) {
                    (PrimitiveType::Utf8 | PrimitiveType::Json, Hint::Bytes) => {
                        visitor.visit_borrowed_bytes(text(bytes)?.as_bytes())?
                    }
                    (PrimitiveType::Utf8 | PrimitiveType::Json, _) | (_, Hint::Str) => {
                        visitor.visit_borrowed_str(text(bytes)?)?
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
                        value
                    }
                    _ => visitor.visit_borrowed_bytes(bytes)?,
                }
            }
            Kind::Int {
                primitive,
                wire: int_wire,
                range,
            } => {
                let v = read_int(d, *primitive, *int_wire, *range)?;
                match (hint, range) {
                    (Hint::Enum, _) => {
                        let index = u32::try_from(v).map_err(|_| {
                            at(start, format!("{v} is not an enum's variant index"))
                        })?;
                        visitor.visit_enum(IndexEnum(index))?
                    }
                    (_, Range::Unsigned(_)) => visitor.visit_u64(v as u64)?,
                    _ => visitor.visit_i64(v)?,
                }
            }
            Kind::Decimal { precision, scale } => {
                let bytes = d.binary().map_err(wire)?;
                shapeshift_types::check_decimal_binary(bytes, *precision, *scale)
                    .map_err(|e| at(start, e.to_string()))?;
                visitor.visit_borrowed_bytes(bytes)?
            }
            Kind::List(item) => {
                let value = read_list(d, item, visitor)?;
                return close(d, closes).map(|()| value);
            }
            Kind::Dict { key, value } => {
                let (element, count) = d.list().map_err(wire)?;
                if element != WireType::Struct && count > 0 {
                    let message = format!("dict as a list of {}, expected struct", element.name());
                    return Err(at(start, message));
                }
                let mut entries = DictAccess {
                    d,
                    key,
                    value,
                    left: count,
                    last: 0,
                    read_ahead: None,
                };
                let value = visitor.visit_map(&mut entries)?;
                if entries.left > 0 {
                    let message =
                        format!("{} more dict entries than the Rust type took", entries.left);
                    return Err(at(entries.d.pos, message));
                }
                return close(entries.d, closes).map(|()| value);
            }
            Kind::Struct { members, names } => {
                let value = read_struct(d, members, names, visitor)?;
                return close(d, closes).map(|()| value);
            }
            Kind::Variant { alternatives } => {
                let value = visitor.visit_enum(UnionAccess {
                    d: &mut *d,
                    alternatives,
                })?;
                return close(d, closes).map(|()| value);
            }
            Kind::Optional(_) => {
                return Err(at(start, "an optional where a value must be present"))
            }
        };
        close(d, closes)?;
        Ok(value)
    }
}

/// A list's elements (its header next in `d`) as a sequence; all of them must be taken.
#[inline]
fn read_list<'de, V: Visitor<'de>>(
    d: &mut Decoder<'de>,
    item: &Node,
    visitor: V,
) -> Result<V::Value, SerdeError> {
    let start = d.pos;
    let want = item.element_wire;
    let (element, count) = d.list().map_err(wire)?;
    if element != want && count > 0 {
        let message = format!("list of {}, expected {}", element.name(), want.name());
        return Err(at(start, message));
    }
    let mut items = ListAccess {
        d,
        item,
        left: count,
    };
    let value = visitor.visit_seq(&mut items)?;
    if items.left > 0 {
        let message = format!(
            "{} more items in the list than the Rust type took",
            items.left
        );
        return Err(at(items.d.pos, message));
    }
    Ok(value)
}

/// A struct's members (its first field header next in `d`) as a sequence, read to its stop
/// field.
#[inline(always)]
fn read_struct<'de, V: Visitor<'de>>(
    d: &mut Decoder<'de>,
    members: &[Node],
    names: &[String],
    visitor: V,
) -> Result<V::Value, SerdeError> {
    let mut fields = StructAccess {
        d,
        members,
        names,
        next: 0,
        last: 0,
        pending: None,
        done: false,
    };
    let value = visitor.visit_seq(&mut fields)?;
    fields.finish()?;
    Ok(value)
}

/// A double, checked against `float`'s range when `narrow`.
#[inline]
fn read_double(d: &mut Decoder<'_>, narrow: bool) -> Result<f64, SerdeError> {
    let start = d.pos;
    let v = d.double().map_err(wire)?;
    if !fits_float(v, narrow) {
        return Err(at(start, format!("{v} is out of range for float")));
    }
    Ok(v)
}

/// The checks of a byte string of primitive `p` that the row decoder makes too.
fn check_bytes(p: PrimitiveType, bytes: &[u8]) -> Result<(), String> {
    match p {
        PrimitiveType::Uuid if bytes.len() != 16 => {
            Err(format!("{} bytes for a uuid of 16", bytes.len()))
        }
        PrimitiveType::Yson => crate::yson::from_slice(bytes)
            .map(drop)
            .map_err(|e| format!("yson value: {e}")),
        _ => Ok(()),
    }
}

/// An integer of primitive `p` on `wire_type`, checked against its YT range.
#[inline]
fn read_int(
    d: &mut Decoder<'_>,
    p: PrimitiveType,
    wire_type: WireType,
    range: Range,
) -> Result<i64, SerdeError> {
    let start = d.pos;
    let v = match wire_type {
        WireType::I8 => i64::from(d.i8().map_err(wire)?),
        WireType::I16 => i64::from(d.i16().map_err(wire)?),
        WireType::I32 => i64::from(d.i32().map_err(wire)?),
        _ => d.i64().map_err(wire)?,
    };
    let fits = match range {
        // uint64 travels as the bit pattern of an i64.
        Range::Unsigned(u64::MAX) => true,
        range => range.holds_signed(v),
    };
    if !fits {
        return Err(at(start, format!("{v} is out of range for {}", p.name())));
    }
    Ok(v)
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
    (double: $($double:ident),*; int: $($int:ident),*; bool: $($bool:ident),*;) => {
        // Each Rust scalar holds only its own column kind's read (anything else takes the
        // general path): a method with all three kinds' reads grew past what LLVM inlines
        // into a struct's derived `visit_seq`.
        $(#[inline]
        fn $double<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
            match self.ty.kind {
                Kind::Double { narrow } => visitor.visit_f64(read_double(self.d, narrow)?),
                _ => self.read(visitor, Hint::Any),
            }
        })*
        $(#[inline]
        fn $int<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
            match self.ty.kind {
                Kind::Int {
                    primitive,
                    wire: int_wire,
                    range,
                } => {
                    let v = read_int(self.d, primitive, int_wire, range)?;
                    match range {
                        Range::Unsigned(_) => visitor.visit_u64(v as u64),
                        Range::Signed(..) => visitor.visit_i64(v),
                    }
                }
                _ => self.read(visitor, Hint::Any),
            }
        })*
        $(#[inline]
        fn $bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
            match self.ty.kind {
                Kind::Bool => visitor.visit_bool(match self.field {
                    Some(FieldHeader {
                        bool_value: Some(v),
                        ..
                    }) => v,
                    _ => self.d.bool().map_err(wire)?,
                }),
                _ => self.read(visitor, Hint::Any),
            }
        })*
    };
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
        deserialize_unit() => Hint::Any;
        deserialize_unit_struct(_name: &'static str) => Hint::Any;
        deserialize_tuple(_len: usize) => Hint::Seq;
        deserialize_tuple_struct(_name: &'static str, _len: usize) => Hint::Seq;
        deserialize_map() => Hint::Any;
        deserialize_enum(_name: &'static str, _variants: &'static [&'static str]) => Hint::Enum;
        deserialize_identifier() => Hint::Any;
        deserialize_ignored_any() => Hint::Any;
    }

    // Scalars of a present, plain type are read inline (the common case: no optional to
    // resolve, no wrapper to close); anything else takes the general path.
    scalars! {
        double: deserialize_f32, deserialize_f64;
        int: deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_u8,
            deserialize_u16, deserialize_u32, deserialize_u64;
        bool: deserialize_bool;
    }

    // A struct or list with nothing to resolve around it (no optional, no wrapper) is read
    // here, inlined into the caller; anything else takes the general path.
    #[inline(always)]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        if let Kind::Struct { members, names } = &self.ty.kind {
            return read_struct(self.d, members, names, visitor);
        }
        self.read(visitor, Hint::Any)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        if let Kind::List(item) = &self.ty.kind {
            return read_list(self.d, item, visitor);
        }
        self.read(visitor, Hint::Seq)
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        if let Kind::Binary(PrimitiveType::String | PrimitiveType::Utf8 | PrimitiveType::Json) =
            self.ty.kind
        {
            let start = self.d.pos;
            let bytes = self.d.binary().map_err(wire)?;
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

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        let ty = self.ty;
        match (self.field, &ty.kind) {
            // The field's value is the wrapper `{1: item}`.
            (Some(_), Kind::Optional(item)) if item.nullable => {
                match wrapper_field(self.d, item)? {
                    None => visitor.visit_some(Absent { ty: item, id: 1 }),
                    Some(header) => {
                        let value = visitor.visit_some(ValueDe {
                            d: &mut *self.d,
                            ty: item,
                            field: Some(header),
                        })?;
                        close(self.d, 1).map(|()| value)
                    }
                }
            }
            (Some(_), Kind::Optional(item)) => visitor.visit_some(ValueDe { ty: item, ..self }),
            // A nullable element is the wrapper `{1: ty}`.
            (None, _) if ty.nullable => match wrapper_field(self.d, ty)? {
                None => visitor.visit_none(),
                Some(header) => {
                    let inner = ValueDe {
                        d: &mut *self.d,
                        ty,
                        field: Some(header),
                    };
                    let value = inner.deserialize_option(visitor)?;
                    close(self.d, 1).map(|()| value)
                }
            },
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

/// A field the bytes leave out: `None` or unit, else an error naming the field.
struct Absent<'t> {
    ty: &'t Node,
    id: i16,
}

impl<'de> de::Deserializer<'de> for Absent<'_> {
    type Error = SerdeError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.ty.kind {
            Kind::Null => visitor.visit_unit(),
            _ if self.ty.nullable => Err(error(format!(
                "field {} is missing (null), and the Rust type needs a value",
                self.id
            ))),
            _ => Err(error(format!("required field {} is missing", self.id))),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        if self.ty.nullable {
            return visitor.visit_none();
        }
        Err(error(format!("required field {} is missing", self.id)))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        if self.ty.nullable {
            return visitor.visit_unit();
        }
        Err(error(format!("required field {} is missing", self.id)))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// A list's elements.
struct ListAccess<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    item: &'t Node,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for ListAccess<'_, 'de, '_> {
    type Error = SerdeError;

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, SerdeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(ValueDe {
            d: &mut *self.d,
            ty: self.item,
            field: None,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A struct's members in order, fields read as they come (in id order).
struct StructAccess<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    members: &'t [Node],
    names: &'t [String],
    /// The next member to hand out.
    next: usize,
    /// The id of the last field header read (compact deltas).
    last: i16,
    /// A header read ahead: the field of a later member.
    pending: Option<FieldHeader>,
    done: bool,
}

impl<'de> StructAccess<'_, 'de, '_> {
    /// The next field header of a member at or after member `self.next`, `None` past the
    /// stop field; unknown ids are skipped.
    fn header(&mut self) -> Result<Option<FieldHeader>, SerdeError> {
        if let Some(header) = self.pending.take() {
            return Ok(Some(header));
        }
        let count = self.members.len();
        while !self.done {
            let start = self.d.pos;
            let header = match self.d.short_field(&mut self.last) {
                Some(header) => header,
                None => self.d.long_field(&mut self.last).map_err(wire)?,
            };
            let Some(header) = header else {
                self.done = true;
                break;
            };
            match usize::try_from(header.id) {
                Ok(id) if id > self.next && id <= count => return Ok(Some(header)),
                Ok(id) if id >= 1 && id <= count => {
                    return Err(at(
                        start,
                        format!(
                            "field {id} after field {}: fields must come in id order, once",
                            self.next
                        ),
                    ))
                }
                _ => self.d.skip(&header).map_err(wire)?,
            }
        }
        Ok(None)
    }

    /// The next field header (`None`: the stop field) when nothing is pending and `accept`
    /// takes it, read inline; `None`, nothing read, for anything else (a pending or long
    /// header, one not accepted), which [`StructAccess::header`] reads.
    #[inline(always)]
    fn short_header_if(
        &mut self,
        accept: impl FnOnce(Option<FieldHeader>) -> bool,
    ) -> Option<Option<FieldHeader>> {
        if self.pending.is_some() || self.done {
            return None;
        }
        let (pos, last) = (self.d.pos, self.last);
        match self.d.short_field(&mut self.last) {
            Some(header) if accept(header) => Some(header),
            _ => {
                self.d.pos = pos;
                self.last = last;
                None
            }
        }
    }

    /// The header of field `id` of wire type `wire` when it is the next in the bytes (the
    /// common case: fields in id order, none unknown).
    #[inline(always)]
    fn header_in_place(&mut self, id: i16, wire: Option<WireType>) -> Option<FieldHeader> {
        self.short_header_if(|h| matches!(h, Some(h) if h.id == id && Some(h.ty) == wire))
            .flatten()
    }

    /// Reads to the struct's stop field: the members the Rust type did not take are skipped.
    #[inline(always)]
    fn finish(&mut self) -> Result<(), SerdeError> {
        // The common case: the stop field is next.
        if self.short_header_if(|h| h.is_none()).is_some() {
            self.done = true;
            return Ok(());
        }
        self.finish_rest()
    }

    #[inline(never)]
    fn finish_rest(&mut self) -> Result<(), SerdeError> {
        loop {
            match self.header()? {
                None => return Ok(()),
                Some(header) => {
                    self.next = usize::try_from(header.id).unwrap_or_default();
                    self.d.skip(&header).map_err(wire)?;
                }
            }
        }
    }

    /// Member `self.next` (of type `ty`, field `id`) wherever the bytes have it: a later
    /// field read ahead, a field left out, a field of the wrong type.
    #[inline(never)]
    fn member_general<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
        ty: &Node,
        id: i16,
    ) -> Result<S::Value, SerdeError> {
        let start = self.d.pos;
        let header = self.header()?;
        let name = &self.names[self.next];
        self.next += 1;
        match header {
            Some(h) if h.id == id => {
                if Some(h.ty) != ty.field_wire {
                    let message = format!("field {id} is {}", h.ty.name());
                    return Err(at(start, message).in_member(name));
                }
                seed.deserialize(ValueDe {
                    d: &mut *self.d,
                    ty,
                    field: Some(h),
                })
            }
            later => {
                self.pending = later;
                seed.deserialize(Absent { ty, id })
            }
        }
        .map_err(|e| e.in_member(name))
    }
}

impl<'de> de::SeqAccess<'de> for &mut StructAccess<'_, 'de, '_> {
    type Error = SerdeError;

    // Inlined into the derived `visit_seq` (serde's default is a call).
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
        let id = field_id(self.next)?;
        let Some(h) = self.header_in_place(id, ty.field_wire) else {
            return self.member_general(seed, ty, id).map(Some);
        };
        let name = &self.names[self.next];
        self.next += 1;
        seed.deserialize(ValueDe {
            d: &mut *self.d,
            ty,
            field: Some(h),
        })
        .map(Some)
        .map_err(|e| e.in_member(name))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len() - self.next)
    }
}

/// A dict's entries, each a struct `{1: key, 2: value}`.
struct DictAccess<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    key: &'t Node,
    value: &'t Node,
    left: usize,
    /// The id of the entry's last field header read (compact deltas).
    last: i16,
    /// The entry's field read while looking for its key, not a key (`Some(None)`: the stop
    /// field, the entry is empty).
    read_ahead: Option<Option<FieldHeader>>,
}

impl DictAccess<'_, '_, '_> {
    /// The entry's next field, which must have an id of at least `id` (unknown ids skipped);
    /// `None` at its stop field.
    fn field_from(&mut self, id: i16) -> Result<Option<FieldHeader>, SerdeError> {
        loop {
            let start = self.d.pos;
            match self.d.field(&mut self.last).map_err(wire)? {
                None => return Ok(None),
                Some(h) if h.id == 1 || h.id == 2 => {
                    if h.id < id {
                        let message = format!("dict entry field {} twice or out of order", h.id);
                        return Err(at(start, message));
                    }
                    let ty = if h.id == 1 { self.key } else { self.value };
                    if Some(h.ty) != ty.field_wire {
                        let message = format!("dict entry field {} is {}", h.id, h.ty.name());
                        return Err(at(start, message));
                    }
                    return Ok(Some(h));
                }
                Some(h) => self.d.skip(&h).map_err(wire)?,
            }
        }
    }
}

impl<'de> de::MapAccess<'de> for &mut DictAccess<'_, 'de, '_> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, SerdeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        self.last = 0;
        let key = match self.field_from(1)? {
            Some(h) if h.id == 1 => seed.deserialize(ValueDe {
                d: &mut *self.d,
                ty: self.key,
                field: Some(h),
            }),
            other => {
                self.read_ahead = Some(other);
                seed.deserialize(Absent {
                    ty: self.key,
                    id: 1,
                })
            }
        };
        key.map(Some).map_err(|e| e.in_member("key"))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, SerdeError> {
        let header = match self.read_ahead.take() {
            Some(header) => header,
            None => self.field_from(2)?,
        };
        let value = match header {
            Some(h) => seed.deserialize(ValueDe {
                d: &mut *self.d,
                ty: self.value,
                field: Some(h),
            }),
            None => seed.deserialize(Absent {
                ty: self.value,
                id: 2,
            }),
        }
        .map_err(|e| e.in_member("value"))?;
        // The entry's stop field, unless it was read already.
        if header.is_some() {
            let start = self.d.pos;
            if self.field_from(3)?.is_some() {
                return Err(at(start, "dict entry field after its value"));
            }
        }
        Ok(value)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A union: the one field set names the variant.
struct UnionAccess<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    alternatives: &'t [Node],
}

impl<'a, 'de, 't> de::EnumAccess<'de> for UnionAccess<'a, 'de, 't> {
    type Error = SerdeError;
    type Variant = VariantDe<'a, 'de, 't>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, VariantDe<'a, 'de, 't>), SerdeError> {
        let start = self.d.pos;
        let header = self
            .d
            .field(&mut 0)
            .map_err(wire)?
            .ok_or_else(|| at(start, "a union with no field set"))?;
        let index = usize::try_from(header.id)
            .ok()
            .and_then(|id| id.checked_sub(1));
        let Some((index, alt)) = index.and_then(|i| Some((i, self.alternatives.get(i)?))) else {
            let count = self.alternatives.len();
            let message = format!(
                "union field {} is not one of its {count} alternatives",
                header.id
            );
            return Err(at(start, message));
        };
        if header.ty != alt.element_wire {
            let message = format!("union field {} is {}", header.id, header.ty.name());
            return Err(at(start, message));
        }
        let variant = seed.deserialize((index as u32).into_deserializer())?;
        Ok((
            variant,
            VariantDe {
                d: self.d,
                alt,
                header,
            },
        ))
    }
}

/// A union's payload, then the union's stop field.
struct VariantDe<'a, 'de, 't> {
    d: &'a mut Decoder<'de>,
    alt: &'t Node,
    header: FieldHeader,
}

impl<'de> VariantDe<'_, 'de, '_> {
    fn payload(&mut self) -> ValueDe<'_, 'de, '_> {
        // A nullable alternative is its wrapper struct, read as a nullable element.
        let field = (!self.alt.nullable).then_some(self.header);
        ValueDe {
            d: &mut *self.d,
            ty: self.alt,
            field,
        }
    }

    fn end<T>(self, value: T) -> Result<T, SerdeError> {
        let start = self.d.pos;
        if self
            .d
            .field(&mut self.header.id.clone())
            .map_err(wire)?
            .is_some()
        {
            return Err(at(start, "a union with more than one field set"));
        }
        Ok(value)
    }
}

impl<'de> de::VariantAccess<'de> for VariantDe<'_, 'de, '_> {
    type Error = SerdeError;

    fn unit_variant(mut self) -> Result<(), SerdeError> {
        let start = self.d.pos;
        // Only a nullable alternative can be a unit, and then only when null.
        let carried = !self.alt.nullable
            || <Option<de::IgnoredAny> as de::Deserialize>::deserialize(self.payload())?.is_some();
        if carried {
            return Err(at(
                start,
                "the union's alternative carries a value; the Rust variant is a unit",
            ));
        }
        self.end(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        mut self,
        seed: S,
    ) -> Result<S::Value, SerdeError> {
        let value = seed.deserialize(self.payload())?;
        self.end(value)
    }

    fn tuple_variant<V: Visitor<'de>>(
        mut self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        let value = de::Deserializer::deserialize_tuple(self.payload(), len, visitor)?;
        self.end(value)
    }

    fn struct_variant<V: Visitor<'de>>(
        mut self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        let value = de::Deserializer::deserialize_struct(self.payload(), "", fields, visitor)?;
        self.end(value)
    }
}
