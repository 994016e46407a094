//! `shapeshift._native.formats`: every row format of the registry, rows as Python dicts.
//!
//! Reading and writing go through the common row interface (a `registry::PreparedFormat`
//! for `loads`, `dumps` and `Codec`, compiled once per codec; `open_source_with` /
//! `open_sink_with` for the streaming `Reader` and `Writer`), so a format added to
//! `FormatKind::ALL` appears here with no edit. Each table's columns get a plan once: scalar
//! columns (primitives and optionals of them) are built straight from the row's `ValueRef`s
//! with the CPython constructors; composite columns are walked once from their binary YSON
//! guided by the type (`composite.rs`), and go through `Value` only for the shapes that walk
//! leaves aside. Column names and struct member names are interned Python strings made once
//! per reader, writer or codec (`tables.rs`).
//!
//! Python values (see docs/formats/python.md): ints, floats, bools, bytes for `string`
//! (str for `utf8`/`json`), None for null, lists, dicts for structs, tuples for tuples,
//! `(name or index, value)` for variants, dicts for dicts (a list of pairs when a key is
//! unhashable), `[v]` for a present value of an optional whose item is nullable, `yson`
//! columns as Python objects (attributes as `{"$attributes": ..., "$value": ...}`), decimals
//! as their binary bytes (str or `decimal.Decimal` accepted when writing). Row positions are
//! `@table_index` (several tables), `@row_index`, `@range_index`, `@key_switch` keys; columns
//! outside a non-strict schema are plain keys.

mod composite;
mod from_py;
mod tables;
mod to_py;
mod typed;

use std::io::{BufReader, BufWriter, Cursor, Read};
use std::rc::Rc;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use shapeshift_formats::registry::{
    open_sink_with, open_source_with, FormatKind, FormatOptions, PreparedFormat,
};
use shapeshift_formats::table::{self, RowSource, SharedOutput};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::TableSchema;

use crate::skiff::{py_bytes_arg, PyStream};

use from_py::{expected, RowWriter};
pub(crate) use tables::schemas_arg;
use tables::Tables;
use to_py::{next_dict, read_all};

create_exception!(
    formats,
    FormatError,
    PyValueError,
    "Rows could not be read or written; `format`, `offset` (byte), `row` and `message` say where and what."
);

const BUFFER: usize = 64 * 1024;

fn raise(py: Python<'_>, e: table::FormatError) -> PyErr {
    let err = FormatError::new_err(e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail.
    let _ = value.setattr("format", e.format);
    let _ = value.setattr("offset", e.offset);
    let _ = value.setattr("row", e.row);
    let _ = value.setattr("message", e.message);
    err
}

fn kind_of(name: &str) -> PyResult<FormatKind> {
    FormatKind::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = FormatKind::ALL.iter().map(|k| k.name()).collect();
        PyValueError::new_err(format!(
            "unknown format {name:?}; known: {}",
            known.join(", ")
        ))
    })
}

fn options(skiff_system_columns: bool, avro_datums: bool) -> FormatOptions {
    FormatOptions {
        skiff_system_columns,
        avro_datums,
        ..FormatOptions::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The Python API

/// Every row of `data` (bytes) in `format`, as a list of dicts.
#[pyfunction]
#[pyo3(signature = (data, format, schema, *, skiff_system_columns=false, avro_datums=false))]
fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    format: &str,
    schema: &Bound<'py, PyAny>,
    skiff_system_columns: bool,
    avro_datums: bool,
) -> PyResult<Bound<'py, PyList>> {
    let tables = Tables::new(py, schemas_arg(schema)?);
    let options = options(skiff_system_columns, avro_datums);
    let format = prepare(py, format, &tables, options)?;
    loads_with(py, data, &format, &tables)
}

/// The format named `format` compiled for the schemas of `tables`.
fn prepare(
    py: Python<'_>,
    format: &str,
    tables: &Tables,
    options: FormatOptions,
) -> PyResult<PreparedFormat> {
    PreparedFormat::new(kind_of(format)?, tables.schemas().to_vec(), options)
        .map_err(|e| raise(py, e))
}

fn loads_with<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    format: &PreparedFormat,
    tables: &Tables,
) -> PyResult<Bound<'py, PyList>> {
    let bytes = py_bytes_arg(data).ok_or_else(|| expected("bytes", data))?;
    let mut source = format.open_source(bytes).map_err(|e| raise(py, e))?;
    read_all(py, format.kind(), tables, source.as_mut())
}

