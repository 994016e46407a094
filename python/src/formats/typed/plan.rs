//! A dataclass matched against a table schema once: which attribute carries each column or
//! struct member, where it sits in the instance, and the YT type its values must hold.
//!
//! The Python side (`shapeshift.formats.TypedCodec`) reads the class's annotations into a
//! description of nested tuples — `("struct", cls, {field: description})`, `("list", d)`,
//! `("optional", d)`, `("dict", key, value)`, `("int", enum class or None)`, `("float",)`, `("bool",)`, `("str",)`,
//! `("bytes",)` — and this module checks it against the schema's type: every member has a field
//! of its name and kind, and every field a member (nothing silently left out). A field kept in
//! a `__slots__` member of the class is read and written at its offset; any other through
//! attribute access.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use shapeshift_types::{signed_range, unsigned_max, PrimitiveType, Type};

/// How one value is carried.
pub(super) enum Node {
    Struct(Box<StructPlan>),
    List(Box<Node>),
    /// A dict: its keys' and values' nodes (keys are scalars, hashable).
    Dict(Box<Node>, Box<Node>),
    Optional(Box<Node>),
    Int {
        lo: i64,
        hi: i64,
        enumeration: Option<Box<EnumPlan>>,
    },
    Uint {
        max: u64,
        enumeration: Option<Box<EnumPlan>>,
    },
    Float32,
    Float64,
    Bool,
    Str,
    /// A str in a `string` column: written as its UTF-8 bytes (what the row codecs write for
    /// the column), read back from UTF-8.
    StrOfBytes,
    Bytes,
}

impl Node {
    /// A value with no members (ints, floats, bools, strs, bytes), or an optional one.
    pub(super) fn is_scalar(&self) -> bool {
        match self {
            Node::Optional(item) => !matches!(
                **item,
                Node::Struct(_) | Node::List(_) | Node::Dict(..) | Node::Optional(_)
            ),
            Node::Struct(_) | Node::List(_) | Node::Dict(..) => false,
            _ => true,
        }
    }
}

pub(super) struct StructPlan {
    pub cls: Py<PyType>,
    /// The class's name, for serde.
    pub name: &'static str,
    /// The schema's members in order, each with its field.
    pub fields: Vec<Field>,
    /// The member names, for serde.
    pub keys: &'static [&'static str],
    /// The empty tuple `object.__new__` is called with.
    pub no_args: Py<PyTuple>,
    pub post_init: bool,
}

pub(super) struct Field {
    pub name: &'static str,
    pub py_name: Py<PyString>,
    pub access: Access,
    pub node: Node,
}

#[derive(Clone, Copy)]
pub(super) enum Access {
    /// A `__slots__` member of the class: the object pointer at this byte offset.
    Slot(isize),
    /// Attribute access (`__dict__` classes, properties).
    Attr,
}

/// An enum class of integer values: its members by value, for reading.
pub(super) struct EnumPlan {
    pub cls: Py<PyAny>,
    /// Members of values 0..len, where the class has them.
    pub small: Vec<Option<Py<PyAny>>>,
}

/// The plan of `description` (the row's class) for `row` (the schema's row type).
///
/// # Errors
/// A `TypeError` naming the member where the class and the schema disagree, or a type the
/// typed path does not carry.
pub(super) fn compile(description: &Bound<'_, PyAny>, row: &Type) -> PyResult<Node> {
    node(description, row, "")
}

