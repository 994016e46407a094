//! Schemas from Python arguments, and each table compiled once for the conversions: column
//! names and struct member names as interned Python strings (a dict lookup or insert with
//! one hashes nothing: the string keeps its hash), and each column's plan.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use shapeshift_types::{NodeValue, PhysicalType, PrimitiveType, TableSchema, Type};

use crate::skiff::node_arg;

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
pub(super) enum Plan {
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

pub(super) fn plan_of(ty: &Type) -> Plan {
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
pub(super) struct Table {
    pub(super) schema: TableSchema,
    pub(super) names: Vec<Py<PyString>>,
    pub(super) plans: Vec<Plan>,
    /// Each column type's member names (parallel to the columns).
    pub(super) members: Vec<Names>,
    pub(super) index: HashMap<String, usize>,
}

/// Every table of a schema argument, and the schemas as the registry takes them (kept once,
/// so that opening a source or sink borrows them instead of cloning).
pub(super) struct Tables(pub(super) Vec<Table>, Vec<TableSchema>);

impl Tables {
    pub(super) fn new(py: Python<'_>, schemas: Vec<TableSchema>) -> Tables {
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
                    members: schema
                        .columns
                        .iter()
                        .map(|c| Names::of(py, &c.ty))
                        .collect(),
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

    pub(super) fn schemas(&self) -> &[TableSchema] {
        &self.1
    }

    pub(super) fn any_loose(&self) -> bool {
        self.0.iter().any(|t| !t.schema.strict)
    }
}

/// A type's struct and variant member names as interned Python strings, in a tree parallel to
/// the type: `members` are the names of a struct (or variant struct) here, `items` the trees
/// of what the type holds (an optional's or list's item, each member or element, a dict's key
/// and value). Tags are looked through, as the conversions do.
#[derive(Default)]
pub(super) struct Names {
    pub(super) members: Vec<Py<PyString>>,
    items: Vec<Names>,
}

/// The tree of a type that holds nothing named.
static NO_NAMES: Names = Names {
    members: Vec::new(),
    items: Vec::new(),
};

impl Names {
    pub(super) fn of(py: Python<'_>, ty: &Type) -> Names {
        let all =
            |types: &mut dyn Iterator<Item = &Type>| types.map(|t| Names::of(py, t)).collect();
        let intern = |names: &mut dyn Iterator<Item = &str>| {
            names.map(|n| PyString::intern(py, n).unbind()).collect()
        };
        match ty.untagged() {
            Type::Optional(item) | Type::List(item) => Names {
                members: Vec::new(),
                items: vec![Names::of(py, item)],
            },
            Type::Struct(members) | Type::VariantStruct(members) => Names {
                members: intern(&mut members.iter().map(|m| m.name.as_str())),
                items: all(&mut members.iter().map(|m| &m.ty)),
            },
            Type::Tuple(types) | Type::VariantTuple(types) => Names {
                members: Vec::new(),
                items: all(&mut types.iter()),
            },
            Type::Dict { key, value } => Names {
                members: Vec::new(),
                items: vec![Names::of(py, key), Names::of(py, value)],
            },
            Type::Primitive(_) | Type::Decimal { .. } | Type::Tagged { .. } => Names::default(),
        }
    }

    /// The tree of the `i`-th thing the type holds (an optional's or list's item is 0, a
    /// dict's value 1); the empty tree past the end, for values the type does not describe.
    #[inline]
    pub(super) fn item(&self, i: usize) -> &Names {
        self.items.get(i).unwrap_or(&NO_NAMES)
    }

    /// Sets member `i` of a struct's dict under its interned name (under `name` when the tree
    /// has none, for a value the type does not describe).
    #[inline]
    pub(super) fn set_member(
        &self,
        dict: &Bound<'_, PyDict>,
        i: usize,
        name: &str,
        value: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        match self.members.get(i) {
            Some(interned) => dict.set_item(interned.bind(dict.py()), value),
            None => dict.set_item(name, value),
        }
    }
}
