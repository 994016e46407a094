//! Avro datums as a serde data format guided by the table's compiled plan: a program's own
//! types written to a row datum and read back with no row (`Vec<Value>`) in between. The
//! schema decides the wire; each serde call must fit the plan it meets, and the bytes are
//! exactly those `RowCodec::encode_row` writes for the same data as a row.
//!
//! | column (plan)                          | serde written                                   | serde read (hint honoured)              |
//! |----------------------------------------|-------------------------------------------------|-----------------------------------------|
//! | integer types (`int`, `long`)          | any integer in the YT type's range; a unit variant as its index | `i64`/`u64`; `deserialize_enum`: the variant index |
//! | `float`                                | `f32`; `f64` in `float`'s range, rounded as `encode_row` does | `f32`                      |
//! | `double`                               | `f64`, `f32` (widened)                          | `f64`                                   |
//! | `bool`                                 | bool                                            | bool                                    |
//! | `string` (Avro `bytes`)                | bytes, str, char, a seq of `u8`; a unit variant by name | borrowed bytes (str if asked and UTF-8), a seq of `u8` |
//! | `utf8`, `json` (Avro `string`)         | str, char, UTF-8 bytes or seq of `u8`; a unit variant by name | borrowed str (bytes, seq of `u8` if asked) |
//! | `uuid` (`fixed(16)`), `decimal`        | bytes or seq of `u8` of the width (decimal: YT's binary, checked) | bytes, seq of `u8`        |
//! | `yson`                                 | bytes or seq of `u8` of one YSON value (checked, written as given) | bytes, seq of `u8`     |
//! | `null`, `void`                         | `()`, unit struct, `None`                       | unit (`None` for an `Option`)           |
//! | `optional<T>`                          | `None` (branch 0), `Some(v)` or a plain `v` (branch 1); `()` as null | `None` / `Some`; a plain type reads a present value |
//! | `list<T>`                              | seq, tuple, array `[T; N]`                      | seq                                     |
//! | `struct`, `tuple` (`record`)           | struct, tuple, tuple struct, `[T; N]`, seq: positional, field count equal to the record's | seq of the fields in order |
//! | `variant` (union of records)           | an enum's variant: the union branch is the variant index | enum (index as the identifier)  |
//! | `dict<utf8, V>` (`map`)                | map with string keys; a struct (field names as keys) | map                                |
//! | `dict<K, V>` (array of `{key, value}`) | map                                             | map                                     |
//!
//! Newtype structs are transparent both ways; `Some(v)` into a non-optional column writes
//! `v` (an `Option` reads such a column as `Some`).
//!
//! Refused when written: a value outside its column's YT range (no truncation: `300` into
//! `uint8` is an error), a field left out by `skip_serializing_if` (records are positional),
//! a struct or tuple with another number of fields than the record, a seq whose length
//! differs from the one it announced, `None` into a non-optional column, a variant index the
//! union does not have, and every kind that does not fit its plan (the error names both).
//! A failed `RowCodec::serialize` leaves `out` as it was.
//!
//! Reading checks what `decode_row` checks (ranges of the YT types, UTF-8, decimal
//! precision, YSON), checks every length and count against the bytes left before anything
//! is sized by it, refuses values the type left unread and trailing bytes, and says at which
//! byte it failed. Nesting is bounded by the schema (the plan), not by the input.

use ::serde::{de, ser};

use super::codec::Plan;
use super::{RowCodec, FORMAT};
use crate::serde_error::{error, SerdeError};

mod bytes;
mod input;
mod read;
mod write;

/// The plan of a map's keys and of `utf8` values written from names.
static STRING: Plan = Plan::String;

