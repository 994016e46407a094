//! rust_serialization_benchmark's columns (serialize, deserialize, size, zlib, zstd) on its
//! datasets ([`rsb_data`]): the whole dataset serialized as one value by the crates (the
//! benchmark's way), and as a table of one row per record by our formats (their way: the
//! forward step to rows is part of serialize, the reverse step part of deserialize), and by
//! our schema formats' typed paths as the crates do (one struct holding the list of records).
//! Every contender's round trip is checked equal to the dataset before timing.

use apache_avro::Schema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use shapeshift_formats::registry::FormatKind;
use shapeshift_types::{ColumnSchema, TableSchema, Type};

use super::contender::{compressed_sizes, interleave, timed, Column, Timed, Trials};
use super::ours::{interface_rows, interface_write, RowCodec, Typed};
use super::peer_thrift::ThriftCrate;
use super::rsb_avro::{players_avro, updates_avro, LOGS_AVRO, MESH_AVRO};
use super::rsb_data::{self, Logs, Mesh, Players, TableRows, Updates};
use super::rsb_prost::ProstCrate;
use super::{ContenderInfo, Side};

/// The dataset names, as the benchmark spells them.
pub const DATASETS: [&str; 4] = ["log", "mesh", "minecraft_savedata", "mk48"];

/// One contender on one dataset.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DatasetMeasurement {
    pub dataset: &'static str,
    pub records: usize,
    pub contender: String,
    pub serialize: Column,
    pub deserialize: Column,
    pub size: usize,
    /// After zlib level 6 and zstd level 3.
    pub zlib: usize,
    pub zstd: usize,
}

/// Serialize and deserialize a whole dataset of type `T`.
pub trait DataCodec<T> {
    /// Appends the bytes of `data` to `out`. The benchmark serializes into a buffer kept
    /// across iterations (its `serialize_buffer`), so the timing loop hands the same cleared
    /// buffer every time: what is timed is encoding, not a fresh multi-megabyte vector's
    /// growth (whose cost depends on the allocator's state the contender before left).
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String>;
    fn deserialize(&self, bytes: &[u8]) -> Result<T, String>;
}

/// The serde crates and our serde path, on the dataset's structs.
#[derive(Clone, Copy)]
pub enum SerdeCrate {
    SerdeJson,
    SonicRs,
    RmpSerde,
    Ciborium,
    OursMsgpack,
    OursCbor,
}

impl<T: Serialize + DeserializeOwned> DataCodec<T> for SerdeCrate {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            SerdeCrate::SerdeJson => serde_json::to_writer(out, data).map_err(|e| e.to_string()),
            SerdeCrate::SonicRs => sonic_rs::to_writer(out, data).map_err(|e| e.to_string()),
            SerdeCrate::RmpSerde => rmp_serde::encode::write(out, data).map_err(|e| e.to_string()),
            SerdeCrate::Ciborium => ciborium::into_writer(data, out).map_err(|e| e.to_string()),
            SerdeCrate::OursMsgpack => {
                shapeshift_formats::msgpack::to_vec_into(data, out).map_err(|e| e.to_string())
            }
            SerdeCrate::OursCbor => {
                shapeshift_formats::cbor::to_vec_into(data, out).map_err(|e| e.to_string())
            }
        }
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, String> {
        match self {
            SerdeCrate::SerdeJson => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
            SerdeCrate::SonicRs => sonic_rs::from_slice(bytes).map_err(|e| e.to_string()),
            SerdeCrate::RmpSerde => rmp_serde::from_slice(bytes).map_err(|e| e.to_string()),
            SerdeCrate::Ciborium => ciborium::from_reader(bytes).map_err(|e| e.to_string()),
            SerdeCrate::OursMsgpack => {
                shapeshift_formats::msgpack::from_slice(bytes).map_err(|e| e.to_string())
            }
            SerdeCrate::OursCbor => {
                shapeshift_formats::cbor::from_slice(bytes).map_err(|e| e.to_string())
            }
        }
    }
}

/// bitcode with its reusable `Buffer` (the benchmark's way); its bytes are copied out, a
/// memcpy against bitcode's own encoding time.
#[derive(Default)]
pub struct BitcodeCrate(std::cell::RefCell<bitcode::Buffer>);

impl<T: bitcode::Encode + bitcode::DecodeOwned> DataCodec<T> for BitcodeCrate {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        out.extend_from_slice(self.0.borrow_mut().encode(data));
        Ok(())
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, String> {
        bitcode::decode(bytes).map_err(|e| e.to_string())
    }
}

/// apache-avro with the dataset's Avro schema (the structs' shape): its schema-aware serde
/// writer, and a datum read into a `Value` then `from_value`.
pub struct AvroCrate {
    schema: Schema,
}

