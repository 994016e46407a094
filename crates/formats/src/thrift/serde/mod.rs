//! A program's own serde types as the row structs of a table, with no row in between: the
//! typed fast path of [`RowCodec`](super::RowCodec) (`serialize` / `deserialize`).
//!
//! Thrift is not self-describing: a struct's field ids and wire types come from its IDL. Here
//! the IDL is the table schema's (docs/formats/thrift.md), so the schema guides both ways and
//! serde's calls must fit it; the bytes are exactly those `RowCodec::encode` writes for the
//! same data as rows (tested byte for byte).
//!
//! | serde                                   | schema type (Thrift type)                         |
//! |-----------------------------------------|---------------------------------------------------|
//! | any integer in the type's range          | an integer or date type (`i8`..`i64` by the mapping) |
//! | unit variant of an enum                  | an integer type: the variant's index             |
//! | f32, f64                                 | `float`, `double` (`double`)                      |
//! | bool                                     | `bool`                                            |
//! | str, char, bytes                         | `string`, `utf8`, `json` (`binary`; UTF-8 checked for `utf8`, `json`) |
//! | bytes                                    | `uuid` (16 bytes), `decimal` (YT's binary), `yson` (binary YSON, checked) |
//! | seq of u8 (a `Vec<u8>`)                   | `string` (`binary`)                               |
//! | `None`, `()`                             | `optional<T>`, `null`, `void`: the field left out (an empty wrapper where the mapping has one) |
//! | `Some(v)`, newtype struct                | `optional<T>` holding `v`; transparent elsewhere  |
//! | seq, tuple, array                        | `list<T>`                                         |
//! | struct, tuple, tuple struct, seq         | `struct`, `tuple`: member `i` is field `i + 1`    |
//! | map                                      | `dict<K, V>` (`list<struct {1: K, 2: V}>`)        |
//! | newtype, tuple, struct variant           | `variant`: the union's field `index + 1`          |
//!
//! A present value into an `optional<T>` column needs no `Some`. Reading is positional like
//! serde's derived `visit_seq`: a struct's fields must come in id order (as every Thrift
//! writer writes them); a field left out is `None` for a nullable member and an error for a
//! required one; fields past the Rust type's or the schema's members are skipped. Every error
//! says the byte offset (reading) and what did not fit; integers out of their YT type's range,
//! invalid UTF-8 in `utf8`, a struct with other than its member count, and trailing bytes are
//! refused. Nesting is bounded by the schema, and skipped fields by the wire's own limit.

mod plan;
mod read;
mod write;

pub(super) use plan::Node;

pub(super) use read::from_slice_seed;
pub(super) use write::to_vec_into;

/// The format names of the errors.
fn format_name(protocol: super::Protocol) -> &'static str {
    super::format_name(protocol)
}

/// The field id of member `i`; Thrift's ids stop at 32767.
#[inline]
fn field_id(i: usize) -> Result<i16, crate::serde_error::SerdeError> {
    i16::try_from(i + 1).map_err(|_| {
        crate::serde_error::error(format!(
            "member {} is past Thrift's largest field id 32767",
            i + 1
        ))
    })
}
