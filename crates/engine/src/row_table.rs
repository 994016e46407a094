//! YT tables in our row formats, and ArrayRecord files, as DataFusion tables: one partition
//! per file, decoded on a blocking thread into record batches of the table's Arrow schema
//! (the formats crate's mapping, `arrow_schema`).
//!
//! Files of the Arrow and Skiff formats are mapped into memory, not read, and the mappings
//! kept across queries (`mapped_files.rs`). Projection: Arrow streams decode only the projected
//! columns of each batch ([`ProjectedReader`]); Skiff rows of flat tables are scanned
//! straight into Arrow arrays of the projected columns, stepping over the others
//! ([`ArrowScan`]); the other row formats decode whole rows and build Arrow arrays of the
//! projected columns only ([`RowBatchBuilder::projected`]).

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, AsArray, BinaryArray, RecordBatch, UInt64Array};
use datafusion::arrow::buffer::Buffer;
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use shapeshift_formats::arrow::rows::{ProjectedReader, RowBatchBuilder};
use shapeshift_formats::arrow::{arrow_schema, DEFAULT_BATCH_ROWS};
use shapeshift_formats::registry::{open_source, FormatKind};
use shapeshift_formats::skiff::ArrowScan;

use crate::mapped_files::MappedFiles;
use shapeshift_types::TableSchema;

/// What the files of a [`FileTable`] hold.
#[derive(Clone, Debug)]
pub(crate) enum FileContent {
    /// Rows of table 0 of a YT table stream in `kind`.
    Rows {
        kind: FormatKind,
        table: TableSchema,
    },
    /// ArrayRecord records.
    Records,
    /// ArrayRecord records of one row each of table `table` in `kind`.
    RecordRows {
        kind: FormatKind,
        table: TableSchema,
    },
}

/// A table over files read by our own readers.
#[derive(Debug)]
pub(crate) struct FileTable {
    files: Vec<PathBuf>,
    content: FileContent,
    schema: SchemaRef,
    mapped: Arc<MappedFiles>,
}

/// The columns of an ArrayRecord table.
pub const RECORD_INDEX_COLUMN: &str = "index";
pub const RECORD_COLUMN: &str = "record";

impl FileTable {
    pub(crate) fn new(files: Vec<PathBuf>, content: FileContent) -> FileTable {
        let schema = match &content {
            FileContent::Rows { table, .. } | FileContent::RecordRows { table, .. } => {
                Arc::new(view_schema(&arrow_schema(table)))
            }
            FileContent::Records => Arc::new(Schema::new(vec![
                Field::new(RECORD_INDEX_COLUMN, DataType::UInt64, false),
                Field::new(RECORD_COLUMN, DataType::Binary, false),
            ])),
        };
        FileTable {
            files,
            content,
            schema,
            mapped: Arc::default(),
        }
    }
}

#[async_trait]
impl TableProvider for FileTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let schema = Arc::new(self.schema.project(&projection)?);
        let partitions: Vec<Arc<dyn PartitionStream>> = self
            .files
            .iter()
            .map(|path| {
                Arc::new(FilePartition {
                    path: path.clone(),
                    content: self.content.clone(),
                    projection: projection.clone(),
                    schema: schema.clone(),
                    mapped: self.mapped.clone(),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            partitions,
            None,
            Vec::new(),
            false,
            limit,
        )?))
    }
}

/// One file of a [`FileTable`], with the columns the query reads.
struct FilePartition {
    path: PathBuf,
    content: FileContent,
    projection: Vec<usize>,
    schema: SchemaRef,
    mapped: Arc<MappedFiles>,
}

impl fmt::Debug for FilePartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FilePartition({})", self.path.display())
    }
}

impl PartitionStream for FilePartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), 2);
        let tx = builder.tx();
        let path = self.path.clone();
        let content = self.content.clone();
        let projection = self.projection.clone();
        let schema = self.schema.clone();
        let mapped = self.mapped.clone();
        builder.spawn_blocking(move || {
            // A closed channel means the query stopped reading (a LIMIT, an error elsewhere).
            let mut send = |batch: RecordBatch| tx.blocking_send(Ok(batch)).is_ok();
            let result = match &content {
                FileContent::Rows {
                    kind: FormatKind::Arrow,
                    table,
                } => mapped
                    .bytes(&path, false)
                    .and_then(|data| read_arrow(data, table, &projection, &schema, &mut send)),
                FileContent::Rows {
                    kind: FormatKind::Skiff,
                    table,
                } => read_skiff(&path, &mapped, table, &projection, &schema, &mut send),
                FileContent::Rows { kind, table } => {
                    read_rows(&path, *kind, table, &projection, &schema, &mut send)
                }
                FileContent::Records => read_records(&path, &projection, &schema, &mut send),
                FileContent::RecordRows { kind, table } => {
                    read_record_rows(&path, *kind, table, &projection, &schema, &mut send)
                }
            };
            result.map_err(|message| {
                DataFusionError::Execution(format!("{}: {message}", path.display()))
            })
        });
        builder.build()
    }
}

