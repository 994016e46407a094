//! A program's own serde types as a table's JSON rows, with no row (`Vec<Value>`) in
//! between: the typed fast path of [`RowCodec`](super::RowCodec) (`serialize` /
//! `deserialize`), guided by the table schema so the bytes are exactly those
//! [`encode_row`](super::encode_row) writes for the same data as a row (tested byte for
//! byte), and a row written by any of our writers reads back.
//!
//! | serde written                            | column type (JSON)                                |
//! |------------------------------------------|---------------------------------------------------|
//! | any integer in the YT type's range; a unit variant as its index | an integer or date type (number) |
//! | f32, f64 (`float`: finite values in f32's range, written as the nearest f32) | `float`, `double` (shortest round trip of the f32 or f64; `"nan"`, `"inf"`, `"-inf"`) |
//! | bool                                     | `bool`                                            |
//! | str, char, bytes, a seq of `u8`; a unit variant by name | `string`, `utf8`, `json` (bytes as code points; UTF-8 checked for `utf8`, `json`) |
//! | bytes, a seq of `u8` of the width        | `uuid` (16 bytes), `decimal` (YT's binary, checked) |
//! | bytes of one YSON value (checked)        | `yson` (the node as JSON, as `encode_row` writes it) |
//! | `None`, `()`, unit struct                | `null`, `void`, `optional<T>`: `null`             |
//! | `Some(v)` or a plain `v`                 | `optional<T>`: `v`, or `[v]` when `T` is nullable  |
//! | seq, tuple, array                        | `list<T>`, `tuple` (array)                        |
//! | struct, tuple, tuple struct, seq         | `struct`: an object, field `i` under member `i`'s key (positional, as the other serde paths) |
//! | newtype, tuple, struct variant           | `variant`: `[name or index, value]`               |
//! | map                                      | `dict<K, V>`: `[[k, v], ...]`                     |
//!
//! A field skipped by `skip_serializing_if` writes `null` where its member is nullable (what
//! its absence reads as) and is refused elsewhere. Reading takes what YT's JSON allows
//! without loss: object keys in any order (the writer's order costs one comparison per key),
//! a missing member as null (`None`), whitespace between tokens, escapes, a struct as a
//! positional array, a variant by index, an integer for a double. It refuses a key the
//! schema does not name, values outside their YT type, invalid UTF-8 in `utf8`, a code point
//! above U+00FF, and trailing bytes; every error says the byte offset and the member path.

use ::serde::{de, ser};
use shapeshift_types::TableSchema;

use crate::row_size_hint::RowSizeHint;
use crate::serde_error::{error, SerdeError};

mod plan;
mod read;
mod write;

use plan::Plan;

const FORMAT: &str = "json";

/// The typed path of a table's JSON rows.
#[derive(Debug)]
pub struct RowCodec {
    row: Plan,
    /// Room for the next row.
    size_hint: RowSizeHint,
}

impl RowCodec {
    /// The codec of `schema`'s rows.
    pub fn new(schema: &TableSchema) -> RowCodec {
        RowCodec {
            row: Plan::compile(&schema.row_type()),
            size_hint: RowSizeHint::new(),
        }
    }

    /// Appends the row of `value` (a struct, tuple or tuple struct whose fields are the
    /// table's columns in order) to `out` as a line: the bytes [`encode_row`](super::encode_row)
    /// writes for the same data as a row. On error `out` is left as it was.
    ///
    /// # Errors
    /// A [`SerdeError`] (format `json`) naming the member and what does not fit: a kind the
    /// column's type cannot take, a value outside its YT type's range, a field count other
    /// than the struct's, or the value's own `Serialize` error.
    pub fn serialize<T: ser::Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), SerdeError> {
        self.size_hint.append(out, |out| {
            value
                .serialize(write::Slot {
                    out: &mut *out,
                    plan: &self.row,
                })
                .map_err(|e| e.located(FORMAT, None))?;
            out.push(b'\n');
            Ok(())
        })
    }

    /// Reads the row that is the whole of `bytes` (one object, whitespace around it) as a
    /// `T`, strings borrowed from `bytes` where they have no escapes and `T` takes them so.
    ///
    /// # Errors
    /// A [`SerdeError`] (format `json`) with the byte offset and member path: malformed or
    /// truncated JSON, a key the schema does not name, a value outside its column's type, a
    /// value that does not fit `T`, or bytes after the row.
    pub fn deserialize<'de, T: de::Deserialize<'de>>(
        &self,
        bytes: &'de [u8],
    ) -> Result<T, SerdeError> {
        self.deserialize_seed(std::marker::PhantomData, bytes)
    }

    /// Reads the row that is the whole of `bytes` as the value of `seed` (a caller's own
    /// builder, such as the Python face's objects of a class).
    ///
    /// # Errors
    /// As [`RowCodec::deserialize`].
    pub fn deserialize_seed<'de, S: de::DeserializeSeed<'de>>(
        &self,
        seed: S,
        bytes: &'de [u8],
    ) -> Result<S::Value, SerdeError> {
        let mut reader = read::Reader::new(bytes);
        let value = seed
            .deserialize(read::Value {
                r: &mut reader,
                plan: &self.row,
            })
            .map_err(|e| e.located(FORMAT, Some(reader.token)))?;
        if reader.peek().is_some() {
            let message = format!("{} bytes after the row", bytes.len() - reader.pos);
            return Err(error(message).located(FORMAT, Some(reader.pos)));
        }
        Ok(value)
    }
}

/// What a plan holds, for errors.
#[cold]
fn describe(plan: &Plan) -> String {
    let text = crate::yson::to_vec(&plan.ty.to_node(), crate::yson::YsonFormat::Text);
    format!("type {}", String::from_utf8_lossy(&text))
}
