//! `shapeshift bench`: native measurements for the lab, as JSON on standard output
//! (progress on standard error).

use clap::{Args, Subcommand};
use shapeshift_lab::codec_bench;
use shapeshift_lab::datasets::Dataset;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// YSON (binary, text) and Skiff read/write throughput on the study's tables.
    Codecs(CodecsArgs),
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
