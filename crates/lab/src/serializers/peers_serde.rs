//! The contenders that serialize the MediaContent structs as they are (serde derive, bitcode's
//! derive): the crates, and our MessagePack and CBOR as serde data formats. No forward step
//! (the reference object is what they write) and no reverse step (they decode straight into
//! the structs), as jvm-serializers' databinding libraries.

use super::contender::Contender;
use super::media::{Media, MediaContent};

macro_rules! serde_peer {
    ($(#[$doc:meta])* $name:ident, |$v:ident| $ser:expr, |$b:ident| $de:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl Contender for $name {
            type Built<'a> = &'a MediaContent;
            type Decoded = MediaContent;

            fn forward<'a>(&self, value: &'a MediaContent) -> Result<&'a MediaContent, String> {
                Ok(value)
            }

            fn serialize(&self, $v: &&MediaContent) -> Result<Vec<u8>, String> {
                let $v: &MediaContent = $v;
                $ser
            }

            fn deserialize(&self, $b: &[u8]) -> Result<MediaContent, String> {
                $de
            }

            fn shallow(&self, decoded: MediaContent) -> Result<Media, String> {
                Ok(decoded.media)
            }

            fn deep(&self, decoded: MediaContent) -> Result<MediaContent, String> {
                Ok(decoded)
            }
        }
    };
}

serde_peer!(
    /// serde_json: objects with field names, enums as their names.
    SerdeJson,
    |v| serde_json::to_vec(v).map_err(|e| e.to_string()),
    |b| serde_json::from_slice(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// sonic-rs: SIMD JSON through serde, the same text as serde_json.
    SonicRs,
    |v| sonic_rs::to_vec(v).map_err(|e| e.to_string()),
    |b| sonic_rs::from_slice(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// rmp-serde: MessagePack, structs as arrays (its default, `to_vec`), like our positional
    /// rows.
    RmpSerde,
    |v| rmp_serde::to_vec(v).map_err(|e| e.to_string()),
    |b| rmp_serde::from_slice(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// ciborium: CBOR, structs as maps with field names (serde's only CBOR form there).
    Ciborium,
    |v| {
        let mut out = Vec::new();
        ciborium::into_writer(v, &mut out).map_err(|e| e.to_string())?;
        Ok(out)
    },
    |b| ciborium::from_reader(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// Our MessagePack as a serde data format: structs as arrays, enums by index.
    OursMsgpack,
    |v| shapeshift_formats::msgpack::to_vec(v).map_err(|e| e.to_string()),
    |b| shapeshift_formats::msgpack::from_slice(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// Our CBOR as a serde data format: structs as arrays, enums by index.
    OursCbor,
    |v| shapeshift_formats::cbor::to_vec(v).map_err(|e| e.to_string()),
    |b| shapeshift_formats::cbor::from_slice(b).map_err(|e| e.to_string())
);

serde_peer!(
    /// bitcode: a schema-less binary of its own (bit-packed), the speed floor.
    Bitcode,
    |v| Ok(bitcode::encode(v)),
    |b| bitcode::decode(b).map_err(|e| e.to_string())
);
