//! The tree formats (MessagePack, CBOR) as a serde data format: a program's own types written
//! to bytes and read back with no row in between, the typed fast path beside the row codecs.
//!
//! serde's data model maps onto the row codecs' tree mapping (docs/formats/msgpack.md):
//!
//! | serde                            | item                                              |
//! |----------------------------------|---------------------------------------------------|
//! | bool                             | boolean                                           |
//! | i8..i64, u8..u64 (and 128-bit in range) | integer, signed or unsigned, shortest form |
//! | f32, f64                         | float32, float64                                  |
//! | char, str                        | text string                                       |
//! | bytes                            | byte string                                       |
//! | `None`, `()`, unit struct        | nil                                               |
//! | `Some(v)`, newtype struct        | the item of `v`                                   |
//! | seq, tuple, tuple struct         | array                                             |
//! | map                              | map                                               |
//! | struct                           | array of its fields in order (positional, as the row mapping's structs) |
//! | unit variant                     | unsigned integer: the variant's index             |
//! | newtype, tuple, struct variant   | 2-item array: index, value (the row mapping's variant) |
//!
//! Reading is as lenient as the data model allows: a struct also as a map from field names, a
//! variant also by name or as a one-entry map (`{name: value}`, as rmp-serde and ciborium
//! write them), any integer item that fits the target width, a float32 for an `f64`.
//!
//! Nothing is dropped silently. Two serde shapes have no item of their own and are refused
//! when written: `Some` of a value that is itself nil (`Some(None)`, `Some(())`) would read back
//! as `None`, and a field left out by `skip_serializing_if` would shift the fields after it
//! (structs are positional). Reading checks every length against the bytes that remain
//! (no allocation is sized by the input), bounds nesting at [`DEPTH_LIMIT`], refuses trailing
//! bytes, and says at which byte offset it failed.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

use super::{Dialect, Item};

/// How deep arrays and maps may nest when read.
pub const DEPTH_LIMIT: usize = 256;

/// A failure to write a value or to read one: what went wrong and, when reading, where.
/// (Boxed: a result's error stays one pointer wide on the decoder's hot path.)
#[derive(Debug, Clone, PartialEq)]
pub struct SerdeError(Box<ErrorDetail>);

#[derive(Debug, Clone, PartialEq)]
struct ErrorDetail {
    format: &'static str,
    offset: Option<usize>,
    message: String,
}

impl SerdeError {
    fn new(format: &'static str, offset: Option<usize>, message: String) -> SerdeError {
        SerdeError(Box::new(ErrorDetail {
            format,
            offset,
            message,
        }))
    }

    /// The format's name.
    pub fn format(&self) -> &'static str {
        self.0.format
    }

    /// Byte offset in the input of the item that failed (reading only).
    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The same error in `format`, at `at` unless it has an offset already.
    fn located(mut self, format: &'static str, at: Option<usize>) -> SerdeError {
        self.0.format = format;
        self.0.offset = self.0.offset.or(at);
        self
    }
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.offset {
            Some(offset) => write!(f, "{}: at byte {offset}: {}", self.0.format, self.0.message),
            None => write!(f, "{}: {}", self.0.format, self.0.message),
        }
    }
}

impl std::error::Error for SerdeError {}

impl ser::Error for SerdeError {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> SerdeError {
        SerdeError::new("", None, message.to_string())
    }
}

impl de::Error for SerdeError {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> SerdeError {
        SerdeError::new("", None, message.to_string())
    }
}

#[cold]
fn error(message: impl Into<String>) -> SerdeError {
    SerdeError::new("", None, message.into())
}

/// Appends `value` to `out` in format `D`. On error `out` holds what was written before it.
///
/// # Errors
/// A value serde cannot express in the format without loss (see the module's notes), or the
/// value's own `Serialize` error.
pub fn to_vec_into<D: Dialect, T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let mut serializer = Serializer::<D> {
        out: std::mem::take(out),
        dialect: PhantomData,
    };
    let written = value.serialize(&mut serializer);
    *out = serializer.out;
    written.map_err(|e| e.located(D::NAME, None))
}

