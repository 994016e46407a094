//! Writing: Python objects to row values.

use std::rc::Rc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use shapeshift_formats::registry::FormatKind;
use shapeshift_formats::table::{OwnedRefs, RowPosition, RowSink};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{decimal_text_to_binary, Node, NodeValue, PrimitiveType, Type, Value};

use super::raise;
use super::tables::{plan_of, Names, Plan, Tables};
use super::to_py::{row_error, KEY_SWITCH, RANGE_INDEX, ROW_INDEX, TABLE_INDEX};
use crate::skiff::{py_bytes_arg, py_to_node, type_name};

pub(super) fn expected(what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
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

/// `obj` as a value of type `ty`; `names` is the type's [`Names`] tree.
fn py_to_typed(ty: &Type, names: &Names, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    match ty {
        Type::Tagged { item, .. } => py_to_typed(item, names, obj),
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
                py_to_typed(item, names.item(0), obj)
            } else if item.is_nullable() {
                let list = obj
                    .cast::<PyList>()
                    .ok()
                    .filter(|l| l.len() == 1)
                    .ok_or_else(|| expected("[value] (optional of a nullable type)", obj))?;
                Ok(Value::Some(Box::new(py_to_typed(
                    item,
                    names.item(0),
                    &list.get_item(0)?,
                )?)))
            } else {
                py_to_typed(item, names.item(0), obj)
            }
        }
        Type::List(item) => {
            if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() {
                return Err(expected("list", obj));
            }
            let names = names.item(0);
            if let Ok(list) = obj.cast_exact::<PyList>() {
                // A list's items directly, sized once (a subclass keeps its own `__iter__`).
                let mut items = Vec::with_capacity(list.len());
                for v in list.iter() {
                    items.push(py_to_typed(item, names, &v)?);
                }
                return Ok(Value::List(items));
            }
            let mut items = Vec::new();
            for v in obj.try_iter().map_err(|_| expected("list", obj))? {
                items.push(py_to_typed(item, names, &v?)?);
            }
            Ok(Value::List(items))
        }
        Type::Struct(members) => {
            if let Ok(dict) = obj.cast::<PyDict>() {
                let mut items = Vec::with_capacity(members.len());
                for (i, member) in members.iter().enumerate() {
                    let found = match names.members.get(i) {
                        Some(name) => dict.get_item(name.bind(dict.py()))?,
                        None => dict.get_item(&member.name)?,
                    };
                    items.push(match found {
                        Some(v) => py_to_typed(&member.ty, names.item(i), &v)?,
                        None => Value::Null,
                    });
                }
                Ok(Value::Tuple(items))
            } else {
                sequence(members.iter().map(|m| &m.ty), names, members.len(), obj)
            }
        }
        Type::Tuple(types) => sequence(types.iter(), names, types.len(), obj),
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
                Box::new(py_to_typed(&member.ty, names.item(index), &value)?),
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
                Box::new(py_to_typed(item, names.item(index), &value)?),
            ))
        }
        Type::Dict { key, value } => {
            let mut pairs = Vec::new();
            if let Ok(dict) = obj.cast::<PyDict>() {
                for (k, v) in dict.iter() {
                    pairs.push((
                        py_to_typed(key, names.item(0), &k)?,
                        py_to_typed(value, names.item(1), &v)?,
                    ));
                }
            } else {
                for item in obj.try_iter().map_err(|_| expected("dict", obj))? {
                    let (k, v) = pair(&item?, "(key, value)")?;
                    pairs.push((
                        py_to_typed(key, names.item(0), &k)?,
                        py_to_typed(value, names.item(1), &v)?,
                    ));
                }
            }
            Ok(Value::Dict(pairs))
        }
    }
}

fn sequence<'t>(
    types: impl Iterator<Item = &'t Type>,
    names: &Names,
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
            .enumerate()
            .map(|(i, (t, v))| py_to_typed(t, names.item(i), v))
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
pub(super) struct RowWriter {
    kind: FormatKind,
    tables: Rc<Tables>,
    sink: Box<dyn RowSink>,
    values: Vec<Value>,
    refs: OwnedRefs,
    pub(super) rows: u64,
    default_table: usize,
}

impl RowWriter {
    /// A writer of rows into `sink`, opened for `tables`' schemas.
    pub(super) fn new(
        kind: FormatKind,
        tables: Rc<Tables>,
        sink: Box<dyn RowSink>,
        default_table: usize,
    ) -> RowWriter {
        RowWriter {
            kind,
            tables,
            sink,
            values: Vec::new(),
            refs: OwnedRefs::new(),
            rows: 0,
            default_table,
        }
    }

    pub(super) fn write(&mut self, row: &Bound<'_, PyAny>) -> PyResult<()> {
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
        // The keys as interned Python strings, made once: a `&str` key would be a new
        // string, allocated and hashed, on every lookup of every row.
        let py = dict.py();
        if let Some(index) = dict.get_item(intern!(py, TABLE_INDEX))? {
            position.table_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(index) = dict.get_item(intern!(py, ROW_INDEX))? {
            position.row_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(index) = dict.get_item(intern!(py, RANGE_INDEX))? {
            position.range_index = index.extract()?;
            system_keys += 1;
        }
        if let Some(flag) = dict.get_item(intern!(py, KEY_SWITCH))? {
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
                        Plan::Typed => py_to_typed(ty, &table.members[c], &obj),
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

    pub(super) fn write_all(&mut self, rows: &Bound<'_, PyAny>) -> PyResult<()> {
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

    pub(super) fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        self.sink.finish().map_err(|e| raise(py, e))
    }
}
