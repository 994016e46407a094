//! A program's own serde types as the row messages of a table, with no row in between: the
//! typed fast path of [`RowCodec`](super::dynamic::RowCodec) (`serialize` / `deserialize`).
//!
//! Protobuf is not self-describing: field numbers and wire types come from the `.proto`.
//! Here the `.proto` is the table schema's dynamic layout (docs/formats/protobuf.md; what
//! `proto_schema` prints), so the schema guides both ways and serde's calls must fit it. The
//! bytes are exactly those `RowCodec::encode_row` writes for the same data as a row (tested
//! byte for byte), and so prost's for the lab's compiled messages.
//!
//! | serde                                   | schema type (protobuf field)                      |
//! |-----------------------------------------|---------------------------------------------------|
//! | any integer in the type's range          | an integer or date type (`int64` / `uint64`)      |
//! | unit variant of an enum                  | an integer type: the variant's index             |
//! | f32, f64                                 | `float` (`float`), `double` (`double`)           |
//! | bool                                     | `bool`                                            |
//! | str, char, bytes                         | `string`, `utf8`, `json` (`bytes`; UTF-8 checked for `utf8`, `json`) |
//! | bytes                                    | `uuid` (16 bytes), `decimal` (YT's binary), `yson` (binary YSON, checked) |
//! | seq of u8 (a `Vec<u8>`)                   | `string` (`bytes`)                                |
//! | `None`, `()`                             | `optional<T>`, `null`, `void`: no field (an empty wrapper where the layout has one) |
//! | `Some(v)`, newtype struct                | `optional<T>` holding `v`; transparent elsewhere  |
//! | seq, tuple, array                        | `list<T>` (packed for numbers)                    |
//! | struct, tuple, tuple struct, seq         | `struct`, `tuple`: member `i` is field `i + 1`    |
//! | map                                      | `dict<K, V>` (repeated `{key = 1; value = 2}`)    |
//! | newtype, tuple, struct variant           | `variant`: the oneof's field `index + 1`          |
//!
//! Writing follows proto3: a scalar member holding its default (0, false, empty) is left
//! out, floats and doubles are always written, presence where it matters comes from the
//! layout's wrappers. Reading is positional like serde's derived `visit_seq`: a member whose
//! field is not in the message reads as its default (an optional as `None`); fields past the
//! Rust type's members and unknown fields are skipped. Messages in another order than the
//! writers' go through the dynamic codec first (see `read.rs`). Every error says the byte
//! offset (reading) and the member path; values out of their YT type's range, invalid UTF-8
//! in `utf8`, and a default that is no value of its type (an empty `uuid`) are refused.

mod plan;
mod read;
mod write;

pub(super) use plan::Node;
pub(super) use read::{from_slice_seed, IRREGULAR};
pub(super) use write::to_vec_into;

/// The format name of the errors.
fn format_name() -> &'static str {
    "protobuf"
}
