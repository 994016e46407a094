//! YT's type_v3 type system: primitive types and the composite types built from them.
//!
//! The model is exactly YT's: every type a YT table column can have is a [`Type`], and every
//! format in shapeshift maps from and to it. How each type is written in YSON (type_v3
//! canonical form, and the legacy `type` + `required` pair) lives in `canonical`.

/// A primitive type: one without type parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimitiveType {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float,
    Double,
    Bool,
    String,
    Utf8,
    Json,
    Uuid,
    Date,
    Datetime,
    Timestamp,
    Interval,
    Date32,
    Datetime64,
    Timestamp64,
    Interval64,
    Yson,
    Null,
    Void,
}

/// How a primitive value is held physically (in YT's unversioned rows and in [`crate::Value`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhysicalType {
    Int64,
    Uint64,
    Double,
    Bool,
    /// Bytes: string, utf8, json, uuid (16 bytes), decimal (big-endian, sign bit flipped).
    String,
    /// An arbitrary YSON node.
    Any,
    /// No value at all: null and void.
    Null,
}

impl PrimitiveType {
    /// Every primitive type, in declaration order.
    pub const ALL: [PrimitiveType; 26] = [
        PrimitiveType::Int8,
        PrimitiveType::Int16,
        PrimitiveType::Int32,
        PrimitiveType::Int64,
        PrimitiveType::Uint8,
        PrimitiveType::Uint16,
        PrimitiveType::Uint32,
        PrimitiveType::Uint64,
        PrimitiveType::Float,
        PrimitiveType::Double,
        PrimitiveType::Bool,
        PrimitiveType::String,
        PrimitiveType::Utf8,
        PrimitiveType::Json,
        PrimitiveType::Uuid,
        PrimitiveType::Date,
        PrimitiveType::Datetime,
        PrimitiveType::Timestamp,
        PrimitiveType::Interval,
        PrimitiveType::Date32,
        PrimitiveType::Datetime64,
        PrimitiveType::Timestamp64,
        PrimitiveType::Interval64,
        PrimitiveType::Yson,
        PrimitiveType::Null,
        PrimitiveType::Void,
    ];

    /// The type_v3 name (`"int8"`, `"datetime64"`, ...).
    pub fn name(self) -> &'static str {
        use PrimitiveType::*;
        match self {
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            Uint8 => "uint8",
            Uint16 => "uint16",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Float => "float",
            Double => "double",
            Bool => "bool",
            String => "string",
            Utf8 => "utf8",
            Json => "json",
            Uuid => "uuid",
            Date => "date",
            Datetime => "datetime",
            Timestamp => "timestamp",
            Interval => "interval",
            Date32 => "date32",
            Datetime64 => "datetime64",
            Timestamp64 => "timestamp64",
            Interval64 => "interval64",
            Yson => "yson",
            Null => "null",
            Void => "void",
        }
    }

    /// The primitive type with the given type_v3 name.
    pub fn from_name(name: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name)
    }

    /// How values of this type are held.
    #[inline]
    pub fn physical(self) -> PhysicalType {
        use PrimitiveType::*;
        match self {
            Int8 | Int16 | Int32 | Int64 | Interval | Date32 | Datetime64 | Timestamp64
            | Interval64 => PhysicalType::Int64,
            Uint8 | Uint16 | Uint32 | Uint64 | Date | Datetime | Timestamp => PhysicalType::Uint64,
            Float | Double => PhysicalType::Double,
            Bool => PhysicalType::Bool,
            String | Utf8 | Json | Uuid => PhysicalType::String,
            Yson => PhysicalType::Any,
            Null | Void => PhysicalType::Null,
        }
    }
}

/// A member of a struct or of a named variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    pub name: String,
    pub ty: Type,
}

impl Member {
    pub fn new(name: impl Into<String>, ty: Type) -> Member {
        Member {
            name: name.into(),
            ty,
        }
    }
}

/// A type_v3 type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Primitive(PrimitiveType),
    /// `decimal(precision, scale)`, 1 <= precision <= 76, 0 <= scale <= precision.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Optional(Box<Type>),
    List(Box<Type>),
    Struct(Vec<Member>),
    Tuple(Vec<Type>),
    /// `variant` over named members.
    VariantStruct(Vec<Member>),
    /// `variant` over unnamed elements.
    VariantTuple(Vec<Type>),
    Dict {
        key: Box<Type>,
        value: Box<Type>,
    },
    Tagged {
        tag: String,
        item: Box<Type>,
    },
}

impl Type {
    pub fn optional(item: Type) -> Type {
        Type::Optional(Box::new(item))
    }

    pub fn list(item: Type) -> Type {
        Type::List(Box::new(item))
    }

    pub fn dict(key: Type, value: Type) -> Type {
        Type::Dict {
            key: Box::new(key),
            value: Box::new(value),
        }
    }

    pub fn tagged(tag: impl Into<String>, item: Type) -> Type {
        Type::Tagged {
            tag: tag.into(),
            item: Box::new(item),
        }
    }

    /// Whether a value of this type may be null: optional, null, void, and tagged forms of them.
    #[inline]
    pub fn is_nullable(&self) -> bool {
        match self {
            Type::Optional(_) => true,
            Type::Primitive(p) => matches!(p, PrimitiveType::Null | PrimitiveType::Void),
            Type::Tagged { item, .. } => item.is_nullable(),
            _ => false,
        }
    }

    /// The type with tags removed at the top level (tags do not change the representation).
    #[inline]
    pub fn untagged(&self) -> &Type {
        match self {
            Type::Tagged { item, .. } => item.untagged(),
            other => other,
        }
    }

    /// The byte width of a decimal with this precision: 4, 8, 16 or 32.
    pub fn decimal_byte_width(precision: u8) -> usize {
        match precision {
            0..=9 => 4,
            10..=18 => 8,
            19..=38 => 16,
            _ => 32,
        }
    }
}

impl From<PrimitiveType> for Type {
    fn from(p: PrimitiveType) -> Type {
        Type::Primitive(p)
    }
}
