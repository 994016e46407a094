//! The serializers study's native side (`shapeshift bench serializers`): jvm-serializers'
//! table for MediaContent with our formats and the Rust crates users pick instead, measured
//! in the same run.
//!
//! Every contender's round trip of every value is checked before anything is timed; a
//! contender that cannot carry MediaContent (our static Protobuf knows only the lab's
//! compiled messages) is listed with its error instead.

pub mod contender;
pub mod media;
pub mod ours;
pub mod peer_avro;
pub mod peer_prost;
pub mod peer_thrift;
pub mod peers_serde;
pub mod rsb_avro;
pub mod rsb_bench;
pub mod rsb_data;
pub mod rsb_prost;
pub mod rsb_thrift;

use serde::Serialize;
use shapeshift_formats::registry::FormatKind;

use contender::{
    check_round_trip, interleave, prepare, Contender, Prepared, Row, Timed, Trials, COLUMNS,
};
use media::MediaContent;

/// What a contender is.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// One of our formats through the common row interface.
    OursInterface,
    /// One of our formats through its own one-message codec.
    OursCodec,
    /// One of our formats as a serde data format, on the program's own structs.
    OursSerde,
    /// A crate users pick instead.
    Crate,
}

/// A contender as the report names it.
#[derive(Clone, Debug, Serialize)]
pub struct ContenderInfo {
    /// Unique: `ours <format>`, `ours <format> codec`, `ours <format> serde`, or the crate's
    /// name.
    pub name: String,
    /// The wire format family, for comparisons within a format (`json`, `msgpack`, `cbor`,
    /// `protobuf`, `avro`, `thrift`, `thrift-compact`, `arrow`, ...).
    pub format: &'static str,
    pub side: Side,
}

/// One contender on one value.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub value: String,
    pub contender: String,
    #[serde(flatten)]
    pub row: Row,
}

/// A contender that could not take part, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub contender: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub trials: usize,
    pub iterations: usize,
    pub trial_budget_s: f64,
    pub contenders: Vec<ContenderInfo>,
    pub skipped: Vec<Skipped>,
    /// MediaContent, jvm-serializers' columns.
    pub results: Vec<Measurement>,
    /// rust_serialization_benchmark's datasets and columns.
    pub datasets: Vec<rsb_bench::DatasetMeasurement>,
}

/// A contender with its steps behind one object-safe face.
pub trait Runner {
    fn round_trip(&self, value: &MediaContent) -> Result<Vec<u8>, String>;
    /// Its columns on `value`, calibrated, for [`contender::interleave`].
    fn prepare<'a>(
        &'a self,
        value: &'a MediaContent,
        trials: Trials,
    ) -> Result<Prepared<'a>, String>;
    /// Deserialize and the deep reverse step.
    fn decode(&self, bytes: &[u8]) -> Result<MediaContent, String>;
}

impl<C: Contender> Runner for C {
    fn round_trip(&self, value: &MediaContent) -> Result<Vec<u8>, String> {
        check_round_trip(self, value)
    }

    fn prepare<'a>(
        &'a self,
        value: &'a MediaContent,
        trials: Trials,
    ) -> Result<Prepared<'a>, String> {
        prepare(self, value, trials)
    }

    fn decode(&self, bytes: &[u8]) -> Result<MediaContent, String> {
        self.deep(self.deserialize(bytes)?)
    }
}

/// The format family of a registry format.
fn family(kind: FormatKind) -> &'static str {
    match kind {
        FormatKind::Protobuf | FormatKind::ProtobufDynamic => "protobuf",
        FormatKind::YsonText => "yson-text",
        other => other.name(),
    }
}

