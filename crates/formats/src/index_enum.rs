//! An enum's variant read from an integer column (its index), for the schema formats' serde
//! paths (Thrift, Protobuf): a unit variant only. A leaf: it imports nothing of the crate but
//! the shared serde error.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::serde_error::{error, SerdeError};

/// An enum's variant from an integer column: its index.
pub(crate) struct IndexEnum(pub u32);

impl<'de> de::EnumAccess<'de> for IndexEnum {
    type Error = SerdeError;
    type Variant = IndexEnum;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, IndexEnum), SerdeError> {
        Ok((seed.deserialize(self.0.into_deserializer())?, self))
    }
}

impl<'de> de::VariantAccess<'de> for IndexEnum {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<(), SerdeError> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        _seed: S,
    ) -> Result<S::Value, SerdeError> {
        Err(carries(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, SerdeError> {
        Err(carries(self.0))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, SerdeError> {
        Err(carries(self.0))
    }
}

#[cold]
fn carries(index: u32) -> SerdeError {
    error(format!(
        "variant {index} of an integer column carries a value"
    ))
}