/// Rows (an iterable of dicts) as bytes of `format`; `table_index` is the table of rows
/// without `@table_index`.
#[pyfunction]
#[pyo3(signature = (rows, format, schema, *, table_index=0, skiff_system_columns=false, avro_datums=false))]
fn dumps<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    format: &str,
    schema: &Bound<'py, PyAny>,
    table_index: usize,
    skiff_system_columns: bool,
    avro_datums: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let tables = Rc::new(Tables::new(py, schemas_arg(schema)?));
    let options = options(skiff_system_columns, avro_datums);
    let format = prepare(py, format, &tables, options)?;
    dumps_with(py, rows, &format, tables, table_index)
}

fn dumps_with<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    format: &PreparedFormat,
    tables: Rc<Tables>,
    table_index: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let output = SharedOutput::default();
    let sink = format
        .open_sink(Box::new(output.clone()))
        .map_err(|e| raise(py, e))?;
    let mut writer = RowWriter::new(format.kind(), tables, sink, table_index);
    writer.write_all(rows)?;
    writer.finish(py)?;
    drop(writer);
    Ok(PyBytes::new(py, &output.take()))
}

/// `data` in format `source` turned into format `target`, row by row (no Python objects).
#[pyfunction]
#[pyo3(signature = (data, source, target, schema))]
fn convert<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    source: &str,
    target: &str,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (source_kind, target_kind) = (kind_of(source)?, kind_of(target)?);
    let bytes = py_bytes_arg(data).ok_or_else(|| expected("bytes", data))?;
    let schemas = schemas_arg(schema)?;
    let output = SharedOutput::default();
    let mut reader = open_source_with(
        source_kind,
        &schemas,
        Box::new(Cursor::new(bytes)),
        &FormatOptions::default(),
    )
    .map_err(|e| raise(py, e))?;
    let mut writer = open_sink_with(
        target_kind,
        &schemas,
        Box::new(output.clone()),
        &FormatOptions::default(),
    )
    .map_err(|e| raise(py, e))?;
    table::copy_rows(reader.as_mut(), writer.as_mut()).map_err(|e| raise(py, e))?;
    drop(writer);
    Ok(PyBytes::new(py, &output.take()))
}

/// The table schemas (YSON text, one per table) of a sequence of Arrow IPC streams.
#[pyfunction]
fn arrow_stream_schemas<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let tables = shapeshift_formats::arrow::stream_tables(data).map_err(|e| raise(py, e))?;
    let count = tables.iter().map(|(index, _)| index + 1).max().unwrap_or(0);
    let mut schemas: Vec<Option<TableSchema>> = vec![None; count];
    for (index, schema) in tables {
        schemas[index].get_or_insert(schema);
    }
    schemas
        .into_iter()
        .enumerate()
        .map(|(index, schema)| {
            let schema = schema.ok_or_else(|| {
                PyValueError::new_err(format!("the Arrow streams have no table {index}"))
            })?;
            let node = schema.to_node(shapeshift_types::SchemaForm::TypeV3);
            Ok(PyBytes::new(py, &yson::to_vec(&node, YsonFormat::Text)))
        })
        .collect()
}

/// The names of every format, in the registry's order.
#[pyfunction]
fn format_names() -> Vec<&'static str> {
    FormatKind::ALL.iter().map(|k| k.name()).collect()
}

/// Streaming reader: `Reader(stream, format, schema)` over a binary file object (its
/// `read(n)`) or bytes; iterating gives row dicts.
#[pyclass(name = "Reader", module = "shapeshift._native.formats", unsendable)]
struct PyReader {
    kind: FormatKind,
    tables: Tables,
    source: Option<Box<dyn RowSource>>,
    rows: u64,
}

