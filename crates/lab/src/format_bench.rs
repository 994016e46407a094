//! Every row format through the common interface, on the study's tables: serialize and
//! deserialize throughput (rows/s, MB/s), serialized and zstd-compressed size, and what the
//! interface costs against the format's own API doing the same work.
//!
//! The work: *write* turns a table of owned rows ([`Value`]s) into the format's bytes in
//! memory; *read* turns the bytes back into typed rows and touches every column value (a
//! checksum, so nothing can be skipped). Through the interface that is
//! [`RowSink::write_owned_row`] and [`RowSource::next_rows`] (blocks of borrowed [`ValueRef`] rows);
//! through the own APIs it is:
//!
//! | format            | own write                           | own read                                   |
//! |-------------------|-------------------------------------|--------------------------------------------|
//! | yson, yson-text   | event `Writer` (no type checks)     | `PullParser` events over the slice (no type checks) |
//! | skiff             | `Codec::encode_row`                 | `Codec::stream_reader` `RowView` fields, composites walked in place |
//! | json              | `encode_row`                        | `RowReader::next_row` owned values (its lowest public reader) |
//! | msgpack, cbor     | `encode_row`                        | `ItemReader` items (no schema, no type checks) |
//! | others            | not measured (interface only)       |                                            |
//!
//! Each own API is the format's fastest own path for the work, not a strawman: the readers
//! touch every column value exactly as the interface's rows are touched (scalars and strings
//! summed, a composite value counted once) and walk every scalar inside composite values
//! (the interface decodes those too, into binary YSON), so both sides must produce the same
//! checksum. Where the own path skips work the interface promises (type checks, YSON
//! re-spelling of composites), that work is the interface's overhead.
//!
//! The overhead is `(interface / own - 1) * 100` of the median times; negative means the
//! interface did the work faster. Samples are raw seconds after one warm-up run of each;
//! interface and own API runs alternate, so load from other processes weighs on both alike.
//! Every encoding is checked to read back to the same row count (and the own API to the same
//! checksum) before anything is timed.

use shapeshift_formats::table::SharedOutput;
use std::io::Cursor;
use std::rc::Rc;

use serde::Serialize;
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::skiff::{Codec, FieldRef, MappingOptions, SystemFields};
use shapeshift_formats::table::{FormatError, RowPosition, RowSink, RowSource};
use shapeshift_formats::thrift::{self, Protocol};
use shapeshift_formats::yson::{Event, PullParser, YsonFormat, YsonType};
use shapeshift_formats::{cbor, json, msgpack};
use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::codec_bench::{default_rows, yson_write};
use crate::datasets::{Cardinality, Dataset};
use crate::measure::{measure, measure_pair, Touch};

/// One format on one table.
#[derive(Debug, Clone, Serialize)]
pub struct FormatMeasurement {
    pub dataset: &'static str,
    pub format: &'static str,
    pub rows: usize,
    /// Serialized size.
    pub bytes: usize,
    /// Serialized size after zstd level 3.
    pub zstd_bytes: usize,
    pub write_rows_per_s: f64,
    pub write_mb_per_s: f64,
    pub read_rows_per_s: f64,
    pub read_mb_per_s: f64,
    /// Interface against own API, median times; `None` where no own API is measured.
    pub write_overhead_pct: Option<f64>,
    pub read_overhead_pct: Option<f64>,
    pub write_samples_s: Vec<f64>,
    pub read_samples_s: Vec<f64>,
    pub own_write_samples_s: Option<Vec<f64>>,
    pub own_read_samples_s: Option<Vec<f64>>,
}

/// The formats measured by default: every one the interface opens.
pub fn default_formats() -> Vec<FormatKind> {
    FormatKind::ALL.to_vec()
}