impl<T: Serialize + DeserializeOwned> DataCodec<T> for AvroCrate {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        apache_avro::write_avro_datum_ref(&self.schema, data, out)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn deserialize(&self, mut bytes: &[u8]) -> Result<T, String> {
        let value = apache_avro::from_avro_datum(&self.schema, &mut bytes, None)
            .map_err(|e| e.to_string())?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes after the datum", bytes.len()));
        }
        apache_avro::from_value(&value).map_err(|e| e.to_string())
    }
}

/// One of our formats on the dataset's table: through the row interface, or (`codec`) each
/// row's message from the format's one-message codec after a u32 LE length.
pub enum OursTable {
    Interface(FormatKind, TableSchema),
    Codec(RowCodec),
}

impl<T: TableRows> DataCodec<T> for OursTable {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            // The interface writes to its own sink (a stream of any format), then hands the
            // bytes over.
            OursTable::Interface(kind, schema) => {
                *out =
                    interface_write(*kind, schema, |write| data.for_each_row(|row| write(&row)))?;
                Ok(())
            }
            OursTable::Codec(codec) => data.for_each_row(|row| {
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                codec.encode(&row, out)?;
                let len = u32::try_from(out.len() - at - 4).map_err(|e| e.to_string())?;
                out[at..at + 4].copy_from_slice(&len.to_le_bytes());
                Ok(())
            }),
        }
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, String> {
        match self {
            OursTable::Interface(kind, schema) => {
                T::from_rows(interface_rows(*kind, schema, bytes)?)
            }
            OursTable::Codec(codec) => {
                let mut rest = bytes;
                T::from_rows(std::iter::from_fn(move || {
                    let (head, tail) = rest.split_first_chunk::<4>()?;
                    let len = u32::from_le_bytes(*head) as usize;
                    let Some(message) = tail.get(..len) else {
                        rest = &[];
                        return Some(Err("a row message cut short".to_string()));
                    };
                    rest = &tail[len..];
                    Some(codec.decode(message))
                }))
            }
        }
    }
}

/// A schema format's typed path on the dataset's structs.
impl<T: Serialize + DeserializeOwned> DataCodec<T> for Typed {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        self.append(data, out)
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, String> {
        self.from_slice(bytes)
    }
}

/// The schema of a whole dataset's struct (one field: the list of its records) from the
/// table of its records: the shape the typed paths write, as the crates write the dataset.
fn dataset_schema(records: &TableSchema) -> TableSchema {
    TableSchema::new(vec![ColumnSchema::new(
        "records",
        Type::list(records.row_type()),
    )])
}

type Entry<T> = (ContenderInfo, Box<dyn DataCodec<T>>);

fn contenders_for<T>(avro_schema: &str) -> Result<Vec<Entry<T>>, String>
where
    T: TableRows + Serialize + DeserializeOwned + bitcode::Encode + bitcode::DecodeOwned + 'static,
    ProstCrate: DataCodec<T>,
    ThriftCrate: DataCodec<T>,
{
    let schema = T::schema();
    let mut all: Vec<Entry<T>> = Vec::new();
    for info in super::contenders()?.into_iter().map(|(info, _)| info) {
        let codec: Box<dyn DataCodec<T>> = match (info.side, info.name.as_str()) {
            (Side::OursInterface, name) => {
                let format = name.trim_start_matches("ours ");
                let kind = FormatKind::from_name(format).ok_or(format!("no format {format}"))?;
                Box::new(OursTable::Interface(kind, schema.clone()))
            }
            (Side::OursCodec, name) => {
                let format = name.trim_start_matches("ours ").trim_end_matches(" codec");
                let codec = RowCodec::all(&schema)?
                    .into_iter()
                    .find(|(n, _)| *n == format)
                    .ok_or(format!("no codec {format}"))?
                    .1;
                Box::new(OursTable::Codec(codec))
            }
            (Side::OursSerde, "ours msgpack serde") => Box::new(SerdeCrate::OursMsgpack),
            (Side::OursSerde, "ours cbor serde") => Box::new(SerdeCrate::OursCbor),
            (Side::OursSerde, name) => {
                let format = name.trim_start_matches("ours ").trim_end_matches(" serde");
                let typed = Typed::all(&dataset_schema(&schema))?
                    .into_iter()
                    .find(|(n, _)| *n == format)
                    .ok_or(format!("no dataset codec for {name}"))?
                    .1;
                Box::new(typed)
            }
            (Side::Crate, "serde_json") => Box::new(SerdeCrate::SerdeJson),
            (Side::Crate, "sonic-rs") => Box::new(SerdeCrate::SonicRs),
            (Side::Crate, "rmp-serde") => Box::new(SerdeCrate::RmpSerde),
            (Side::Crate, "ciborium") => Box::new(SerdeCrate::Ciborium),
            (Side::Crate, "bitcode") => Box::new(BitcodeCrate::default()),
            (Side::Crate, "apache-avro") => Box::new(AvroCrate {
                schema: Schema::parse_str(avro_schema).map_err(|e| e.to_string())?,
            }),
            (Side::Crate, "prost") => Box::new(ProstCrate),
            (Side::Crate, "thrift binary") => Box::new(ThriftCrate { compact: false }),
            (Side::Crate, "thrift compact") => Box::new(ThriftCrate { compact: true }),
            (Side::Crate, other) => return Err(format!("no dataset codec for the crate {other}")),
        };
        all.push((info, codec));
    }
    Ok(all)
}

