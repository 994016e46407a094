//! The format study's map jobs (the YTsaurus format study): one job's logic for each scenario,
//! format and path.
//!
//! A job reads one input table on its input stream and writes one output table on its output
//! stream, both in the same format — YT's job protocol, where the runner
//! (`python/shapeshift/lab/operation.py`) plays the part of the cluster. The scenarios:
//!
//! | scenario  | input | logic | output |
//! |-----------|-------|-------|--------|
//! | `BM1`     | BM1   | count the zero values of every field | one stats row |
//! | `BM2`     | BM2   | sum the byte lengths of `data` | one stats row |
//! | `BM3`     | BM3   | `counter += 1` | the row (BM3 schema) |
//! | `BM4`     | BM3   | add `extra = 2 * counter` as the last column | BM4 schema |
//! | `BM4-mid` | BM3   | the same column inserted after the fifth column | BM4-mid schema |
//! | `BM5`     | BM5   | every element of `values` + 1, then append 1.0 | the row (BM5 schema) |
//! | `BM6`     | none  | build the fixed row `rows` times and write it | BM3 schema |
//! | `BM1-columnar` | BM1 | BM1's count, column by column over blocks of 8192 rows | one stats row |
//!
//! Each runs through one of two [`JobPath`]s:
//! - [`JobPath::Interface`]: the common row interface ([`shapeshift_formats::table`]), the
//!   same code for every format;
//! - [`JobPath::Native`]: the format's own fast path — the YSON pull parser and event writer;
//!   Skiff row views whose raw bytes are copied, patched in place or extended by a trailing
//!   column; prost-generated messages for static Protobuf; Arrow record batches, column by
//!   column. Formats without a separate fast
//!   path ([`has_native_path`] is false) refuse `Native` rather than run the interface twice.
//!
//! `BM1-columnar` ([`run_columnar_job`]) is the study's "Arrow on column-ordered input" made
//! concrete: the same input and statistic as BM1, but the job's logic is a per-column kernel
//! over whole blocks. Arrow's fast path runs it on its record batches as they arrive; every
//! row format (and Arrow through the interface) first transposes its rows into column blocks
//! (`column_blocks`), which is what column-ordered logic costs a row format.
//!
//! Invariant: for the same input rows, every format and path produces the same output rows
//! and the same [`JobSummary::stat`]; `crates/lab/tests/scenarios.rs` checks it for each pair,
//! and the runner compares the stats of every job across formats.

use std::fmt;
use std::io::{Read, Write};
use std::time::Instant;

use shapeshift_formats::registry::FormatKind;
use shapeshift_formats::table::FormatError;
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};

use crate::datasets::Dataset;

mod arrow_native;
mod column_blocks;
mod interface;
mod protobuf_native;
mod skiff_native;
mod yson_native;

/// One of the study's map operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    Bm1,
    Bm2,
    Bm3,
    /// BM4 with the new column last.
    Bm4,
    /// BM4 with the new column in the middle of the schema.
    Bm4Mid,
    Bm5,
    Bm6,
}

/// Which code a job uses to read and write its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobPath {
    /// The common row interface.
    Interface,
    /// The format's own low-level API.
    Native,
}

/// What one job did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JobSummary {
    pub rows_in: u64,
    pub rows_out: u64,
    /// The scenario's statistic: zeros (BM1), bytes (BM2), or a checksum of the fields the
    /// scenario touched (BM3..BM6), so that runs in different formats can be compared.
    pub stat: u64,
    /// Seconds spent in the scenario (reading, logic, writing), without process start-up.
    pub seconds: f64,
}

/// A job's failure: the format's error, or a scenario that does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl From<FormatError> for ScenarioError {
    fn from(error: FormatError) -> ScenarioError {
        ScenarioError::new(error.to_string())
    }
}

impl From<std::io::Error> for ScenarioError {
    fn from(error: std::io::Error) -> ScenarioError {
        ScenarioError::new(format!("I/O error: {error}"))
    }
}