/// Measures `formats` on `datasets`. A format the interface cannot open for a table is
/// skipped with a progress message.
///
/// # Errors
/// A message when a format fails on the generated rows (a bug: they match their schema) or
/// reads back a different row count.
pub fn run(
    datasets: &[Dataset],
    formats: &[FormatKind],
    scale: f64,
    repeat: usize,
    mut progress: impl FnMut(&str),
) -> Result<Vec<FormatMeasurement>, String> {
    let repeat = repeat.max(1);
    let mut out = Vec::new();
    for &dataset in datasets {
        let rows_count = ((default_rows(dataset) as f64 * scale) as usize).max(10);
        progress(&format!("{}: generating {rows_count} rows", dataset.name()));
        let schema = dataset.schema();
        let rows = dataset.rows(rows_count, 42, Cardinality::High);
        for &kind in formats {
            let encoded = match interface_write(kind, &schema, &rows) {
                Ok(bytes) => bytes,
                Err(e) if e.contains("not available") => {
                    progress(&format!("{}: {kind}: skipped ({e})", dataset.name()));
                    continue;
                }
                Err(e) => return Err(format!("{}: {kind}: {e}", dataset.name())),
            };
            progress(&format!(
                "{}: {kind} ({} bytes)",
                dataset.name(),
                encoded.len()
            ));
            let encoded: Rc<[u8]> = encoded.into();
            let read_back = interface_read(kind, &schema, &encoded)?;
            if read_back.0 != rows_count {
                return Err(format!(
                    "{}: {kind} read back {} of {rows_count} rows",
                    dataset.name(),
                    read_back.0
                ));
            }
            let own = own_api(kind, &schema);
            let (write, read, own_write, own_read) = match own {
                Some(own) => {
                    let own_bytes = own.write(&rows)?;
                    let own_rows = own.read(&own_bytes)?;
                    if own_rows.0 != rows_count || own_rows.1 != read_back.1 {
                        return Err(format!(
                            "{}: {kind}: the own API read {} rows (checksum {}), the interface {} ({})",
                            dataset.name(),
                            own_rows.0,
                            own_rows.1,
                            read_back.0,
                            read_back.1
                        ));
                    }
                    // Interface and own API alternate run by run, so a change of load on a
                    // shared machine weighs on both alike.
                    let (write, own_write) = measure_pair(
                        repeat,
                        || interface_write(kind, &schema, &rows).map(|b| b.len()),
                        || own.write(&rows).map(|b| b.len()),
                    )?;
                    let (read, own_read) = measure_pair(
                        repeat,
                        || interface_read(kind, &schema, &encoded),
                        || own.read(&own_bytes),
                    )?;
                    (write, read, Some(own_write), Some(own_read))
                }
                None => (
                    measure(repeat, || {
                        interface_write(kind, &schema, &rows).map(|b| b.len())
                    })?,
                    measure(repeat, || interface_read(kind, &schema, &encoded))?,
                    None,
                    None,
                ),
            };
            let zstd_bytes = zstd::bulk::compress(&encoded, 3)
                .map_err(|e| format!("zstd: {e}"))?
                .len();
            let (write_s, read_s) = (median(&write), median(&read));
            let mb = encoded.len() as f64 / 1e6;
            out.push(FormatMeasurement {
                dataset: dataset.name(),
                format: kind.name(),
                rows: rows_count,
                bytes: encoded.len(),
                zstd_bytes,
                write_rows_per_s: rows_count as f64 / write_s,
                write_mb_per_s: mb / write_s,
                read_rows_per_s: rows_count as f64 / read_s,
                read_mb_per_s: mb / read_s,
                write_overhead_pct: own_write.as_ref().map(|own| overhead(write_s, median(own))),
                read_overhead_pct: own_read.as_ref().map(|own| overhead(read_s, median(own))),
                write_samples_s: write,
                read_samples_s: read,
                own_write_samples_s: own_write,
                own_read_samples_s: own_read,
            });
        }
    }
    Ok(out)
}