#[pymethods]
impl PyReader {
    #[new]
    #[pyo3(signature = (stream, format, schema, *, skiff_system_columns=false, avro_datums=false))]
    fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        skiff_system_columns: bool,
        avro_datums: bool,
    ) -> PyResult<Self> {
        let kind = kind_of(format)?;
        let tables = Tables::new(py, schemas_arg(schema)?);
        let input: Box<dyn Read> = match stream.cast::<PyBytes>() {
            Ok(bytes) => Box::new(Cursor::new(bytes.as_bytes().to_vec())),
            Err(_) => Box::new(BufReader::with_capacity(
                BUFFER,
                PyStream {
                    stream: stream.clone().unbind(),
                },
            )),
        };
        let source = open_source_with(
            kind,
            tables.schemas(),
            input,
            &options(skiff_system_columns, avro_datums),
        )
        .map_err(|e| raise(py, e))?;
        Ok(PyReader {
            kind,
            tables,
            source: Some(source),
            rows: 0,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(source) = self.source.as_mut() else {
            return Ok(None);
        };
        let row = next_dict(py, self.kind, &self.tables, source.as_mut(), &mut self.rows);
        if !matches!(row, Ok(Some(_))) {
            // The end, or an error: the stream is done either way.
            self.source = None;
        }
        row
    }

    /// Rows read so far.
    #[getter]
    fn rows_read(&self) -> u64 {
        self.rows
    }

    fn close(&mut self) {
        self.source = None;
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        _exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) {
        self.close();
    }
}

/// Streaming writer: `Writer(stream, format, schema)` into a binary file object (its
/// `write`), buffered 64 KiB; `close()` (or leaving the `with` block) ends the stream.
#[pyclass(name = "Writer", module = "shapeshift._native.formats", unsendable)]
struct PyWriter {
    writer: Option<RowWriter>,
}

#[pymethods]
impl PyWriter {
    #[new]
    #[pyo3(signature = (stream, format, schema, *, table_index=0, skiff_system_columns=false, avro_datums=false))]
    fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        table_index: usize,
        skiff_system_columns: bool,
        avro_datums: bool,
    ) -> PyResult<Self> {
        let output = BufWriter::with_capacity(
            BUFFER,
            PyStream {
                stream: stream.clone().unbind(),
            },
        );
        let kind = kind_of(format)?;
        let tables = Rc::new(Tables::new(py, schemas_arg(schema)?));
        let sink = open_sink_with(
            kind,
            tables.schemas(),
            Box::new(output),
            &options(skiff_system_columns, avro_datums),
        )
        .map_err(|e| raise(py, e))?;
        let writer = RowWriter::new(kind, tables, sink, table_index);
        Ok(PyWriter {
            writer: Some(writer),
        })
    }

    /// Writes one row dict.
    fn write(&mut self, row: &Bound<'_, PyAny>) -> PyResult<()> {
        self.open_writer()?.write(row)
    }

    /// Writes every row dict of an iterable.
    fn write_rows(&mut self, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        self.open_writer()?.write_all(rows)
    }

    /// Rows written so far.
    #[getter]
    fn rows_written(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.rows)
    }

    /// Ends the stream (footers, end markers) and flushes it; later calls do nothing.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(mut writer) = self.writer.take() {
            writer.finish(py)?;
        }
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Ends the stream after a clean `with` block; after an exception, drops it unfinished.
    fn __exit__(
        &mut self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if exc_type.is_none() {
            self.close(py)
        } else {
            self.writer = None;
            Ok(())
        }
    }
}

impl PyWriter {
    fn open_writer(&mut self) -> PyResult<&mut RowWriter> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("the writer is closed"))
    }
}

/// One format and schema, prepared once: `Codec(format, schema)` then `dumps(rows)` and
/// `loads(data)` as the module's functions, without parsing the schema or compiling the
/// format's tables on every call (what a caller sending many small messages pays otherwise).
#[pyclass(name = "Codec", module = "shapeshift._native.formats", unsendable)]
struct PyCodec {
    format: PreparedFormat,
    tables: Rc<Tables>,
}

#[pymethods]
impl PyCodec {
    #[new]
    #[pyo3(signature = (format, schema, *, skiff_system_columns=false, avro_datums=false))]
    fn new(
        py: Python<'_>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        skiff_system_columns: bool,
        avro_datums: bool,
    ) -> PyResult<Self> {
        let tables = Rc::new(Tables::new(py, schemas_arg(schema)?));
        Ok(PyCodec {
            format: prepare(
                py,
                format,
                &tables,
                options(skiff_system_columns, avro_datums),
            )?,
            tables,
        })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.format.kind().name()
    }

    #[pyo3(signature = (rows, *, table_index=0))]
    fn dumps<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        table_index: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        dumps_with(py, rows, &self.format, self.tables.clone(), table_index)
    }

    fn loads<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        loads_with(py, data, &self.format, &self.tables)
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(loads, module)?)?;
    module.add_function(wrap_pyfunction!(dumps, module)?)?;
    module.add_function(wrap_pyfunction!(convert, module)?)?;
    module.add_function(wrap_pyfunction!(arrow_stream_schemas, module)?)?;
    module.add_function(wrap_pyfunction!(format_names, module)?)?;
    module.add_class::<PyReader>()?;
    module.add_class::<PyWriter>()?;
    module.add_class::<PyCodec>()?;
    module.add_class::<typed::PyTypedCodec>()?;
    module.add("FormatError", module.py().get_type::<FormatError>())?;
    Ok(())
}