impl RowCodec {
    /// Appends the datum of `value` (a struct, tuple or tuple struct whose fields are the
    /// table's columns in order) to `out`: the same bytes [`RowCodec::encode_row`] writes for
    /// the same data as a row. On error `out` is left as it was.
    ///
    /// # Errors
    /// A [`SerdeError`] (format `avro`) naming the field and what does not fit: a kind the
    /// column's plan cannot take, a value outside its YT type's range, a field count other
    /// than the record's, a skipped field, or the value's own `Serialize` error.
    pub fn serialize<T: ser::Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), SerdeError> {
        self.size_hint.append(out, |out| {
            value
                .serialize(write::Serializer::new(&self.row, out))
                .map_err(|e| e.located(FORMAT, None))
        })
    }

    /// Reads the datum that is the whole of `bytes` as a `T` (strings and bytes borrowed
    /// from `bytes` where `T` takes them so).
    ///
    /// # Errors
    /// A [`SerdeError`] (format `avro`) with the byte offset: malformed or truncated input,
    /// a value outside its column's YT type, a value that does not fit `T`, values of the
    /// datum `T` left unread, or bytes after the datum.
    pub fn deserialize<'de, T: de::Deserialize<'de>>(
        &self,
        bytes: &'de [u8],
    ) -> Result<T, SerdeError> {
        self.deserialize_seed(std::marker::PhantomData, bytes)
    }

    /// Reads the datum that is the whole of `bytes` as the value of `seed` (a caller's own
    /// builder, such as the Python face's objects of a class).
    ///
    /// # Errors
    /// As [`RowCodec::deserialize`].
    pub fn deserialize_seed<'de, S: de::DeserializeSeed<'de>>(
        &self,
        seed: S,
        bytes: &'de [u8],
    ) -> Result<S::Value, SerdeError> {
        let mut input = input::Input::new(bytes);
        let value = seed
            .deserialize(read::Deserializer::new(&mut input, &self.row))
            .map_err(|e| e.located(FORMAT, Some(input.item())))?;
        if input.pos() != bytes.len() {
            let message = format!("{} bytes after the datum", bytes.len() - input.pos());
            return Err(error(message).located(FORMAT, Some(input.pos())));
        }
        Ok(value)
    }
}

/// What a plan holds, for errors: the Avro type and the YT type where they differ.
#[cold]
fn describe(plan: &Plan) -> String {
    match plan {
        Plan::Null => "a null column".into(),
        Plan::Bool => "a boolean column".into(),
        Plan::Int { range, .. } => format!("an Avro int column ({})", range.ty.name()),
        Plan::Long { range, .. } => format!("an Avro long column ({})", range.ty.name()),
        Plan::Float => "a float column".into(),
        Plan::Double => "a double column".into(),
        Plan::Bytes => "an Avro bytes column (string)".into(),
        Plan::String => "an Avro string column (utf8)".into(),
        Plan::Fixed(n) => format!("an Avro fixed({n}) column"),
        Plan::Decimal {
            precision, scale, ..
        } => format!("a decimal({precision},{scale}) column"),
        Plan::Yson => "an Avro bytes column (yson)".into(),
        Plan::Optional { .. } => "an optional column".into(),
        Plan::Array(_) => "an Avro array column (list)".into(),
        Plan::Record(fields) => format!("an Avro record of {} fields", fields.len()),
        Plan::Variant(alternatives) => {
            format!("a variant of {} alternatives", alternatives.len())
        }
        Plan::Map(_) => "an Avro map column (dict<utf8, V>)".into(),
        Plan::Pairs { .. } => "a dict column (array of {key, value})".into(),
    }
}

/// `what` does not fit `plan`.
#[cold]
fn mismatch(what: &str, plan: &Plan) -> SerdeError {
    error(format!("{what} does not fit {}", describe(plan)))
}

/// The error of a field, with the field's place in front.
#[cold]
fn in_field(e: SerdeError, index: usize, name: Option<&str>) -> SerdeError {
    let place = match name {
        Some(name) => format!("field {index} ({name})"),
        None => format!("field {index}"),
    };
    let message = format!("{place}: {}", e.message());
    SerdeError::new(e.format(), e.offset(), message)
}
