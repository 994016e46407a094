//! A YT type compiled once for the serde path: each node knows its wire type, whether it is
//! nullable, whether it "may be empty" (and so is wrapped where presence matters), how a list
//! of it is laid out, and its members — what walking the type would work out again for every
//! value. The rules are the dynamic layout's (`dynamic/plan.rs`).

use shapeshift_types::{PhysicalType, PrimitiveType, Type};

pub(in crate::protobuf) use crate::scalar_range::{fits_float, Range};

use crate::protobuf::wire::{FIXED32, FIXED64, LEN, VARINT};

#[derive(Debug)]
pub(in crate::protobuf) struct Node {
    pub kind: Kind,
    /// The wire type of one occurrence as a field (a list's is `LEN`: a packed run, or a
    /// repeated message, wrapper or byte string).
    pub wire: u8,
    /// `optional`, `null` or `void` (tags removed).
    pub nullable: bool,
    /// A value may encode to no bytes (null, void, optional, list, dict): wrapped in a
    /// message `{value = 1}` where presence matters (an optional's item, a list element, a
    /// variant alternative).
    pub may_be_empty: bool,
    /// The type, for error messages.
    pub ty: Type,
}

#[derive(Debug)]
pub(in crate::protobuf) enum Kind {
    Bool,
    /// An integer or date type: an `int64` varint, or `uint64` for the unsigned ones.
    Int {
        primitive: PrimitiveType,
        unsigned: bool,
        range: Range,
    },
    /// `float` (fixed32, `narrow`) or `double` (fixed64).
    Float {
        narrow: bool,
    },
    /// `string`, `utf8`, `json`, `uuid`: `bytes`.
    Bytes(PrimitiveType),
    /// `yson`: `bytes` of binary YSON.
    Yson,
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// `null`, `void`: never a field.
    Null,
    Optional(Box<Node>),
    /// A repeated field; `packed` for numbers: the run's width per item when fixed (4 or 8),
    /// 0 for varints.
    List {
        item: Box<Node>,
        packed: Option<usize>,
    },
    /// A struct or tuple: member `i` is field `i + 1`; `names` for errors (`[i]` in a tuple).
    Message {
        members: Vec<Node>,
        names: Vec<String>,
    },
    /// Alternative `i` is field `i + 1` of a oneof in a nested message.
    Variant {
        alternatives: Vec<Node>,
    },
    /// Repeated entry messages `{key = 1; value = 2}`.
    Dict {
        key: Box<Node>,
        value: Box<Node>,
    },
}

impl Node {
    pub fn compile(ty: &Type) -> Node {
        let ty = ty.untagged();
        let kind = match ty {
            Type::Primitive(p) => match p {
                PrimitiveType::Bool => Kind::Bool,
                PrimitiveType::Float => Kind::Float { narrow: true },
                PrimitiveType::Double => Kind::Float { narrow: false },
                PrimitiveType::Null | PrimitiveType::Void => Kind::Null,
                PrimitiveType::Yson => Kind::Yson,
                PrimitiveType::String
                | PrimitiveType::Utf8
                | PrimitiveType::Json
                | PrimitiveType::Uuid => Kind::Bytes(*p),
                other => Kind::Int {
                    primitive: *other,
                    unsigned: other.physical() == PhysicalType::Uint64,
                    range: Range::of(*other),
                },
            },
            Type::Decimal { precision, scale } => Kind::Decimal {
                precision: *precision,
                scale: *scale,
            },
            Type::Optional(item) => Kind::Optional(Box::new(Node::compile(item))),
            Type::List(item) => {
                let item = Node::compile(item);
                let packed = match item.kind {
                    Kind::Float { narrow: true } => Some(4),
                    Kind::Float { narrow: false } => Some(8),
                    Kind::Bool | Kind::Int { .. } => Some(0),
                    _ => None,
                };
                Kind::List {
                    item: Box::new(item),
                    packed,
                }
            }
            Type::Struct(members) => Kind::Message {
                members: members.iter().map(|m| Node::compile(&m.ty)).collect(),
                names: members.iter().map(|m| m.name.clone()).collect(),
            },
            Type::Tuple(items) => Kind::Message {
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
        let wire = match &kind {
            Kind::Bool | Kind::Int { .. } => VARINT,
            Kind::Float { narrow: true } => FIXED32,
            Kind::Float { narrow: false } => FIXED64,
            // A non-wrapped optional is its item's field, with presence.
            Kind::Optional(item) if !item.may_be_empty => item.wire,
            // Lists are packed runs, or repeated wrappers, messages or byte strings.
            _ => LEN,
        };
        Node {
            may_be_empty: matches!(
                kind,
                Kind::Null | Kind::Optional(_) | Kind::List { .. } | Kind::Dict { .. }
            ),
            kind,
            wire,
            nullable: ty.is_nullable(),
            ty: ty.clone(),
        }
    }
}
