//! The tree formats (MessagePack, CBOR) as a serde data format: a program's own types written
//! to bytes and read back with no row in between, the typed fast path beside the row codecs.
//!
//! serde's data model maps onto the row codecs' tree mapping (docs/formats/msgpack.md):
//!
//! | serde                            | item                                              |
//! |----------------------------------|---------------------------------------------------|
//! | bool                             | boolean                                           |
//! | i8..i64, u8..u64 (and 128-bit in range) | integer, signed or unsigned, shortest form |
//! | f32, f64                         | float32, float64                                  |
//! | char, str                        | text string                                       |
//! | bytes                            | byte string                                       |
//! | `None`, `()`, unit struct        | nil                                               |
//! | `Some(v)`, newtype struct        | the item of `v`                                   |
//! | seq, tuple, tuple struct         | array                                             |
//! | map                              | map                                               |
//! | struct                           | array of its fields in order (positional, as the row mapping's structs) |
//! | unit variant                     | unsigned integer: the variant's index             |
//! | newtype, tuple, struct variant   | 2-item array: index, value (the row mapping's variant) |
//!
//! Reading is as lenient as the data model allows: a struct also as a map from field names, a
//! variant also by name or as a one-entry map (`{name: value}`, as rmp-serde and ciborium
//! write them), any integer item that fits the target width, a float32 for an `f64`.
//!
//! Nothing is dropped silently. Two serde shapes have no item of their own and are refused
//! when written: `Some` of a value that is itself nil (`Some(None)`, `Some(())`) would read back
//! as `None`, and a field left out by `skip_serializing_if` would shift the fields after it
//! (structs are positional). Reading checks every length against the bytes that remain
//! (no allocation is sized by the input), bounds nesting at [`DEPTH_LIMIT`], refuses trailing
//! bytes, and says at which byte offset it failed.

use serde::de;
use serde::ser::Serialize;

use super::Dialect;
pub(super) use crate::serde_error::error;
pub use crate::serde_error::SerdeError;

mod read;
mod write;

use read::Deserializer;
use write::Serializer;

/// How deep arrays and maps may nest when read.
pub const DEPTH_LIMIT: usize = 256;

/// Appends `value` to `out` in format `D`. On error `out` holds what was written before it.
///
/// # Errors
/// A value serde cannot express in the format without loss (see the module's notes), or the
/// value's own `Serialize` error.
pub fn to_vec_into<D: Dialect, T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let mut serializer = Serializer::<D>::new(std::mem::take(out));
    let written = value.serialize(&mut serializer);
    *out = serializer.into_bytes();
    written.map_err(|e| e.located(D::NAME, None))
}

/// Reads one value of `T` from `input`, which must hold exactly that value.
///
/// # Errors
/// Bytes that are not one item of the format, an item that does not fit `T`, nesting deeper
/// than [`DEPTH_LIMIT`], or bytes after the value; the error gives the byte offset.
pub fn from_slice<'de, D: Dialect, T: de::Deserialize<'de>>(
    input: &'de [u8],
) -> Result<T, SerdeError> {
    from_slice_seed::<D, _>(std::marker::PhantomData::<T>, input)
}

/// The value of `seed` from bytes of dialect `D` holding exactly one item.
///
/// # Errors
/// As [`from_slice`].
pub fn from_slice_seed<'de, D: Dialect, S: de::DeserializeSeed<'de>>(
    seed: S,
    input: &'de [u8],
) -> Result<S::Value, SerdeError> {
    let mut deserializer = Deserializer::<D>::new(input);
    let value = seed
        .deserialize(&mut deserializer)
        .map_err(|e| e.located(D::NAME, Some(deserializer.item_start())))?;
    if deserializer.pos() != input.len() {
        let message = format!("{} bytes after the value", input.len() - deserializer.pos());
        return Err(error(message).located(D::NAME, Some(deserializer.pos())));
    }
    Ok(value)
}
