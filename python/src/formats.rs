//! `shapeshift._native.formats`: every row format of the registry, rows as Python dicts.
//!
//! Reading and writing go through the common row interface (`registry::open_source_with`,
//! `open_sink_with`), so a format added to `FormatKind::ALL` appears here with no edit. Each
//! table's columns get a plan once: scalar columns (primitives and optionals of them) are
//! built straight from the row's `ValueRef`s with the CPython constructors; composite columns
//! are walked once from their binary YSON guided by the type (`composite.rs`), and go
//! through `Value` only for the shapes that walk leaves aside. Column-name strings are created
//! once per reader/writer.
//!
//! Python values (see docs/formats/python.md): ints, floats, bools, bytes for `string`
//! (str for `utf8`/`json`), None for null, lists, dicts for structs, tuples for tuples,
//! `(name or index, value)` for variants, dicts for dicts (a list of pairs when a key is
//! unhashable), `[v]` for a present value of an optional whose item is nullable, `yson`
//! columns as Python objects (attributes as `{"$attributes": ..., "$value": ...}`), decimals
//! as their binary bytes (str or `decimal.Decimal` accepted when writing). Row positions are
//! `@table_index` (several tables), `@row_index`, `@range_index`, `@key_switch` keys; columns
//! outside a non-strict schema are plain keys.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Cursor, Read};
use std::rc::Rc;

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use shapeshift_formats::registry::{open_sink_with, open_source_with, FormatKind, FormatOptions};
use shapeshift_formats::table::{
    self, value_from_ref, OwnedRefs, RowPosition, RowSink, RowSource, SharedOutput,
};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{
    decimal_text_to_binary, Node, NodeValue, PhysicalType, PrimitiveType, TableSchema, Type, Value,
    ValueRef,
};

use crate::composite::composite_to_py;
use crate::skiff::{node_arg, node_to_py, py_bytes_arg, py_to_node, PyStream};

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

fn options(skiff_system_columns: bool) -> FormatOptions {
    FormatOptions {
        skiff_system_columns,
        ..FormatOptions::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas

/// Table schemas from a schema argument: a table schema (list of column dicts, or its YSON
/// text), or a list of them (one per table index).
pub(crate) fn schemas_arg(schema: &Bound<'_, PyAny>) -> PyResult<Vec<TableSchema>> {
    let bad =
        |e: shapeshift_types::TypeError| PyValueError::new_err(format!("bad table schema: {e}"));
    if let Ok(list) = schema.cast::<PyList>() {
        if !list.is_empty()
            && list.iter().all(|item| {
                item.cast::<PyString>().is_ok()
                    || item.cast::<PyBytes>().is_ok()
                    || item.cast::<PyList>().is_ok()
            })
        {
            return list
                .iter()
                .map(|item| TableSchema::from_node(&node_arg(&item)?).map_err(bad))
                .collect();
        }
    }
    let node = node_arg(schema)?;
    match &node.value {
        NodeValue::List(items)
            if !items.is_empty() && items.iter().all(|i| matches!(i.value, NodeValue::List(_))) =>
        {
            items
                .iter()
                .map(|item| TableSchema::from_node(item).map_err(bad))
                .collect()
        }
        NodeValue::List(_) => Ok(vec![TableSchema::from_node(&node).map_err(bad)?]),
        _ => Err(PyValueError::new_err(
            "schema must be a table schema (a list of {name, type_v3} columns, or its YSON \
             text), a list of table schemas, or a pyarrow schema",
        )),
    }
}

/// How a column's values become Python objects and back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Primitive (or optional of one) whose physical type is the Python type.
    Bool,
    Int,
    Uint,
    Double,
    Bytes,
    Text,
    /// Anything else: through `Value` and the column type.
    Typed,
}

fn plan_of(ty: &Type) -> Plan {
    let ty = match ty.untagged() {
        Type::Optional(item) if !item.is_nullable() => item.untagged(),
        other => other,
    };
    match ty {
        Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json) => Plan::Text,
        Type::Primitive(PrimitiveType::Yson | PrimitiveType::Null | PrimitiveType::Void) => {
            Plan::Typed
        }
        Type::Primitive(p) => match p.physical() {
            PhysicalType::Bool => Plan::Bool,
            PhysicalType::Int64 => Plan::Int,
            PhysicalType::Uint64 => Plan::Uint,
            PhysicalType::Double => Plan::Double,
            PhysicalType::String => Plan::Bytes,
            _ => Plan::Typed,
        },
        _ => Plan::Typed,
    }
}

