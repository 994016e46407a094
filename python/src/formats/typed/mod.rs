//! `shapeshift._native.formats.TypedCodec`: one row as an object of the caller's dataclass,
//! written and read through the format's serde path (`registry::SerdeRowCodec`) with no row of
//! `Value`s and no dicts in between: the Python counterpart of a Rust program's derived
//! structs. The bytes are those the format's row codec writes for the same row (without the
//! frame of the framed formats); see docs/formats/python.md, "Typed rows".

mod plan;
mod read;
mod write;

use std::cell::RefCell;
use std::ptr::NonNull;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyBytesMethods};
use shapeshift_formats::registry::{SerdeError, SerdeRowCodec};

use super::kind_of;
use super::tables::schemas_arg;
use crate::skiff::py_bytes_arg;

/// An owned reference, released on drop (always with the GIL held: the codec's methods).
pub(super) struct Owned(NonNull<ffi::PyObject>);

impl Owned {
    /// # Safety
    /// `ptr` is a non-null new reference.
    unsafe fn take(ptr: *mut ffi::PyObject) -> Owned {
        Owned(NonNull::new_unchecked(ptr))
    }

    /// A reference of its own to `ptr`, a live object borrowed from elsewhere.
    ///
    /// # Safety
    /// `ptr` is a non-null live object and the GIL is held.
    unsafe fn from_borrowed(ptr: *mut ffi::PyObject) -> Owned {
        ffi::Py_INCREF(ptr);
        Owned::take(ptr)
    }

    /// A reference to `None`.
    fn none() -> Owned {
        // SAFETY: the codec's methods hold the GIL; None is never null.
        unsafe { Owned::from_borrowed(ffi::Py_None()) }
    }

    fn as_ptr(&self) -> *mut ffi::PyObject {
        self.0.as_ptr()
    }

    fn into_ptr(self) -> *mut ffi::PyObject {
        let ptr = self.0.as_ptr();
        std::mem::forget(self);
        ptr
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: an owned reference, dropped with the GIL held.
        unsafe { ffi::Py_DECREF(self.0.as_ptr()) }
    }
}

/// One step from a value to a value inside it, for errors.
#[derive(Clone, Copy)]
pub(super) enum Step {
    Member(&'static str),
    Index(usize),
}

/// The error the walk itself met last (a value outside its type, a Python error), and the
/// path to it, recorded on the way back up: each level that sees a child fail adds its step,
/// so the walk down carries no path (its arguments stay a few words). It stands only for the
/// error the format returns with this message (at its end): an error of the format itself (or a
/// Protobuf message's second reading failing otherwise than its first) keeps the format's
/// own message and path.
#[derive(Default)]
pub(super) struct Failure(RefCell<Option<(String, Vec<Step>)>>);

impl Failure {
    /// Records `message` with an empty path and returns it for serde's error.
    #[cold]
    fn set(&self, message: String) -> String {
        *self.0.borrow_mut() = Some((message.clone(), Vec::new()));
        message
    }

    /// Adds `step` to the recorded error's path: the failed value was inside it.
    #[cold]
    fn within(&self, step: Step) {
        if let Some((_, path)) = self.0.borrow_mut().as_mut() {
            path.push(step);
        }
    }