fn measure_dataset<T>(
    dataset: &'static str,
    data: &T,
    records: usize,
    avro_schema: &str,
    only: &[String],
    trials: Trials,
    progress: &mut dyn FnMut(&str),
    skipped: &mut Vec<super::Skipped>,
) -> Result<Vec<DatasetMeasurement>, String>
where
    T: TableRows
        + Serialize
        + DeserializeOwned
        + bitcode::Encode
        + bitcode::DecodeOwned
        + PartialEq
        + 'static,
    ProstCrate: DataCodec<T>,
    ThriftCrate: DataCodec<T>,
{
    let contenders = contenders_for::<T>(avro_schema)?;
    // Each contender's round trip and calibrated columns, then every column timed in
    // interleaved rounds (see `interleave`).
    let mut measured = Vec::new();
    let mut ops: Vec<Timed<'_>> = Vec::new();
    for (info, codec) in &contenders {
        if !only.is_empty() && !only.contains(&info.name) {
            continue;
        }
        let mut bytes = Vec::new();
        let round_trip = codec
            .serialize(data, &mut bytes)
            .and_then(|()| codec.deserialize(&bytes).map(|back| (bytes, back)));
        let bytes = match round_trip {
            Ok((bytes, back)) if &back == data => bytes,
            Ok(_) => return Err(format!("{dataset}: {}: the round trip differs", info.name)),
            Err(reason) => {
                progress(&format!("{dataset}: {}: skipped ({reason})", info.name));
                skipped.push(super::Skipped {
                    contender: info.name.clone(),
                    reason: format!("{dataset}: {reason}"),
                });
                continue;
            }
        };
        progress(&format!("{dataset}: {} ({} bytes)", info.name, bytes.len()));
        let (zlib, zstd) = compressed_sizes(&bytes)?;
        measured.push((info.name.clone(), bytes.len(), zlib, zstd));
        let mut buffer = Vec::new();
        ops.push(timed(trials, move || {
            buffer.clear();
            codec.serialize(data, &mut buffer)
        })?);
        ops.push(timed(trials, move || codec.deserialize(&bytes).map(drop))?);
    }
    let mut columns = interleave(trials.trials, &mut ops)
        .map_err(|e| format!("{dataset}: {e}"))?
        .into_iter();
    let mut out = Vec::new();
    for (contender, size, zlib, zstd) in measured {
        let (Some(serialize), Some(deserialize)) = (columns.next(), columns.next()) else {
            return Err(format!("{dataset}: {contender}: a column was not timed"));
        };
        out.push(DatasetMeasurement {
            dataset,
            records,
            contender,
            serialize,
            deserialize,
            size,
            zlib,
            zstd,
        });
    }
    Ok(out)
}

/// Measures the datasets named `datasets` with `scale` times the benchmark's record counts.
///
/// # Errors
/// A round trip that gives something else than the dataset (a bug).
pub fn run(
    datasets: &[&'static str],
    scale: f64,
    only: &[String],
    trials: Trials,
    progress: &mut dyn FnMut(&str),
    skipped: &mut Vec<super::Skipped>,
) -> Result<Vec<DatasetMeasurement>, String> {
    let count = |n: usize| ((n as f64 * scale) as usize).max(1);
    let mut out = Vec::new();
    for &dataset in datasets {
        match dataset {
            "log" => {
                let n = count(rsb_data::LOG_COUNT);
                let data: Logs = rsb_data::logs(n, 42);
                out.extend(measure_dataset(
                    dataset, &data, n, LOGS_AVRO, only, trials, progress, skipped,
                )?);
            }
            "mesh" => {
                let n = count(rsb_data::TRIANGLE_COUNT);
                let data: Mesh = rsb_data::mesh(n, 42);
                out.extend(measure_dataset(
                    dataset, &data, n, MESH_AVRO, only, trials, progress, skipped,
                )?);
            }
            "minecraft_savedata" => {
                let n = count(rsb_data::PLAYER_COUNT);
                let data: Players = rsb_data::players(n, 42);
                out.extend(measure_dataset(
                    dataset,
                    &data,
                    n,
                    &players_avro(),
                    only,
                    trials,
                    progress,
                    skipped,
                )?);
            }
            "mk48" => {
                let n = count(rsb_data::UPDATE_COUNT);
                let data: Updates = rsb_data::updates(n, 42);
                out.extend(measure_dataset(
                    dataset,
                    &data,
                    n,
                    &updates_avro(),
                    only,
                    trials,
                    progress,
                    skipped,
                )?);
            }
            other => return Err(format!("unknown dataset '{other}'")),
        }
    }
    Ok(out)
}