/// A table's schema with its column names as Python strings and each column's plan.
struct Table {
    schema: TableSchema,
    names: Vec<Py<PyString>>,
    plans: Vec<Plan>,
    index: HashMap<String, usize>,
}

/// Every table of a schema argument, and the schemas as the registry takes them (kept once,
/// so that opening a source or sink borrows them instead of cloning).
struct Tables(Vec<Table>, Vec<TableSchema>);

impl Tables {
    fn new(py: Python<'_>, schemas: Vec<TableSchema>) -> Tables {
        let all = schemas.clone();
        Tables(
            schemas
                .into_iter()
                .map(|schema| Table {
                    names: schema
                        .columns
                        .iter()
                        .map(|c| PyString::intern(py, &c.name).unbind())
                        .collect(),
                    plans: schema.columns.iter().map(|c| plan_of(&c.ty)).collect(),
                    index: schema
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (c.name.clone(), i))
                        .collect(),
                    schema,
                })
                .collect(),
            all,
        )
    }

    fn schemas(&self) -> &[TableSchema] {
        &self.1
    }

    fn any_loose(&self) -> bool {
        self.0.iter().any(|t| !t.schema.strict)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading: values to Python

fn text_or_bytes<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyAny> {
    match std::str::from_utf8(bytes) {
        Ok(s) => PyString::new(py, s).into_any(),
        Err(_) => PyBytes::new(py, bytes).into_any(),
    }
}

fn typed_to_py<'py>(py: Python<'py>, ty: &Type, value: &Value) -> PyResult<Bound<'py, PyAny>> {
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
            let item = match ty {
                Type::Optional(item) => item,
                _ => ty,
            };
            PyList::new(py, [typed_to_py(py, item, inner)?])?.into_any()
        }
        Value::List(items) => {
            let item = match ty {
                Type::List(item) => &**item,
                Type::Optional(inner) => match inner.untagged() {
                    Type::List(item) => &**item,
                    other => other,
                },
                other => other,
            };
            let list = PyList::empty(py);
            for v in items {
                list.append(typed_to_py(py, item, v)?)?;
            }
            list.into_any()
        }
        Value::Tuple(items) => match strip_optional(ty) {
            Type::Struct(members) => {
                let dict = PyDict::new(py);
                for (member, v) in members.iter().zip(items) {
                    dict.set_item(&member.name, typed_to_py(py, &member.ty, v)?)?;
                }
                dict.into_any()
            }
            Type::Tuple(types) => {
                let elements = types
                    .iter()
                    .zip(items)
                    .map(|(t, v)| typed_to_py(py, t, v))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, elements)?.into_any()
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "a struct or tuple value for type {other:?}"
                )))
            }
        },
        Value::Variant(index, inner) => {
            let index = *index as usize;
            let (label, item): (Bound<'py, PyAny>, &Type) = match strip_optional(ty) {
                Type::VariantStruct(members) if index < members.len() => (
                    PyString::new(py, &members[index].name).into_any(),
                    &members[index].ty,
                ),
                Type::VariantTuple(types) if index < types.len() => {
                    (index.into_pyobject(py)?.into_any(), &types[index])
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "variant alternative {index} of type {other:?}"
                    )))
                }
            };
            PyTuple::new(py, [label, typed_to_py(py, item, inner)?])?.into_any()
        }
        Value::Dict(pairs) => {
            let (key_ty, value_ty) = match strip_optional(ty) {
                Type::Dict { key, value } => (&**key, &**value),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "a dict value for type {other:?}"
                    )))
                }
            };
            let mut converted = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                converted.push((typed_to_py(py, key_ty, k)?, typed_to_py(py, value_ty, v)?));
            }
            let dict = PyDict::new(py);
            let mut hashable = true;
            for (k, v) in &converted {
                if dict.set_item(k, v).is_err() {
                    hashable = false;
                    break;
                }
            }
            if hashable {
                dict.into_any()
            } else {
                let list = PyList::empty(py);
                for (k, v) in converted {
                    list.append(PyTuple::new(py, [k, v])?)?;
                }
                list.into_any()
            }
        }
    })
}