fn node(d: &Bound<'_, PyAny>, ty: &Type, at: &str) -> PyResult<Node> {
    let ty = untagged(ty);
    let d: &Bound<'_, PyTuple> = d.cast().map_err(PyErr::from)?;
    let kind: String = d.get_item(0)?.extract()?;
    let mismatch = |wants: &str| {
        PyTypeError::new_err(format!(
            "{}: the schema's type is {}; {wants}",
            if at.is_empty() { "the row" } else { at },
            describe(ty)
        ))
    };
    let primitive = match ty {
        Type::Primitive(p) => Some(*p),
        _ => None,
    };
    Ok(match (kind.as_str(), ty) {
        ("struct", Type::Struct(members)) => {
            Node::Struct(Box::new(struct_plan(d, members, at)?))
        }
        ("struct", _) => return Err(mismatch("the annotation is a dataclass")),
        ("list", Type::List(item)) => Node::List(Box::new(node(&d.get_item(1)?, item, &format!("{at}[]"))?)),
        ("list", _) => return Err(mismatch("the annotation is a list")),
        ("dict", Type::Dict { key, value }) => {
            let k = node(&d.get_item(1)?, key, &format!("{at}{{key}}"))?;
            if !matches!(k, Node::Int { .. } | Node::Uint { .. } | Node::Float32 | Node::Float64 | Node::Bool | Node::Str | Node::StrOfBytes | Node::Bytes) {
                return Err(mismatch("a Python dict's keys are scalars here (int, float, bool, str, bytes)"));
            }
            let v = node(&d.get_item(2)?, value, &format!("{at}{{value}}"))?;
            Node::Dict(Box::new(k), Box::new(v))
        }
        ("dict", _) => return Err(mismatch("the annotation is a dict")),
        ("optional", Type::Optional(item)) => {
            Node::Optional(Box::new(node(&d.get_item(1)?, item, at)?))
        }
        ("optional", _) => return Err(mismatch("the annotation allows None; a required column or member never holds None")),
        (_, Type::Optional(_)) => {
            return Err(mismatch("annotate it `... | None`: an optional column or member can be None"))
        }
        ("int", _) => {
            let enumeration = enum_plan(&d.get_item(1)?)?;
            match primitive.map(|p| (signed_range(p), unsigned_max(p))) {
                Some((Some((lo, hi)), _)) => Node::Int { lo, hi, enumeration },
                Some((_, Some(max))) => Node::Uint { max, enumeration },
                _ => return Err(mismatch("the annotation is int")),
            }
        }
        ("float", _) => match primitive {
            Some(PrimitiveType::Float) => Node::Float32,
            Some(PrimitiveType::Double) => Node::Float64,
            _ => return Err(mismatch("the annotation is float")),
        },
        ("bool", _) => match primitive {
            Some(PrimitiveType::Bool) => Node::Bool,
            _ => return Err(mismatch("the annotation is bool")),
        },
        ("str", _) => match primitive {
            Some(PrimitiveType::Utf8 | PrimitiveType::Json) => Node::Str,
            Some(PrimitiveType::String) => Node::StrOfBytes,
            _ => return Err(mismatch("the annotation is str")),
        },
        ("bytes", _) => match primitive {
            Some(PrimitiveType::String) => Node::Bytes,
            _ => return Err(mismatch("the annotation is bytes")),
        },
        (other, _) => {
            return Err(mismatch(&format!(
                "the annotation ({other}) is not one the typed path carries: int, float, bool, str, bytes, \
                 an int enum, list[...], dict[..., ...], ... | None or a dataclass (use dict rows for the others)"
            )))
        }
    })
}

fn untagged(ty: &Type) -> &Type {
    match ty {
        Type::Tagged { item, .. } => untagged(item),
        other => other,
    }
}

fn describe(ty: &Type) -> String {
    let text =
        shapeshift_formats::yson::to_vec(&ty.to_node(), shapeshift_formats::yson::YsonFormat::Text);
    String::from_utf8_lossy(&text).into_owned()
}

