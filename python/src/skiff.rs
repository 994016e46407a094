//! `shapeshift._native.skiff`: Skiff rows to and from Python dicts.
//!
//! One class, `Codec`, compiled once from a table schema or a Skiff format, with `loads`,
//! `dumps`, `dump` and `reader` (a streaming iterator over a binary file object). The Python
//! value of each field follows its compiled plan (see docs/formats/skiff.md for the table):
//! integers -> int, double -> float, boolean -> bool, string32 -> bytes (str for `utf8`/`json`
//! columns), yson32 -> Python objects (attributes as `{"$attributes": ..., "$value": ...}`),
//! optional -> None or the value (`[v]` when the item is itself nullable), list -> list,
//! struct -> dict, tuple -> tuple, variant -> `(name or index, value)`, dict -> dict (a list
//! of pairs when a key is unhashable), decimal -> `decimal.Decimal`, uuid -> 16 bytes,
//! int128/256 -> int. System fields appear as `@table_index` (several tables only),
//! `@row_index`, `@range_index`, `@key_switch` keys; sparse and other columns as plain keys.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use shapeshift_formats::skiff::{
    Codec, FieldPlan, FieldRef, MappingOptions, OwnedRow, RowView, RowWriter, SkiffError,
    SkiffErrorKind, SkiffFormat, SkiffSchema, StreamReader, SystemFields, TablePlan, ValueShape,
    WireType,
};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{
    decimal_binary_to_text, decimal_text_to_binary, Node, NodeValue, TableSchema, Value, ValueRef,
};

use crate::text::utf8_to_py;

create_exception!(
    skiff,
    SkiffDecodeError,
    PyValueError,
    "Skiff input is truncated or corrupt; the message names the byte offset, row and column."
);

fn to_py_error(error: SkiffError) -> PyErr {
    match error.kind {
        SkiffErrorKind::Truncated | SkiffErrorKind::Corrupt => {
            SkiffDecodeError::new_err(error.to_string())
        }
        SkiffErrorKind::Io => pyo3::exceptions::PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// YSON nodes <-> Python objects

fn bytes_to_py<'py>(py: Python<'py>, bytes: &[u8], text: bool) -> Bound<'py, PyAny> {
    if text {
        if let Some(s) = utf8_to_py(py, bytes) {
            return s;
        }
    }
    PyBytes::new(py, bytes).into_any()
}

fn key_to_py<'py>(py: Python<'py>, key: &[u8]) -> Bound<'py, PyAny> {
    bytes_to_py(py, key, true)
}

pub(crate) fn node_to_py<'py>(py: Python<'py>, node: &Node) -> PyResult<Bound<'py, PyAny>> {
    let value = match &node.value {
        NodeValue::Entity => py.None().into_bound(py),
        NodeValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        NodeValue::Int64(v) => v.into_pyobject(py)?.into_any(),
        NodeValue::Uint64(v) => v.into_pyobject(py)?.into_any(),
        NodeValue::Double(v) => PyFloat::new(py, *v).into_any(),
        NodeValue::String(s) => bytes_to_py(py, s, true),
        NodeValue::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(node_to_py(py, item)?)?;
            }
            list.into_any()
        }
        NodeValue::Map(entries) => {
            let dict = PyDict::new(py);
            for (key, value) in entries {
                dict.set_item(key_to_py(py, key), node_to_py(py, value)?)?;
            }
            dict.into_any()
        }
    };
    if node.attributes.is_empty() {
        return Ok(value);
    }
    let attributes = PyDict::new(py);
    for (key, value) in &node.attributes {
        attributes.set_item(key_to_py(py, key), node_to_py(py, value)?)?;
    }
    let wrapped = PyDict::new(py);
    wrapped.set_item("$attributes", attributes)?;
    wrapped.set_item("$value", value)?;
    Ok(wrapped.into_any())
}

fn py_key(key: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = key.cast::<PyString>() {
        Ok(s.to_str()?.as_bytes().to_vec())
    } else if let Ok(b) = key.cast::<PyBytes>() {
        Ok(b.as_bytes().to_vec())
    } else {
        Err(PyTypeError::new_err(format!(
            "YSON map keys must be str or bytes, got {}",
            key.get_type().name()?
        )))
    }
}