fn strip_optional(ty: &Type) -> &Type {
    match ty.untagged() {
        Type::Optional(item) => item.untagged(),
        other => other,
    }
}

fn value_ref_to_py<'py>(
    py: Python<'py>,
    plan: Plan,
    ty: &Type,
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
        ValueRef::Composite(bytes) => match composite_to_py(py, ty, bytes)? {
            Some(object) => object,
            None => {
                let owned = value_from_ref(value, ty)
                    .map_err(|e| PyValueError::new_err(format!("column value: {e}")))?;
                typed_to_py(py, ty, &owned)?
            }
        },
        ValueRef::Any(_) => {
            let owned = value_from_ref(value, ty)
                .map_err(|e| PyValueError::new_err(format!("column value: {e}")))?;
            typed_to_py(py, ty, &owned)?
        }
    })
}

/// Keys of the row positions in a row dict (YT's control attributes as row fields).
const TABLE_INDEX: &str = "@table_index";
const ROW_INDEX: &str = "@row_index";
const RANGE_INDEX: &str = "@range_index";
const KEY_SWITCH: &str = "@key_switch";

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
        let object = value_ref_to_py(py, table.plans[c], &table.schema.columns[c].ty, *value)
            .map_err(|e| {
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
        dict.set_item(TABLE_INDEX, position.table_index)?;
    }
    if let Some(index) = position.row_index {
        dict.set_item(ROW_INDEX, index)?;
    }
    if let Some(index) = position.range_index {
        dict.set_item(RANGE_INDEX, index)?;
    }
    if position.key_switch {
        dict.set_item(KEY_SWITCH, true)?;
    }
    Ok(dict)
}

/// The error of a row that could not become Python objects, as a `FormatError`.
fn row_error(py: Python<'_>, kind: FormatKind, row: u64, error: PyErr) -> PyErr {
    raise(
        py,
        table::FormatError::new(kind.name(), error.value(py).to_string()).in_row(row),
    )
}

/// The next row of `source` as a dict, with the columns outside its schema.
fn next_dict<'py>(
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
fn read_all<'py>(
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

// ---------------------------------------------------------------------------------------------
// Writing: Python to values

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

fn expected(what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("expected {what}, got {}", type_name(obj)))
}

fn py_string_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes().to_vec());
    }
    py_bytes_arg(obj).ok_or_else(|| expected("str or bytes", obj))
}

fn scalar_to_value(plan: Plan, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    Ok(match plan {
        Plan::Bool => Value::Bool(
            obj.cast::<PyBool>()
                .map_err(|_| expected("bool", obj))?
                .is_true(),
        ),
        Plan::Int => {
            if obj.cast::<PyInt>().is_err() || obj.cast::<PyBool>().is_ok() {
                return Err(expected("int", obj));
            }
            Value::Int64(obj.extract()?)
        }
        Plan::Uint => {
            if obj.cast::<PyInt>().is_err() || obj.cast::<PyBool>().is_ok() {
                return Err(expected("int", obj));
            }
            Value::Uint64(obj.extract()?)
        }
        Plan::Double => {
            if let Ok(f) = obj.cast::<PyFloat>() {
                Value::Double(f.value())
            } else if obj.cast::<PyInt>().is_ok() && obj.cast::<PyBool>().is_err() {
                Value::Double(obj.extract()?)
            } else {
                return Err(expected("float", obj));
            }
        }
        Plan::Bytes | Plan::Text => Value::String(py_string_bytes(obj)?),
        Plan::Typed => return Err(PyTypeError::new_err("a typed column has no scalar plan")),
    })
}