/// Every contender: our formats through the interface, their codecs and their serde path,
/// then the crates.
///
/// # Errors
/// A peer's schema that does not parse (a bug).
pub fn contenders() -> Result<Vec<(ContenderInfo, Box<dyn Runner>)>, String> {
    let schema = media::table_schema(false);
    let mut all: Vec<(ContenderInfo, Box<dyn Runner>)> = Vec::new();
    let info = |name: String, format, side| ContenderInfo { name, format, side };
    for kind in FormatKind::ALL {
        all.push((
            info(format!("ours {kind}"), family(kind), Side::OursInterface),
            Box::new(ours::Interface {
                kind,
                schema: schema.clone(),
            }),
        ));
    }
    for (name, codec) in ours::RowCodec::all(&schema)? {
        let format = FormatKind::from_name(name).map_or(name, family);
        all.push((
            info(format!("ours {name} codec"), format, Side::OursCodec),
            Box::new(codec),
        ));
    }
    let typed: [(&'static str, Box<dyn Runner>); 2] = [
        ("msgpack", Box::new(peers_serde::OursMsgpack)),
        ("cbor", Box::new(peers_serde::OursCbor)),
    ];
    for (format, runner) in typed {
        all.push((
            info(format!("ours {format} serde"), format, Side::OursSerde),
            runner,
        ));
    }
    for (format, typed) in ours::Typed::all(&schema)? {
        all.push((
            info(format!("ours {format} serde"), format, Side::OursSerde),
            Box::new(typed),
        ));
    }
    let crates: Vec<(&str, &'static str, Box<dyn Runner>)> = vec![
        ("serde_json", "json", Box::new(peers_serde::SerdeJson)),
        ("sonic-rs", "json", Box::new(peers_serde::SonicRs)),
        ("rmp-serde", "msgpack", Box::new(peers_serde::RmpSerde)),
        ("ciborium", "cbor", Box::new(peers_serde::Ciborium)),
        ("prost", "protobuf", Box::new(peer_prost::Prost)),
        (
            "apache-avro",
            "avro",
            Box::new(peer_avro::ApacheAvro::new()?),
        ),
        (
            "thrift binary",
            "thrift",
            Box::new(peer_thrift::ThriftCrate { compact: false }),
        ),
        (
            "thrift compact",
            "thrift-compact",
            Box::new(peer_thrift::ThriftCrate { compact: true }),
        ),
        ("bitcode", "bitcode", Box::new(peers_serde::Bitcode)),
    ];
    for (name, format, runner) in crates {
        all.push((info(name.to_string(), format, Side::Crate), runner));
    }
    Ok(all)
}

/// Runs the study on the datasets named `datasets` (MediaContent values `media.1` to
/// `media.4`, and rust_serialization_benchmark's `log`, `mesh`, `minecraft_savedata` and
/// `mk48`; all when empty), for the contenders whose names are in `only` (all when empty); the
/// benchmark's datasets with `dataset_scale` times its record counts and `dataset_trials`
/// trials.
///
/// # Errors
/// An unknown dataset or contender name, or a contender whose round trip fails on a value
/// after it passed on another (a bug).
pub fn run(
    datasets: &[String],
    only: &[String],
    trials: Trials,
    dataset_trials: usize,
    dataset_scale: f64,
    mut progress: impl FnMut(&str),
) -> Result<Report, String> {
    let (rsb, media_names): (Vec<&String>, Vec<&String>) = datasets
        .iter()
        .partition(|d| rsb_bench::DATASETS.contains(&d.as_str()));
    let rsb: Vec<&'static str> = if datasets.is_empty() {
        rsb_bench::DATASETS.to_vec()
    } else {
        rsb_bench::DATASETS
            .into_iter()
            .filter(|d| rsb.iter().any(|r| r.as_str() == *d))
            .collect()
    };
    let values = if datasets.is_empty() || !media_names.is_empty() {
        media::values(&media_names.into_iter().cloned().collect::<Vec<_>>())?
    } else {
        Vec::new()
    };
    let mut contenders = contenders()?;
    for name in only {
        if !contenders.iter().any(|(info, _)| &info.name == name) {
            return Err(format!("unknown contender '{name}'"));
        }
    }
    if !only.is_empty() {
        contenders.retain(|(info, _)| only.contains(&info.name));
    }
    // Round trips first: a contender that cannot carry MediaContent is skipped with its error.
    let mut skipped = Vec::new();
    contenders.retain(|(info, runner)| {
        for (name, value) in &values {
            if let Err(reason) = runner.round_trip(value) {
                progress(&format!("{}: skipped ({name}: {reason})", info.name));
                skipped.push(Skipped {
                    contender: info.name.clone(),
                    reason: format!("{name}: {reason}"),
                });
                return false;
            }
        }
        true
    });
    let mut results = Vec::new();
    for (value_name, value) in &values {
        // Every contender's columns on this value, timed in interleaved rounds.
        let mut prepared = Vec::with_capacity(contenders.len());
        for (info, runner) in &contenders {
            progress(&format!("{value_name}: {}", info.name));
            prepared.push(
                runner
                    .prepare(value, trials)
                    .map_err(|e| format!("{value_name}: {}: {e}", info.name))?,
            );
        }
        let mut ops: Vec<Timed<'_>> = prepared
            .iter_mut()
            .flat_map(|p| p.columns.drain(..))
            .collect();
        let mut columns = interleave(trials.trials, &mut ops)
            .map_err(|e| format!("{value_name}: {e}"))?
            .into_iter();
        drop(ops);
        for ((info, _), p) in contenders.iter().zip(&prepared) {
            let row = p.row(columns.by_ref().take(COLUMNS).collect())?;
            results.push(Measurement {
                value: value_name.clone(),
                contender: info.name.clone(),
                row,
            });
        }
    }
    let dataset_trials = Trials {
        trials: dataset_trials.max(1),
        ..trials
    };
    let datasets = rsb_bench::run(
        &rsb,
        dataset_scale,
        only,
        dataset_trials,
        &mut progress,
        &mut skipped,
    )?;
    Ok(Report {
        trials: trials.trials,
        iterations: trials.iterations,
        trial_budget_s: trials.trial_budget_s,
        contenders: contenders.into_iter().map(|(info, _)| info).collect(),
        skipped,
        results,
        datasets,
    })
}

#[cfg(test)]
mod tests;
