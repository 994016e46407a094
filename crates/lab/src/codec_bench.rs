//! Native throughput of the YSON and Skiff codecs on the study's tables.
//!
//! Each measurement runs one operation over a whole table held in memory: *write* turns rows
//! (owned [`Value`]s) into a byte stream, *read* walks the stream and touches every field's
//! value (the map logic of BM1/BM2: read every field). Both use each format's fastest public
//! API: YSON's [`PullParser`] and event [`Writer`], Skiff's compiled [`Codec`] and zero-copy
//! [`RowView`](shapeshift_formats::skiff::RowView). Samples are raw seconds; the Python lab
//! summarizes them.

use serde::Serialize;
use shapeshift_formats::skiff::{Codec, MappingOptions, SystemFields};
use shapeshift_formats::yson::{Event, PullParser, Writer, YsonFormat, YsonType};
use shapeshift_types::{value_to_node, StructForm, TableSchema, Value, ValueRef};

use crate::datasets::{Cardinality, Dataset};
use crate::measure::{measure, Touch};

/// One measured operation.
#[derive(Debug, Clone, Serialize)]
pub struct CodecMeasurement {
    pub dataset: &'static str,
    pub format: &'static str,
    pub operation: &'static str,
    pub rows: usize,
    /// Serialized size of the table in this format.
    pub bytes: usize,
    pub samples_s: Vec<f64>,
}

/// How many rows each table gets at scale 1: about 20-40 MB of serialized rows each.
pub fn default_rows(dataset: Dataset) -> usize {
    match dataset {
        Dataset::Bm1 => 4_000,
        Dataset::Bm2 => 200_000,
        Dataset::Bm3 => 200_000,
        Dataset::Bm5 => 150_000,
    }
}

/// Formats this benchmark measures.
pub const FORMATS: [&str; 3] = ["yson-binary", "yson-text", "skiff"];

/// Measures every format on every dataset in `datasets`.
///
/// # Errors
/// A message when a codec rejects the generated rows (a bug: the rows match their schema).
pub fn run(
    datasets: &[Dataset],
    scale: f64,
    repeat: usize,
    mut progress: impl FnMut(&str),
) -> Result<Vec<CodecMeasurement>, String> {
    let mut out = Vec::new();
    for &dataset in datasets {
        let rows_count = ((default_rows(dataset) as f64 * scale) as usize).max(10);
        progress(&format!("{}: generating {rows_count} rows", dataset.name()));
        let schema = dataset.schema();
        let rows = dataset.rows(rows_count, 42, Cardinality::High);
        for format in FORMATS {
            progress(&format!("{}: {format}", dataset.name()));
            let (write, encoded) = match format {
                "skiff" => {
                    let codec = Codec::for_table_schemas(
                        std::slice::from_ref(&schema),
                        &MappingOptions::default(),
                    )
                    .map_err(|e| e.to_string())?;
                    let encoded = skiff_write(&codec, &rows)?;
                    let write = measure(repeat, || skiff_write(&codec, &rows).map(|b| b.len()))?;
                    let read = measure(repeat, || skiff_read(&codec, &encoded))?;
                    out.push(measurement(
                        dataset, format, "read", rows_count, &encoded, read,
                    ));
                    (write, encoded)
                }
                _ => {
                    let yson_format = if format == "yson-text" {
                        YsonFormat::Text
                    } else {
                        YsonFormat::Binary
                    };
                    let encoded = yson_write(&schema, &rows, yson_format)?;
                    let write = measure(repeat, || {
                        yson_write(&schema, &rows, yson_format).map(|b| b.len())
                    })?;
                    let read = measure(repeat, || yson_read(&encoded))?;
                    out.push(measurement(
                        dataset, format, "read", rows_count, &encoded, read,
                    ));
                    (write, encoded)
                }
            };
            out.push(measurement(
                dataset, format, "write", rows_count, &encoded, write,
            ));
        }
    }
    Ok(out)
}

