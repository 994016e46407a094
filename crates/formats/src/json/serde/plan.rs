//! A YT type compiled once for the JSON serde path: what writing and reading a value of the
//! type needs (its members' keys as the writer spells them, integer ranges, whether an
//! optional wraps its item in `[..]`), so the hot loops match one small enum.

use shapeshift_types::{PrimitiveType, Type};

pub(in crate::json) use crate::scalar_range::{fits_float, Range};

use crate::json::{json_key, write_bytes, write_key};

#[derive(Debug)]
pub(in crate::json) struct Plan {
    pub kind: Kind,
    /// `optional`, `null` or `void` (tags removed): `null` is a value of it.
    pub nullable: bool,
    /// The type, for error messages.
    pub ty: Type,
}

#[derive(Debug)]
pub(in crate::json) enum Kind {
    Bool,
    Int(Range),
    /// `float` (`narrow`: finite values beyond f32's range do not fit) or `double`.
    Double {
        narrow: bool,
    },
    /// `string`, `utf8`, `json` (`utf8` checked), `uuid` (16 bytes), `decimal` (YT's binary).
    Bytes(BytesCheck),
    /// A YSON node spelled as JSON (`$attributes`, `$type`).
    Yson,
    /// `null`, `void`.
    Null,
    /// `optional<T>`; `wrapped` when `T` is itself nullable, so a present value is `[v]`.
    Optional {
        item: Box<Plan>,
        wrapped: bool,
    },
    List(Box<Plan>),
    /// An object by member name.
    Struct(Vec<Member>),
    /// An array of the elements.
    Tuple(Vec<Plan>),
    /// `[name or index, value]`: `names` holds each alternative's name for a named variant
    /// (as a JSON string with its quotes, and as the bytes it reads back as), `None` for a
    /// positional one.
    Variant {
        alternatives: Vec<Plan>,
        names: Option<Vec<(Vec<u8>, String)>>,
    },
    /// `[[key, value], ...]`.
    Dict {
        key: Box<Plan>,
        value: Box<Plan>,
    },
}

#[derive(Debug)]
pub(in crate::json) struct Member {
    /// `"name":` as the writer spells it (bytes as code points, a leading `$` doubled).
    pub key: Vec<u8>,
    /// `key` padded with zeros to [`KEY_BLOCK`] bytes when it fits, for [`Member::write_key`].
    key_block: Option<[u8; KEY_BLOCK]>,
    /// The key as it reads back (the JSON string's code points), for lookups.
    pub json_key: String,
    pub name: String,
    pub plan: Plan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::json) enum BytesCheck {
    /// `string`: any bytes.
    Any,
    /// `utf8`, `json`.
    Utf8,
    /// `uuid`.
    Uuid,
    Decimal {
        precision: u8,
        scale: u8,
    },
}

impl Plan {
    pub fn compile(ty: &Type) -> Plan {
        let ty = ty.untagged();
        let kind = match ty {
            Type::Primitive(PrimitiveType::Bool) => Kind::Bool,
            Type::Primitive(PrimitiveType::Float) => Kind::Double { narrow: true },
            Type::Primitive(PrimitiveType::Double) => Kind::Double { narrow: false },
            Type::Primitive(PrimitiveType::Null | PrimitiveType::Void) => Kind::Null,
            Type::Primitive(PrimitiveType::String) => Kind::Bytes(BytesCheck::Any),
            Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json) => {
                Kind::Bytes(BytesCheck::Utf8)
            }
            Type::Primitive(PrimitiveType::Uuid) => Kind::Bytes(BytesCheck::Uuid),
            Type::Primitive(PrimitiveType::Yson) => Kind::Yson,
            Type::Primitive(p) => Kind::Int(Range::of(*p)),
            Type::Decimal { precision, scale } => Kind::Bytes(BytesCheck::Decimal {
                precision: *precision,
                scale: *scale,
            }),
            Type::Optional(item) => Kind::Optional {
                wrapped: item.is_nullable(),
                item: Box::new(Plan::compile(item)),
            },
            Type::List(item) => Kind::List(Box::new(Plan::compile(item))),
            Type::Struct(members) => {
                Kind::Struct(members.iter().map(|m| member(&m.name, &m.ty)).collect())
            }
            Type::Tuple(items) => Kind::Tuple(items.iter().map(Plan::compile).collect()),
            Type::VariantStruct(members) => Kind::Variant {
                alternatives: members.iter().map(|m| Plan::compile(&m.ty)).collect(),
                names: Some(
                    members
                        .iter()
                        .map(|m| {
                            let mut spelled = Vec::new();
                            write_bytes(&mut spelled, m.name.as_bytes());
                            (spelled, m.name.clone())
                        })
                        .collect(),
                ),
            },
            Type::VariantTuple(items) => Kind::Variant {
                alternatives: items.iter().map(Plan::compile).collect(),
                names: None,
            },
            Type::Dict { key, value } => Kind::Dict {
                key: Box::new(Plan::compile(key)),
                value: Box::new(Plan::compile(value)),
            },
            Type::Tagged { item, .. } => return Plan::compile(item),
        };
        Plan {
            kind,
            nullable: ty.is_nullable(),
            ty: ty.clone(),
        }
    }
}

/// The width of a short key's block.
const KEY_BLOCK: usize = 32;

impl Member {
    /// Appends `"name":`. A short key is one fixed-width copy of its block into the buffer's
    /// free room (advancing by the key's length), not a call to `memcpy` for a few bytes: a
    /// tenth of writing a row of small numbers went to those calls.
    #[inline(always)]
    pub fn write_key(&self, out: &mut Vec<u8>) {
        match &self.key_block {
            Some(block) if out.capacity() - out.len() >= KEY_BLOCK => {
                let len = out.len();
                // SAFETY: `KEY_BLOCK` bytes past `len` are allocated (checked above) and the
                // block is initialized; `set_len` exposes only the key's bytes, which the
                // block begins with.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        block.as_ptr(),
                        out.as_mut_ptr().add(len),
                        KEY_BLOCK,
                    );
                    out.set_len(len + self.key.len());
                }
            }
            _ => out.extend_from_slice(&self.key),
        }
    }
}

fn member(name: &str, ty: &Type) -> Member {
    let mut key = Vec::with_capacity(name.len() + 3);
    write_key(&mut key, name.as_bytes());
    let key_block = (key.len() <= KEY_BLOCK).then(|| {
        let mut block = [0; KEY_BLOCK];
        block[..key.len()].copy_from_slice(&key);
        block
    });
    Member {
        key,
        key_block,
        json_key: json_key(name),
        name: name.to_owned(),
        plan: Plan::compile(ty),
    }
}