fn open(path: &Path) -> Result<BufReader<File>, String> {
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 20, f))
        .map_err(|e| e.to_string())
}

/// Rows of any row format through the common row interface, built into batches of the
/// projected columns.
fn read_rows(
    path: &Path,
    kind: FormatKind,
    table: &TableSchema,
    projection: &[usize],
    schema: &SchemaRef,
    send: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), String> {
    let mut source = open_source(kind, std::slice::from_ref(table), Box::new(open(path)?))
        .map_err(|e| e.to_string())?;
    let mut builder = RowBatchBuilder::projected(table, projection, DEFAULT_BATCH_ROWS)?;
    let mut rows = 0u64;
    // By blocks: formats that scan rows in runs (Skiff's block scan, Arrow's batches) hand a
    // run out at once, which saves a call per row.
    while let Some(block) = source.next_rows().map_err(|e| e.to_string())? {
        if block.first.table_index != 0 {
            return Err(format!(
                "row {rows} belongs to table {}; a query table reads streams of one table",
                block.first.table_index
            ));
        }
        for i in 0..block.rows {
            builder
                .append_row(block.values_of(i))
                .map_err(|e| format!("{kind}: row {rows}: {e}"))?;
            rows += 1;
            if builder.len() >= DEFAULT_BATCH_ROWS
                && !send(conform(&builder.cut().map_err(|e| e.to_string())?, schema)?)
            {
                return Ok(());
            }
        }
    }
    if !builder.is_empty() {
        send(conform(&builder.cut().map_err(|e| e.to_string())?, schema)?);
    }
    Ok(())
}

/// Strings and binaries (top-level columns) as Arrow views, as DataFusion reads Parquet's:
/// a query then has the same types over every source, and groups and compares strings by
/// their inlined prefixes. Field names, nullability and metadata (`yt.type_v3`) are kept.
pub(crate) fn view_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|field| {
            let data_type = match field.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
                DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
                other => other.clone(),
            };
            field.as_ref().clone().with_data_type(data_type)
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `batch`'s columns (found by name) in the types of `schema`: plain strings cast to views
/// (the data buffers are kept), dictionary strings unpacked.
pub(crate) fn conform(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, String> {
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            let column = batch
                .column_by_name(field.name())
                .ok_or_else(|| format!("a batch without column {:?}", field.name()))?;
            if column.data_type() == field.data_type() {
                Ok(column.clone())
            } else {
                to_type(column, field.data_type())
            }
        })
        .collect::<Result<Vec<ArrayRef>, String>>()?;
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| e.to_string())
}

/// `column` cast to `to`. A dictionary becomes views by viewing its few values once and
/// gathering those views by key (arrow's cast makes a view per row).
fn to_type(column: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    let fail = |e: datafusion::arrow::error::ArrowError| e.to_string();
    if let (Some(dictionary), DataType::Utf8View | DataType::BinaryView) =
        (column.as_any_dictionary_opt(), to)
    {
        let values = cast(dictionary.values(), to).map_err(fail)?;
        let keys = cast(dictionary.keys(), &DataType::UInt32).map_err(fail)?;
        let keys = keys.as_primitive::<UInt32Type>();
        return take(&values, keys, None).map_err(fail);
    }
    cast(column, to).map_err(fail)
}

/// Arrow IPC streams batch by batch, only the projected columns decoded (dictionary-encoded
/// strings unpacked to the table's plain type).
fn read_arrow(
    data: Buffer,
    table: &TableSchema,
    projection: &[usize],
    schema: &SchemaRef,
    send: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), String> {
    let mut reader = ProjectedReader::new(std::slice::from_ref(table), data, projection);
    while let Some((table_index, batch)) = reader.next_batch().map_err(|e| e.to_string())? {
        if table_index != 0 {
            return Err(format!(
                "a stream of table {table_index}; a query table reads streams of one table"
            ));
        }
        let batch = conform(&batch, schema)?;
        if !send(batch) {
            return Ok(());
        }
    }
    Ok(())
}

