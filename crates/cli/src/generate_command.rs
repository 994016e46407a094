//! `shapeshift generate`: a seeded table of the format study, serialized to standard output.

use std::io::Write;

use clap::Args;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::table::RowPosition;
use shapeshift_lab::datasets::{Cardinality, Dataset, RowGenerator};
use shapeshift_types::SchemaForm;

#[derive(Args)]
pub struct GenerateArgs {
    /// BM1, BM2, BM3 (also the input of BM4) or BM5.
    #[arg(long)]
    dataset: String,
    /// Number of rows.
    #[arg(long)]
    rows: u64,
    /// Seed of the generator: the same seed gives the same rows in every format.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output format (yson, yson-text, skiff, protobuf, protobuf-dynamic, arrow, json, ...).
    #[arg(long, default_value = "yson")]
    format: String,
    /// `high` (random values) or `low` (at most 16 distinct values per column).
    #[arg(long, default_value = "high")]
    cardinality: String,
    /// Also write the table schema (YSON text, type_v3) to this file.
    #[arg(long)]
    schema_out: Option<std::path::PathBuf>,
}

/// Writes the table.
///
/// # Errors
/// A message for unknown names, an I/O failure or a format that cannot hold the table.
pub fn run(args: GenerateArgs) -> Result<(), String> {
    let dataset = Dataset::from_name(&args.dataset)
        .ok_or_else(|| format!("unknown dataset '{}'", args.dataset))?;
    let format = FormatKind::from_name(&args.format)
        .ok_or_else(|| format!("unknown format '{}'", args.format))?;
    let cardinality = match args.cardinality.as_str() {
        "high" => Cardinality::High,
        "low" => Cardinality::Low,
        other => return Err(format!("unknown cardinality '{other}' (high or low)")),
    };
    let schema = dataset.schema();
    if let Some(path) = &args.schema_out {
        let text = shapeshift_formats::yson::to_vec(
            &schema.to_node(SchemaForm::TypeV3),
            shapeshift_formats::yson::YsonFormat::Text,
        );
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let stdout = Box::new(std::io::BufWriter::with_capacity(
        1 << 16,
        std::io::stdout().lock(),
    ));
    // Arrow straight from its module: the same sink the common interface opens for it.
    let sink = if format == FormatKind::Arrow {
        shapeshift_formats::arrow::rows::sink(std::slice::from_ref(&schema), stdout)
    } else {
        open_sink(format, std::slice::from_ref(&schema), stdout)
    };
    let mut sink = sink.map_err(|e| e.to_string())?;
    let mut generator = RowGenerator::new(dataset, args.seed, cardinality);
    let position = RowPosition::default();
    for row in 0..args.rows {
        sink.write_owned_row(&position, &generator.next_row())
            .map_err(|e| format!("row {row}: {e}"))?;
    }
    sink.finish().map_err(|e| e.to_string())?;
    std::io::stdout().flush().map_err(|e| e.to_string())
}
