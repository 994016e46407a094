//! Skiff wire types: how one schema node is laid out in bytes.

use std::fmt;

/// The encoding of one Skiff schema node. Every fixed-width number is little-endian and unaligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireType {
    /// No bytes at all; meaningful as a variant alternative (an absent optional).
    Nothing,
    Int8,
    Int16,
    Int32,
    Int64,
    /// Two 64-bit words, low word first; the high word is signed.
    Int128,
    /// Four 64-bit words, lowest first.
    Int256,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Uint128,
    Uint256,
    /// IEEE 754 binary64. Skiff has no 32-bit float: `float` columns travel as `double`.
    Double,
    /// One byte, 0 or 1; any other byte is an error.
    Boolean,
    /// A u32 length, then that many bytes.
    String32,
    /// A u32 length, then that many bytes of YSON.
    Yson32,
    /// The children one after another.
    Tuple,
    /// A u8 tag, then the value of child `tag`.
    Variant8,
    /// A u16 tag, then the value of child `tag`.
    Variant16,
    /// `(u8 tag, child[tag])` pairs ended by the tag 0xFF.
    RepeatedVariant8,
    /// `(u16 tag, child[tag])` pairs ended by the tag 0xFFFF.
    RepeatedVariant16,
}

impl WireType {
    /// Every wire type.
    pub const ALL: [WireType; 22] = [
        WireType::Nothing,
        WireType::Int8,
        WireType::Int16,
        WireType::Int32,
        WireType::Int64,
        WireType::Int128,
        WireType::Int256,
        WireType::Uint8,
        WireType::Uint16,
        WireType::Uint32,
        WireType::Uint64,
        WireType::Uint128,
        WireType::Uint256,
        WireType::Double,
        WireType::Boolean,
        WireType::String32,
        WireType::Yson32,
        WireType::Tuple,
        WireType::Variant8,
        WireType::Variant16,
        WireType::RepeatedVariant8,
        WireType::RepeatedVariant16,
    ];

    /// The name YT uses in `wire_type` (`"int64"`, `"repeated_variant8"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WireType::Nothing => "nothing",
            WireType::Int8 => "int8",
            WireType::Int16 => "int16",
            WireType::Int32 => "int32",
            WireType::Int64 => "int64",
            WireType::Int128 => "int128",
            WireType::Int256 => "int256",
            WireType::Uint8 => "uint8",
            WireType::Uint16 => "uint16",
            WireType::Uint32 => "uint32",
            WireType::Uint64 => "uint64",
            WireType::Uint128 => "uint128",
            WireType::Uint256 => "uint256",
            WireType::Double => "double",
            WireType::Boolean => "boolean",
            WireType::String32 => "string32",
            WireType::Yson32 => "yson32",
            WireType::Tuple => "tuple",
            WireType::Variant8 => "variant8",
            WireType::Variant16 => "variant16",
            WireType::RepeatedVariant8 => "repeated_variant8",
            WireType::RepeatedVariant16 => "repeated_variant16",
        }
    }

    /// The wire type named `name`.
    pub fn from_name(name: &str) -> Option<WireType> {
        WireType::ALL.iter().copied().find(|w| w.name() == name)
    }

    /// Whether this wire type has children (tuple and the variants).
    pub fn is_composite(self) -> bool {
        matches!(
            self,
            WireType::Tuple
                | WireType::Variant8
                | WireType::Variant16
                | WireType::RepeatedVariant8
                | WireType::RepeatedVariant16
        )
    }

    /// The byte width of a fixed-width simple type (`nothing` is 0); `None` for the
    /// length-prefixed and composite types.
    pub fn fixed_width(self) -> Option<usize> {
        match self {
            WireType::Nothing => Some(0),
            WireType::Int8 | WireType::Uint8 | WireType::Boolean => Some(1),
            WireType::Int16 | WireType::Uint16 => Some(2),
            WireType::Int32 | WireType::Uint32 => Some(4),
            WireType::Int64 | WireType::Uint64 | WireType::Double => Some(8),
            WireType::Int128 | WireType::Uint128 => Some(16),
            WireType::Int256 | WireType::Uint256 => Some(32),
            _ => None,
        }
    }

    /// The most children a node of this type may have (tags that are not the end marker).
    pub fn max_children(self) -> usize {
        match self {
            WireType::Tuple => usize::MAX,
            WireType::Variant8 => 256,
            WireType::RepeatedVariant8 => 255,
            WireType::Variant16 => 65536,
            WireType::RepeatedVariant16 => 65535,
            _ => 0,
        }
    }
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