pub(crate) fn py_to_node(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Node> {
    if depth > yson::DEFAULT_MAX_DEPTH {
        return Err(PyValueError::new_err("object nested too deeply for YSON"));
    }
    if obj.is_none() {
        return Ok(Node::entity());
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Node::new(NodeValue::Bool(b.is_true())));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok(Node::int64(v));
        }
        return Ok(Node::uint64(obj.extract::<u64>()?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Node::new(NodeValue::Double(f.value())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Node::string(s.to_str()?.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Node::string(b.as_bytes()));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        if dict.len() == 2 {
            if let (Some(attributes), Some(value)) =
                (dict.get_item("$attributes")?, dict.get_item("$value")?)
            {
                let mut node = py_to_node(&value, depth + 1)?;
                let attributes = attributes
                    .cast::<PyDict>()
                    .map_err(|_| PyTypeError::new_err("\"$attributes\" must be a dict"))?;
                for (k, v) in attributes.iter() {
                    node.attributes
                        .push((py_key(&k)?, py_to_node(&v, depth + 1)?));
                }
                return Ok(node);
            }
        }
        let mut entries = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            entries.push((py_key(&k)?, py_to_node(&v, depth + 1)?));
        }
        return Ok(Node::new(NodeValue::Map(entries)));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(py_to_node(&item?, depth + 1)?);
        }
        return Ok(Node::list(items));
    }
    Err(PyTypeError::new_err(format!(
        "cannot convert {} to YSON",
        obj.get_type().name()?
    )))
}

/// A node given as YSON text/bytes or as Python objects.
pub(crate) fn node_arg(obj: &Bound<'_, PyAny>) -> PyResult<Node> {
    let parse = |bytes: &[u8]| {
        yson::from_slice(bytes).map_err(|e| PyValueError::new_err(format!("bad YSON: {e}")))
    };
    if let Ok(s) = obj.cast::<PyString>() {
        return parse(s.to_str()?.as_bytes());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return parse(b.as_bytes());
    }
    py_to_node(obj, 0)
}

// ---------------------------------------------------------------------------------------------
// Values <-> Python objects, guided by the compiled plan

fn wide_is_signed(wire: WireType) -> bool {
    matches!(wire, WireType::Int128 | WireType::Int256)
}

fn value_to_py<'py>(
    py: Python<'py>,
    plan: &FieldPlan,
    value: &Value,
) -> PyResult<Bound<'py, PyAny>> {
    // A present optional of a non-nullable item is the item's value: read it by the item's plan.
    if let (
        ValueShape::Optional {
            nullable_item: false,
        },
        false,
    ) = (plan.value_shape(), matches!(value, Value::Null))
    {
        if let Some(item) = plan.children().get(1) {
            return value_to_py(py, item, value);
        }
    }
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int64(v) => v.into_pyobject(py)?.into_any(),
        Value::Uint64(v) => v.into_pyobject(py)?.into_any(),
        Value::Double(v) => PyFloat::new(py, *v).into_any(),
        Value::String(bytes) => {
            if let Some((precision, scale)) = plan.decimal() {
                let text = decimal_binary_to_text(bytes, precision, scale)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.import("decimal")?.getattr("Decimal")?.call1((text,))?
            } else if plan.wire_type().fixed_width().is_some_and(|w| w >= 16) && !plan.is_uuid() {
                let kwargs = PyDict::new(py);
                kwargs.set_item("signed", wide_is_signed(plan.wire_type()))?;
                py.get_type::<PyInt>().call_method(
                    "from_bytes",
                    (PyBytes::new(py, bytes), "little"),
                    Some(&kwargs),
                )?
            } else {
                bytes_to_py(py, bytes, plan.is_text())
            }
        }
        Value::Some(inner) => {
            let item = plan.children().get(1).unwrap_or(plan);
            PyList::new(py, [value_to_py(py, item, inner)?])?.into_any()
        }
        Value::List(items) => {
            let list = PyList::empty(py);
            let shape = plan.value_shape();
            for item in items {
                match (shape, item) {
                    (ValueShape::ListOfVariants, Value::Variant(tag, inner)) => {
                        let child = &plan.children()[*tag as usize];
                        list.append(variant_to_py(py, plan, *tag, child, inner)?)?;
                    }
                    _ => list.append(value_to_py(py, &plan.children()[0], item)?)?,
                }
            }
            list.into_any()
        }
        Value::Tuple(values) => {
            let children = plan.children();
            let named = !children.is_empty() && children.iter().all(|c| !c.name().is_empty());
            if named {
                let dict = PyDict::new(py);
                for (child, value) in children.iter().zip(values) {
                    dict.set_item(child.name(), value_to_py(py, child, value)?)?;
                }
                dict.into_any()
            } else {
                let items = children
                    .iter()
                    .zip(values)
                    .map(|(child, value)| value_to_py(py, child, value))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?.into_any()
            }
        }
        Value::Variant(tag, inner) => {
            let child = &plan.children()[*tag as usize];
            variant_to_py(py, plan, *tag, child, inner)?
        }
        Value::Dict(entries) => {
            let entry = &plan.children()[0];
            let (key_plan, value_plan) = (&entry.children()[0], &entry.children()[1]);
            let pairs = entries
                .iter()
                .map(|(k, v)| {
                    Ok((
                        value_to_py(py, key_plan, k)?,
                        value_to_py(py, value_plan, v)?,
                    ))
                })
                .collect::<PyResult<Vec<_>>>()?;
            dict_or_pairs(py, pairs)?
        }
        Value::Any(node) => node_to_py(py, node)?,
    })
}