fn py_to_typed(ty: &Type, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    match ty {
        Type::Tagged { item, .. } => py_to_typed(item, obj),
        Type::Primitive(PrimitiveType::Yson) => {
            if obj.is_none() {
                Ok(Value::Null)
            } else {
                Ok(Value::Any(py_to_node(obj, 0)?))
            }
        }
        Type::Primitive(PrimitiveType::Null | PrimitiveType::Void) => {
            if obj.is_none() {
                Ok(Value::Null)
            } else {
                Err(expected("None", obj))
            }
        }
        Type::Primitive(_) => scalar_to_value(plan_of(ty), obj),
        Type::Decimal { precision, scale } => {
            if obj.is_none() {
                return Ok(Value::Null);
            }
            if let Ok(b) = obj.cast::<PyBytes>() {
                return Ok(Value::String(b.as_bytes().to_vec()));
            }
            // str or decimal.Decimal: its text.
            let text = obj.str()?;
            decimal_text_to_binary(text.to_str()?, *precision, *scale)
                .map(Value::String)
                .map_err(|e| PyValueError::new_err(e.to_string()))
        }
        Type::Optional(item) => {
            if obj.is_none() {
                Ok(Value::Null)
            } else if matches!(item.untagged(), Type::Primitive(PrimitiveType::Yson)) {
                // `optional<yson>` is YT's usual `any` column: its value is the node itself.
                py_to_typed(item, obj)
            } else if item.is_nullable() {
                let list = obj
                    .cast::<PyList>()
                    .ok()
                    .filter(|l| l.len() == 1)
                    .ok_or_else(|| expected("[value] (optional of a nullable type)", obj))?;
                Ok(Value::Some(Box::new(py_to_typed(
                    item,
                    &list.get_item(0)?,
                )?)))
            } else {
                py_to_typed(item, obj)
            }
        }
        Type::List(item) => {
            if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() {
                return Err(expected("list", obj));
            }
            let mut items = Vec::new();
            for v in obj.try_iter().map_err(|_| expected("list", obj))? {
                items.push(py_to_typed(item, &v?)?);
            }
            Ok(Value::List(items))
        }
        Type::Struct(members) => {
            if let Ok(dict) = obj.cast::<PyDict>() {
                let mut items = Vec::with_capacity(members.len());
                for member in members {
                    items.push(match dict.get_item(&member.name)? {
                        Some(v) => py_to_typed(&member.ty, &v)?,
                        None => Value::Null,
                    });
                }
                Ok(Value::Tuple(items))
            } else {
                sequence(members.iter().map(|m| &m.ty), members.len(), obj)
            }
        }
        Type::Tuple(types) => sequence(types.iter(), types.len(), obj),
        Type::VariantStruct(members) => {
            let (label, value) = variant_pair(obj)?;
            let name = label.cast::<PyString>().ok().map(|s| s.to_string());
            let index = match name {
                Some(name) => members
                    .iter()
                    .position(|m| m.name == name)
                    .ok_or_else(|| PyValueError::new_err(format!("no variant member {name:?}")))?,
                None => label.extract::<usize>()?,
            };
            let member = members
                .get(index)
                .ok_or_else(|| PyValueError::new_err(format!("no variant member {index}")))?;
            Ok(Value::Variant(
                index as u32,
                Box::new(py_to_typed(&member.ty, &value)?),
            ))
        }
        Type::VariantTuple(types) => {
            let (label, value) = variant_pair(obj)?;
            let index: usize = label.extract()?;
            let item = types
                .get(index)
                .ok_or_else(|| PyValueError::new_err(format!("no variant element {index}")))?;
            Ok(Value::Variant(
                index as u32,
                Box::new(py_to_typed(item, &value)?),
            ))
        }
        Type::Dict { key, value } => {
            let mut pairs = Vec::new();
            if let Ok(dict) = obj.cast::<PyDict>() {
                for (k, v) in dict.iter() {
                    pairs.push((py_to_typed(key, &k)?, py_to_typed(value, &v)?));
                }
            } else {
                for item in obj.try_iter().map_err(|_| expected("dict", obj))? {
                    let (k, v) = pair(&item?, "(key, value)")?;
                    pairs.push((py_to_typed(key, &k)?, py_to_typed(value, &v)?));
                }
            }
            Ok(Value::Dict(pairs))
        }
    }
}

fn sequence<'t>(
    types: impl Iterator<Item = &'t Type>,
    len: usize,
    obj: &Bound<'_, PyAny>,
) -> PyResult<Value> {
    if obj.cast::<PyList>().is_err() && obj.cast::<PyTuple>().is_err() {
        return Err(expected("dict, list or tuple", obj));
    }
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    if items.len() != len {
        return Err(PyValueError::new_err(format!(
            "{} elements for {len} members",
            items.len()
        )));
    }
    Ok(Value::Tuple(
        types
            .zip(&items)
            .map(|(t, v)| py_to_typed(t, v))
            .collect::<PyResult<_>>()?,
    ))
}

