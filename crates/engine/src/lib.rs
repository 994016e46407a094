//! SQL over every format shapeshift reads, on Apache DataFusion.
//!
//! An [`Engine`] holds named tables ([`TableSource`]: a path or glob, a [`TableFormat`],
//! an optional YT table schema) and runs SQL over them:
//! - Parquet, Arrow IPC files, CSV and JSON lines through DataFusion's own readers;
//! - YT table streams in every row format of `shapeshift_formats::registry` through our
//!   readers, straight into Arrow record batches (`row_table`);
//! - ArrayRecord files as a table of `index` and `record` (binary).
//!
//! Beside DataFusion's functions, `spark_hash(col, ...)` is Spark's SQL `hash` (Murmur3, seed
//! 42), so that grouping by it agrees with Spark.
//!
//! Results come back as Arrow record batches; [`write_results`] writes them to a file in
//! any of those formats. The API is blocking: the engine owns its Tokio runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::datasource::MemTable;
use datafusion::execution::context::SessionContext;
use datafusion::execution::options::ArrowReadOptions;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionConfig};
use shapeshift_formats::registry::FormatKind;
use shapeshift_types::TableSchema;

mod few_groups;
mod mapped_files;
mod output;
mod row_table;
mod spark_hash;
mod table_format;

/// The DataFusion this engine is built on (its `arrow` is the workspace's).
pub use datafusion;
pub use output::write_results;
pub use row_table::{RECORD_COLUMN, RECORD_INDEX_COLUMN};
pub use spark_hash::spark_hash_udf;
pub use table_format::TableFormat;

use row_table::{FileContent, FileTable};

/// What went wrong, with the table, file or query it concerns.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A table that cannot be registered: no such files, an unknown format, a schema
    /// missing or not matching.
    #[error("table {table}: {message}")]
    Table { table: String, message: String },
    /// The query does not parse or plan, or failed while running (a file that does not
    /// decode names the file, format, row and column).
    #[error("{0}")]
    Query(String),
    /// Writing the results.
    #[error("writing {path}: {message}")]
    Output { path: String, message: String },
}

/// A table to register: its name in SQL, where its files are, and how to read them.
#[derive(Clone, Debug)]
pub struct TableSource {
    pub name: String,
    /// A file path or a glob (`data/*.skiff`).
    pub location: String,
    /// The format; detected from the first file's name or bytes when `None`.
    pub format: Option<TableFormat>,
    /// The YT table schema of row formats that do not describe themselves (all but Arrow
    /// streams and Avro, whose schema is read from the first file when this is `None`).
    pub schema: Option<TableSchema>,
}

/// Runs SQL over registered tables.
pub struct Engine {
    context: SessionContext,
    runtime: tokio::runtime::Runtime,
}