fn variant_to_py<'py>(
    py: Python<'py>,
    _plan: &FieldPlan,
    tag: u32,
    child: &FieldPlan,
    inner: &Value,
) -> PyResult<Bound<'py, PyAny>> {
    let label = if child.name().is_empty() {
        tag.into_pyobject(py)?.into_any()
    } else {
        PyString::new(py, child.name()).into_any()
    };
    Ok(PyTuple::new(py, [label, value_to_py(py, child, inner)?])?.into_any())
}

pub(crate) fn py_bytes_arg(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        Some(b.as_bytes().to_vec())
    } else if let Ok(b) = obj.cast::<PyByteArray>() {
        Some(b.to_vec())
    } else if let Ok(s) = obj.cast::<PyString>() {
        s.to_str().ok().map(|s| s.as_bytes().to_vec())
    } else {
        None
    }
}

/// The name of `obj`'s Python type, for error messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn py_to_value(plan: &FieldPlan, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let wire = plan.wire_type();
    match plan.value_shape() {
        ValueShape::Optional { nullable_item } => {
            if obj.is_none() {
                return Ok(Value::Null);
            }
            let item = &plan.children()[1];
            if nullable_item {
                let list = obj.cast::<PyList>().map_err(|_| {
                    PyTypeError::new_err("an optional of a nullable type takes None or [value]")
                })?;
                if list.len() != 1 {
                    return Err(PyValueError::new_err(
                        "an optional of a nullable type takes None or [value]",
                    ));
                }
                return Ok(Value::Some(Box::new(py_to_value(
                    item,
                    &list.get_item(0)?,
                )?)));
            }
            return py_to_value(item, obj);
        }
        ValueShape::Variant => {
            let pair = obj
                .cast::<PyTuple>()
                .ok()
                .filter(|t| t.len() == 2)
                .ok_or_else(|| {
                    PyTypeError::new_err("a variant takes a (tag or name, value) tuple")
                })?;
            let label = pair.get_item(0)?;
            let tag = variant_tag(plan, &label)?;
            let value = py_to_value(&plan.children()[tag], &pair.get_item(1)?)?;
            return Ok(Value::Variant(tag as u32, Box::new(value)));
        }
        ValueShape::List => {
            let mut items = Vec::new();
            for item in obj.try_iter()? {
                items.push(py_to_value(&plan.children()[0], &item?)?);
            }
            return Ok(Value::List(items));
        }
        ValueShape::ListOfVariants => {
            let mut items = Vec::new();
            for item in obj.try_iter()? {
                let item = item?;
                let pair = item
                    .cast::<PyTuple>()
                    .ok()
                    .filter(|t| t.len() == 2)
                    .ok_or_else(|| {
                        PyTypeError::new_err("a repeated variant takes (tag, value) tuples")
                    })?;
                let tag = variant_tag(plan, &pair.get_item(0)?)?;
                let value = py_to_value(&plan.children()[tag], &pair.get_item(1)?)?;
                items.push(Value::Variant(tag as u32, Box::new(value)));
            }
            return Ok(Value::List(items));
        }
        ValueShape::Dict => {
            let entry = &plan.children()[0];
            let (key_plan, value_plan) = (&entry.children()[0], &entry.children()[1]);
            let mut entries = Vec::new();
            if let Ok(dict) = obj.cast::<PyDict>() {
                for (k, v) in dict.iter() {
                    entries.push((py_to_value(key_plan, &k)?, py_to_value(value_plan, &v)?));
                }
            } else {
                for pair in obj.try_iter()? {
                    let pair = pair?;
                    let k = pair.get_item(0)?;
                    let v = pair.get_item(1)?;
                    entries.push((py_to_value(key_plan, &k)?, py_to_value(value_plan, &v)?));
                }
            }
            return Ok(Value::Dict(entries));
        }
        ValueShape::Tuple => {
            let children = plan.children();
            let mut values = Vec::with_capacity(children.len());
            if let Ok(dict) = obj.cast::<PyDict>() {
                for child in children {
                    let item = dict.get_item(child.name())?;
                    match item {
                        Some(item) => values.push(py_to_value(child, &item)?),
                        None => {
                            values.push(py_to_value(child, &obj.py().None().into_bound(obj.py()))?)
                        }
                    }
                }
            } else {
                let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
                if items.len() != children.len() {
                    return Err(PyValueError::new_err(format!(
                        "expected a tuple of {} values, got {}",
                        children.len(),
                        items.len()
                    )));
                }
                for (child, item) in children.iter().zip(&items) {
                    values.push(py_to_value(child, item)?);
                }
            }
            return Ok(Value::Tuple(values));
        }
        ValueShape::Scalar => {}
    }
    match wire {
        WireType::Nothing => {
            if obj.is_none() {
                Ok(Value::Null)
            } else {
                Err(PyTypeError::new_err(format!(
                    "wire type nothing takes None, got {}",
                    type_name(obj)
                )))
            }
        }
        WireType::Boolean => {
            let b = obj.cast::<PyBool>().map_err(|_| {
                PyTypeError::new_err(format!("expected bool, got {}", type_name(obj)))
            })?;
            Ok(Value::Bool(b.is_true()))
        }
        WireType::Double => {
            if obj.cast::<PyBool>().is_ok() {
                return Err(PyTypeError::new_err("expected float, got bool"));
            }
            Ok(Value::Double(obj.extract::<f64>()?))
        }
        WireType::String32 => py_bytes_arg(obj).map(Value::String).ok_or_else(|| {
            PyTypeError::new_err(format!("expected bytes or str, got {}", type_name(obj)))
        }),
        WireType::Yson32 => Ok(Value::Any(py_to_node(obj, 0)?)),
        WireType::Int8
        | WireType::Int16
        | WireType::Int32
        | WireType::Int64
        | WireType::Int128
        | WireType::Int256
        | WireType::Uint8
        | WireType::Uint16
        | WireType::Uint32
        | WireType::Uint64
        | WireType::Uint128
        | WireType::Uint256 => {
            if let Some((precision, scale)) = plan.decimal() {
                let text = obj.str()?.to_str()?.to_owned();
                if let Some(bytes) = obj.cast::<PyBytes>().ok().map(|b| b.as_bytes().to_vec()) {
                    return Ok(Value::String(bytes));
                }
                let bytes = decimal_text_to_binary(&text, precision, scale)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                return Ok(Value::String(bytes));
            }
            if plan.is_uuid() {
                if let Some(bytes) = py_bytes_arg(obj) {
                    return Ok(Value::String(bytes));
                }
                let bytes = obj.getattr("bytes")?;
                return py_bytes_arg(&bytes)
                    .map(Value::String)
                    .ok_or_else(|| PyTypeError::new_err("a uuid takes 16 bytes or a uuid.UUID"));
            }
            if obj.cast::<PyBool>().is_ok() || obj.cast::<PyInt>().is_err() {
                return Err(PyTypeError::new_err(format!(
                    "expected int, got {}",
                    type_name(obj)
                )));
            }
            let width = wire.fixed_width().unwrap_or(8);
            if width >= 16 {
                let kwargs = PyDict::new(obj.py());
                kwargs.set_item("signed", wide_is_signed(wire))?;
                let bytes = obj
                    .call_method("to_bytes", (width, "little"), Some(&kwargs))
                    .map_err(|_| {
                        PyValueError::new_err(format!(
                            "{} is out of range for {wire}",
                            obj.str().map(|s| s.to_string()).unwrap_or_default()
                        ))
                    })?;
                return Ok(Value::String(py_bytes_arg(&bytes).unwrap_or_default()));
            }
            let signed = matches!(
                wire,
                WireType::Int8 | WireType::Int16 | WireType::Int32 | WireType::Int64
            );
            if signed {
                obj.extract::<i64>()
                    .map(Value::Int64)
                    .map_err(|_| PyValueError::new_err(format!("value is out of range for {wire}")))
            } else {
                obj.extract::<u64>()
                    .map(Value::Uint64)
                    .map_err(|_| PyValueError::new_err(format!("value is out of range for {wire}")))
            }
        }
        other => Err(PyTypeError::new_err(format!(
            "cannot write a Python value as {other}"
        ))),
    }
}