/// Reads one value of `T` from `input`, which must hold exactly that value.
///
/// # Errors
/// Bytes that are not one item of the format, an item that does not fit `T`, nesting deeper
/// than [`DEPTH_LIMIT`], or bytes after the value; the error gives the byte offset.
pub fn from_slice<'de, D: Dialect, T: de::Deserialize<'de>>(
    input: &'de [u8],
) -> Result<T, SerdeError> {
    let mut deserializer = Deserializer::<D> {
        input,
        pos: 0,
        item_start: 0,
        depth: 0,
        dialect: PhantomData,
    };
    let value = T::deserialize(&mut deserializer)
        .map_err(|e| e.located(D::NAME, Some(deserializer.item_start)))?;
    if deserializer.pos != input.len() {
        let message = format!("{} bytes after the value", input.len() - deserializer.pos);
        return Err(error(message).located(D::NAME, Some(deserializer.pos)));
    }
    Ok(value)
}

/// Owns its buffer while it writes (one indirection from a compound to the bytes, not two).
struct Serializer<D> {
    out: Vec<u8>,
    dialect: PhantomData<D>,
}

/// A sequence or map being written: its header goes in front once the count is known, when
/// serde did not give it first.
struct Compound<'s, D> {
    ser: &'s mut Serializer<D>,
    /// Where the items start and how many were written, for a header written at the end.
    pending: Option<(usize, usize)>,
    map: bool,
}

impl<D: Dialect> Serializer<D> {
    #[inline]
    fn compound<'s>(&'s mut self, len: Option<usize>, map: bool) -> Compound<'s, D> {
        let pending = match len {
            Some(n) if n > u32::MAX as usize => Some((self.out.len(), 0)),
            Some(n) if map => {
                D::map(&mut self.out, n);
                None
            }
            Some(n) => {
                D::array(&mut self.out, n);
                None
            }
            None => Some((self.out.len(), 0)),
        };
        Compound {
            ser: self,
            pending,
            map,
        }
    }

    fn variant_header(&mut self, index: u32) {
        D::array(&mut self.out, 2);
        D::uint(&mut self.out, u64::from(index));
    }
}

impl<D: Dialect> Compound<'_, D> {
    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        if let Some((_, count)) = &mut self.pending {
            *count += 1;
        }
        value.serialize(&mut *self.ser)
    }

    #[inline]
    fn end(self) -> Result<(), SerdeError> {
        if let Some((start, count)) = self.pending {
            spellable(count)?;
            let mut header = Vec::with_capacity(9);
            let entries = if self.map { count / 2 } else { count };
            if self.map {
                D::map(&mut header, entries);
            } else {
                D::array(&mut header, entries);
            }
            self.ser.out.splice(start..start, header);
        }
        Ok(())
    }
}

