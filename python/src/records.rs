//! `shapeshift._native.records`: ArrayRecord-compatible files for Python.
//!
//! Decoding runs with the GIL released; records become `bytes` with one copy (straight
//! from the decompressor into the `bytes` object for one-record chunks).

use std::sync::{Arc, Mutex, RwLock, TryLockError};

use pyo3::exceptions::{
    PyFileNotFoundError, PyIndexError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use shapeshift_records::{
    Error, PreparedBatch, Reader, ReaderOptions, SequentialReader, Writer, WriterOptions,
};

/// `CorruptRecordsError(ValueError, RuntimeError)`: a damaged file or not an ArrayRecord file
/// (the message names file and byte offset). array_record raises RuntimeError there, so code
/// written for it still catches this.
static CORRUPT_RECORDS_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `RecordIndexError(IndexError, ValueError, RuntimeError)`: a record index or range outside
/// the file. array_record raises IndexError for ranges and RuntimeError for batch indices.
static RECORD_INDEX_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn exception_class(
    py: Python<'_>,
    name: &str,
    bases: &[Bound<'_, PyType>],
    doc: &str,
) -> PyResult<Py<PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__doc__", doc)?;
    namespace.set_item("__module__", "shapeshift.records")?;
    let class = py
        .get_type::<PyType>()
        .call1((name, PyTuple::new(py, bases)?, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn error_of(py: Python<'_>, class: &PyOnceLock<Py<PyType>>, message: String) -> PyErr {
    match class.get(py) {
        Some(class) => PyErr::from_type(class.bind(py).clone(), message),
        None => PyRuntimeError::new_err(message),
    }
}

fn to_py_error(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::OutOfRange { .. } => Python::attach(|py| error_of(py, &RECORD_INDEX_ERROR, message)),
        Error::Options { .. } => PyValueError::new_err(message),
        Error::Corrupt { .. } => Python::attach(|py| error_of(py, &CORRUPT_RECORDS_ERROR, message)),
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        Error::Io { .. } => PyOSError::new_err(message),
        Error::State { .. } => PyRuntimeError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

fn path_string(path: &Bound<'_, PyAny>) -> PyResult<String> {
    let fspath = path.py().import("os")?.getattr("fspath")?.call1((path,))?;
    if let Ok(text) = fspath.cast::<PyString>() {
        return Ok(text.to_str()?.to_owned());
    }
    let raw: Vec<u8> = fspath.extract()?;
    String::from_utf8(raw).map_err(|_| PyValueError::new_err("path is not valid UTF-8"))
}

/// The options of array_record's Python writer for the same string: `group_size:1` unless given,
/// and `max_parallelism:1` in the stored option string (the file's footer is then the same).
fn python_writer_options(text: &str) -> shapeshift_records::Result<WriterOptions> {
    let mut options = WriterOptions::parse(text)?;
    let names_group_size = text
        .split(',')
        .any(|entry| entry.split(':').next().map(str::trim) == Some("group_size"));
    if !names_group_size {
        options.group_size = 1;
    }
    options.recorded_max_parallelism = Some(1);
    Ok(options)
}

/// Writes an ArrayRecord file: `Writer(path, options="")`, `write(bytes)`, `close()`.
#[pyclass(name = "Writer", module = "shapeshift.records")]
struct PyWriter {
    inner: Option<Writer>,
    path: String,
}

#[pymethods]
impl PyWriter {
    /// Keyword arguments array_record accepts (`file_options`...) are accepted and ignored.
    #[new]
    #[pyo3(signature = (path, options = "", **_kwargs))]
    fn new(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        options: &str,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let path = path_string(path)?;
        let writer_options = python_writer_options(options).map_err(to_py_error)?;
        let writer = py
            .detach(|| Writer::with_options(&path, writer_options))
            .map_err(to_py_error)?;
        Ok(PyWriter {
            inner: Some(writer),
            path,
        })
    }

    /// Appends one record (bytes, or str as UTF-8).
    fn write(&mut self, py: Python<'_>, record: &Bound<'_, PyAny>) -> PyResult<()> {
        let writer = self.inner.as_mut().ok_or_else(|| {
            PyRuntimeError::new_err(format!("{}: the writer is closed", self.path))
        })?;
        let due = if let Ok(bytes) = record.cast::<PyBytes>() {
            writer.buffer_record(bytes.as_bytes())
        } else if let Ok(text) = record.cast::<PyString>() {
            writer.buffer_record(text.to_str()?.as_bytes())
        } else {
            let bytes: Vec<u8> = record.extract()?;
            writer.buffer_record(&bytes)
        }
        .map_err(to_py_error)?;
        if due {
            py.detach(|| writer.encode_buffered())
                .map_err(to_py_error)?;
        }
        Ok(())
    }

    /// Finishes the file (footer, postscript) and renames it to its final name.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.inner.as_mut() {
            Some(writer) => {
                let result = py.detach(|| writer.close());
                self.inner = None;
                result.map_err(to_py_error)
            }
            None => Ok(()),
        }
    }

    fn ok(&self) -> bool {
        self.inner.as_ref().is_none_or(Writer::is_open)
    }

    fn is_open(&self) -> bool {
        self.inner.as_ref().is_some_and(Writer::is_open)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        _args: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

impl Drop for PyWriter {
    /// Like array_record's writer, an unclosed writer finishes its file when collected.
    fn drop(&mut self) {
        if let Some(mut writer) = self.inner.take() {
            let _ = writer.close();
        }
    }
}

/// Reads an ArrayRecord file; random reads may run from several threads at once.
#[pyclass(frozen, name = "Reader", module = "shapeshift.records")]
struct PyReader {
    /// `None` once closed: the file is unmapped, later reads raise RuntimeError.
    reader: RwLock<Option<Arc<Reader>>>,
    sequential: Mutex<Option<SequentialReader>>,
    path: String,
    options: String,
}

/// An error while filling a batch: from the records layer or from the interpreter.
struct FillFailure(PyErr);

impl From<Error> for FillFailure {
    fn from(error: Error) -> Self {
        FillFailure(to_py_error(error))
    }
}

/// The `bytes` objects of a prepared batch, each written once, straight from the
/// decompressor (or the chunk's decoded values) into its final object. The objects are
/// created piece by piece (briefly taking the GIL for each piece) while the pool decodes
/// the pieces created before, so creating them overlaps the parallel decoding; decoding and
/// waiting run with the GIL released.
fn prepared_to_list<'py>(
    py: Python<'py>,
    prepared: &PreparedBatch<'_>,
) -> PyResult<Bound<'py, PyList>> {
    let mut objects: Vec<Option<Py<PyBytes>>> = Vec::with_capacity(prepared.len());
    objects.resize_with(prepared.len(), || None);
    let objects_ref = &mut objects;
    let filled = py.detach(|| {
        prepared.fill_pipelined(|positions, buffers| {
            Python::attach(|py| {
                for &position in positions {
                    let len = prepared.record_len(position as usize);
                    // SAFETY: with a null source CPython allocates an uninitialized object
                    // of `len` bytes (the shared empty object for 0, which is never written:
                    // its slice is empty). We own the only reference, and nothing reads the
                    // object before `fill_pipelined` has written all of it: on failure the
                    // objects are dropped unseen.
                    let object = unsafe {
                        let raw =
                            pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as isize);
                        if raw.is_null() {
                            return Err(FillFailure(PyErr::fetch(py)));
                        }
                        Bound::from_owned_ptr(py, raw).cast_into_unchecked::<PyBytes>()
                    };
                    // SAFETY: the object holds `len` writable bytes at this address for as
                    // long as `objects` keeps it alive, which outlives the fill.
                    let buffer = unsafe {
                        let data = pyo3::ffi::PyBytes_AsString(object.as_ptr()) as *mut u8;
                        std::slice::from_raw_parts_mut(data, len)
                    };
                    buffers.push(buffer);
                    objects_ref[position as usize] = Some(object.unbind());
                }
                Ok(())
            })
        })
    });
    filled.map_err(|FillFailure(error)| error)?;
    PyList::new(
        py,
        objects
            .into_iter()
            .map(|object| object.expect("every position was allocated").into_bound(py)),
    )
}

fn read_indices<'py>(
    py: Python<'py>,
    reader: &Reader,
    indices: &[u64],
) -> PyResult<Bound<'py, PyList>> {
    let prepared = py
        .detach(|| reader.prepare_batch(indices))
        .map_err(to_py_error)?;
    let list = prepared_to_list(py, &prepared);
    // Chunk data gathered across block boundaries is freed without the GIL.
    py.detach(move || drop(prepared));
    list
}