fn measurement(
    dataset: Dataset,
    format: &'static str,
    operation: &'static str,
    rows: usize,
    encoded: &[u8],
    samples_s: Vec<f64>,
) -> CodecMeasurement {
    CodecMeasurement {
        dataset: dataset.name(),
        format,
        operation,
        rows,
        bytes: encoded.len(),
        samples_s,
    }
}

fn skiff_write(codec: &Codec, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let system = SystemFields::default();
    for row in rows {
        codec
            .encode_row(0, row, &system, &mut out)
            .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn skiff_read(codec: &Codec, bytes: &[u8]) -> Result<u64, String> {
    let mut reader = codec.reader(bytes);
    let mut touch = Touch::default();
    let fixed = codec.table(0).and_then(|t| t.fixed_row_size()).is_some();
    while let Some(row) = reader.next_row().map_err(|e| e.to_string())? {
        if fixed {
            row.for_each_value(|_, value| touch.value(value));
        } else {
            for field in row.fields() {
                touch.field(field);
            }
        }
    }
    Ok(touch.total())
}

/// YSON's fastest write: the event writer, scalars straight, composites through nodes.
pub(crate) fn yson_write(
    schema: &TableSchema,
    rows: &[Vec<Value>],
    format: YsonFormat,
) -> Result<Vec<u8>, String> {
    let mut writer = Writer::new(Vec::new(), format, YsonType::ListFragment);
    let io = |e: std::io::Error| e.to_string();
    for row in rows {
        writer.begin_map().map_err(io)?;
        for (value, column) in row.iter().zip(&schema.columns) {
            writer.key(column.name.as_bytes()).map_err(io)?;
            match value {
                Value::Null => writer.entity(),
                Value::Bool(b) => writer.bool(*b),
                Value::Int64(v) => writer.int64(*v),
                Value::Uint64(v) => writer.uint64(*v),
                Value::Double(v) => writer.double(*v),
                Value::String(s) => writer.string(s),
                composite => {
                    let node = value_to_node(composite, &column.ty, StructForm::Named)
                        .map_err(|e| e.to_string())?;
                    writer.write_node(&node)
                }
            }
            .map_err(io)?;
        }
        writer.end_map().map_err(io)?;
    }
    writer.finish().map_err(io)
}

fn yson_read(bytes: &[u8]) -> Result<u64, String> {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut touch = Touch::default();
    while let Some(event) = parser.next_event().map_err(|e| e.to_string())? {
        match event {
            Event::Int64(v) => touch.value(ValueRef::Int64(v)),
            Event::Uint64(v) => touch.value(ValueRef::Uint64(v)),
            Event::Double(v) => touch.value(ValueRef::Double(v)),
            Event::Bool(v) => touch.value(ValueRef::Bool(v)),
            Event::String(s) => touch.value(ValueRef::String(s)),
            _ => {}
        }
    }
    Ok(touch.total())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_reads_back_what_it_wrote() {
        let datasets = [Dataset::Bm2, Dataset::Bm5];
        let results = run(&datasets, 0.001, 1, |_| {}).unwrap();
        assert_eq!(results.len(), datasets.len() * FORMATS.len() * 2);
        for r in &results {
            assert!(r.bytes > 0 && r.samples_s.len() == 1, "{r:?}");
        }
    }

    #[test]
    fn yson_and_skiff_reads_touch_the_same_values() {
        // The same rows read through both formats give the same checksum of scalars, which
        // shows both readers visit every field (keys are not touched: they are events).
        let schema = Dataset::Bm1.schema();
        let rows = Dataset::Bm1.rows(20, 9, Cardinality::High);
        let codec =
            Codec::for_table_schemas(std::slice::from_ref(&schema), &MappingOptions::default())
                .unwrap();
        let skiff = skiff_read(&codec, &skiff_write(&codec, &rows).unwrap()).unwrap();
        let yson = yson_read(&yson_write(&schema, &rows, YsonFormat::Binary).unwrap()).unwrap();
        assert_eq!(skiff, yson);
    }
}
