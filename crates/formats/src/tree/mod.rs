//! Typed values in self-describing binary trees (MessagePack, CBOR): one mapping, two
//! spellings.
//!
//! Both formats have the same data model (nil, booleans, signed and unsigned integers,
//! doubles, byte and text strings, arrays, maps with keys of any kind, and one extension
//! slot), so the mapping of the type model is shared; a [`Dialect`] spells the items.
//!
//! | type                              | item                                            |
//! |-----------------------------------|-------------------------------------------------|
//! | null, void, absent optional       | nil                                             |
//! | bool                              | boolean                                         |
//! | int8..int64, interval, *64 dates  | integer (signed, shortest form)                 |
//! | uint8..uint64, date, datetime, timestamp | integer (unsigned, shortest form)        |
//! | float, double                     | float64 (bit-exact: NaN payloads, -0.0)         |
//! | string, uuid, decimal             | byte string (decimals in YT's binary form)      |
//! | utf8, json                        | text string                                     |
//! | yson                              | the extension item holding binary YSON          |
//! | `optional<T>`, T not nullable     | nil or the T item                               |
//! | `optional<T>`, T nullable         | nil or a 1-item array of the T item             |
//! | list                              | array                                           |
//! | struct, tuple                     | array, one item per member (positional)         |
//! | variant                           | 2-item array: unsigned alternative index, item  |
//! | dict                              | map (keys of any type, in order, duplicates kept)|
//! | tagged                            | as its item                                     |
//!
//! A row is an array of its column items in schema order; a control record is a map from
//! text keys (`table_index`, `row_index`, `range_index`, `key_switch`) to integers or `true`.
//! Reading is as lenient as the integers allow (a signed item within range for an unsigned
//! column and back) and checks every value against its type. Recursion follows the type,
//! which is finite, never the input; no allocation is sized by a length read from the input
//! beyond the bytes that remain.

use shapeshift_types::{PrimitiveType, Type, Value};

mod decode;
mod encode;
pub(crate) mod rows;
pub mod serde_format;
mod stream;

pub(crate) use encode::encode_row;
pub use stream::{ItemReader, RowReader};

/// One item header or scalar of a tree format (MessagePack, CBOR): what the lowest-level
/// reader ([`ItemReader`]) yields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Item<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Bytes(&'a [u8]),
    Text(&'a [u8]),
    Array(u64),
    Map(u64),
    /// The extension item: binary YSON of a `yson` value.
    Yson(&'a [u8]),
}

impl Item<'_> {
    /// What the item is, for messages ("an integer", "a map", ...).
    pub fn name(&self) -> &'static str {
        match self {
            Item::Nil => "nil",
            Item::Bool(_) => "a boolean",
            Item::Int(_) | Item::Uint(_) => "an integer",
            Item::Double(_) => "a float",
            Item::Bytes(_) => "a byte string",
            Item::Text(_) => "a text string",
            Item::Array(_) => "an array",
            Item::Map(_) => "a map",
            Item::Yson(_) => "a yson extension",
        }
    }
}

/// A decoding failure: the byte offset and what was expected.
#[derive(Debug)]
pub struct TreeError {
    pub offset: usize,
    pub message: String,
    /// The item runs past the end of the bytes given: more input may complete it (a
    /// streaming reader refills and retries; at the end of the stream it is truncation).
    pub end_of_input: bool,
}

impl TreeError {
    #[cold]
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> TreeError {
        TreeError {
            offset,
            message: message.into(),
            end_of_input: false,
        }
    }

    /// An item that needs bytes past the end of the input.
    #[cold]
    pub(crate) fn end_of_input(offset: usize, message: impl Into<String>) -> TreeError {
        TreeError {
            end_of_input: true,
            ..TreeError::new(offset, message)
        }
    }

    /// The same error in column `name`.
    #[cold]
    fn in_column(mut self, name: &str) -> TreeError {
        self.message = format!("column \"{name}\": {}", self.message);
        self
    }
}

/// How one tree format spells items.
pub trait Dialect {
    /// The format's name in errors.
    const NAME: &'static str;
    /// The one byte of a nil item (a null in CBOR).
    const NIL: u8;
    /// The largest unsigned integer held in an item's first byte (MessagePack's positive
    /// fixint, CBOR's 0-23): such an item is that one byte.
    const TINY_UINT_MAX: u8;
    /// The first byte of a float32 item; its four big-endian bytes follow.
    const FLOAT32_HEAD: u8;
    /// The one byte of `false`; `true` is the byte after it in both formats.
    const FALSE: u8;
    fn nil(out: &mut Vec<u8>);
    fn boolean(out: &mut Vec<u8>, v: bool);
    fn int(out: &mut Vec<u8>, v: i64);
    fn uint(out: &mut Vec<u8>, v: u64);
    fn double(out: &mut Vec<u8>, v: f64);
    /// A float32 item (serde's `f32`; the row mapping writes every float as float64).
    fn single(out: &mut Vec<u8>, v: f32);
    fn bytes(out: &mut Vec<u8>, v: &[u8]);
    /// A text string; the caller has checked that `v` is UTF-8.
    fn text(out: &mut Vec<u8>, v: &[u8]);
    fn array(out: &mut Vec<u8>, len: usize);
    fn map(out: &mut Vec<u8>, len: usize);
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]);

    /// Reads the item at `*pos`, moving `*pos` past its header (and past its payload for
    /// scalars and strings).
    ///
    /// # Errors
    /// For truncated input, a reserved or unsupported byte, or a length past the end.
    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError>;

    /// The one-byte unsigned integer item at `*pos`, moving past it; `None` (nothing moved)
    /// for any other item. The serde path's enums take it first: a unit variant's index,
    /// decoded once.
    #[inline(always)]
    fn read_tiny_uint(input: &[u8], pos: &mut usize) -> Option<u8> {
        match input.get(*pos) {
            Some(&byte) if byte <= Self::TINY_UINT_MAX => {
                *pos += 1;
                Some(byte)
            }
            _ => None,
        }
    }

    /// The boolean item at `*pos`, moving past it; `None` (nothing moved) for any other item.
    #[inline(always)]
    fn read_bool(input: &[u8], pos: &mut usize) -> Option<bool> {
        match input.get(*pos) {
            Some(&byte) if byte == Self::FALSE || byte == Self::FALSE + 1 => {
                *pos += 1;
                Some(byte != Self::FALSE)
            }
            _ => None,
        }
    }

    /// The float32 item at `*pos`, moving past it; `None` (nothing moved) for any other item.
    /// The serde path's `f32` reads take it first: no `Item` through memory per float.
    #[inline(always)]
    fn read_single(input: &[u8], pos: &mut usize) -> Option<f32> {
        match input.get(*pos..*pos + 5) {
            Some(&[marker, a, b, c, d]) if marker == Self::FLOAT32_HEAD => {
                *pos += 5;
                Some(f32::from_be_bytes([a, b, c, d]))
            }
            _ => None,
        }
    }
}

/// Appends a marker byte and its big-endian argument (at most 8 bytes) in one append:
/// `push` then `extend_from_slice` compile to two capacity checks, `reserve` first to three.
#[inline(always)]
pub(crate) fn put_head<const N: usize>(out: &mut Vec<u8>, marker: u8, argument: [u8; N]) {
    let mut whole = [0; 9];
    whole[0] = marker;
    whole[1..=N].copy_from_slice(&argument);
    out.extend_from_slice(&whole[..=N]);
}

pub(super) fn mismatch(value: &Value, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

pub(super) fn is_text(ty: &Type) -> bool {
    matches!(
        ty.untagged(),
        Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json)
    )
}