/// Skiff rows: scanned straight into the projected columns when the table is flat
/// ([`ArrowScan`]), through the row interface otherwise.
fn read_skiff(
    path: &Path,
    mapped: &MappedFiles,
    table: &TableSchema,
    projection: &[usize],
    schema: &SchemaRef,
    send: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), String> {
    let arrow = arrow_schema(table);
    let Some(scan) = ArrowScan::new(table, &arrow, projection).map_err(|e| e.to_string())? else {
        return read_rows(path, FormatKind::Skiff, table, projection, schema, send);
    };
    let data = mapped.bytes(path, true)?;
    let (mut offset, mut rows) = (0usize, 0u64);
    while let Some(batch) = scan
        .read_batch(&data, &mut offset, rows, DEFAULT_BATCH_ROWS)
        .map_err(|e| e.to_string())?
    {
        rows += batch.num_rows() as u64;
        if !send(conform(&batch, schema)?) {
            return Ok(());
        }
    }
    Ok(())
}

/// ArrayRecord records of one row each, decoded by the row format's reader into batches of
/// the projected columns.
fn read_record_rows(
    path: &Path,
    kind: FormatKind,
    table: &TableSchema,
    projection: &[usize],
    schema: &SchemaRef,
    send: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), String> {
    let reader = shapeshift_records::Reader::open(path).map_err(|e| e.to_string())?;
    let count = reader.num_records();
    let mut builder = RowBatchBuilder::projected(table, projection, DEFAULT_BATCH_ROWS)?;
    let mut begin = 0u64;
    while begin < count {
        let end = (begin + DEFAULT_BATCH_ROWS as u64).min(count);
        let records = reader.read_range(begin, end).map_err(|e| e.to_string())?;
        for (index, record) in (begin..).zip(records.iter()) {
            let fail = |message: String| format!("record {index}: {kind}: {message}");
            let input = Box::new(std::io::Cursor::new(record.to_vec()));
            let mut source = open_source(kind, std::slice::from_ref(table), input)
                .map_err(|e| fail(e.to_string()))?;
            let mut rows = 0usize;
            while let Some(block) = source.next_rows().map_err(|e| fail(e.to_string()))? {
                for i in 0..block.rows {
                    if rows == 0 {
                        builder.append_row(block.values_of(i)).map_err(&fail)?;
                    }
                    rows += 1;
                }
            }
            if rows != 1 {
                return Err(fail(format!("holds {rows} rows (a record holds one)")));
            }
        }
        if !send(conform(&builder.cut().map_err(|e| e.to_string())?, schema)?) {
            return Ok(());
        }
        begin = end;
    }
    Ok(())
}

/// ArrayRecord records in batches of consecutive records.
fn read_records(
    path: &Path,
    projection: &[usize],
    schema: &SchemaRef,
    send: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), String> {
    let reader = shapeshift_records::Reader::open(path).map_err(|e| e.to_string())?;
    let count = reader.num_records();
    let mut begin = 0u64;
    while begin < count {
        let end = (begin + DEFAULT_BATCH_ROWS as u64).min(count);
        let columns: Vec<ArrayRef> = if projection.contains(&1) {
            let records = reader.read_range(begin, end).map_err(|e| e.to_string())?;
            let values = BinaryArray::from_iter_values(records.iter());
            projection
                .iter()
                .map(|&c| match c {
                    0 => Arc::new(UInt64Array::from_iter_values(begin..end)) as ArrayRef,
                    _ => Arc::new(values.clone()) as ArrayRef,
                })
                .collect()
        } else {
            // Only the index (or nothing: COUNT(*)): the records are not decompressed.
            projection
                .iter()
                .map(|_| Arc::new(UInt64Array::from_iter_values(begin..end)) as ArrayRef)
                .collect()
        };
        let batch = RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &datafusion::arrow::array::RecordBatchOptions::new()
                .with_row_count(Some((end - begin) as usize)),
        )
        .map_err(|e| e.to_string())?;
        if !send(batch) {
            return Ok(());
        }
        begin = end;
    }
    Ok(())
}