/// The column BM3 increments.
pub const COUNTER_COLUMN: usize = 1;
/// The column BM4 adds.
pub const EXTRA_COLUMN_NAME: &str = "extra";
/// Where BM4-mid inserts it (after the first five columns).
pub const MIDDLE_POSITION: usize = 5;
/// What BM5 appends to every list.
pub const APPENDED_ELEMENT: f64 = 1.0;
/// The column of BM2 whose lengths are summed.
pub const BM2_DATA_COLUMN: usize = 1;

impl Scenario {
    pub const ALL: [Scenario; 7] = [
        Scenario::Bm1,
        Scenario::Bm2,
        Scenario::Bm3,
        Scenario::Bm4,
        Scenario::Bm4Mid,
        Scenario::Bm5,
        Scenario::Bm6,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Bm1 => "BM1",
            Scenario::Bm2 => "BM2",
            Scenario::Bm3 => "BM3",
            Scenario::Bm4 => "BM4",
            Scenario::Bm4Mid => "BM4-mid",
            Scenario::Bm5 => "BM5",
            Scenario::Bm6 => "BM6",
        }
    }

    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// The input table, or `None` for the write-only BM6.
    pub fn input(self) -> Option<Dataset> {
        match self {
            Scenario::Bm1 => Some(Dataset::Bm1),
            Scenario::Bm2 => Some(Dataset::Bm2),
            Scenario::Bm3 | Scenario::Bm4 | Scenario::Bm4Mid => Some(Dataset::Bm3),
            Scenario::Bm5 => Some(Dataset::Bm5),
            Scenario::Bm6 => None,
        }
    }

    /// The schema of the input stream (BM6 reads nothing; its input schema is BM3's so the
    /// stream can still be opened).
    pub fn input_schema(self) -> TableSchema {
        self.input().unwrap_or(Dataset::Bm3).schema()
    }

    /// The output table's schema.
    pub fn output_schema(self) -> TableSchema {
        match self {
            Scenario::Bm1 | Scenario::Bm2 => stats_schema(),
            Scenario::Bm3 | Scenario::Bm6 => Dataset::Bm3.schema(),
            Scenario::Bm4 => with_extra_column(Dataset::Bm3.schema().columns.len()),
            Scenario::Bm4Mid => with_extra_column(MIDDLE_POSITION),
            Scenario::Bm5 => Dataset::Bm5.schema(),
        }
    }

    /// Where BM4 puts its new column.
    pub fn extra_position(self) -> Option<usize> {
        match self {
            Scenario::Bm4 => Some(Dataset::Bm3.schema().columns.len()),
            Scenario::Bm4Mid => Some(MIDDLE_POSITION),
            _ => None,
        }
    }
}

/// BM1's and BM2's output: one row `{rows, total}` per job.
pub fn stats_schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("rows", Type::Primitive(PrimitiveType::Uint64)),
        ColumnSchema::new("total", Type::Primitive(PrimitiveType::Uint64)),
    ])
}

fn with_extra_column(position: usize) -> TableSchema {
    let mut columns = Dataset::Bm3.schema().columns;
    columns.insert(
        position,
        ColumnSchema::new(EXTRA_COLUMN_NAME, Type::Primitive(PrimitiveType::Int64)),
    );
    TableSchema::new(columns)
}

/// BM4's new value for a row whose counter is `counter`.
pub fn extra_value(counter: i64) -> i64 {
    counter.wrapping_mul(2)
}

/// Whether `format` has a fast path of its own, separate from the common interface.
pub fn has_native_path(format: FormatKind) -> bool {
    matches!(
        format,
        FormatKind::Yson | FormatKind::Skiff | FormatKind::Protobuf | FormatKind::Arrow
    )
}

/// The suffix naming a scenario's column-ordered variant (`BM1-columnar`).
pub const COLUMNAR_SUFFIX: &str = "-columnar";

