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
        out,
        dialect: PhantomData,
    };
    value
        .serialize(&mut serializer)
        .map_err(|e| e.located(D::NAME, None))
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

struct Serializer<'o, D> {
    out: &'o mut Vec<u8>,
    dialect: PhantomData<D>,
}

/// A sequence or map being written: its header goes in front once the count is known, when
/// serde did not give it first.
struct Compound<'s, 'o, D> {
    ser: &'s mut Serializer<'o, D>,
    /// Where the items start and how many were written, for a header written at the end.
    pending: Option<(usize, usize)>,
    map: bool,
}

impl<'o, D: Dialect> Serializer<'o, D> {
    #[inline]
    fn compound<'s>(&'s mut self, len: Option<usize>, map: bool) -> Compound<'s, 'o, D> {
        let pending = match len {
            Some(n) if n > u32::MAX as usize => Some((self.out.len(), 0)),
            Some(n) if map => {
                D::map(self.out, n);
                None
            }
            Some(n) => {
                D::array(self.out, n);
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
        D::array(self.out, 2);
        D::uint(self.out, u64::from(index));
    }
}

impl<D: Dialect> Compound<'_, '_, D> {
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

impl<'s, 'o, D: Dialect> ser::Serializer for &'s mut Serializer<'o, D> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'s, 'o, D>;
    type SerializeTuple = Compound<'s, 'o, D>;
    type SerializeTupleStruct = Compound<'s, 'o, D>;
    type SerializeTupleVariant = Compound<'s, 'o, D>;
    type SerializeMap = Compound<'s, 'o, D>;
    type SerializeStruct = Compound<'s, 'o, D>;
    type SerializeStructVariant = Compound<'s, 'o, D>;

    fn serialize_bool(self, v: bool) -> Result<(), SerdeError> {
        D::boolean(self.out, v);
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
        D::int(self.out, v);
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
        D::uint(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), SerdeError> {
        let v = u64::try_from(v).map_err(|_| error(format!("{v} is beyond 64-bit integers")))?;
        self.serialize_u64(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), SerdeError> {
        D::single(self.out, v);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), SerdeError> {
        D::double(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), SerdeError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), SerdeError> {
        spellable(v.len())?;
        D::text(self.out, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        spellable(v.len())?;
        D::bytes(self.out, v);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), SerdeError> {
        D::nil(self.out);
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
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, SerdeError> {
        Ok(self.compound(Some(len), false))
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
        impl<D: Dialect> ser::$trait for Compound<'_, '_, D> {
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

impl<D: Dialect> ser::SerializeMap for Compound<'_, '_, D> {
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
        impl<D: Dialect> ser::$trait for Compound<'_, '_, D> {
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