fn variant_tag(plan: &FieldPlan, label: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(name) = label.cast::<PyString>() {
        let name = name.to_str()?;
        return plan
            .children()
            .iter()
            .position(|c| c.name() == name)
            .ok_or_else(|| {
                PyValueError::new_err(format!("variant has no alternative named '{name}'"))
            });
    }
    let tag: usize = label.extract()?;
    if tag >= plan.children().len() {
        return Err(PyValueError::new_err(format!(
            "variant tag {tag} is out of range 0..{}",
            plan.children().len().saturating_sub(1)
        )));
    }
    Ok(tag)
}

// ---------------------------------------------------------------------------------------------
// Rows

/// Column names as Python strings, made once per codec, and a name -> column map per table.
struct Names {
    columns: Vec<Vec<Py<PyString>>>,
    index: Vec<HashMap<String, usize>>,
}

impl Names {
    fn new(py: Python<'_>, codec: &Codec) -> Names {
        let tables = (0..codec.table_count()).filter_map(|t| codec.table(t));
        let mut columns = Vec::new();
        let mut index = Vec::new();
        for table in tables {
            columns.push(
                (0..table.column_count())
                    .map(|c| PyString::intern(py, table.column_name(c)).unbind())
                    .collect(),
            );
            index.push(
                (0..table.column_count())
                    .map(|c| (table.column_name(c).to_owned(), c))
                    .collect(),
            );
        }
        Names { columns, index }
    }
}

