//! A byte string spelled as a serde sequence of `u8` (how `Vec<u8>` and `[u8; N]` serialize
//! without `serde_bytes`), both ways: [`ByteSerializer`] takes one item, [`ByteItems`] hands
//! a byte string out item by item. Shared by the schema formats' serde paths (Thrift, Avro),
//! whose `string` columns take such sequences. A leaf: it imports nothing of the crate but
//! the shared serde error.

use serde::de::value::U8Deserializer;
use serde::de::{self, DeserializeSeed};
use serde::ser::{self, Impossible, Serialize};

use crate::serde_error::{error, SerdeError};

type Result<T> = std::result::Result<T, SerdeError>;

/// One item of a seq of `u8` written as bytes: any integer in `0..=255`.
pub(crate) struct ByteSerializer;

#[cold]
fn not_a_byte(what: impl std::fmt::Display) -> SerdeError {
    error(format!("{what} in a sequence of bytes (0..=255 expected)"))
}

/// The integers other than `u8`: a byte when in `0..=255`.
macro_rules! narrow {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<u8> {
            u8::try_from(v).map_err(|_| not_a_byte(v))
        })*
    };
}

macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty, $what:literal;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok> {
            Err(not_a_byte($what))
        })*
    };
}

impl ser::Serializer for ByteSerializer {
    type Ok = u8;
    type Error = SerdeError;
    type SerializeSeq = Impossible<u8, SerdeError>;
    type SerializeTuple = Impossible<u8, SerdeError>;
    type SerializeTupleStruct = Impossible<u8, SerdeError>;
    type SerializeTupleVariant = Impossible<u8, SerdeError>;
    type SerializeMap = Impossible<u8, SerdeError>;
    type SerializeStruct = Impossible<u8, SerdeError>;
    type SerializeStructVariant = Impossible<u8, SerdeError>;

    fn serialize_u8(self, v: u8) -> Result<u8> {
        Ok(v)
    }
    narrow! {
        serialize_u16(u16), serialize_u32(u32), serialize_u64(u64),
        serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64),
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &str, v: &T) -> Result<u8> {
        v.serialize(self)
    }
    refuse! {
        serialize_bool(bool) -> u8, "a bool";
        serialize_f32(f32) -> u8, "an f32";
        serialize_f64(f64) -> u8, "an f64";
        serialize_char(char) -> u8, "a char";
        serialize_str(&str) -> u8, "a string";
        serialize_bytes(&[u8]) -> u8, "bytes";
        serialize_none() -> u8, "None";
        serialize_unit() -> u8, "a unit";
        serialize_unit_struct(&'static str) -> u8, "a unit struct";
        serialize_unit_variant(&'static str, u32, &'static str) -> u8, "a unit variant";
        serialize_seq(Option<usize>) -> Self::SerializeSeq, "a sequence";
        serialize_tuple(usize) -> Self::SerializeTuple, "a tuple";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct, "a tuple struct";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant, "a tuple variant";
        serialize_map(Option<usize>) -> Self::SerializeMap, "a map";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct, "a struct";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant, "a struct variant";
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<u8> {
        Err(not_a_byte("Some"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<u8> {
        Err(not_a_byte("a newtype variant"))
    }
}

/// The bytes of a byte string as a seq of `u8`.
pub(crate) struct ByteItems<'b> {
    pub(crate) bytes: &'b [u8],
    pub(crate) index: usize,
}

impl<'de> de::SeqAccess<'de> for ByteItems<'_> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.bytes.get(self.index) {
            Some(&b) => {
                self.index += 1;
                seed.deserialize(U8Deserializer::<SerdeError>::new(b))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.bytes.len() - self.index)
    }
}
