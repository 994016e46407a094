//! Reading: row values to Python objects.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use shapeshift_formats::registry::FormatKind;
use shapeshift_formats::table::{self, value_from_ref, RowPosition, RowSource};
use shapeshift_formats::yson;
use shapeshift_types::{NodeValue, PrimitiveType, Type, Value, ValueRef};

use super::composite::composite_to_py;
use super::raise;
use super::tables::{Names, Plan, Tables};
use crate::skiff::{dict_or_pairs, node_to_py};
use crate::text::utf8_to_py;
/// `bytes` as a str when they are UTF-8, else as bytes.
pub(super) fn text_or_bytes<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyAny> {
    utf8_to_py(py, bytes).unwrap_or_else(|| PyBytes::new(py, bytes).into_any())
}

/// `value` of type `ty` as a Python object; `names` is the type's [`Names`] tree.
fn typed_to_py<'py>(
    py: Python<'py>,
    ty: &Type,
    names: &Names,
    value: &Value,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = ty.untagged();
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int64(v) => v.into_pyobject(py)?.into_any(),
        Value::Uint64(v) => v.into_pyobject(py)?.into_any(),
        Value::Double(v) => PyFloat::new(py, *v).into_any(),
        Value::String(s) => match ty {
            Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json) => text_or_bytes(py, s),
            Type::Optional(item)
                if matches!(
                    item.untagged(),
                    Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json)
                ) =>
            {
                text_or_bytes(py, s)
            }
            _ => PyBytes::new(py, s).into_any(),
        },
        Value::Any(node) => node_to_py(py, node)?,
        Value::Some(inner) => {
            let (item, names) = match ty {
                Type::Optional(item) => (&**item, names.item(0)),
                _ => (ty, names),
            };
            PyList::new(py, [typed_to_py(py, item, names, inner)?])?.into_any()
        }
        Value::List(items) => {
            let (item, names) = match ty {
                Type::List(item) => (&**item, names.item(0)),
                Type::Optional(inner) => match inner.untagged() {
                    Type::List(item) => (&**item, names.item(0).item(0)),
                    other => (other, names.item(0)),
                },
                other => (other, names),
            };
            let list = PyList::empty(py);
            for v in items {
                list.append(typed_to_py(py, item, names, v)?)?;
            }
            list.into_any()
        }
        Value::Tuple(items) => match strip_optional(ty, names) {
            (Type::Struct(members), names) => {
                let dict = PyDict::new(py);
                for (i, (member, v)) in members.iter().zip(items).enumerate() {
                    let value = typed_to_py(py, &member.ty, names.item(i), v)?;
                    names.set_member(&dict, i, &member.name, value)?;
                }
                dict.into_any()
            }
            (Type::Tuple(types), names) => {
                let elements = types
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, v))| typed_to_py(py, t, names.item(i), v))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, elements)?.into_any()
            }
            (other, _) => {
                return Err(PyValueError::new_err(format!(
                    "a struct or tuple value for type {other:?}"
                )))
            }
        },
        Value::Variant(index, inner) => {
            let index = *index as usize;
            let (label, item, names): (Bound<'py, PyAny>, &Type, &Names) =
                match strip_optional(ty, names) {
                    (Type::VariantStruct(members), names) if index < members.len() => (
                        match names.members.get(index) {
                            Some(name) => name.bind(py).clone().into_any(),
                            None => PyString::new(py, &members[index].name).into_any(),
                        },
                        &members[index].ty,
                        names.item(index),
                    ),
                    (Type::VariantTuple(types), names) if index < types.len() => (
                        index.into_pyobject(py)?.into_any(),
                        &types[index],
                        names.item(index),
                    ),
                    (other, _) => {
                        return Err(PyValueError::new_err(format!(
                            "variant alternative {index} of type {other:?}"
                        )))
                    }
                };
            PyTuple::new(py, [label, typed_to_py(py, item, names, inner)?])?.into_any()
        }
        Value::Dict(pairs) => {
            let (key_ty, value_ty, names) = match strip_optional(ty, names) {
                (Type::Dict { key, value }, names) => (&**key, &**value, names),
                (other, _) => {
                    return Err(PyValueError::new_err(format!(
                        "a dict value for type {other:?}"
                    )))
                }
            };
            let mut converted = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                converted.push((
                    typed_to_py(py, key_ty, names.item(0), k)?,
                    typed_to_py(py, value_ty, names.item(1), v)?,
                ));
            }
            dict_or_pairs(py, converted)?
        }
    })
}

/// `ty` without an optional around it, with its names tree.
fn strip_optional<'t>(ty: &'t Type, names: &'t Names) -> (&'t Type, &'t Names) {
    match ty.untagged() {
        Type::Optional(item) => (item.untagged(), names.item(0)),
        other => (other, names),
    }
}

