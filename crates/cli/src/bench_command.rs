//! `shapeshift bench`: native measurements for the lab, as JSON on standard output
//! (progress on standard error).

use clap::{Args, Subcommand};
use shapeshift_lab::codec_bench;
use shapeshift_lab::datasets::Dataset;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// YSON (binary, text) and Skiff read/write throughput on the study's tables.
    Codecs(CodecsArgs),
    /// Every row format through the common interface: rows/s, MB/s, size, zstd size, and
    /// the interface's overhead against each format's own API.
    Formats(FormatsArgs),
    /// jvm-serializers' table (MediaContent) for our formats and the Rust crates users pick
    /// instead, in the same run.
    Serializers(crate::bench_serializers::SerializersArgs),
    /// The rpc study: our server with each codec under a closed-loop load (JSON results).
    Rpc(crate::bench_rpc::RpcArgs),
    /// One rpc study server on 127.0.0.1; prints `listening on <addr>`, stops at end of stdin.
    RpcServer(crate::bench_rpc::RpcServerArgs),
}

#[derive(Args)]
pub struct FormatsArgs {
    /// Row-count multiplier.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Measured runs per operation (after one warm-up run).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Tables to measure (default: BM1, BM2, BM3, BM5).
    #[arg(long = "dataset")]
    datasets: Vec<String>,
    /// Formats to measure (default: all).
    #[arg(long = "format")]
    formats: Vec<String>,
}

#[derive(Args)]
pub struct CodecsArgs {
    /// Row-count multiplier.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Measured runs per operation (after one warm-up run).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Tables to measure (default: BM1, BM2, BM5).
    #[arg(long = "dataset")]
    datasets: Vec<String>,
}

/// Runs a `bench` subcommand.
///
/// # Errors
/// A message for an unknown dataset or a codec failure.
pub fn run(command: BenchCommand) -> Result<(), String> {
    match command {
        BenchCommand::Serializers(args) => crate::bench_serializers::run(args),
        BenchCommand::Rpc(args) => crate::bench_rpc::run(args),
        BenchCommand::RpcServer(args) => crate::bench_rpc::run_server(args),
        BenchCommand::Formats(args) => {
            let datasets = if args.datasets.is_empty() {
                Dataset::ALL.to_vec()
            } else {
                args.datasets
                    .iter()
                    .map(|name| {
                        Dataset::from_name(name).ok_or_else(|| format!("unknown dataset '{name}'"))
                    })
                    .collect::<Result<_, _>>()?
            };
            let formats = if args.formats.is_empty() {
                shapeshift_lab::format_bench::default_formats()
            } else {
                args.formats
                    .iter()
                    .map(|name| {
                        shapeshift_formats::registry::FormatKind::from_name(name)
                            .ok_or_else(|| format!("unknown format '{name}'"))
                    })
                    .collect::<Result<_, _>>()?
            };
            let results = shapeshift_lab::format_bench::run(
                &datasets,
                &formats,
                args.scale,
                args.repeat.max(1),
                |message| eprintln!("bench formats: {message}"),
            )?;
            let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
            println!("{json}");
            Ok(())
        }
        BenchCommand::Codecs(args) => {
            let datasets = if args.datasets.is_empty() {
                vec![Dataset::Bm1, Dataset::Bm2, Dataset::Bm5]
            } else {
                args.datasets
                    .iter()
                    .map(|name| {
                        Dataset::from_name(name).ok_or_else(|| format!("unknown dataset '{name}'"))
                    })
                    .collect::<Result<_, _>>()?
            };
            let results = codec_bench::run(&datasets, args.scale, args.repeat.max(1), |message| {
                eprintln!("bench codecs: {message}")
            })?;
            let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
            println!("{json}");
            Ok(())
        }
    }
}