fn read_range<'py>(
    py: Python<'py>,
    reader: &Reader,
    begin: u64,
    end: u64,
) -> PyResult<Bound<'py, PyList>> {
    let prepared = py
        .detach(|| reader.prepare_range(begin, end))
        .map_err(to_py_error)?;
    let list = prepared_to_list(py, &prepared);
    py.detach(move || drop(prepared));
    list
}

impl PyReader {
    /// The open reader, or array_record's RuntimeError after `close()`.
    fn open(&self) -> PyResult<Arc<Reader>> {
        let guard = self
            .reader
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        guard
            .as_ref()
            .map(Arc::clone)
            .ok_or_else(|| PyRuntimeError::new_err(format!("{}: Object closed", self.path)))
    }

    /// Locks the sequential state without blocking while holding the GIL (the holder may be
    /// waiting for the GIL itself).
    fn lock_sequential(
        &self,
        py: Python<'_>,
    ) -> std::sync::MutexGuard<'_, Option<SequentialReader>> {
        loop {
            match self.sequential.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(poison)) => return poison.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(std::thread::yield_now),
            }
        }
    }

    fn read_one<'py>(&self, py: Python<'py>, index: u64) -> PyResult<Bound<'py, PyBytes>> {
        let reader = &self.open()?;
        if let Some(size) = reader.known_record_size(index) {
            return PyBytes::new_with(py, size as usize, |buffer| {
                py.detach(|| reader.read_into(index, buffer))
                    .map_err(to_py_error)
            });
        }
        let batch = py
            .detach(|| reader.read_batch(&[index]))
            .map_err(to_py_error)?;
        let bytes = PyBytes::new(py, batch.get(0));
        py.detach(move || drop(batch));
        Ok(bytes)
    }

    fn read_next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let reader = self.open()?;
        let mut guard = self.lock_sequential(py);
        let Some(sequential) = guard.as_mut() else {
            return Err(PyRuntimeError::new_err(format!(
                "{}: Object closed",
                self.path
            )));
        };
        if let Some(record) = sequential.current() {
            let bytes = PyBytes::new(py, record);
            sequential.advance();
            return Ok(bytes);
        }
        let state: &mut SequentialReader = sequential;
        let ready = py.detach(|| state.prepare()).map_err(to_py_error)?;
        if !ready {
            return Err(PyIndexError::new_err(format!(
                "{}: no record at position {} (the file has {})",
                self.path,
                sequential.position(),
                reader.num_records()
            )));
        }
        let bytes = PyBytes::new(py, sequential.current().expect("prepared"));
        sequential.advance();
        Ok(bytes)
    }
}