impl<'s, D: Dialect> ser::Serializer for &'s mut Serializer<D> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'s, D>;
    type SerializeTuple = Compound<'s, D>;
    type SerializeTupleStruct = Compound<'s, D>;
    type SerializeTupleVariant = Compound<'s, D>;
    type SerializeMap = Compound<'s, D>;
    type SerializeStruct = Compound<'s, D>;
    type SerializeStructVariant = Compound<'s, D>;

    fn serialize_bool(self, v: bool) -> Result<(), SerdeError> {
        D::boolean(&mut self.out, v);
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), SerdeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), SerdeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), SerdeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), SerdeError> {
        D::int(&mut self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), SerdeError> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.serialize_i64(v),
            (_, Ok(v)) => self.serialize_u64(v),
            _ => Err(error(format!("{v} is beyond 64-bit integers"))),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<(), SerdeError> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), SerdeError> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), SerdeError> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), SerdeError> {
        D::uint(&mut self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), SerdeError> {
        let v = u64::try_from(v).map_err(|_| error(format!("{v} is beyond 64-bit integers")))?;
        self.serialize_u64(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), SerdeError> {
        D::single(&mut self.out, v);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), SerdeError> {
        D::double(&mut self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), SerdeError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), SerdeError> {
        spellable(v.len())?;
        D::text(&mut self.out, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        spellable(v.len())?;
        D::bytes(&mut self.out, v);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), SerdeError> {
        D::nil(&mut self.out);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), SerdeError> {
        let start = self.out.len();
        value.serialize(&mut *self)?;
        // One nil item: the reader could not tell it from `None`.
        if self.out.len() == start + 1 && self.out[start] == D::NIL {
            return Err(error(
                "Some of a nil-valued item (Some(None), Some(())) would read back as None",
            ));
        }
        Ok(())
    }
    fn serialize_unit(self) -> Result<(), SerdeError> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), SerdeError> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
    ) -> Result<(), SerdeError> {
        self.serialize_u64(index.into())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        self.variant_header(index);
        value.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, SerdeError> {
        Ok(self.compound(len, false))
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, SerdeError> {
        Ok(self.compound(Some(len), false))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, SerdeError> {
        Ok(self.compound(Some(len), false))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, SerdeError> {
        self.variant_header(index);
        Ok(self.compound(Some(len), false))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, SerdeError> {
        Ok(self.compound(len, true))
    }
    #[inline]
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, SerdeError> {
        // A struct's field count is known and small: its header goes first, unchecked.
        D::array(&mut self.out, len);
        Ok(Compound {
            ser: self,
            pending: None,
            map: false,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, SerdeError> {
        self.variant_header(index);
        Ok(self.compound(Some(len), false))
    }
}

/// serde's four sequence-like traits: each element is the next item.
macro_rules! sequence_like {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<D: Dialect> ser::$trait for Compound<'_, D> {
            type Ok = ();
            type Error = SerdeError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
                self.element(value)
            }
            fn end(self) -> Result<(), SerdeError> {
                Compound::end(self)
            }
        }
    )*};
}

sequence_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<D: Dialect> ser::SerializeMap for Compound<'_, D> {
    type Ok = ();
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.element(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.element(value)
    }
    fn end(self) -> Result<(), SerdeError> {
        Compound::end(self)
    }
}

/// A length both formats can spell (MessagePack has none past 32 bits).
#[inline]
fn spellable(len: usize) -> Result<(), SerdeError> {
    if len > u32::MAX as usize {
        return Err(error(format!("a length of {len} is past 32 bits")));
    }
    Ok(())
}

/// Structs are positional: a skipped field would move every field after it.
fn skipped(key: &'static str) -> SerdeError {
    error(format!(
        "field {key:?} is skipped, which would shift the fields after it (structs are written \
         as arrays of their fields in order)"
    ))
}

/// serde's two struct-like traits: fields by position, none skipped.
macro_rules! struct_like {
    ($($trait:ident),*) => {$(
        impl<D: Dialect> ser::$trait for Compound<'_, D> {
            type Ok = ();
            type Error = SerdeError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> Result<(), SerdeError> {
                self.element(value)
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), SerdeError> {
                Err(skipped(key))
            }
            fn end(self) -> Result<(), SerdeError> {
                Compound::end(self)
            }
        }
    )*};
}

struct_like!(SerializeStruct, SerializeStructVariant);

struct Deserializer<'de, D> {
    input: &'de [u8],
    pos: usize,
    /// Where the last item read began: the offset errors name.
    item_start: usize,
    depth: usize,
    dialect: PhantomData<D>,
}

impl<'de, D: Dialect> Deserializer<'de, D> {
    #[inline(always)]
    fn next(&mut self) -> Result<Item<'de>, SerdeError> {
        self.item_start = self.pos;
        D::read(self.input, &mut self.pos)
            .map_err(|e| SerdeError::new(D::NAME, Some(e.offset), e.message))
    }

    fn peek(&self) -> Result<Item<'de>, SerdeError> {
        let mut pos = self.pos;
        D::read(self.input, &mut pos)
            .map_err(|e| SerdeError::new(D::NAME, Some(e.offset), e.message))
    }

    /// Entries an array or map header announces, checked against the bytes that remain (each
    /// entry takes at least one byte).
    fn entries(&self, count: u64, per_entry: u64) -> Result<usize, SerdeError> {
        let remaining = (self.input.len() - self.pos) as u64;
        match count.checked_mul(per_entry) {
            Some(bytes) if bytes <= remaining => Ok(count as usize),
            _ => Err(error(format!(
                "{count} entries announced, {remaining} bytes remain"
            ))),
        }
    }

    fn nested<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, SerdeError>,
    ) -> Result<T, SerdeError> {
        if self.depth >= DEPTH_LIMIT {
            return Err(error(format!("nested deeper than {DEPTH_LIMIT} levels")));
        }
        self.depth += 1;
        let result = read(self);
        self.depth -= 1;
        result
    }

    /// Gives `item` (just read) to `visitor` as what it is.
    fn any_item<V: Visitor<'de>>(
        &mut self,
        item: Item<'de>,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match item {
            Item::Nil => visitor.visit_unit(),
            Item::Bool(v) => visitor.visit_bool(v),
            Item::Int(v) => visitor.visit_i64(v),
            Item::Uint(v) => visitor.visit_u64(v),
            Item::Double(v) => visitor.visit_f64(v),
            Item::Bytes(v) | Item::Yson(v) => visitor.visit_borrowed_bytes(v),
            Item::Text(v) => visitor.visit_borrowed_str(text(v)?),
            Item::Array(n) => self.seq(visitor, n),
            Item::Map(n) => self.map(visitor, n),
        }
    }

    fn seq<V: Visitor<'de>>(&mut self, visitor: V, count: u64) -> Result<V::Value, SerdeError> {
        let left = self.entries(count, 1)?;
        self.nested(|de| {
            let mut access = Entries { de, left };
            let value = visitor.visit_seq(&mut access)?;
            access.finish(value)
        })
    }

    fn map<V: Visitor<'de>>(&mut self, visitor: V, count: u64) -> Result<V::Value, SerdeError> {
        let left = self.entries(count, 2)?;
        self.nested(|de| {
            let mut access = Entries { de, left };
            let value = visitor.visit_map(&mut access)?;
            access.finish(value)
        })
    }
}