/// The two items of a 2-tuple or 2-list.
fn pair<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if obj.cast::<PyList>().is_err() && obj.cast::<PyTuple>().is_err() {
        return Err(expected(what, obj));
    }
    let mut items = obj.try_iter()?;
    match (items.next(), items.next(), items.next()) {
        (Some(first), Some(second), None) => Ok((first?, second?)),
        _ => Err(expected(what, obj)),
    }
}

fn variant_pair<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    pair(obj, "(name or index, value)")
}

/// A writer of rows of any format into any `Write`.
struct RowWriter {
    kind: FormatKind,
    tables: Rc<Tables>,
    sink: Box<dyn RowSink>,
    values: Vec<Value>,
    refs: OwnedRefs,
    rows: u64,
    default_table: usize,
}

impl RowWriter {
    fn open(
        py: Python<'_>,
        kind: FormatKind,
        tables: Rc<Tables>,
        output: Box<dyn std::io::Write>,
        options: &FormatOptions,
        default_table: usize,
    ) -> PyResult<RowWriter> {
        let sink =
            open_sink_with(kind, tables.schemas(), output, options).map_err(|e| raise(py, e))?;
        Ok(RowWriter {
            kind,
            tables,
            sink,
            values: Vec::new(),
            refs: OwnedRefs::new(),
            rows: 0,
            default_table,
        })
    }

    fn write(&mut self, row: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = row.py();
        let number = self.rows;
        let kind = self.kind;
        let fail = |e: PyErr| row_error(py, kind, number, e);
        let dict = row
            .cast::<PyDict>()
            .map_err(|_| fail(expected("a row dict", row)))?;
        let (position, other) = self.collect(dict).map_err(fail)?;
        let schema = &self.tables.0[position.table_index].schema;
        let result = match other {
            None => self.sink.write_owned_row(&position, &self.values),
            Some(other) => {
                let refs = self
                    .refs
                    .refs(&self.values, schema)
                    .map_err(|e| fail(PyValueError::new_err(e.to_string())))?;
                self.sink
                    .write_row_with_other_columns(&position, refs, Some(&other))
            }
        };
        result.map_err(|e| raise(py, e.in_row(number)))?;
        self.rows += 1;
        Ok(())
    }

    /// Fills `self.values` from `dict`; returns the row's position and its columns outside
    /// the schema (binary YSON map), if any.
    fn collect(&mut self, dict: &Bound<'_, PyDict>) -> PyResult<(RowPosition, Option<Vec<u8>>)> {
        let mut position = RowPosition {
            table_index: self.default_table,
            ..RowPosition::default()
        };
        let mut system_keys = 0;
        if let Some(index) = dict.get_item(TABLE_INDEX)? {
            position.table_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(index) = dict.get_item(ROW_INDEX)? {
            position.row_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(index) = dict.get_item(RANGE_INDEX)? {
            position.range_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(flag) = dict.get_item(KEY_SWITCH)? {
            position.key_switch = flag.is_truthy()?;
            system_keys += 1;
        }
        let table = self.tables.0.get(position.table_index).ok_or_else(|| {
            PyValueError::new_err(format!(
                "table index {} but {} table schema(s)",
                position.table_index,
                self.tables.0.len()
            ))
        })?;
        self.values.clear();
        let mut found = 0;
        for (c, name) in table.names.iter().enumerate() {
            let value = match dict.get_item(name.bind(dict.py()))? {
                None => Value::Null,
                Some(obj) => {
                    found += 1;
                    let ty = &table.schema.columns[c].ty;
                    match table.plans[c] {
                        Plan::Typed => py_to_typed(ty, &obj),
                        plan => scalar_to_value(plan, &obj),
                    }
                    .map_err(|e| {
                        PyValueError::new_err(format!(
                            "column {:?}: {}",
                            table.schema.columns[c].name,
                            e.value(dict.py())
                        ))
                    })?
                }
            };
            self.values.push(value);
        }
        if found + system_keys == dict.len() {
            return Ok((position, None));
        }
        let mut entries = Vec::new();
        for (key, value) in dict.iter() {
            let key = py_string_bytes(&key)?;
            let known = std::str::from_utf8(&key)
                .map(|k| table.index.contains_key(k) || k.starts_with('@'))
                .unwrap_or(false);
            if !known {
                entries.push((key, py_to_node(&value, 0)?));
            }
        }
        let other = yson::to_vec(&Node::new(NodeValue::Map(entries)), YsonFormat::Binary);
        Ok((position, Some(other)))
    }

    fn write_all(&mut self, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(list) = rows.cast::<PyList>() {
            for row in list.iter() {
                self.write(&row)?;
            }
            return Ok(());
        }
        for row in rows.try_iter()? {
            self.write(&row?)?;
        }
        Ok(())
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        self.sink.finish().map_err(|e| raise(py, e))
    }
}

// ---------------------------------------------------------------------------------------------
// The Python API

/// Every row of `data` (bytes) in `format`, as a list of dicts.
#[pyfunction]
#[pyo3(signature = (data, format, schema, *, skiff_system_columns=false))]
fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    format: &str,
    schema: &Bound<'py, PyAny>,
    skiff_system_columns: bool,
) -> PyResult<Bound<'py, PyList>> {
    let tables = Tables::new(py, schemas_arg(schema)?);
    loads_with(
        py,
        data,
        kind_of(format)?,
        &tables,
        &options(skiff_system_columns),
    )
}

fn loads_with<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    kind: FormatKind,
    tables: &Tables,
    options: &FormatOptions,
) -> PyResult<Bound<'py, PyList>> {
    let bytes = py_bytes_arg(data).ok_or_else(|| expected("bytes", data))?;
    let mut source = open_source_with(
        kind,
        tables.schemas(),
        Box::new(Cursor::new(bytes)),
        options,
    )
    .map_err(|e| raise(py, e))?;
    read_all(py, kind, tables, source.as_mut())
}