/// A borrowed field straight to Python (no owned `Value` in between), when it is a plain one.
fn field_ref_to_py<'py>(
    py: Python<'py>,
    plan: &FieldPlan,
    value: ValueRef<'_>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let plan = match plan.value_shape() {
        ValueShape::Optional { .. } => match plan.children().get(1) {
            Some(item) => item,
            None => return Ok(None),
        },
        _ => plan,
    };
    Ok(Some(match value {
        ValueRef::Null => py.None().into_bound(py),
        ValueRef::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        ValueRef::Int64(v) => v.into_pyobject(py)?.into_any(),
        ValueRef::Uint64(v) => v.into_pyobject(py)?.into_any(),
        ValueRef::Double(v) => PyFloat::new(py, v).into_any(),
        ValueRef::String(bytes) => bytes_to_py(py, bytes, plan.is_text()),
        ValueRef::Any(_) | ValueRef::Composite(_) => return Ok(None),
    }))
}

fn row_to_py<'py>(
    py: Python<'py>,
    codec: &Codec,
    names: &Names,
    row: &RowView<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let table = row.table();
    let dict = PyDict::new(py);
    let column_names = &names.columns[row.table_index() as usize];
    for (column, field) in row.fields().enumerate() {
        let plan = table.column_plan(column);
        let name = column_names[column].bind(py);
        if let FieldRef::Value(value) = field {
            if let Some(object) = field_ref_to_py(py, plan, value)? {
                dict.set_item(name, object)?;
                continue;
            }
        }
        let value = field.to_value().map_err(to_py_error)?;
        dict.set_item(name, value_to_py(py, plan, &value)?)?;
    }
    for (_, name, field) in row.sparse() {
        let value = field.to_value().map_err(to_py_error)?;
        let plan = table
            .sparse_column_plans()
            .iter()
            .find(|p| p.name() == name)
            .expect("sparse field has a plan");
        dict.set_item(name, value_to_py(py, plan, &value)?)?;
    }
    if let Some(other) = row.other_columns() {
        if !other.is_empty() {
            let node = yson::from_slice(other).map_err(|e| {
                SkiffDecodeError::new_err(format!(
                    "skiff: at byte {}: $other_columns is not valid YSON: {e}",
                    row.offset()
                ))
            })?;
            if let NodeValue::Map(entries) = &node.value {
                for (key, value) in entries {
                    dict.set_item(key_to_py(py, key), node_to_py(py, value)?)?;
                }
            }
        }
    }
    if codec.table_count() > 1 {
        dict.set_item("@table_index", row.table_index())?;
    }
    if table.has_row_index() {
        dict.set_item("@row_index", row.row_index())?;
    }
    if table.has_range_index() {
        dict.set_item("@range_index", row.range_index())?;
    }
    if table.has_key_switch() {
        dict.set_item("@key_switch", row.key_switch())?;
    }
    Ok(dict)
}