fn value_ref_to_py<'py>(
    py: Python<'py>,
    plan: Plan,
    ty: &Type,
    names: &Names,
    value: ValueRef<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        ValueRef::Null => py.None().into_bound(py),
        ValueRef::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        ValueRef::Int64(v) => v.into_pyobject(py)?.into_any(),
        ValueRef::Uint64(v) => v.into_pyobject(py)?.into_any(),
        ValueRef::Double(v) => PyFloat::new(py, v).into_any(),
        ValueRef::String(s) if plan == Plan::Text => text_or_bytes(py, s),
        ValueRef::String(s) => PyBytes::new(py, s).into_any(),
        ValueRef::Composite(bytes) => match composite_to_py(py, ty, names, bytes)? {
            Some(object) => object,
            None => {
                let owned = value_from_ref(value, ty)
                    .map_err(|e| PyValueError::new_err(format!("column value: {e}")))?;
                typed_to_py(py, ty, names, &owned)?
            }
        },
        ValueRef::Any(_) => {
            let owned = value_from_ref(value, ty)
                .map_err(|e| PyValueError::new_err(format!("column value: {e}")))?;
            typed_to_py(py, ty, names, &owned)?
        }
    })
}

/// Keys of the row positions in a row dict (YT's control attributes as row fields).
pub(super) const TABLE_INDEX: &str = "@table_index";
pub(super) const ROW_INDEX: &str = "@row_index";
pub(super) const RANGE_INDEX: &str = "@range_index";
pub(super) const KEY_SWITCH: &str = "@key_switch";

fn row_to_py<'py>(
    py: Python<'py>,
    tables: &Tables,
    position: &RowPosition,
    values: &[ValueRef<'_>],
    other_columns: Option<&[u8]>,
) -> PyResult<Bound<'py, PyDict>> {
    let table = tables.0.get(position.table_index).ok_or_else(|| {
        PyValueError::new_err(format!(
            "row of table {} that has no schema",
            position.table_index
        ))
    })?;
    let dict = PyDict::new(py);
    for (c, value) in values.iter().enumerate() {
        let ty = &table.schema.columns[c].ty;
        let object =
            value_ref_to_py(py, table.plans[c], ty, &table.members[c], *value).map_err(|e| {
                PyValueError::new_err(format!(
                    "column {:?}: {}",
                    table.schema.columns[c].name,
                    e.value(py)
                ))
            })?;
        dict.set_item(table.names[c].bind(py), object)?;
    }
    if let Some(bytes) = other_columns {
        let node = yson::from_slice(bytes)
            .map_err(|e| PyValueError::new_err(format!("other columns: {e}")))?;
        if let NodeValue::Map(entries) = &node.value {
            for (key, value) in entries {
                dict.set_item(text_or_bytes(py, key), node_to_py(py, value)?)?;
            }
        }
    }
    if tables.0.len() > 1 {
        dict.set_item(pyo3::intern!(py, TABLE_INDEX), position.table_index)?;
    }
    if let Some(index) = position.row_index {
        dict.set_item(pyo3::intern!(py, ROW_INDEX), index)?;
    }
    if let Some(index) = position.range_index {
        dict.set_item(pyo3::intern!(py, RANGE_INDEX), index)?;
    }
    if position.key_switch {
        dict.set_item(pyo3::intern!(py, KEY_SWITCH), true)?;
    }
    Ok(dict)
}

/// The error of a row that could not become Python objects, as a `FormatError`.
pub(super) fn row_error(py: Python<'_>, kind: FormatKind, row: u64, error: PyErr) -> PyErr {
    raise(
        py,
        table::FormatError::new(kind.name(), error.value(py).to_string()).in_row(row),
    )
}

/// The next row of `source` as a dict, with the columns outside its schema.
pub(super) fn next_dict<'py>(
    py: Python<'py>,
    kind: FormatKind,
    tables: &Tables,
    source: &mut dyn RowSource,
    rows_read: &mut u64,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some((row, other)) = source
        .next_row_with_other_columns()
        .map_err(|e| raise(py, e.in_row(*rows_read)))?
    else {
        return Ok(None);
    };
    let dict = row_to_py(py, tables, &row.position, row.values, other)
        .map_err(|e| row_error(py, kind, *rows_read, e))?;
    *rows_read += 1;
    Ok(Some(dict))
}

/// Every remaining row of `source` as dicts; by blocks when no schema admits other columns.
pub(super) fn read_all<'py>(
    py: Python<'py>,
    kind: FormatKind,
    tables: &Tables,
    source: &mut dyn RowSource,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    let mut rows_read = 0u64;
    if tables.any_loose() {
        while let Some(dict) = next_dict(py, kind, tables, source, &mut rows_read)? {
            list.append(dict)?;
        }
        return Ok(list);
    }
    while let Some(block) = source
        .next_rows()
        .map_err(|e| raise(py, e.in_row(rows_read)))?
    {
        for i in 0..block.rows {
            let dict = row_to_py(py, tables, &block.position(i), block.values_of(i), None)
                .map_err(|e| row_error(py, kind, rows_read, e))?;
            list.append(dict)?;
            rows_read += 1;
        }
    }
    Ok(list)
}
