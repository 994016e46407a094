//! `shapeshift._native.columns`: adaptive numeric columns for numpy arrays.
//! Encoding and decoding run with the GIL released.

use std::mem::MaybeUninit;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use shapeshift_columns::{
    encode as encode_column, encode_baseline as encode_baseline_column, Column, ColumnValue,
    EncodeOptions, Target, ValueType,
};

fn value_error(error: shapeshift_columns::Error) -> PyErr {
    PyValueError::new_err(error.to_string())
}

fn negative_index(position: usize, index: i64) -> PyErr {
    PyValueError::new_err(format!(
        "row indices must be non-negative: position {position} holds {index}"
    ))
}

fn options(target: &str, block_size: usize) -> PyResult<EncodeOptions> {
    let target = Target::from_name(target).ok_or_else(|| {
        PyValueError::new_err(format!(
            "target must be 'smaller', 'balanced' or 'faster', not {target:?}"
        ))
    })?;
    Ok(EncodeOptions::new(target).with_block_size(block_size))
}

fn encode_typed<'py, T: ColumnValue + numpy::Element>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    options: Option<&EncodeOptions>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let Ok(array) = array.extract::<PyReadonlyArray1<'py, T>>() else {
        return Ok(None);
    };
    let values = array
        .as_slice()
        .map_err(|_| PyValueError::new_err("the array must be C-contiguous"))?;
    let bytes = py.detach(|| match options {
        Some(options) => encode_column(values, options),
        None => Ok(encode_baseline_column(values)),
    });
    Ok(Some(PyBytes::new(py, &bytes.map_err(value_error)?)))
}

fn encode_any<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    options: Option<EncodeOptions>,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = options.as_ref();
    if let Some(bytes) = encode_typed::<i32>(py, array, options)? {
        return Ok(bytes);
    }
    if let Some(bytes) = encode_typed::<i64>(py, array, options)? {
        return Ok(bytes);
    }
    if let Some(bytes) = encode_typed::<u32>(py, array, options)? {
        return Ok(bytes);
    }
    if let Some(bytes) = encode_typed::<u64>(py, array, options)? {
        return Ok(bytes);
    }
    if let Some(bytes) = encode_typed::<f32>(py, array, options)? {
        return Ok(bytes);
    }
    if let Some(bytes) = encode_typed::<f64>(py, array, options)? {
        return Ok(bytes);
    }
    Err(PyTypeError::new_err(
        "expected a 1-D numpy array of int32, int64, uint32, uint64, float32 or float64",
    ))
}

/// encode(array, target="balanced", block_size=65536) -> bytes
#[pyfunction]
#[pyo3(signature = (array, target = "balanced", block_size = 65536))]
fn encode<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    target: &str,
    block_size: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    encode_any(py, array, Some(options(target, block_size)?))
}

/// encode_baseline(array) -> bytes: Druid-like byte-packing + LZ4 in blocks of 8192.
#[pyfunction]
fn encode_baseline<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    encode_any(py, array, None)
}

/// A fresh numpy array's data pointer and length, moved into the GIL-free decode.
struct UninitOutput<T>(*mut MaybeUninit<T>, usize);
// SAFETY: the pointer is to a buffer owned by an array no other thread can see yet.
unsafe impl<T: Send> Send for UninitOutput<T> {}

/// An encoded column (a copy of the bytes, validated and checksum-verified on construction).
#[pyclass(frozen, name = "Column", module = "shapeshift._native.columns")]
struct PyColumn {
    column: Column<Vec<u8>>,
}