fn py_to_row(
    codec: &Codec,
    names: &Names,
    obj: &Bound<'_, PyAny>,
    default_table: u16,
) -> PyResult<OwnedRow> {
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err(format!("a row is a dict, got {}", type_name(obj))))?;
    let table_index = match dict.get_item("@table_index")? {
        Some(index) => index.extract::<u16>()?,
        None => default_table,
    };
    let table: &TablePlan = codec.table(table_index as usize).ok_or_else(|| {
        PyValueError::new_err(format!("table index {table_index} is out of range"))
    })?;
    let py = obj.py();
    let none = py.None().into_bound(py);
    let mut values = Vec::with_capacity(table.column_count());
    let column_names = &names.columns[table_index as usize];
    let mut present = 0;
    for (column, py_name) in column_names.iter().enumerate() {
        let name = table.column_name(column);
        let item = match dict.get_item(py_name.bind(py))? {
            Some(item) => {
                present += 1;
                item
            }
            None => none.clone(),
        };
        let value = py_to_value(table.column_plan(column), &item).map_err(|e| {
            PyValueError::new_err(format!("column '{name}': {}", e.value(obj.py())))
        })?;
        values.push(value);
    }
    let mut system = SystemFields::default();
    let int_or_none = |key: &str| -> PyResult<Option<i64>> {
        match dict.get_item(key)? {
            Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
            _ => Ok(None),
        }
    };
    system.row_index = int_or_none("@row_index")?;
    system.range_index = int_or_none("@range_index")?;
    if let Some(k) = dict.get_item("@key_switch")? {
        system.key_switch = k.is_truthy()?;
    }
    let sparse_plans = table.sparse_column_plans();
    let mut other = Vec::new();
    let column_index = &names.index[table_index as usize];
    // Only a dict with more keys than matched columns has extra (system, sparse, other) keys.
    let extra_keys = dict.len() > present;
    for (key, value) in dict.iter().filter(|_| extra_keys) {
        let Ok(key_str) = key.cast::<PyString>() else {
            return Err(PyTypeError::new_err("row keys must be str"));
        };
        let key_str = key_str.to_str()?;
        if key_str.starts_with('@') || column_index.contains_key(key_str) {
            continue;
        }
        if let Some(tag) = sparse_plans.iter().position(|p| p.name() == key_str) {
            if !value.is_none() {
                let v = py_to_value(&sparse_plans[tag], &value).map_err(|e| {
                    PyValueError::new_err(format!("column '{key_str}': {}", e.value(obj.py())))
                })?;
                system.sparse.push((tag as u16, v));
            }
            continue;
        }
        if !table.has_other_columns() {
            return Err(PyValueError::new_err(format!(
                "column '{key_str}' is not in the skiff schema of table {table_index} (and it has no $other_columns)"
            )));
        }
        other.push((key_str.as_bytes().to_vec(), py_to_node(&value, 0)?));
    }
    if table.has_other_columns() {
        system.other_columns = Some(yson::to_vec(
            &Node::new(NodeValue::Map(other)),
            YsonFormat::Binary,
        ));
    }
    Ok(OwnedRow {
        table_index,
        values,
        system,
    })
}

// ---------------------------------------------------------------------------------------------
// Building codecs

/// What a schema argument is.
enum SchemaArg {
    Format(SkiffFormat),
    TableSchemas(Vec<TableSchema>),
}

fn is_skiff_node(node: &Node) -> bool {
    node.get(b"wire_type").is_some()
        || matches!(&node.value, NodeValue::String(s) if s.starts_with(b"$"))
}

