//! `shapeshift bench serializers`: jvm-serializers' table for MediaContent with our formats
//! and the Rust crates users pick instead, as JSON on standard output.

use clap::Args;
use shapeshift_lab::serializers::{self, contender::Trials};

#[derive(Args)]
pub struct SerializersArgs {
    /// Datasets to measure: MediaContent media.1 to media.4, rust_serialization_benchmark's
    /// log, mesh, minecraft_savedata and mk48 (default: all).
    #[arg(long = "dataset")]
    datasets: Vec<String>,
    /// Timed trials per column on the rust_serialization_benchmark datasets (a trial: one
    /// pass over the dataset).
    #[arg(long, default_value_t = 10)]
    dataset_trials: usize,
    /// Record-count multiplier of the rust_serialization_benchmark datasets.
    #[arg(long, default_value_t = 1.0)]
    dataset_scale: f64,
    /// Contenders to measure, by name (default: all).
    #[arg(long = "contender")]
    contenders: Vec<String>,
    /// Timed trials per column, after one warm-up trial (jvm-serializers: 20).
    #[arg(long, default_value_t = 20)]
    trials: usize,
    /// Iterations per trial (jvm-serializers: 2000) ...
    #[arg(long, default_value_t = 2000)]
    iterations: usize,
    /// ... fewer when that many would take longer than this (milliseconds).
    #[arg(long, default_value_t = 1.0)]
    trial_ms: f64,
}

/// Runs the study and prints its JSON report.
///
/// # Errors
/// An unknown value or contender, or a failed round trip.
pub fn run(args: SerializersArgs) -> Result<(), String> {
    let trials = Trials {
        trials: args.trials.max(1),
        iterations: args.iterations.max(1),
        trial_budget_s: args.trial_ms.max(0.0) / 1e3,
    };
    let report = serializers::run(
        &args.datasets,
        &args.contenders,
        trials,
        args.dataset_trials,
        args.dataset_scale.max(0.0),
        |message| eprintln!("bench serializers: {message}"),
    )?;
    let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
    println!("{json}");
    Ok(())
}
