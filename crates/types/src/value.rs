//! Values of typed columns: an owned form ([`Value`]) and a borrowed view ([`ValueRef`]).
//!
//! Values are physical: the type tells how to read them. Integers of every width are held as
//! `Int64`/`Uint64`, `float` as `Double`, decimals and uuids as `String` bytes, exactly as YT
//! holds them in its rows. Composite values keep YT's shape:
//!
//! | type                         | value                                             |
//! |------------------------------|---------------------------------------------------|
//! | `optional<T>`, absent        | `Null`                                            |
//! | `optional<T>`, present       | the `T` value; `Some(v)` only when `T` is nullable |
//! | `list<T>`                    | `List`                                            |
//! | `struct`, `tuple`            | `Tuple`, one value per member, positional         |
//! | `variant`                    | `Variant(index, value)`                           |
//! | `dict<K,V>`                  | `Dict`, pairs in order                            |
//! | `yson`                       | `Any(node)`                                       |
//! | `null`, `void`               | `Null`                                            |
//!
//! [`ValueRef`] borrows strings and carries composite values as their binary YSON encoding
//! (YT's own convention for composite values in rows), so reading a row allocates nothing per
//! field. Turning a `ValueRef::Composite` into a `Value` needs a YSON decoder and the column
//! type; the formats layer provides it.

use crate::Node;

/// An owned value of a typed column.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Vec<u8>),
    /// A present value of `optional<T>` where `T` is itself nullable.
    Some(Box<Value>),
    List(Vec<Value>),
    /// Struct members or tuple elements, positional.
    Tuple(Vec<Value>),
    Variant(u32, Box<Value>),
    Dict(Vec<(Value, Value)>),
    Any(Node),
}

/// A borrowed view of a value of a typed column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(&'a [u8]),
    /// A composite value (optional of nullable, list, struct, tuple, variant, dict) in binary YSON.
    Composite(&'a [u8]),
    /// A `yson` value in binary YSON.
    Any(&'a [u8]),
}

impl<'a> ValueRef<'a> {
    pub fn is_null(&self) -> bool {
        matches!(self, ValueRef::Null)
    }
}
