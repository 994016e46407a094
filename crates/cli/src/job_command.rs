//! `shapeshift job`: one map job of the format study, run the way YT runs a job — input table
//! on standard input, output table 0 on file descriptor 1 (table k would be on 3k+1), both in
//! the chosen format. A JSON summary (rows, the scenario's statistic, seconds in the
//! scenario) goes to standard error as the last line, for the lab's operation runner.

use std::io::Write;

use clap::Args;
use shapeshift_formats::registry::FormatKind;
use shapeshift_lab::scenarios::{run_columnar_job, run_job, JobPath, Scenario, COLUMNAR_SUFFIX};

#[derive(Args)]
pub struct JobArgs {
    /// BM1, BM2, BM3, BM4, BM4-mid, BM5, BM6, or BM1-columnar (BM1's logic column by column
    /// over blocks of rows).
    #[arg(long)]
    scenario: String,
    /// yson, skiff, protobuf, protobuf-dynamic, arrow, msgpack, json, ...
    #[arg(long)]
    format: String,
    /// `interface` (the common row interface) or `native` (the format's own fast path).
    #[arg(long, default_value = "interface")]
    path: String,
    /// Rows BM6 writes (the other scenarios read their input instead).
    #[arg(long, default_value_t = 0)]
    rows: u64,
}

/// Runs one job.
///
/// # Errors
/// A message for unknown names, or the job's failure (format, byte offset, problem).
pub fn run(args: JobArgs) -> Result<(), String> {
    let (base_name, columnar) = match args.scenario.strip_suffix(COLUMNAR_SUFFIX) {
        Some(base) => (base, true),
        None => (args.scenario.as_str(), false),
    };
    let scenario = Scenario::from_name(base_name)
        .ok_or_else(|| format!("unknown scenario '{}'", args.scenario))?;
    let format = FormatKind::from_name(&args.format)
        .ok_or_else(|| format!("unknown format '{}'", args.format))?;
    let path = match args.path.as_str() {
        "interface" => JobPath::Interface,
        "native" => JobPath::Native,
        other => return Err(format!("unknown path '{other}' (interface or native)")),
    };
    let input = Box::new(std::io::stdin().lock());
    let output = Box::new(std::io::stdout().lock());
    let summary = if columnar {
        run_columnar_job(scenario, format, path, input, output)
    } else {
        run_job(scenario, format, path, input, output, args.rows)
    }
    .map_err(|e| format!("job {} {} {}: {e}", args.scenario, format, args.path))?;
    let line = serde_json::json!({
        "scenario": args.scenario,
        "format": format.name(),
        "path": args.path,
        "rows_in": summary.rows_in,
        "rows_out": summary.rows_out,
        "stat": summary.stat.to_string(),
        "seconds": summary.seconds,
        "peak_rss_kib": peak_rss_kib(),
    });
    writeln!(std::io::stderr(), "{line}").map_err(|e| e.to_string())
}

/// The process's own peak resident memory (Linux `VmHWM`), in KiB. The runner's rusage cannot
/// tell it: Linux starts a child's `ru_maxrss` at the parent's peak when the child is spawned
/// by `vfork` + `exec`, which Python's subprocess does.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