#[pymethods]
impl PyReader {
    /// Keyword arguments array_record accepts (`file_reader_buffer_size`, `file_options`)
    /// are accepted and ignored: the file is memory-mapped.
    #[new]
    #[pyo3(signature = (path, options = "", **_kwargs))]
    fn new(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        options: &str,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let path = path_string(path)?;
        let reader_options = ReaderOptions::parse(options).map_err(to_py_error)?;
        let reader = py
            .detach(|| Reader::open_with_options(&path, reader_options))
            .map_err(to_py_error)?;
        let reader = Arc::new(reader);
        Ok(PyReader {
            sequential: Mutex::new(Some(SequentialReader::new(Arc::clone(&reader)))),
            reader: RwLock::new(Some(reader)),
            path,
            options: options.to_owned(),
        })
    }

    /// `read()`: next record; `read(i)`: record i; `read([i, ...])`: those records;
    /// `read(begin, end)`: records begin..end, negative bounds counting from the end (as in
    /// array_record: an empty or reversed range is an IndexError).
    #[pyo3(signature = (first = None, second = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        first: Option<&Bound<'py, PyAny>>,
        second: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match (first, second) {
            (None, None) => Ok(self.read_next(py)?.into_any()),
            (Some(begin), Some(end)) => {
                let reader = self.open()?;
                let begin: i64 = begin.extract()?;
                let count = reader.num_records() as i64;
                let resolve = |bound: i64| if bound < 0 { bound + count } else { bound };
                let (from, to) = (resolve(begin), resolve(end));
                if from < 0 || from >= to || to > count {
                    return Err(error_of(
                        py,
                        &RECORD_INDEX_ERROR,
                        format!(
                            "{}: [{begin}, {end}) is out of range of [0, {count})",
                            self.path
                        ),
                    ));
                }
                Ok(read_range(py, &reader, from as u64, to as u64)?.into_any())
            }
            (Some(first), None) => {
                if let Ok(index) = first.extract::<u64>() {
                    return Ok(self.read_one(py, index)?.into_any());
                }
                let indices: Vec<u64> = first.extract()?;
                Ok(read_indices(py, &*self.open()?, &indices)?.into_any())
            }
            (None, Some(_)) => Err(PyValueError::new_err("read(begin, end) needs both bounds")),
        }
    }

    /// All records, decoded in parallel.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let reader = self.open()?;
        read_range(py, &reader, 0, reader.num_records())
    }

    /// The number of records (0 once closed, as in array_record).
    fn num_records(&self) -> u64 {
        self.open().map_or(0, |reader| reader.num_records())
    }

    /// Moves the sequential position to record `index`.
    fn seek(&self, py: Python<'_>, index: u64) -> PyResult<()> {
        match self.lock_sequential(py).as_mut() {
            Some(sequential) => sequential.seek(index).map_err(to_py_error),
            None => Err(PyRuntimeError::new_err(format!(
                "{}: Object closed",
                self.path
            ))),
        }
    }

    /// The sequential position.
    fn record_index(&self, py: Python<'_>) -> u64 {
        self.lock_sequential(py)
            .as_ref()
            .map_or(0, SequentialReader::position)
    }

    fn writer_options_string(&self) -> PyResult<String> {
        Ok(self.open()?.writer_options().to_owned())
    }

    fn ok(&self) -> bool {
        self.is_open()
    }

    fn is_open(&self) -> bool {
        self.open().is_ok()
    }

    /// Releases the file; later reads raise RuntimeError, as array_record's do.
    fn close(&self, py: Python<'_>) {
        self.lock_sequential(py).take();
        let reader = self
            .reader
            .write()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        // The last reference unmaps the file; without the GIL, as reads do.
        py.detach(move || drop(reader));
    }

    /// Records, chunks, group size, compression and sizes.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let info = self.open()?.info();
        let dict = PyDict::new(py);
        dict.set_item("path", info.path.display().to_string())?;
        dict.set_item("file_size", info.file_size)?;
        dict.set_item("num_records", info.num_records)?;
        dict.set_item("num_chunks", info.num_chunks)?;
        dict.set_item("group_size", info.group_size)?;
        dict.set_item("compression", info.compression)?;
        dict.set_item("writer_options", info.writer_options)?;
        dict.set_item("decoded_size", info.decoded_size)?;
        dict.set_item("transposed", info.transposed)?;
        dict.set_item("footer_offset", info.footer_offset)?;
        dict.set_item("zstd_dictionary_size", info.zstd_dictionary_size)?;
        Ok(dict)
    }

    fn __len__(&self) -> usize {
        self.num_records() as usize
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: i64) -> PyResult<Bound<'py, PyBytes>> {
        let length = self.open()?.num_records() as i64;
        let resolved = if index < 0 { index + length } else { index };
        if resolved < 0 {
            return Err(error_of(
                py,
                &RECORD_INDEX_ERROR,
                format!(
                    "{}: record index {index} is out of range (the file has {length} records)",
                    self.path
                ),
            ));
        }
        self.read_one(py, resolved as u64)
    }

    fn __getitems__<'py>(
        &self,
        py: Python<'py>,
        indices: Vec<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        read_indices(py, &*self.open()?, &indices)
    }

    fn __getnewargs__(&self) -> (String, String) {
        (self.path.clone(), self.options.clone())
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    fn __repr__(&self) -> String {
        format!(
            "Reader(path={:?}, num_records={})",
            self.path,
            self.num_records()
        )
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<PyWriter>()?;
    module.add_class::<PyReader>()?;
    let corrupt = CORRUPT_RECORDS_ERROR.get_or_try_init(py, || {
        exception_class(
            py,
            "CorruptRecordsError",
            &[
                py.get_type::<PyValueError>(),
                py.get_type::<PyRuntimeError>(),
            ],
            "A record file is damaged or not an ArrayRecord file; the message names file and \
             byte offset. Also a RuntimeError, which array_record raises there.",
        )
    })?;
    module.add("CorruptRecordsError", corrupt.bind(py))?;
    let index = RECORD_INDEX_ERROR.get_or_try_init(py, || {
        exception_class(
            py,
            "RecordIndexError",
            &[
                py.get_type::<PyIndexError>(),
                py.get_type::<PyValueError>(),
                py.get_type::<PyRuntimeError>(),
            ],
            "A record index or range outside the file. An IndexError (array_record's for \
             ranges and sequential reads), a ValueError (its data source's) and a \
             RuntimeError (its batch reads').",
        )
    })?;
    module.add("RecordIndexError", index.bind(py))?;
    Ok(())
}