    /// The recorded error as `path: message` (`media.persons[1]: ...`), if it is `error`.
    fn take(&self, error: &SerdeError) -> Option<String> {
        let (message, path) = self.0.borrow_mut().take()?;
        // Formats may put where they were before the message (Avro: `field 0 (id): ...`).
        if !error.message().ends_with(&message) {
            return None;
        }
        let mut text = String::new();
        for step in path.iter().rev() {
            match step {
                Step::Member(name) if text.is_empty() => text.push_str(name),
                Step::Member(name) => {
                    text.push('.');
                    text.push_str(name);
                }
                Step::Index(i) => text.push_str(&format!("[{i}]")),
            }
        }
        if text.is_empty() {
            text.push_str("the row");
        }
        Some(format!("{text}: {message}"))
    }
}

/// The pending Python error's text (cleared).
#[cold]
fn fetch_error() -> String {
    // SAFETY: called with the GIL held, right after a CPython call reported an error.
    Python::attach(|py| match PyErr::take(py) {
        Some(e) => e.to_string(),
        None => "a Python call failed".into(),
    })
}

/// The name of `obj`'s type.
///
/// # Safety
/// `obj` is a live object.
unsafe fn type_name(obj: *mut ffi::PyObject) -> String {
    let tp = ffi::Py_TYPE(obj);
    std::ffi::CStr::from_ptr((*tp).tp_name)
        .to_string_lossy()
        .into_owned()
}

/// The most the output buffer keeps between calls, in bytes.
const KEPT_BUFFER: usize = 1 << 20;

thread_local! {
    /// The output buffer, kept across calls (a message's bytes are copied out). Per thread,
    /// not per codec: a codec holding one would be bound to its thread, and pyo3 checks the
    /// thread and a borrow flag on every call of such a class (perf: 4% of an encode).
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One format, one table schema and one dataclass, compiled once.
#[pyclass(name = "TypedCodec", module = "shapeshift._native.formats", frozen)]
pub(super) struct PyTypedCodec {
    codec: SerdeRowCodec,
    plan: plan::Node,
    format: &'static str,
}

#[pymethods]
impl PyTypedCodec {
    /// `description` is the class as `shapeshift.formats.TypedCodec` reads its annotations.
    #[new]
    fn new(
        format: &str,
        schema: &Bound<'_, PyAny>,
        description: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let kind = kind_of(format)?;
        let mut schemas = schemas_arg(schema)?;
        if schemas.len() != 1 {
            return Err(PyValueError::new_err(
                "a typed codec takes one table schema",
            ));
        }
        let schema = schemas.remove(0);
        let codec = SerdeRowCodec::new(kind, &schema)
            .map_err(|e| PyValueError::new_err(e.to_string()))?
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "format {:?} has no typed path (it has: json, msgpack, cbor, protobuf, \
                     protobuf-dynamic, thrift, thrift-compact, avro); use dict rows (formats.codec)",
                    kind.name()
                ))
            })?;
        Ok(PyTypedCodec {
            plan: plan::compile(description, &schema.row_type())?,
            codec,
            format: kind.name(),
        })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    /// The message of one row, `obj` (an instance of the class).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        BUFFER.with(|kept| {
            // A property's code may call a codec again while it writes: that call gets a
            // buffer of its own.
            let mut own = Vec::new();
            let mut kept = kept.try_borrow_mut().ok();
            let buffer = kept.as_deref_mut().unwrap_or(&mut own);
            buffer.clear();
            let result = self.encode_into(py, obj, buffer);
            // One large message does not keep its buffer for every small one after it.
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            result
        })
    }

    /// The object of the one row that is the whole of `data`.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // bytes are immutable: read in place; anything else bytes-like is copied first.
        let copied;
        let bytes = match data.cast::<PyBytes>() {
            Ok(b) => b.as_bytes(),
            Err(_) => {
                copied =
                    py_bytes_arg(data).ok_or_else(|| super::from_py::expected("bytes", data))?;
                &copied[..]
            }
        };
        let failure = Failure::default();
        let seed = read::Seed {
            node: &self.plan,
            failure: &failure,
        };
        match self.codec.deserialize_seed(seed, bytes) {
            // SAFETY: an owned reference the seed built.
            Ok(obj) => Ok(unsafe { Bound::from_owned_ptr(py, obj.into_ptr()) }),
            Err(e) => {
                let ours = failure.take(&e);
                Err(raise(py, e, ours))
            }
        }
    }
}

impl PyTypedCodec {
    fn encode_into<'py>(
        &self,
        py: Python<'py>,
        obj: &Bound<'py, PyAny>,
        buffer: &mut Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let failure = Failure::default();
        let typed = write::Typed {
            node: &self.plan,
            obj: obj.as_ptr(),
            failure: &failure,
        };
        match self.codec.serialize(&typed, buffer) {
            Ok(()) => Ok(PyBytes::new(py, buffer)),
            Err(e) => {
                let ours = failure.take(&e);
                Err(raise(py, e, ours))
            }
        }
    }
}

/// A `FormatError` from the format's error, with our walk's message where it had one.
fn raise(py: Python<'_>, e: SerdeError, ours: Option<String>) -> PyErr {
    let message = match ours {
        Some(text) => text,
        None if e.path().is_empty() => e.message().to_owned(),
        None => format!("{}: {}", e.path(), e.message()),
    };
    super::raise(
        py,
        shapeshift_formats::table::FormatError {
            format: e.format(),
            offset: e.offset().map(|o| o as u64),
            row: Some(0),
            message,
        },
    )
}
