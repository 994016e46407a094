//! Query results written to a file: Parquet, Arrow IPC files, CSV and JSON lines by
//! Arrow's writers; YT table streams in any of our row formats by the registry's sinks
//! (the result's Arrow schema mapped back to a YT table schema); ArrayRecord files of one
//! row per record (`records+FORMAT`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::{csv, ipc, json};
use datafusion::parquet::arrow::ArrowWriter;
use shapeshift_formats::arrow::rows::{batch_to_rows, BatchWriter};
use shapeshift_formats::arrow::table_schema_of;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::table::{RowPosition, RowSink, SharedOutput};
use shapeshift_types::TableSchema;

use crate::{EngineError, TableFormat};

/// Writes `batches` (of `schema`) to `path` in `format` (any but [`TableFormat::Records`]).
///
/// # Errors
/// [`EngineError::Output`] when the file cannot be written, the format cannot hold a
/// column's type (named), or the format is `records`.
pub fn write_results(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    path: &Path,
    format: TableFormat,
) -> Result<(), EngineError> {
    let fail = |message: String| EngineError::Output {
        path: path.display().to_string(),
        message,
    };
    if let TableFormat::RecordRows(kind) = format {
        return write_record_rows(schema, batches, kind, path)
            .map_err(|e| fail(format!("{format}: {e}")));
    }
    let file = File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let text = |e: &dyn std::fmt::Display| fail(format!("{format}: {e}"));
    match format {
        TableFormat::Parquet => {
            let mut writer =
                ArrowWriter::try_new(out, schema.clone(), None).map_err(|e| text(&e))?;
            for batch in batches {
                writer.write(batch).map_err(|e| text(&e))?;
            }
            writer.close().map_err(|e| text(&e))?;
            return Ok(());
        }
        TableFormat::ArrowFile => {
            let mut writer =
                ipc::writer::FileWriter::try_new(&mut out, schema).map_err(|e| text(&e))?;
            for batch in batches {
                writer.write(batch).map_err(|e| text(&e))?;
            }
            writer.finish().map_err(|e| text(&e))?;
        }
        TableFormat::Csv => {
            let mut writer = csv::Writer::new(&mut out);
            for batch in batches {
                writer.write(batch).map_err(|e| text(&e))?;
            }
        }
        TableFormat::JsonLines => {
            let mut writer = json::LineDelimitedWriter::new(&mut out);
            for batch in batches {
                writer.write(batch).map_err(|e| text(&e))?;
            }
            writer.finish().map_err(|e| text(&e))?;
        }
        TableFormat::Rows(kind) => {
            write_rows(schema, batches, kind, Box::new(out)).map_err(|e| text(&e))?;
            return Ok(());
        }
        TableFormat::Records | TableFormat::RecordRows(_) => {
            return Err(fail(
                "results cannot be written as bare ArrayRecord records (records+FORMAT writes \
                 a row per record; write_records writes given records)"
                    .into(),
            ))
        }
    }
    out.flush().map_err(|e| fail(e.to_string()))
}

/// Batches as an ArrayRecord file of one row per record, each a one-row stream of `kind`
/// (default writer options), which a `records+FORMAT` table reads back.
fn write_record_rows(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    kind: FormatKind,
    path: &Path,
) -> Result<(), String> {
    let (table, plain_batches) = plain_table(schema, batches)?;
    let tables = std::slice::from_ref(&table);
    let mut writer = shapeshift_records::Writer::create(path, "").map_err(|e| e.to_string())?;
    let position = RowPosition::default();
    let mut written = 0u64;
    for batch in &plain_batches {
        for row in batch_to_rows(&table, batch).map_err(|e| e.to_string())? {
            let record = SharedOutput::default();
            let mut sink =
                open_sink(kind, tables, Box::new(record.clone())).map_err(|e| e.to_string())?;
            sink.write_owned_row(&position, &row)
                .and_then(|()| sink.finish())
                .map_err(|e| format!("result row {written}: {e}"))?;
            writer.write(&record.take()).map_err(|e| e.to_string())?;
            written += 1;
        }
    }
    writer.close().map_err(|e| e.to_string())
}

/// The YT table schema of results of `schema` (Arrow string and binary views as plain
/// strings) and `batches` in its plain Arrow types.
fn plain_table(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(TableSchema, Vec<RecordBatch>), String> {
    let plain = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_data_type(plain_type(f.data_type())))
            .collect::<Vec<Field>>(),
    ));
    let table = table_schema_of(&plain).map_err(|e| e.to_string())?;
    let batches = batches
        .iter()
        .map(|batch| {
            let columns = batch
                .columns()
                .iter()
                .zip(plain.fields())
                .map(|(column, field)| {
                    if column.data_type() == field.data_type() {
                        Ok(column.clone())
                    } else {
                        cast(column, field.data_type()).map_err(|e| e.to_string())
                    }
                })
                .collect::<Result<Vec<ArrayRef>, String>>()?;
            RecordBatch::try_new(plain.clone(), columns).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((table, batches))
}

/// Batches as a YT table stream of `kind`: the schema maps back to a YT table schema
/// (Arrow string and binary views as plain strings), then the Arrow stream takes whole
/// batches and the other formats rows.
fn write_rows(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    kind: FormatKind,
    out: Box<dyn Write>,
) -> Result<(), String> {
    let (table, batches) = plain_table(schema, batches)?;
    let tables = std::slice::from_ref(&table);
    if kind == FormatKind::Arrow {
        let mut writer = BatchWriter::new(tables, out);
        for batch in &batches {
            writer.write_batch(0, batch).map_err(|e| e.to_string())?;
        }
        return writer.finish().map_err(|e| e.to_string());
    }
    let mut sink = open_sink(kind, tables, out).map_err(|e| e.to_string())?;
    let position = RowPosition::default();
    let mut written = 0u64;
    for batch in &batches {
        for row in batch_to_rows(&table, batch).map_err(|e| e.to_string())? {
            sink.write_owned_row(&position, &row)
                .map_err(|e| format!("result row {written}: {e}"))?;
            written += 1;
        }
    }
    sink.finish().map_err(|e| e.to_string())
}

/// The plain Arrow type of a view type (the YT mapping knows Utf8 and Binary).
fn plain_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        other => other.clone(),
    }
}