/// Rows (an iterable of dicts) as bytes of `format`; `table_index` is the table of rows
/// without `@table_index`.
#[pyfunction]
#[pyo3(signature = (rows, format, schema, *, table_index=0, skiff_system_columns=false))]
fn dumps<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    format: &str,
    schema: &Bound<'py, PyAny>,
    table_index: usize,
    skiff_system_columns: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let tables = Rc::new(Tables::new(py, schemas_arg(schema)?));
    let options = options(skiff_system_columns);
    dumps_with(py, rows, kind_of(format)?, tables, &options, table_index)
}

fn dumps_with<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    kind: FormatKind,
    tables: Rc<Tables>,
    options: &FormatOptions,
    table_index: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let output = SharedOutput::default();
    let mut writer = RowWriter::open(
        py,
        kind,
        tables,
        Box::new(output.clone()),
        options,
        table_index,
    )?;
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
    #[pyo3(signature = (stream, format, schema, *, skiff_system_columns=false))]
    fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        skiff_system_columns: bool,
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
            &options(skiff_system_columns),
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
    #[pyo3(signature = (stream, format, schema, *, table_index=0, skiff_system_columns=false))]
    fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        table_index: usize,
        skiff_system_columns: bool,
    ) -> PyResult<Self> {
        let output = BufWriter::with_capacity(
            BUFFER,
            PyStream {
                stream: stream.clone().unbind(),
            },
        );
        let writer = RowWriter::open(
            py,
            kind_of(format)?,
            Rc::new(Tables::new(py, schemas_arg(schema)?)),
            Box::new(output),
            &options(skiff_system_columns),
            table_index,
        )?;
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
/// `loads(data)` as the module's functions, without parsing the schema on every call (what a
/// caller sending many small messages pays otherwise).
#[pyclass(name = "Codec", module = "shapeshift._native.formats", unsendable)]
struct PyCodec {
    kind: FormatKind,
    tables: Rc<Tables>,
    options: FormatOptions,
}

#[pymethods]
impl PyCodec {
    #[new]
    #[pyo3(signature = (format, schema, *, skiff_system_columns=false))]
    fn new(
        py: Python<'_>,
        format: &str,
        schema: &Bound<'_, PyAny>,
        skiff_system_columns: bool,
    ) -> PyResult<Self> {
        Ok(PyCodec {
            kind: kind_of(format)?,
            tables: Rc::new(Tables::new(py, schemas_arg(schema)?)),
            options: options(skiff_system_columns),
        })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.kind.name()
    }

    #[pyo3(signature = (rows, *, table_index=0))]
    fn dumps<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        table_index: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        dumps_with(
            py,
            rows,
            self.kind,
            self.tables.clone(),
            &self.options,
            table_index,
        )
    }

    fn loads<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        loads_with(py, data, self.kind, &self.tables, &self.options)
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
    module.add("FormatError", module.py().get_type::<FormatError>())?;
    Ok(())
}
