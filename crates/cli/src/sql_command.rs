//! `shapeshift sql`: SQL over files in any format we read (`shapeshift_engine`), printed
//! as a table or written to a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use shapeshift_engine::{write_results, Engine, TableFormat, TableSource};

use crate::table_rows::read_schema;

#[derive(Args)]
pub struct SqlArgs {
    /// The query (DataFusion's SQL dialect).
    query: String,
    /// A table: NAME=PATH[:FORMAT]; PATH may be a glob (`data/*.skiff`). FORMAT is one of
    /// parquet, arrow-file, csv, jsonl, records, yson, yson-text, skiff, protobuf,
    /// protobuf-dynamic, arrow, json, msgpack, cbor, avro, thrift, thrift-compact; without
    /// it the format is told from the extension or the first bytes.
    #[arg(long = "table", value_name = "NAME=PATH[:FORMAT]", required = true)]
    tables: Vec<String>,
    /// The YT table schema (YSON) of a table in a row format: NAME=FILE. Arrow streams and
    /// Avro carry their own.
    #[arg(long = "schema", value_name = "NAME=FILE")]
    schemas: Vec<String>,
    /// Write the result to this file instead of printing it.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The format of --out (as FORMAT above, but records); told from its extension when
    /// left out.
    #[arg(long, value_parser = parse_table_format)]
    to: Option<TableFormat>,
}

fn parse_table_format(name: &str) -> Result<TableFormat, String> {
    TableFormat::from_name(name).ok_or_else(|| {
        format!(
            "unknown format '{name}' (one of: {})",
            TableFormat::names().join(", ")
        )
    })
}

/// `NAME=VALUE` split at the first `=`.
fn named<'a>(text: &'a str, flag: &str) -> Result<(&'a str, &'a str), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => Ok((name, value)),
        _ => Err(format!("--{flag} {text:?}: expected NAME=VALUE")),
    }
}

/// A `--table` argument: the format after the last `:` when it names one.
fn parse_table(text: &str) -> Result<(String, String, Option<TableFormat>), String> {
    let (name, location) = named(text, "table")?;
    if let Some((path, suffix)) = location.rsplit_once(':') {
        if let Some(format) = TableFormat::from_name(suffix) {
            return Ok((name.to_owned(), path.to_owned(), Some(format)));
        }
        if !Path::new(location).exists() && Path::new(path).exists() {
            let unknown = parse_table_format(suffix).err().unwrap_or_default();
            return Err(format!("--table {text}: {unknown}"));
        }
    }
    Ok((name.to_owned(), location.to_owned(), None))
}

/// Runs `shapeshift sql`.
///
/// # Errors
/// A message naming the table, file or query that failed, and why.
pub fn run(args: SqlArgs) -> Result<(), String> {
    let engine = Engine::new().map_err(|e| e.to_string())?;
    let tables = args
        .tables
        .iter()
        .map(|t| parse_table(t))
        .collect::<Result<Vec<_>, String>>()?;
    let mut schemas = Vec::new();
    for text in &args.schemas {
        let (name, file) = named(text, "schema")?;
        if !tables.iter().any(|(table, _, _)| table == name) {
            return Err(format!("--schema {text}: no --table {name}=..."));
        }
        schemas.push((name, read_schema(&PathBuf::from(file))?));
    }
    for (name, location, format) in tables {
        let schema = schemas
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.clone());
        engine
            .register(&TableSource {
                name,
                location,
                format,
                schema,
            })
            .map_err(|e| e.to_string())?;
    }
    let (schema, batches) = engine.query(&args.query).map_err(|e| e.to_string())?;
    match args.out {
        Some(path) => {
            let format = match args.to {
                Some(format) => format,
                None => TableFormat::from_extension(&path).ok_or_else(|| {
                    format!("--out {}: name the format with --to", path.display())
                })?,
            };
            write_results(&schema, &batches, &path, format).map_err(|e| e.to_string())
        }
        None if args.to.is_some() => Err("--to needs --out FILE".into()),
        None => {
            let table = datafusion_pretty(&batches)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{table}").map_err(|e| format!("writing output: {e}"))
        }
    }
}

fn datafusion_pretty(
    batches: &[shapeshift_engine::datafusion::arrow::array::RecordBatch],
) -> Result<String, String> {
    shapeshift_engine::datafusion::arrow::util::pretty::pretty_format_batches(batches)
        .map(|table| table.to_string())
        .map_err(|e| format!("formatting the result: {e}"))
}