/// `deserialize_<int>`: an integer item in the target's range, else the visitor's own error.
macro_rules! integer {
    ($method:ident, $visit:ident, $ty:ty) => {
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
            let item = self.next()?;
            let fits = match item {
                Item::Int(v) => <$ty>::try_from(v).ok(),
                Item::Uint(v) => <$ty>::try_from(v).ok(),
                _ => None,
            };
            match fits {
                Some(v) => visitor.$visit(v),
                None => self.any_item(item, visitor),
            }
        }
    };
}

fn text(bytes: &[u8]) -> Result<&str, SerdeError> {
    std::str::from_utf8(bytes).map_err(|e| error(format!("a text string that is not UTF-8: {e}")))
}

impl<'de, D: Dialect> de::Deserializer<'de> for &mut Deserializer<'de, D> {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        let item = self.next()?;
        self.any_item(item, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        // One byte tells: nil is a single byte in both formats.
        if self.input.get(self.pos) == Some(&D::NIL) {
            self.item_start = self.pos;
            self.pos += 1;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.next()? {
            // rmp-serde writes `()` and unit structs as an empty array.
            Item::Nil | Item::Array(0) => visitor.visit_unit(),
            other => Err(error(format!(
                "expected nil for a unit, found {}",
                other.name()
            ))),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self.peek()? {
            // A unit variant, by index or by name.
            Item::Uint(_) | Item::Int(_) | Item::Text(_) => visitor.visit_enum(Variant {
                de: self,
                unit: true,
            }),
            // `[index, value]` (ours) or `{name: value}` (rmp-serde's and ciborium's).
            Item::Array(2) | Item::Map(1) => {
                self.next()?;
                self.nested(|de| visitor.visit_enum(Variant { de, unit: false }))
            }
            other => Err(error(format!(
                "a variant is an index, a name, [index, value] or {{name: value}}, not {}",
                other.name()
            ))),
        }
    }

    // The shapes derived code asks for most, read without the detour through
    // `deserialize_any` and the visitor's conversions.
    integer!(deserialize_i8, visit_i8, i8);
    integer!(deserialize_i16, visit_i16, i16);
    integer!(deserialize_i32, visit_i32, i32);
    integer!(deserialize_i64, visit_i64, i64);
    integer!(deserialize_u8, visit_u8, u8);
    integer!(deserialize_u16, visit_u16, u16);
    integer!(deserialize_u32, visit_u32, u32);
    integer!(deserialize_u64, visit_u64, u64);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.next()? {
            // A float32 item widened to f64 narrows back exactly.
            Item::Double(v) => visitor.visit_f32(v as f32),
            other => self.any_item(other, visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.next()? {
            Item::Text(v) => visitor.visit_borrowed_str(text(v)?),
            other => self.any_item(other, visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self.next()? {
            Item::Array(n) => self.seq(visitor, n),
            other => self.any_item(other, visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.next()? {
            Item::Array(n) => self.seq(visitor, n),
            other => self.any_item(other, visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i128 u128 f64 char bytes byte_buf tuple tuple_struct map identifier ignored_any
    }
}

/// The entries of an array or a map, counted down.
struct Entries<'a, 'de, D> {
    de: &'a mut Deserializer<'de, D>,
    left: usize,
}

impl<D> Entries<'_, '_, D> {
    /// The visitor must have taken every entry: one left over is data the type has no place for.
    fn finish<T>(&self, value: T) -> Result<T, SerdeError> {
        match self.left {
            0 => Ok(value),
            left => Err(error(format!("{left} more entries than the type takes"))),
        }
    }
}

impl<'de, D: Dialect> de::SeqAccess<'de> for Entries<'_, 'de, D> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, SerdeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de, D: Dialect> de::MapAccess<'de> for Entries<'_, 'de, D> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, SerdeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, SerdeError> {
        seed.deserialize(&mut *self.de)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A variant: a unit one (its index or name alone), or the two entries of `[index, value]` /
/// `{name: value}` whose header was read.
struct Variant<'a, 'de, D> {
    de: &'a mut Deserializer<'de, D>,
    unit: bool,
}

impl<'de, D: Dialect> de::EnumAccess<'de> for Variant<'_, 'de, D> {
    type Error = SerdeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), SerdeError> {
        let index = match self.de.next()? {
            Item::Uint(v) => u32::try_from(v).ok(),
            Item::Int(v) => u32::try_from(v).ok(),
            Item::Text(name) => {
                let name = text(name)?;
                let value = seed.deserialize(name.into_deserializer())?;
                return Ok((value, self));
            }
            other => {
                return Err(error(format!(
                    "a variant index or name, not {}",
                    other.name()
                )))
            }
        };
        let index = index.ok_or_else(|| error("a variant index beyond 32 bits"))?;
        let value = seed.deserialize(index.into_deserializer())?;
        Ok((value, self))
    }
}

impl<'de, D: Dialect> de::VariantAccess<'de> for Variant<'_, 'de, D> {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<(), SerdeError> {
        if self.unit {
            Ok(())
        } else {
            // `[index, nil]`: a unit variant in the two-entry form.
            de::Deserialize::deserialize(&mut *self.de)
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, SerdeError> {
        if self.unit {
            return Err(error("a variant with a value, found its index alone"));
        }
        seed.deserialize(&mut *self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        if self.unit {
            return Err(error("a variant with a value, found its index alone"));
        }
        de::Deserializer::deserialize_any(&mut *self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        self.tuple_variant(0, visitor)
    }
}