fn overhead(interface: f64, own: f64) -> f64 {
    (interface / own - 1.0) * 100.0
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn interface_write(
    kind: FormatKind,
    schema: &TableSchema,
    rows: &[Vec<Value>],
) -> Result<Vec<u8>, String> {
    let buffer = SharedOutput::default();
    let mut sink: Box<dyn RowSink> =
        open_sink(kind, std::slice::from_ref(schema), Box::new(buffer.clone()))
            .map_err(|e| e.to_string())?;
    let position = RowPosition::default();
    for row in rows {
        sink.write_owned_row(&position, row)
            .map_err(|e| e.to_string())?;
    }
    sink.finish().map_err(|e| e.to_string())?;
    drop(sink);
    let bytes = buffer.take();
    Ok(bytes)
}

/// Rows read and the checksum of their values.
fn interface_read(
    kind: FormatKind,
    schema: &TableSchema,
    bytes: &Rc<[u8]>,
) -> Result<(usize, u64), String> {
    let mut source: Box<dyn RowSource> = open_source(
        kind,
        std::slice::from_ref(schema),
        Box::new(Cursor::new(bytes.clone())),
    )
    .map_err(|e| e.to_string())?;
    let mut touch = Touch::default();
    let mut rows = 0;
    while let Some(block) = source.next_rows().map_err(|e| e.to_string())? {
        for value in block.values {
            touch.value(*value);
        }
        rows += block.rows;
    }
    Ok((rows, touch.total()))
}

/// Reads every row through `next_row` (an own-API reader of owned values), touching each
/// value; returns the number of rows.
fn touch_owned_rows(
    mut next_row: impl FnMut(&mut Vec<Value>) -> Result<Option<RowPosition>, FormatError>,
    values: &mut Vec<Value>,
    touch: &mut Touch,
) -> Result<usize, String> {
    let mut rows = 0;
    while next_row(values).map_err(|e| e.to_string())?.is_some() {
        values.iter().for_each(|v| touch.owned(v));
        rows += 1;
    }
    Ok(rows)
}

/// A format's own API for the same work.
enum OwnApi<'s> {
    Yson(&'s TableSchema, YsonFormat),
    /// The codec is compiled inside each run, as the interface compiles it on opening.
    Skiff(&'s TableSchema),
    Json(&'s TableSchema),
    Msgpack(&'s TableSchema),
    Cbor(&'s TableSchema),
    /// prost directly (see [`crate::prost_baseline`] for what is and is not timed).
    Protobuf(crate::peer_baselines::protobuf::ProstBaseline),
    ProtobufDynamic(crate::peer_baselines::protobuf::ReflectBaseline),
    /// arrow-rs used directly (see [`crate::peer_baselines`]).
    Arrow(&'s TableSchema),
    /// apache-avro used directly (see [`crate::peer_baselines`]).
    Avro(&'s TableSchema),
    /// Our Thrift codec's row structs, each after a u32 LE length (the framing's rows
    /// without its control records).
    Thrift(thrift::RowCodec),
}

fn own_api(kind: FormatKind, schema: &TableSchema) -> Option<OwnApi<'_>> {
    Some(match kind {
        FormatKind::Yson => OwnApi::Yson(schema, YsonFormat::Binary),
        FormatKind::YsonText => OwnApi::Yson(schema, YsonFormat::Text),
        FormatKind::Skiff => OwnApi::Skiff(schema),
        FormatKind::Json => OwnApi::Json(schema),
        FormatKind::Msgpack => OwnApi::Msgpack(schema),
        FormatKind::Cbor => OwnApi::Cbor(schema),
        FormatKind::Protobuf => OwnApi::Protobuf(
            crate::peer_baselines::protobuf::ProstBaseline::for_schema(schema)?,
        ),
        FormatKind::ProtobufDynamic => OwnApi::ProtobufDynamic(
            crate::peer_baselines::protobuf::ReflectBaseline::for_schema(schema)?,
        ),
        FormatKind::Arrow if crate::peer_baselines::arrow_supported(schema) => {
            OwnApi::Arrow(schema)
        }
        FormatKind::Avro => OwnApi::Avro(schema),
        FormatKind::Thrift => OwnApi::Thrift(thrift::RowCodec::new(schema, Protocol::Binary).ok()?),
        FormatKind::ThriftCompact => {
            OwnApi::Thrift(thrift::RowCodec::new(schema, Protocol::Compact).ok()?)
        }
        _ => return None,
    })
}

impl OwnApi<'_> {
    fn write(&self, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        match self {
            OwnApi::Yson(schema, format) => return yson_write(schema, rows, *format),
            OwnApi::Protobuf(own) => return own.write(rows),
            OwnApi::ProtobufDynamic(own) => return own.write(rows),
            OwnApi::Skiff(schema) => {
                let codec = skiff_codec(schema)?;
                let system = SystemFields::default();
                for row in rows {
                    codec
                        .encode_row(0, row, &system, &mut out)
                        .map_err(|e| e.to_string())?;
                }
            }
            OwnApi::Json(schema) => {
                for row in rows {
                    json::encode_row(schema, row, &mut out).map_err(|e| e.to_string())?;
                }
            }
            OwnApi::Msgpack(schema) => {
                for row in rows {
                    msgpack::encode_row(schema, row, &mut out).map_err(|e| e.to_string())?;
                }
            }
            OwnApi::Cbor(schema) => {
                for row in rows {
                    cbor::encode_row(schema, row, &mut out).map_err(|e| e.to_string())?;
                }
            }
            OwnApi::Arrow(schema) => return crate::peer_baselines::arrow_write(schema, rows),
            OwnApi::Avro(schema) => return crate::peer_baselines::avro_write(schema, rows),
            OwnApi::Thrift(codec) => {
                for row in rows {
                    let at = out.len();
                    out.extend_from_slice(&[0; 4]);
                    codec.encode(row, &mut out)?;
                    let len = u32::try_from(out.len() - at - 4).map_err(|e| e.to_string())?;
                    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    fn read(&self, bytes: &[u8]) -> Result<(usize, u64), String> {
        let mut touch = Touch::default();
        let mut rows = 0;
        let mut values = Vec::new();
        match self {
            OwnApi::Yson(..) => rows = yson_events(bytes, &mut touch)?,
            OwnApi::Protobuf(own) => return own.read(bytes),
            OwnApi::ProtobufDynamic(own) => return own.read(bytes),
            OwnApi::Skiff(schema) => {
                let codec = skiff_codec(schema)?;
                let mut reader = codec.stream_reader(bytes);
                let mut inner = Touch::default();
                while let Some(row) = reader.next_row().map_err(|e| e.to_string())? {
                    for field in row.fields() {
                        match field {
                            FieldRef::Value(value) => touch.value(value),
                            // An absent optional: the row's null.
                            FieldRef::Lazy(lazy) if matches!(lazy.variant(), Some((0, _))) => {}
                            FieldRef::Lazy(_) => {
                                touch.value(ValueRef::Composite(&[]));
                                inner.field(field);
                            }
                        }
                    }
                    rows += 1;
                }
                std::hint::black_box(inner.total());
            }
            OwnApi::Json(schema) => {
                let mut reader = json::RowReader::new(std::slice::from_ref(*schema), bytes);
                rows += touch_owned_rows(|v| reader.next_row(v), &mut values, &mut touch)?;
            }
            OwnApi::Msgpack(_) => {
                let mut reader = msgpack::ItemReader::new(bytes);
                rows = tree_items(|| reader.next_item(), &mut touch)?;
            }
            OwnApi::Cbor(_) => {
                let mut reader = cbor::ItemReader::new(bytes);
                rows = tree_items(|| reader.next_item(), &mut touch)?;
            }
            OwnApi::Arrow(_) => return crate::peer_baselines::arrow_read(bytes),
            OwnApi::Avro(_) => return crate::peer_baselines::avro_read(bytes),
            OwnApi::Thrift(codec) => {
                let mut rest = bytes;
                while let Some((head, tail)) = rest.split_first_chunk::<4>() {
                    let len = u32::from_le_bytes(*head) as usize;
                    let message = tail.get(..len).ok_or("a row struct cut short")?;
                    let values = codec.decode(message).map_err(|e| e.message)?;
                    values.iter().for_each(|v| touch.owned(v));
                    rows += 1;
                    rest = &tail[len..];
                }
            }
        }
        Ok((rows, touch.total()))
    }
}

/// YSON's own read: the pull parser's events over the slice. A row's column values (depth 1)
/// are touched as the interface's rows are; scalars inside composite values are touched
/// into a second checksum (the walk is the decoding work).
fn yson_events(bytes: &[u8], touch: &mut Touch) -> Result<usize, String> {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut inner = Touch::default();
    let mut rows = 0;
    // Open lists, maps and attributes, after the event.
    let mut depth = 0usize;
    while let Some(event) = parser.next_event().map_err(|e| e.to_string())? {
        match event {
            Event::BeginList | Event::BeginMap | Event::BeginAttributes => {
                depth += 1;
                if depth == 1 {
                    rows += usize::from(event == Event::BeginMap);
                } else if depth == 2 {
                    touch.value(ValueRef::Composite(&[]));
                }
            }
            Event::EndList | Event::EndMap | Event::EndAttributes => depth -= 1,
            Event::Int64(v) => pick(touch, &mut inner, depth).value(ValueRef::Int64(v)),
            Event::Uint64(v) => pick(touch, &mut inner, depth).value(ValueRef::Uint64(v)),
            Event::Double(v) => pick(touch, &mut inner, depth).value(ValueRef::Double(v)),
            Event::Bool(v) => pick(touch, &mut inner, depth).value(ValueRef::Bool(v)),
            Event::String(v) => pick(touch, &mut inner, depth).value(ValueRef::String(v)),
            _ => {}
        }
    }
    std::hint::black_box(inner.total());
    Ok(rows)
}

/// The row's checksum for a column value (depth 1), the inner one below.
#[inline(always)]
fn pick<'t>(row: &'t mut Touch, inner: &'t mut Touch, depth: usize) -> &'t mut Touch {
    if depth == 1 {
        row
    } else {
        inner
    }
}

/// MessagePack's and CBOR's own read: items one by one. A top-level array is a row whose
/// items are its column values (touched as the interface's rows are), a top-level map a
/// control record; items inside composite values are walked into a second checksum.
fn tree_items<'a>(
    mut next: impl FnMut() -> Result<Option<msgpack::Item<'a>>, shapeshift_formats::table::FormatError>,
    touch: &mut Touch,
) -> Result<usize, String> {
    fn walk<'a>(
        item: msgpack::Item<'a>,
        next: &mut impl FnMut() -> Result<
            Option<msgpack::Item<'a>>,
            shapeshift_formats::table::FormatError,
        >,
        touch: &mut Touch,
    ) -> Result<(), String> {
        use msgpack::Item;
        let children = match item {
            Item::Nil => return Ok(()),
            Item::Bool(v) => return Ok(touch.value(ValueRef::Bool(v))),
            Item::Int(v) => return Ok(touch.value(ValueRef::Int64(v))),
            Item::Uint(v) => return Ok(touch.value(ValueRef::Uint64(v))),
            Item::Double(v) => return Ok(touch.value(ValueRef::Double(v))),
            Item::Bytes(v) | Item::Text(v) => return Ok(touch.value(ValueRef::String(v))),
            Item::Yson(_) => return Ok(touch.value(ValueRef::Any(&[]))),
            Item::Array(n) => n,
            Item::Map(n) => n.saturating_mul(2),
        };
        for _ in 0..children {
            let child = next().map_err(|e| e.to_string())?.ok_or("truncated")?;
            walk(child, next, touch)?;
        }
        Ok(())
    }
    let mut inner = Touch::default();
    let mut rows = 0;
    while let Some(item) = next().map_err(|e| e.to_string())? {
        match item {
            msgpack::Item::Array(n) => {
                for _ in 0..n {
                    let column = next().map_err(|e| e.to_string())?.ok_or("truncated row")?;
                    match column {
                        msgpack::Item::Array(_) | msgpack::Item::Map(_) => {
                            touch.value(ValueRef::Composite(&[]));
                            walk(column, &mut next, &mut inner)?;
                        }
                        scalar => walk(scalar, &mut next, touch)?,
                    }
                }
                rows += 1;
            }
            control => walk(control, &mut next, &mut inner)?,
        }
    }
    std::hint::black_box(inner.total());
    Ok(rows)
}

fn skiff_codec(schema: &TableSchema) -> Result<Codec, String> {
    Codec::for_table_schemas(std::slice::from_ref(schema), &MappingOptions::default())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_measured_and_reads_back_its_rows() {
        let results = run(
            &[Dataset::Bm5, Dataset::Bm3],
            &default_formats(),
            0.0005,
            1,
            |_| {},
        )
        .unwrap();
        for format in [
            "yson",
            "yson-text",
            "skiff",
            "json",
            "msgpack",
            "cbor",
            "protobuf",
            "protobuf-dynamic",
            "thrift",
            "thrift-compact",
        ] {
            let r = results
                .iter()
                .find(|r| r.format == format && r.dataset == "BM5")
                .unwrap();
            assert!(
                r.bytes > 0 && r.zstd_bytes > 0 && r.read_rows_per_s > 0.0,
                "{r:?}"
            );
            assert!(
                r.write_overhead_pct.is_some() && r.read_overhead_pct.is_some(),
                "{r:?}"
            );
        }
    }
}
