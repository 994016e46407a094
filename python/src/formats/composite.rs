//! Composite column values (binary YSON) straight to Python objects.
//!
//! One walk of the value's YSON events guided by the column type, with no `Node` or `Value`
//! tree in between; whatever it does not cover goes back to the general path.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyTuple};
use shapeshift_formats::yson::{Event, PullParser, SliceSource, YsonType};
use shapeshift_types::{signed_range, unsigned_max, PrimitiveType, Type};

use super::tables::Names;
use crate::text::utf8_to_py;

/// A composite column's value straight from its binary YSON to Python objects, walked once
/// guided by the type (no `Node` and `Value` trees in between). It covers what most schemas
/// hold — lists, structs (named in member order, or positional), tuples, optionals of
/// non-nullable types, integers and date/time types (in range), doubles, booleans, strings —
/// and answers `None` for anything else or anything unexpected; the general path
/// (`value_from_ref` then `typed_to_py`) then reads the value again and gives its result or
/// its error.
pub(super) fn composite_to_py<'py>(
    py: Python<'py>,
    ty: &Type,
    names: &Names,
    bytes: &[u8],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut parser = PullParser::from_slice(bytes, YsonType::Node);
    let Walked::Value(object) = walk_yson(py, &mut parser, ty, names, 0)? else {
        return Ok(None);
    };
    Ok(matches!(parser.next_event(), Ok(None)).then_some(object))
}

/// What one step of [`walk_yson`] met.
enum Walked<'py> {
    Value(Bound<'py, PyAny>),
    /// The end of the enclosing list, where a value could have started.
    EndList,
    /// Left to the general path.
    Other,
}

/// Nesting the walk follows before leaving a value to the general path (which has its own
/// bound).
const WALK_DEPTH: usize = 64;

fn walk_yson<'py>(
    py: Python<'py>,
    parser: &mut PullParser<SliceSource<'_>>,
    ty: &Type,
    names: &Names,
    depth: usize,
) -> PyResult<Walked<'py>> {
    use PrimitiveType as P;
    let Ok(Some(event)) = parser.next_event() else {
        return Ok(Walked::Other);
    };
    let (ty, names, optional) = match ty.untagged() {
        Type::Optional(item) if !item.is_nullable() => (item.untagged(), names.item(0), true),
        other => (other, names, false),
    };
    let object = match (ty, event) {
        (_, Event::EndList) => return Ok(Walked::EndList),
        (_, Event::Entity) if optional => py.None().into_bound(py),
        (Type::Primitive(p), Event::Int64(v))
            if signed_range(*p).is_some_and(|(lo, hi)| (lo..=hi).contains(&v)) =>
        {
            v.into_pyobject(py)?.into_any()
        }
        (Type::Primitive(p), Event::Uint64(v)) if unsigned_max(*p).is_some_and(|hi| v <= hi) => {
            v.into_pyobject(py)?.into_any()
        }
        (Type::Primitive(P::Double), Event::Double(v)) => PyFloat::new(py, v).into_any(),
        (Type::Primitive(P::Bool), Event::Bool(b)) => PyBool::new(py, b).to_owned().into_any(),
        (Type::Primitive(P::String), Event::String(s)) => PyBytes::new(py, s).into_any(),
        (Type::Primitive(P::Utf8 | P::Json), Event::String(s)) => match utf8_to_py(py, s) {
            Some(text) => text,
            None => return Ok(Walked::Other),
        },
        _ if depth >= WALK_DEPTH => return Ok(Walked::Other),
        (Type::List(item), Event::BeginList) => {
            let list = PyList::empty(py);
            loop {
                match walk_yson(py, parser, item, names.item(0), depth + 1)? {
                    Walked::Value(v) => list.append(v)?,
                    Walked::EndList => break,
                    Walked::Other => return Ok(Walked::Other),
                }
            }
            list.into_any()
        }
        (Type::Struct(members), Event::BeginMap) => {
            let dict = PyDict::new(py);
            for (i, member) in members.iter().enumerate() {
                match parser.next_event() {
                    Ok(Some(Event::Key(key))) if key == member.name.as_bytes() => {}
                    _ => return Ok(Walked::Other),
                }
                match walk_yson(py, parser, &member.ty, names.item(i), depth + 1)? {
                    Walked::Value(v) => names.set_member(&dict, i, &member.name, v)?,
                    _ => return Ok(Walked::Other),
                }
            }
            if !matches!(parser.next_event(), Ok(Some(Event::EndMap))) {
                return Ok(Walked::Other);
            }
            dict.into_any()
        }
        (Type::Struct(members), Event::BeginList) => {
            let dict = PyDict::new(py);
            for (i, member) in members.iter().enumerate() {
                match walk_yson(py, parser, &member.ty, names.item(i), depth + 1)? {
                    Walked::Value(v) => names.set_member(&dict, i, &member.name, v)?,
                    _ => return Ok(Walked::Other),
                }
            }
            if !matches!(
                walk_yson(py, parser, ty, names, depth + 1)?,
                Walked::EndList
            ) {
                return Ok(Walked::Other);
            }
            dict.into_any()
        }
        (Type::Tuple(elements), Event::BeginList) => {
            let mut items = Vec::with_capacity(elements.len());
            for (i, element) in elements.iter().enumerate() {
                match walk_yson(py, parser, element, names.item(i), depth + 1)? {
                    Walked::Value(v) => items.push(v),
                    _ => return Ok(Walked::Other),
                }
            }
            if !matches!(
                walk_yson(py, parser, ty, names, depth + 1)?,
                Walked::EndList
            ) {
                return Ok(Walked::Other);
            }
            PyTuple::new(py, items)?.into_any()
        }
        _ => return Ok(Walked::Other),
    };
    Ok(Walked::Value(object))
}