impl Engine {
    /// An engine with one worker thread per core.
    ///
    /// # Errors
    /// When the runtime's threads cannot be started.
    pub fn new() -> Result<Engine, EngineError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| EngineError::Query(format!("starting the query runtime: {e}")))?;
        // DataFusion's defaults: Parquet strings read as views; our tables give views too.
        let config = SessionConfig::new();
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_physical_optimizer_rule(Arc::new(few_groups::FewGroupsCount))
            .build();
        let context = SessionContext::new_with_state(state);
        context.register_udf(spark_hash_udf());
        Ok(Engine { context, runtime })
    }

    /// Registers `source` under its name.
    ///
    /// # Errors
    /// [`EngineError::Table`] when no file matches, the format is not told, a row format
    /// has no schema, or DataFusion cannot read the files' schema.
    pub fn register(&self, source: &TableSource) -> Result<(), EngineError> {
        let fail = |message: String| EngineError::Table {
            table: source.name.clone(),
            message,
        };
        let files = expand(&source.location).map_err(fail)?;
        let format = match source.format {
            Some(format) => format,
            None => TableFormat::detect(&files[0], source.schema.is_some()).map_err(fail)?,
        };
        let name = source.name.as_str();
        let location = source.location.as_str();
        let context = &self.context;
        let registered = match format {
            TableFormat::Parquet => self.runtime.block_on(context.register_parquet(
                name,
                location,
                ParquetReadOptions::default().file_extension(""),
            )),
            TableFormat::ArrowFile => self.runtime.block_on(context.register_arrow(
                name,
                location,
                ArrowReadOptions {
                    file_extension: "",
                    ..ArrowReadOptions::default()
                },
            )),
            TableFormat::Csv => self.runtime.block_on(context.register_csv(
                name,
                location,
                CsvReadOptions::new().file_extension(""),
            )),
            TableFormat::JsonLines => self.runtime.block_on(context.register_json(
                name,
                location,
                JsonReadOptions::default().file_extension(""),
            )),
            TableFormat::Rows(kind) => {
                let table = match &source.schema {
                    Some(table) => table.clone(),
                    None => schema_of_file(kind, &files[0]).map_err(fail)?,
                };
                let provider = FileTable::new(files, FileContent::Rows { kind, table });
                context.register_table(name, Arc::new(provider)).map(|_| ())
            }
            TableFormat::Records => {
                let provider = FileTable::new(files, FileContent::Records);
                context.register_table(name, Arc::new(provider)).map(|_| ())
            }
            TableFormat::RecordRows(kind) => {
                let table = source.schema.clone().ok_or_else(|| {
                    fail(format!(
                        "{format} tables need a YT schema for their records' rows"
                    ))
                })?;
                let provider = FileTable::new(files, FileContent::RecordRows { kind, table });
                context.register_table(name, Arc::new(provider)).map(|_| ())
            }
        };
        registered.map_err(|e| fail(format!("{format}: {e}")))
    }

    /// Registers record batches already in memory (one partition) under `name`.
    ///
    /// # Errors
    /// When a batch's schema differs from `schema`.
    pub fn register_batches(
        &self,
        name: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<(), EngineError> {
        let fail = |e: datafusion::error::DataFusionError| EngineError::Table {
            table: name.to_owned(),
            message: e.to_string(),
        };
        // Strings as views, as every other table has them.
        let viewed = Arc::new(row_table::view_schema(&schema));
        let batches = batches
            .iter()
            .map(|batch| row_table::conform(batch, &viewed))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|message| EngineError::Table {
                table: name.to_owned(),
                message,
            })?;
        let table = MemTable::try_new(viewed, vec![batches]).map_err(fail)?;
        self.context
            .register_table(name, Arc::new(table))
            .map(|_| ())
            .map_err(fail)
    }

    /// Runs `sql` and collects its result.
    ///
    /// # Errors
    /// [`EngineError::Query`] with DataFusion's message (parse, plan or execution) for
    /// bad SQL, unknown tables or columns, and files that fail to decode.
    pub fn query(&self, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), EngineError> {
        let fail = |e: datafusion::error::DataFusionError| EngineError::Query(e.to_string());
        self.runtime.block_on(async {
            let frame = self.context.sql(sql).await.map_err(fail)?;
            let schema: SchemaRef = Arc::new(frame.schema().as_arrow().clone());
            let batches = frame.collect().await.map_err(fail)?;
            Ok::<_, EngineError>((schema, batches))
        })
    }
}

/// The files of a path or glob, sorted; an error when none exists.
fn expand(location: &str) -> Result<Vec<PathBuf>, String> {
    let is_glob = location.contains(['*', '?', '[']);
    if !is_glob {
        let path = PathBuf::from(location);
        return match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(vec![path]),
            Ok(_) => Err(format!(
                "{location}: not a file (use a glob for a directory's files)"
            )),
            Err(e) => Err(format!("{location}: {e}")),
        };
    }
    let mut files: Vec<PathBuf> = glob::glob(location)
        .map_err(|e| format!("{location}: bad glob: {e}"))?
        .filter_map(|entry| entry.ok())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{location}: no file matches"));
    }
    Ok(files)
}

/// The table schema a self-describing file (Arrow stream, Avro) carries.
fn schema_of_file(kind: FormatKind, path: &Path) -> Result<TableSchema, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    match kind {
        FormatKind::Arrow => {
            let file = std::fs::File::open(path).map_err(|e| at(&e))?;
            let reader = datafusion::arrow::ipc::reader::StreamReader::try_new(file, None)
                .map_err(|e| at(&e))?;
            shapeshift_formats::arrow::table_schema_of(&reader.schema()).map_err(|e| at(&e))
        }
        FormatKind::Avro => {
            let bytes = std::fs::read(path).map_err(|e| at(&e))?;
            let tables = shapeshift_formats::avro::container_tables(&bytes).map_err(|e| at(&e))?;
            tables
                .into_iter()
                .find(|(index, _, _)| *index == 0)
                .map(|(_, table, _)| table)
                .ok_or_else(|| at(&"the file holds no schema of table 0"))
        }
        other => Err(format!(
            "{other} does not describe its rows: give the table a YT schema file"
        )),
    }
}