/// Whether `scenario` has a column-ordered variant (BM1, the wide numeric table, only).
pub fn has_columnar_variant(scenario: Scenario) -> bool {
    scenario == Scenario::Bm1
}

/// Whether `format` runs the column-ordered variant on a fast path of its own: only Arrow,
/// whose batches already are columns. Row formats transpose through the interface.
pub fn has_columnar_native_path(format: FormatKind) -> bool {
    format == FormatKind::Arrow
}

/// Runs one job of `scenario`'s column-ordered variant (see [`COLUMNAR_SUFFIX`]): the same
/// input, output and statistic as [`run_job`] for `scenario`, with logic that runs column by
/// column over blocks of rows. Through [`JobPath::Interface`] rows are transposed into blocks
/// of the Arrow writer's batch size; [`JobPath::Native`] is Arrow's batches as they arrive.
///
/// # Errors
/// A scenario without a columnar variant, a format without a columnar fast path on
/// [`JobPath::Native`], malformed input (format and byte offset), or an I/O failure.
pub fn run_columnar_job(
    scenario: Scenario,
    format: FormatKind,
    path: JobPath,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
) -> Result<JobSummary, ScenarioError> {
    if !has_columnar_variant(scenario) {
        return Err(ScenarioError::new(format!(
            "{} has no column-ordered variant (only BM1{COLUMNAR_SUFFIX})",
            scenario.name()
        )));
    }
    let start = Instant::now();
    let mut summary = match path {
        JobPath::Interface => interface::run_columnar(scenario, format, input, output)?,
        // Arrow's batches are column blocks already: the fast path is BM1's own.
        JobPath::Native if has_columnar_native_path(format) => {
            arrow_native::run(scenario, input, output, 0)?
        }
        JobPath::Native => {
            return Err(ScenarioError::new(format!(
                "{}{COLUMNAR_SUFFIX}: {format} has no columnar fast path (a row format \
                 transposes its rows through the interface): use --path interface",
                scenario.name()
            )))
        }
    };
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// Mixes one touched value into a scenario checksum (order-sensitive, same in every path).
#[inline(always)]
pub(crate) fn mix(stat: u64, value: u64) -> u64 {
    (stat ^ value).wrapping_mul(0x100_0000_01b3).rotate_left(17)
}

/// Runs one job: reads `input` (ignored by BM6) in `format`, applies `scenario`, writes the
/// output table to `output` in `format`. `bm6_rows` is the number of rows BM6 writes.
///
/// # Errors
/// A [`ScenarioError`] naming the format and byte offset for malformed input, a schema the
/// format cannot express, an unsupported path, or an I/O failure.
pub fn run_job(
    scenario: Scenario,
    format: FormatKind,
    path: JobPath,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let start = Instant::now();
    let mut summary = match path {
        JobPath::Interface => interface::run(scenario, format, input, output, bm6_rows)?,
        JobPath::Native => match format {
            FormatKind::Yson => yson_native::run(scenario, input, output, bm6_rows)?,
            FormatKind::Skiff => skiff_native::run(scenario, input, output, bm6_rows)?,
            FormatKind::Protobuf => protobuf_native::run(scenario, input, output, bm6_rows)?,
            FormatKind::Arrow => arrow_native::run(scenario, input, output, bm6_rows)?,
            other => {
                return Err(ScenarioError::new(format!(
                    "{other} has no fast path of its own: use --path interface"
                )))
            }
        },
    };
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// BM1's test for a zero.
#[inline(always)]
pub(crate) fn is_zero_value(value: &shapeshift_types::ValueRef<'_>) -> bool {
    use shapeshift_types::ValueRef;
    match value {
        ValueRef::Int64(v) => *v == 0,
        ValueRef::Uint64(v) => *v == 0,
        ValueRef::Double(v) => *v == 0.0,
        _ => false,
    }
}

/// The stats row BM1 and BM2 write.
pub(crate) fn stats_row(rows: u64, total: u64) -> Vec<Value> {
    vec![Value::Uint64(rows), Value::Uint64(total)]
}
