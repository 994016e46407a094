//! Reading serde values by the plan (the mapping: the parent module's table). Strings and
//! bytes are borrowed from the input; counts and lengths are checked against the bytes left
//! before a visitor sees them as a size hint.

use ::serde::de::value::{BorrowedStrDeserializer, U32Deserializer};
use ::serde::de::{self, DeserializeSeed, Visitor};

use super::input::{Input, Raw};
use super::STRING;
use crate::avro::codec::Plan;
use crate::byte_items::ByteItems;
use crate::serde_error::SerdeError;

type Result<T> = std::result::Result<T, SerdeError>;

/// Reads one value with `plan`.
pub(super) struct Deserializer<'r, 'de> {
    input: &'r mut Input<'de>,
    plan: &'r Plan,
}

impl<'r, 'de> Deserializer<'r, 'de> {
    pub(super) fn new(input: &'r mut Input<'de>, plan: &'r Plan) -> Deserializer<'r, 'de> {
        Deserializer { input, plan }
    }

    /// Past the optional layers of a column read as a plain value: a null is an error.
    #[inline]
    fn present(&mut self) -> Result<()> {
        self.input.item = self.input.pos;
        while let Plan::Optional { item, .. } = self.plan {
            let start = self.input.pos;
            if !self.input.present()? {
                let message = "null in an optional column read as a plain value (not an Option)";
                return Err(self.input.fail(start, message));
            }
            self.plan = item;
        }
        Ok(())
    }

    /// Bytes-like plans to `bytes`, others as the plan says.
    fn bytes<V: Visitor<'de>>(mut self, visitor: V, seq: bool) -> Result<V::Value> {
        self.present()?;
        let mut buf = [0u8; 32];
        let raw = match self.input.raw(self.plan, &mut buf)? {
            None => return de::Deserializer::deserialize_any(self, visitor),
            Some(raw) => raw,
        };
        if seq {
            let bytes = match raw {
                Raw::Borrowed(b) => b,
                Raw::Copied(b) => b,
            };
            let mut items = ByteItems { bytes, index: 0 };
            let value = visitor.visit_seq(&mut items)?;
            if items.index != bytes.len() {
                let message = format!("the type read {} of {} bytes", items.index, bytes.len());
                return Err(self.input.fail(self.input.item, message));
            }
            return Ok(value);
        }
        match raw {
            Raw::Borrowed(b) => visitor.visit_borrowed_bytes(b),
            Raw::Copied(b) => visitor.visit_bytes(b),
        }
    }
}

