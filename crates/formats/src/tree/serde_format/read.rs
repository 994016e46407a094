//! Reading serde values from tree items, every length checked against the bytes that remain.

use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::{error, SerdeError, DEPTH_LIMIT};
use crate::tree::{Dialect, Item};

pub(super) struct Deserializer<'de, D> {
    input: &'de [u8],
    pos: usize,
    /// Where the last item read began: the offset errors name.
    item_start: usize,
    depth: usize,
    dialect: PhantomData<D>,
}

impl<'de, D: Dialect> Deserializer<'de, D> {
    pub(super) fn new(input: &'de [u8]) -> Deserializer<'de, D> {
        Deserializer {
            input,
            pos: 0,
            item_start: 0,
            depth: 0,
            dialect: PhantomData,
        }
    }

    /// How far reading has come.
    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    /// Where the last item read began: the offset errors name.
    pub(super) fn item_start(&self) -> usize {
        self.item_start
    }

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
            // Small non-negative integers (most counts, ids, enum-like bytes) are one byte
            // that fits every target type.
            let start = self.pos;
            if let Some(v) = D::read_tiny_uint(self.input, &mut self.pos) {
                self.item_start = start;
                return visitor.$visit(v as $ty);
            }
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

#[inline]
fn text(bytes: &[u8]) -> Result<&str, SerdeError> {
    crate::utf8::text(bytes).map_err(|e| error(format!("a text string that is not UTF-8: {e}")))
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
        let start = self.pos;
        if let Some(index) = D::read_tiny_uint(self.input, &mut self.pos) {
            // The common unit variant: its index, read once.
            self.item_start = start;
            return visitor.visit_enum(u32::from(index).into_deserializer());
        }
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

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        let start = self.pos;
        if let Some(v) = D::read_bool(self.input, &mut self.pos) {
            self.item_start = start;
            return visitor.visit_bool(v);
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        let start = self.pos;
        if let Some(v) = D::read_single(self.input, &mut self.pos) {
            self.item_start = start;
            return visitor.visit_f32(v);
        }
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
        i128 u128 f64 char bytes byte_buf tuple_struct map identifier ignored_any
    }
}

/// The entries of an array or a map, counted down.
pub(super) struct Entries<'a, 'de, D> {
    de: &'a mut Deserializer<'de, D>,
    left: usize,
}

impl<'de, D: Dialect> Entries<'_, 'de, D> {
    /// The next entry (an element, or a map's key), `None` once every one was taken.
    fn next_entry<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, SerdeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

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
        self.next_entry(seed)
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
        self.next_entry(seed)
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
pub(super) struct Variant<'a, 'de, D> {
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