fn classify(node: &Node, registry: Option<&Node>) -> PyResult<SchemaArg> {
    let format_error = |e: SkiffError| PyValueError::new_err(e.to_string());
    let type_error =
        |e: shapeshift_types::TypeError| PyValueError::new_err(format!("bad table schema: {e}"));
    let with_registry = |tables: Node| -> Node {
        let mut attributes = vec![(b"table_skiff_schemas".to_vec(), tables)];
        if let Some(registry) = registry {
            attributes.push((b"skiff_schema_registry".to_vec(), registry.clone()));
        }
        Node {
            attributes,
            value: NodeValue::String(b"skiff".to_vec()),
        }
    };
    match &node.value {
        NodeValue::String(s) if s == b"skiff" => Ok(SchemaArg::Format(
            SkiffFormat::from_node(node).map_err(format_error)?,
        )),
        NodeValue::Map(_) if node.get(b"table_skiff_schemas").is_some() => Ok(SchemaArg::Format(
            SkiffFormat::from_node(node).map_err(format_error)?,
        )),
        NodeValue::Map(_) if is_skiff_node(node) => Ok(SchemaArg::Format(
            SkiffFormat::from_node(&with_registry(Node::list(vec![node.clone()])))
                .map_err(format_error)?,
        )),
        NodeValue::List(items) if !items.is_empty() && items.iter().all(is_skiff_node) => {
            Ok(SchemaArg::Format(
                SkiffFormat::from_node(&with_registry(node.clone())).map_err(format_error)?,
            ))
        }
        NodeValue::List(items)
            if !items.is_empty() && items.iter().all(|i| matches!(i.value, NodeValue::List(_))) =>
        {
            let schemas = items
                .iter()
                .map(TableSchema::from_node)
                .collect::<Result<Vec<_>, _>>()
                .map_err(type_error)?;
            Ok(SchemaArg::TableSchemas(schemas))
        }
        NodeValue::List(_) => Ok(SchemaArg::TableSchemas(vec![
            TableSchema::from_node(node).map_err(type_error)?
        ])),
        _ => Err(PyValueError::new_err(
            "schema must be a table schema (list of columns), a list of table schemas, a skiff \
             schema ({wire_type=tuple; children=[...]}), a list of them, or a skiff format",
        )),
    }
}

/// A compiled Skiff format: `Codec(schema, *, table_schemas=None, registry=None,
/// key_switch=False, row_index=False, range_index=False, other_columns=None,
/// widen_integers=False)`.
#[pyclass(name = "Codec", module = "shapeshift._native.skiff", frozen)]
struct PyCodec {
    codec: Codec,
    names: Arc<Names>,
}

#[pymethods]
impl PyCodec {
    #[new]
    #[pyo3(signature = (schema, *, table_schemas=None, registry=None, key_switch=false, row_index=false,
                        range_index=false, other_columns=None, widen_integers=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        schema: &Bound<'_, PyAny>,
        table_schemas: Option<&Bound<'_, PyAny>>,
        registry: Option<&Bound<'_, PyAny>>,
        key_switch: bool,
        row_index: bool,
        range_index: bool,
        other_columns: Option<bool>,
        widen_integers: bool,
    ) -> PyResult<Self> {
        let registry = registry.map(node_arg).transpose()?;
        let node = node_arg(schema)?;
        let codec = match classify(&node, registry.as_ref())? {
            SchemaArg::TableSchemas(schemas) => {
                let options = MappingOptions {
                    key_switch,
                    row_index,
                    range_index,
                    other_columns,
                    widen_integers,
                };
                Codec::for_table_schemas(&schemas, &options)
            }
            SchemaArg::Format(format) => match table_schemas {
                None => Codec::new(&format),
                Some(types) => {
                    let types = match classify(&node_arg(types)?, None)? {
                        SchemaArg::TableSchemas(schemas) => schemas,
                        SchemaArg::Format(_) => {
                            return Err(PyValueError::new_err(
                                "table_schemas must be table schemas",
                            ))
                        }
                    };
                    Codec::with_table_schemas(&format, &types)
                }
            },
        }
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let names = Arc::new(Names::new(schema.py(), &codec));
        Ok(PyCodec { codec, names })
    }

    /// The format as YSON text: `<table_skiff_schemas=[...]>skiff`.
    fn format(&self) -> String {
        String::from_utf8_lossy(&yson::to_vec(
            &self.codec.format().to_node(),
            YsonFormat::Text,
        ))
        .into_owned()
    }

    /// The skiff schema of each table, as Python objects.
    fn skiff_schemas<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.codec
            .format()
            .tables
            .iter()
            .map(|t: &SkiffSchema| node_to_py(py, &t.to_node()))
            .collect()
    }

    #[getter]
    fn table_count(&self) -> usize {
        self.codec.table_count()
    }

    /// Data column names of table `table_index`.
    #[pyo3(signature = (table_index=0))]
    fn column_names(&self, table_index: usize) -> PyResult<Vec<String>> {
        let table = self
            .codec
            .table(table_index)
            .ok_or_else(|| PyValueError::new_err(format!("no table {table_index}")))?;
        Ok((0..table.column_count())
            .map(|c| table.column_name(c).to_owned())
            .collect())
    }

    /// Every row of `data` as a dict.
    fn loads<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let mut reader = self.codec.reader(data);
        while let Some(row) = reader.next_row().map_err(to_py_error)? {
            list.append(row_to_py(py, &self.codec, &self.names, &row)?)?;
        }
        Ok(list)
    }

    /// An iterator of row dicts read from a binary file object (its `read(n)`).
    fn reader(&self, stream: Py<PyAny>) -> PyRowIterator {
        PyRowIterator {
            codec: self.codec.clone(),
            names: self.names.clone(),
            reader: std::sync::Mutex::new(self.codec.stream_reader(PyStream { stream })),
        }
    }

    /// Rows (dicts) as Skiff bytes; `table_index` is the default for rows without `@table_index`.
    #[pyo3(signature = (rows, table_index=0))]
    fn dumps<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        table_index: u16,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut writer = self.codec.writer(Vec::new());
        self.write_rows(rows, table_index, &mut writer)?;
        let out = writer.finish().map_err(to_py_error)?;
        Ok(PyBytes::new(py, &out))
    }

    /// Writes rows to a binary file object (its `write`), 64 KiB at a time.
    #[pyo3(signature = (rows, stream, table_index=0))]
    fn dump(
        &self,
        rows: &Bound<'_, PyAny>,
        stream: &Bound<'_, PyAny>,
        table_index: u16,
    ) -> PyResult<()> {
        let mut writer = self.codec.writer(PyStream {
            stream: stream.clone().unbind(),
        });
        self.write_rows(rows, table_index, &mut writer)?;
        writer.flush().map_err(to_py_error)?;
        Ok(())
    }
}