fn struct_plan(
    d: &Bound<'_, PyTuple>,
    members: &[shapeshift_types::Member],
    at: &str,
) -> PyResult<StructPlan> {
    let py = d.py();
    let cls: Bound<'_, PyType> = d.get_item(1)?.cast_into().map_err(PyErr::from)?;
    let fields: Bound<'_, PyDict> = d.get_item(2)?.cast_into().map_err(PyErr::from)?;
    let class_name = cls.name()?.to_string();
    for key in fields.keys() {
        let key: String = key.extract()?;
        if !members.iter().any(|m| m.name == key) {
            return Err(PyTypeError::new_err(format!(
                "{}: field `{key}` of {class_name} is no member of the schema's struct; it would be lost",
                if at.is_empty() { "the row" } else { at }
            )));
        }
    }
    let mut planned = Vec::with_capacity(members.len());
    for member in members {
        let path = if at.is_empty() {
            member.name.clone()
        } else {
            format!("{at}.{}", member.name)
        };
        let Some(description) = fields.get_item(&member.name)? else {
            return Err(PyTypeError::new_err(format!(
                "{path}: {class_name} has no field `{}` for this member of the schema",
                member.name
            )));
        };
        let py_name = PyString::intern(py, &member.name);
        planned.push(Field {
            name: leak(&member.name),
            access: access(&cls, &py_name)?,
            py_name: py_name.unbind(),
            node: node(&description, &member.ty, &path)?,
        });
    }
    let keys: Vec<&'static str> = planned.iter().map(|f| f.name).collect();
    Ok(StructPlan {
        name: leak(&class_name),
        post_init: cls.hasattr("__post_init__")?,
        cls: cls.unbind(),
        fields: planned,
        keys: leak_keys(keys),
        no_args: PyTuple::empty(py).unbind(),
    })
}

/// Where `cls` keeps attribute `name`: the offset of a `__slots__` member found along its MRO.
fn access(cls: &Bound<'_, PyType>, name: &Bound<'_, PyString>) -> PyResult<Access> {
    for klass in cls
        .getattr("__mro__")?
        .cast_into::<PyTuple>()
        .map_err(PyErr::from)?
        .iter()
    {
        let namespace = klass.getattr("__dict__")?;
        let Ok(found) = namespace.get_item(name) else {
            continue;
        };
        // SAFETY: the type check makes `found` a member descriptor, whose layout the FFI
        // declares; its PyMemberDef lives as long as the class.
        unsafe {
            let ptr = found.as_ptr();
            if ffi::Py_TYPE(ptr) != std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type) {
                return Ok(Access::Attr);
            }
            let member =
                (*ptr.cast::<ffi::PyMemberDescrObject>()).d_member as *const ffi::PyMemberDef;
            if (*member).type_code == ffi::Py_T_OBJECT_EX && (*member).flags & ffi::Py_READONLY == 0
            {
                return Ok(Access::Slot((*member).offset));
            }
            return Ok(Access::Attr);
        }
    }
    Ok(Access::Attr)
}

fn enum_plan(cls: &Bound<'_, PyAny>) -> PyResult<Option<Box<EnumPlan>>> {
    if cls.is_none() {
        return Ok(None);
    }
    let mut small: Vec<Option<Py<PyAny>>> = Vec::new();
    for member in cls.try_iter()? {
        let member = member?;
        let value: i128 = member.getattr("value")?.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "enum {cls}: an integer column takes enums of int values"
            ))
        })?;
        if (0..256).contains(&value) {
            let i = value as usize;
            if small.len() <= i {
                small.resize_with(i + 1, || None);
            }
            small[i].get_or_insert(member.unbind());
        }
    }
    Ok(Some(Box::new(EnumPlan {
        cls: cls.clone().unbind(),
        small,
    })))
}

/// `name` as a `&'static str` serde takes, leaked once per distinct name.
fn leak(name: &str) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = names.iter().find(|n| **n == name) {
        return found;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(leaked);
    leaked
}

/// A struct's member names as serde's `&'static` field list, leaked once per distinct list.
fn leak_keys(keys: Vec<&'static str>) -> &'static [&'static str] {
    static LISTS: Mutex<Option<HashMap<Vec<&'static str>, &'static [&'static str]>>> =
        Mutex::new(None);
    let mut lists = LISTS.lock().unwrap_or_else(|e| e.into_inner());
    let lists = lists.get_or_insert_with(HashMap::new);
    if let Some(found) = lists.get(&keys) {
        return found;
    }
    let leaked: &'static [&'static str] = Box::leak(keys.clone().into_boxed_slice());
    lists.insert(keys, leaked);
    leaked
}
