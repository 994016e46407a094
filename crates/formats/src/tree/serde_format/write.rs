//! Writing serde values as tree items (the mapping: the parent module's table).

use std::marker::PhantomData;

use serde::ser::{self, Serialize};

use super::{error, SerdeError};
use crate::tree::Dialect;

/// Owns its buffer while it writes (one indirection from a compound to the bytes, not two).
pub(super) struct Serializer<D> {
    out: Vec<u8>,
    dialect: PhantomData<D>,
}

/// A sequence or map being written: its header goes in front once the count is known, when
/// serde did not give it first.
pub(super) struct Compound<'s, D> {
    ser: &'s mut Serializer<D>,
    /// Where the items start and how many were written, for a header written at the end.
    pending: Option<(usize, usize)>,
    map: bool,
}

impl<D: Dialect> Serializer<D> {
    pub(super) fn new(out: Vec<u8>) -> Serializer<D> {
        Serializer {
            out,
            dialect: PhantomData,
        }
    }

    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.out
    }

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

    #[inline(always)]
    fn end(self) -> Result<(), SerdeError> {
        match self.pending {
            // The common case (serde announced the length): the header is written.
            None => Ok(()),
            Some((start, count)) => self.insert_header(start, count),
        }
    }

    /// Puts the header of the `count` items written since `start` in front of them.
    #[cold]
    fn insert_header(self, start: usize, count: usize) -> Result<(), SerdeError> {
        spellable(count)?;
        let mut header = Vec::with_capacity(9);
        let entries = if self.map { count / 2 } else { count };
        if self.map {
            D::map(&mut header, entries);
        } else {
            D::array(&mut header, entries);
        }
        self.ser.out.splice(start..start, header);
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
            _ => Err(beyond_64_bits(v)),
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
        let v = u64::try_from(v).map_err(|_| beyond_64_bits(v))?;
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

/// A 128-bit integer neither format can hold.
fn beyond_64_bits(v: impl std::fmt::Display) -> SerdeError {
    error(format!("{v} is beyond 64-bit integers"))
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