macro_rules! by_plan {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
            self.present()?;
            self.deserialize_any(visitor)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Deserializer<'_, 'de> {
    type Error = SerdeError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let input = self.input;
        let start = input.pos;
        input.item = start;
        match self.plan {
            Plan::Null => visitor.visit_unit(),
            Plan::Bool => match input.take(1)?[0] {
                0 => visitor.visit_bool(false),
                1 => visitor.visit_bool(true),
                other => Err(input.fail(start, format!("boolean byte {other}"))),
            },
            Plan::Int { unsigned, range } | Plan::Long { unsigned, range } => {
                let v = input.integer(*unsigned, range)?;
                if *unsigned {
                    visitor.visit_u64(v as u64)
                } else {
                    visitor.visit_i64(v)
                }
            }
            Plan::Float => {
                let b = input.take(4)?;
                visitor.visit_f32(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            Plan::Double => {
                let mut a = [0u8; 8];
                a.copy_from_slice(input.take(8)?);
                visitor.visit_f64(f64::from_le_bytes(a))
            }
            Plan::String => visitor.visit_borrowed_str(input.str_field()?),
            plan @ (Plan::Bytes | Plan::Fixed(_) | Plan::Yson | Plan::Decimal { .. }) => {
                Deserializer { input, plan }.bytes(visitor, false)
            }
            Plan::Optional { item, .. } => match input.present()? {
                false => visitor.visit_none(),
                true => visitor.visit_some(Deserializer { input, plan: item }),
            },
            Plan::Array(item) => {
                let mut items = Items {
                    blocks: Blocks::new(item.min_size()),
                    input,
                    item,
                };
                let value = visitor.visit_seq(&mut items)?;
                items.blocks.finish(items.input)?;
                Ok(value)
            }
            Plan::Record(fields) => {
                let mut access = Fields {
                    input,
                    fields,
                    index: 0,
                };
                let value = visitor.visit_seq(&mut access)?;
                if access.index < fields.len() {
                    let message = format!(
                        "the type read {} of the record's {} fields",
                        access.index,
                        fields.len()
                    );
                    return Err(access.input.fail(access.input.pos, message));
                }
                Ok(value)
            }
            Plan::Variant(alternatives) => visitor.visit_enum(Alternative {
                input,
                alternatives,
            }),
            Plan::Map(value) => entries(input, &STRING, value, 1 + value.min_size(), visitor),
            Plan::Pairs { key, value } => entries(
                input,
                key,
                value,
                key.min_size() + value.min_size(),
                visitor,
            ),
        }
    }

    by_plan! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_map
        deserialize_identifier
    }

    fn deserialize_str<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        self.present()?;
        match self.plan {
            Plan::Bytes => {
                let bytes = self.input.bytes_field()?;
                match crate::utf8::text(bytes) {
                    Ok(s) => visitor.visit_borrowed_str(s),
                    Err(_) => visitor.visit_borrowed_bytes(bytes),
                }
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.bytes(visitor, false)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.bytes(visitor, false)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.bytes(visitor, true)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.bytes(visitor, true)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.bytes(visitor, true)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        mut self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.present()?;
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.input.item = self.input.pos;
        match self.plan {
            Plan::Optional { item, .. } => match self.input.present()? {
                false => visitor.visit_none(),
                true => visitor.visit_some(Deserializer {
                    input: self.input,
                    plan: item,
                }),
            },
            Plan::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        self.input.item = self.input.pos;
        while let Plan::Optional { item, .. } = self.plan {
            if !self.input.present()? {
                return visitor.visit_unit();
            }
            self.plan = item;
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.present()?;
        let start = self.input.pos;
        match self.plan {
            Plan::Int { unsigned, range } | Plan::Long { unsigned, range } => {
                let v = self.input.integer(*unsigned, range)?;
                match u32::try_from(v) {
                    Ok(index) => visitor.visit_enum(U32Deserializer::<SerdeError>::new(index)),
                    Err(_) => Err(self.input.fail(start, format!("variant index {v}"))),
                }
            }
            Plan::String | Plan::Bytes => {
                let name = self.input.str_field()?;
                visitor.visit_enum(BorrowedStrDeserializer::<SerdeError>::new(name))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }
}

/// The blocks of an array or map: the items left in the current one.
struct Blocks {
    left: usize,
    done: bool,
    min: usize,
}

impl Blocks {
    fn new(min: usize) -> Blocks {
        Blocks {
            left: 0,
            done: false,
            min,
        }
    }

    /// Whether another item follows (reading the next block's count when needed).
    #[inline]
    fn next(&mut self, input: &mut Input<'_>) -> Result<bool> {
        if self.left == 0 {
            if self.done {
                return Ok(false);
            }
            self.left = input.block_count(self.min)?;
            if self.left == 0 {
                self.done = true;
                return Ok(false);
            }
        }
        self.left -= 1;
        Ok(true)
    }

    /// After the visitor: the items must all have been read.
    fn finish(&mut self, input: &mut Input<'_>) -> Result<()> {
        let start = input.pos;
        if self.left > 0 || (!self.done && input.block_count(self.min)? > 0) {
            return Err(input.fail(start, "items the type did not read"));
        }
        Ok(())
    }
}

struct Items<'r, 'de> {
    input: &'r mut Input<'de>,
    item: &'r Plan,
    blocks: Blocks,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if !self.blocks.next(self.input)? {
            return Ok(None);
        }
        seed.deserialize(Deserializer {
            input: &mut *self.input,
            plan: self.item,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.blocks.left)
    }
}

struct Fields<'r, 'de> {
    input: &'r mut Input<'de>,
    fields: &'r [Plan],
    index: usize,
}

impl<'de> de::SeqAccess<'de> for Fields<'_, 'de> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some(plan) = self.fields.get(self.index) else {
            return Ok(None);
        };
        self.index += 1;
        seed.deserialize(Deserializer {
            input: &mut *self.input,
            plan,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len() - self.index)
    }
}

fn entries<'de, V: Visitor<'de>>(
    input: &mut Input<'de>,
    key: &Plan,
    value: &Plan,
    min: usize,
    visitor: V,
) -> Result<V::Value> {
    let mut access = Entries {
        input,
        key,
        value,
        blocks: Blocks::new(min),
    };
    let result = visitor.visit_map(&mut access)?;
    access.blocks.finish(access.input)?;
    Ok(result)
}

struct Entries<'r, 'de> {
    input: &'r mut Input<'de>,
    key: &'r Plan,
    value: &'r Plan,
    blocks: Blocks,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if !self.blocks.next(self.input)? {
            return Ok(None);
        }
        seed.deserialize(Deserializer {
            input: &mut *self.input,
            plan: self.key,
        })
        .map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value> {
        seed.deserialize(Deserializer {
            input: &mut *self.input,
            plan: self.value,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.blocks.left)
    }
}

/// A variant column: the union branch is the variant index.
struct Alternative<'r, 'de> {
    input: &'r mut Input<'de>,
    alternatives: &'r [Plan],
}

impl<'r, 'de> de::EnumAccess<'de> for Alternative<'r, 'de> {
    type Error = SerdeError;
    type Variant = Deserializer<'r, 'de>;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant)> {
        let start = self.input.pos;
        let index = self.input.long()?;
        let Some(plan) = usize::try_from(index)
            .ok()
            .and_then(|i| self.alternatives.get(i))
        else {
            let message = format!(
                "union branch {index} of a variant of {}",
                self.alternatives.len()
            );
            return Err(self.input.fail(start, message));
        };
        let variant = seed.deserialize(U32Deserializer::<SerdeError>::new(index as u32))?;
        Ok((
            variant,
            Deserializer {
                input: self.input,
                plan,
            },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for Deserializer<'_, 'de> {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<()> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}
