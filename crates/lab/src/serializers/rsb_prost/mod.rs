//! prost on rust_serialization_benchmark's datasets: the messages of the benchmark's `.proto`
//! files (proto3), derived by hand as prost-build generates them (message fields as `Option`,
//! enums as `i32` of a `prost::Enumeration`, proto3 `optional` scalars as `Option`), and the
//! conversions from and to the dataset's structs (the benchmark's way: build the message,
//! encode; decode, convert back).

mod log_mesh;
mod minecraft;
mod mk48;

use std::fmt::Display;

use super::rsb_bench::DataCodec;

pub struct ProstCrate;

/// A dataset with its message: the forward and reverse steps of prost.
pub trait ProstDataset: Sized {
    type Message: prost::Message + Default;
    fn to_message(&self) -> Self::Message;
    fn from_message(message: Self::Message) -> Result<Self, String>;
}

impl<T: ProstDataset> DataCodec<T> for ProstCrate {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        prost::Message::encode(&data.to_message(), out).map_err(|e| e.to_string())
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, String> {
        let message = <T::Message as prost::Message>::decode(bytes).map_err(|e| e.to_string())?;
        T::from_message(message)
    }
}

/// A proto integer (wider than the struct's) back in the struct's type.
fn narrow<T: TryFrom<U>, U: Copy + Display>(v: U) -> Result<T, String> {
    T::try_from(v).map_err(|_| format!("{v} out of range"))
}

/// A message field the struct requires (proto3 message fields are all optional).
fn present<T>(v: Option<T>, what: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("{what} is missing"))
}