impl PyCodec {
    fn write_rows<W: Write>(
        &self,
        rows: &Bound<'_, PyAny>,
        table_index: u16,
        writer: &mut RowWriter<W>,
    ) -> PyResult<()> {
        for (number, row) in rows.try_iter()?.enumerate() {
            let row = row?;
            let owned = py_to_row(&self.codec, &self.names, &row, table_index).map_err(|e| {
                PyValueError::new_err(format!("row {number}: {}", e.value(row.py())))
            })?;
            writer.write_owned(&owned).map_err(to_py_error)?;
        }
        Ok(())
    }
}

/// A Python binary file object as a `Read`.
pub(crate) struct PyStream {
    pub(crate) stream: Py<PyAny>,
}

impl Write for PyStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            self.stream
                .call_method1(py, "write", (PyBytes::new(py, buf),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            Ok(buf.len())
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Read for PyStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let chunk = self
                .stream
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let chunk = chunk.bind(py);
            let bytes = py_bytes_arg(chunk)
                .ok_or_else(|| std::io::Error::other("read() must return bytes"))?;
            if bytes.len() > buf.len() {
                return Err(std::io::Error::other("read(n) returned more than n bytes"));
            }
            buf[..bytes.len()].copy_from_slice(&bytes);
            Ok(bytes.len())
        })
    }
}

/// Iterator of row dicts over a stream (from `Codec.reader`).
#[pyclass(name = "RowIterator", module = "shapeshift._native.skiff")]
struct PyRowIterator {
    codec: Codec,
    names: Arc<Names>,
    reader: std::sync::Mutex<StreamReader<PyStream>>,
}

#[pymethods]
impl PyRowIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut reader = self
            .reader
            .lock()
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("reader is poisoned"))?;
        match reader.next_row().map_err(to_py_error)? {
            Some(row) => Ok(Some(row_to_py(py, &self.codec, &self.names, &row)?)),
            None => Ok(None),
        }
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyCodec>()?;
    module.add_class::<PyRowIterator>()?;
    module.add(
        "SkiffDecodeError",
        module.py().get_type::<SkiffDecodeError>(),
    )?;
    Ok(())
}

/// A YT dict's entries as a Python dict, or as a list of `(key, value)` tuples when a key is
/// unhashable (a list or dict key).
pub(crate) fn dict_or_pairs<'py>(
    py: Python<'py>,
    pairs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(py);
    for (k, v) in &pairs {
        if dict.set_item(k, v).is_err() {
            let list = PyList::empty(py);
            for (k, v) in pairs {
                list.append(PyTuple::new(py, [k, v])?)?;
            }
            return Ok(list.into_any());
        }
    }
    Ok(dict.into_any())
}
