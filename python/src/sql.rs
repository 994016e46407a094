//! `shapeshift._native.sql`: SQL over files and Arrow streams (`shapeshift_engine`) in a
//! `Session` that keeps its tables between queries, the result handed to Python through the
//! Arrow C stream interface (no copy).

use std::ffi::CStr;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use shapeshift_engine::datafusion::arrow::array::{
    RecordBatch, RecordBatchIterator, RecordBatchReader,
};
use shapeshift_engine::datafusion::arrow::datatypes::SchemaRef;
use shapeshift_engine::datafusion::arrow::ffi_stream::{
    ArrowArrayStreamReader, FFI_ArrowArrayStream,
};
use shapeshift_engine::{Engine, EngineError, TableFormat, TableSource};

use crate::formats::schemas_arg;

/// The capsule name the Arrow PyCapsule interface gives array streams.
const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// A query's result: Arrow record batches, exported once through `__arrow_c_stream__`
/// (`pyarrow.table(result)` takes them without copying).
#[pyclass(module = "shapeshift._native.sql")]
struct SqlResult {
    schema: SchemaRef,
    batches: Option<Vec<RecordBatch>>,
}

#[pymethods]
impl SqlResult {
    /// The Arrow C stream of the batches (a PyCapsule); the result can be exported once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The result has one schema; a consumer asking for another casts it itself.
        let _ = requested_schema;
        let batches = self
            .batches
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the result was already exported"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)
    }
}

fn engine_error(error: EngineError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// The batches of an Arrow C stream capsule (moved out of it: the capsule is left released).
fn read_stream(capsule: &Bound<'_, PyCapsule>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let pointer = capsule.pointer_checked(Some(STREAM_CAPSULE))?;
    // SAFETY: a capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream (the Arrow
    // PyCapsule interface); `from_raw` moves it out and leaves a released one behind, so
    // the capsule's own destructor does not release it again.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    let reader = ArrowArrayStreamReader::try_new(stream)
        .map_err(|e| PyValueError::new_err(format!("Arrow stream: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("Arrow stream: {e}")))?;
    Ok((schema, batches))
}

/// Tables registered once and queried many times: an [`Engine`] (DataFusion's session, its
/// runtime, the tables' listings and footers), so repeated queries pay none of that again.
#[pyclass(module = "shapeshift._native.sql")]
struct Session {
    engine: Engine,
}

#[pymethods]
impl Session {
    #[new]
    fn new() -> PyResult<Session> {
        Ok(Session {
            engine: Engine::new().map_err(engine_error)?,
        })
    }

    /// Registers a file table: `name`, a path or glob, a format name or None (detected), a
    /// YT table schema or None.
    #[pyo3(signature = (name, location, format=None, schema=None))]
    fn register_files(
        &self,
        py: Python<'_>,
        name: String,
        location: String,
        format: Option<String>,
        schema: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let format = match format {
            None => None,
            Some(text) => Some(TableFormat::from_name(&text).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "table {name}: unknown format '{text}' (one of: {})",
                    TableFormat::names().join(", ")
                ))
            })?),
        };
        let schema = match schema {
            None => None,
            Some(schema) => {
                let mut tables = schemas_arg(&schema)?;
                if tables.len() != 1 {
                    return Err(PyTypeError::new_err(format!(
                        "table {name}: one table schema expected, got {}",
                        tables.len()
                    )));
                }
                tables.pop()
            }
        };
        let source = TableSource {
            name,
            location,
            format,
            schema,
        };
        py.detach(|| self.engine.register(&source))
            .map_err(engine_error)
    }

    /// Registers the batches of an Arrow C stream capsule as table `name` (held in memory).
    fn register_stream(&self, name: &str, capsule: Bound<'_, PyCapsule>) -> PyResult<()> {
        let (schema, batches) = read_stream(&capsule)?;
        self.engine
            .register_batches(name, schema, batches)
            .map_err(engine_error)
    }

    /// Runs `query` over the registered tables.
    fn sql(&self, py: Python<'_>, query: &str) -> PyResult<SqlResult> {
        let (schema, batches) = py
            .detach(|| self.engine.query(query))
            .map_err(engine_error)?;
        Ok(SqlResult {
            schema,
            batches: Some(batches),
        })
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<SqlResult>()?;
    module.add_class::<Session>()?;
    Ok(())
}
