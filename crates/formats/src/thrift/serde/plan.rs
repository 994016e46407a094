//! A YT type compiled once for the serde path: each node holds what walking the type would
//! work out again for every value (its wire types as a field and as an element, whether it is
//! nullable, its members), so the hot loops match one small enum.

use shapeshift_types::{PrimitiveType, Type};

pub(in crate::thrift) use crate::scalar_range::{fits_float, Range};

use crate::thrift::mapping::{element_wire, field_wire, primitive_wire};
use crate::thrift::wire::WireType;

#[derive(Debug)]
pub(in crate::thrift) struct Node {
    /// The wire type of a present field of this type; `None` when it is never written.
    pub field_wire: Option<WireType>,
    /// The wire type as a list element or variant payload.
    pub element_wire: WireType,
    /// `optional`, `null` or `void` (tags removed).
    pub nullable: bool,
    pub kind: Kind,
    /// The type, for error messages.
    pub ty: Type,
}

#[derive(Debug)]
pub(in crate::thrift) enum Kind {
    Bool,
    Int {
        primitive: PrimitiveType,
        wire: WireType,
        range: Range,
    },
    /// `float` or `double`: a Thrift double (`narrow` for `float`: finite values beyond
    /// f32's range do not fit).
    Double {
        narrow: bool,
    },
    /// `string`, `utf8`, `json`, `uuid`, `yson`.
    Binary(PrimitiveType),
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// `null`, `void`.
    Null,
    Optional(Box<Node>),
    List(Box<Node>),
    /// A struct or tuple: `names` are the members' names (`[i]` for a tuple's).
    Struct {
        members: Vec<Node>,
        names: Vec<String>,
    },
    Variant {
        alternatives: Vec<Node>,
    },
    Dict {
        key: Box<Node>,
        value: Box<Node>,
    },
}

impl Node {
    pub fn compile(ty: &Type) -> Node {
        let ty = ty.untagged();
        let kind = match ty {
            Type::Primitive(PrimitiveType::Bool) => Kind::Bool,
            Type::Primitive(PrimitiveType::Float) => Kind::Double { narrow: true },
            Type::Primitive(PrimitiveType::Double) => Kind::Double { narrow: false },
            Type::Primitive(PrimitiveType::Null | PrimitiveType::Void) => Kind::Null,
            Type::Primitive(
                p @ (PrimitiveType::String
                | PrimitiveType::Utf8
                | PrimitiveType::Json
                | PrimitiveType::Uuid
                | PrimitiveType::Yson),
            ) => Kind::Binary(*p),
            Type::Primitive(p) => {
                let range = Range::of(*p);
                Kind::Int {
                    primitive: *p,
                    wire: primitive_wire(*p).unwrap_or(WireType::I64),
                    range,
                }
            }
            Type::Decimal { precision, scale } => Kind::Decimal {
                precision: *precision,
                scale: *scale,
            },
            Type::Optional(item) => Kind::Optional(Box::new(Node::compile(item))),
            Type::List(item) => Kind::List(Box::new(Node::compile(item))),
            Type::Struct(members) => Kind::Struct {
                members: members.iter().map(|m| Node::compile(&m.ty)).collect(),
                names: members.iter().map(|m| m.name.clone()).collect(),
            },
            Type::Tuple(items) => Kind::Struct {
                members: items.iter().map(Node::compile).collect(),
                names: (0..items.len()).map(|i| format!("[{i}]")).collect(),
            },
            Type::VariantStruct(members) => Kind::Variant {
                alternatives: members.iter().map(|m| Node::compile(&m.ty)).collect(),
            },
            Type::VariantTuple(items) => Kind::Variant {
                alternatives: items.iter().map(Node::compile).collect(),
            },
            Type::Dict { key, value } => Kind::Dict {
                key: Box::new(Node::compile(key)),
                value: Box::new(Node::compile(value)),
            },
            Type::Tagged { item, .. } => return Node::compile(item),
        };
        Node {
            field_wire: field_wire(ty),
            element_wire: element_wire(ty),
            nullable: ty.is_nullable(),
            kind,
            ty: ty.clone(),
        }
    }
}