macro_rules! dispatch {
    ($column:expr, $t:ident => $body:expr) => {
        match $column.value_type() {
            ValueType::I32 => {
                type $t = i32;
                $body
            }
            ValueType::I64 => {
                type $t = i64;
                $body
            }
            ValueType::U32 => {
                type $t = u32;
                $body
            }
            ValueType::U64 => {
                type $t = u64;
                $body
            }
            ValueType::F32 => {
                type $t = f32;
                $body
            }
            ValueType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

#[pymethods]
impl PyColumn {
    #[new]
    fn new(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let bytes = data.to_vec();
        let column = py.detach(|| Column::open(bytes)).map_err(value_error)?;
        Ok(PyColumn { column })
    }

    /// Value type name: "i32", "i64", "u32", "u64", "f32" or "f64".
    #[getter]
    fn value_type(&self) -> &'static str {
        self.column.value_type().name()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.column.nbytes()
    }

    #[getter]
    fn block_size(&self) -> usize {
        self.column.block_size()
    }

    #[getter]
    fn block_count(&self) -> usize {
        self.column.block_count()
    }

    #[getter]
    fn target(&self) -> &'static str {
        self.column.target_name()
    }

    fn __len__(&self) -> usize {
        self.column.len()
    }

    /// {encoding name: number of blocks}
    fn composition<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (encoding, count) in self.column.composition() {
            dict.set_item(encoding.name(), count)?;
        }
        Ok(dict)
    }

    /// Encoding name of every block, in order.
    fn block_encodings(&self) -> Vec<&'static str> {
        (0..self.column.block_count())
            .filter_map(|i| self.column.block_encoding(i).map(|e| e.name()))
            .collect()
    }

    /// The whole column as a new numpy array.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let column = &self.column;
        dispatch!(column, T => {
            // Decoded straight into numpy's own (uninitialised) buffer: no zeroing pass and
            // no copy. The array is new and not yet visible to Python, so nothing else can
            // touch it while the GIL is released.
            // SAFETY: `new` leaves the elements uninitialised; they are only viewed as
            // `MaybeUninit` until `decode_into_uninit` has written every one of them, and on
            // error the array is dropped without being returned.
            let array = unsafe { PyArray1::<T>::new(py, column.len(), false) };
            let out = UninitOutput(array.data().cast::<MaybeUninit<T>>(), column.len());
            py.detach(|| {
                let out = out;
                // SAFETY: see above; pointer and length come from the array just created.
                let slice = unsafe { std::slice::from_raw_parts_mut(out.0, out.1) };
                column.decode_into_uninit(slice).map(|_| ())
            })
            .map_err(value_error)?;
            Ok(array.into_any())
        })
    }

    /// Values at sorted (non-decreasing) row indices, as a new numpy array.
    ///
    /// The int64 indices are read in place (no conversion pass: a non-negative first index,
    /// sortedness and the last index in range together prove every index is a valid
    /// `usize`), and the values are written straight into a numpy array allocated once,
    /// with the GIL released.
    fn take<'py>(
        &self,
        py: Python<'py>,
        indices: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let indices = indices
            .as_slice()
            .map_err(|_| PyValueError::new_err("indices must be C-contiguous"))?;
        if let Some(&first) = indices.first() {
            if first < 0 {
                return Err(negative_index(0, first));
            }
        }
        const { assert!(std::mem::size_of::<usize>() == std::mem::size_of::<i64>()) };
        const { assert!(std::mem::align_of::<usize>() == std::mem::align_of::<i64>()) };
        // SAFETY: same size and alignment (checked above), every bit pattern is a valid
        // usize; a negative i64 reads as a huge usize, which the column's checks reject
        // (unsorted or out of range), and the error is then re-worded below.
        let rows: &[usize] =
            unsafe { std::slice::from_raw_parts(indices.as_ptr().cast::<usize>(), indices.len()) };
        let column = &self.column;
        dispatch!(column, T => {
            // SAFETY: `new` leaves the elements uninitialised; they are only viewed as
            // `MaybeUninit` until `take_into_uninit` has written every one of them, and on
            // error the array is dropped without being returned.
            let array = unsafe { PyArray1::<T>::new(py, rows.len(), false) };
            let out = UninitOutput(array.data().cast::<MaybeUninit<T>>(), rows.len());
            py.detach(|| {
                let out = out;
                // SAFETY: pointer and length come from the array just created, which no
                // other code can see yet.
                let slice = unsafe { std::slice::from_raw_parts_mut(out.0, out.1) };
                column.take_into_uninit(rows, slice).map(|_| ())
            })
            .map_err(|error| match indices.iter().position(|&i| i < 0) {
                Some(position) => negative_index(position, indices[position]),
                None => value_error(error),
            })?;
            Ok(array.into_any())
        })
    }

    /// The value at row `index` as a Python int or float.
    fn get<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let column = &self.column;
        dispatch!(column, T => {
            let value = column.get::<T>(index).map_err(|e| match e {
                shapeshift_columns::Error::IndexOutOfRange { .. } => {
                    pyo3::exceptions::PyIndexError::new_err(e.to_string())
                }
                other => value_error(other),
            })?;
            Ok(value.into_pyobject(py)?.into_any())
        })
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(encode, module)?)?;
    module.add_function(wrap_pyfunction!(encode_baseline, module)?)?;
    module.add_class::<PyColumn>()?;
    Ok(())
}
