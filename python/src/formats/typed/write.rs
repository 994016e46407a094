//! A Python object as the serde value the plan describes, read straight from the objects (no
//! row of `Value`s, no dicts): slot members at their offsets, lists by index, strings from
//! CPython's cached UTF-8. Values are checked against their YT types here, so the
//! self-describing formats refuse what the schema formats refuse.
//!
//! Invariant: every compound value is held by a reference of its own while it is written (a
//! slot's, a list item's, a dict entry's, an attribute's), since attribute access
//! (`Access::Attr`, or an object of a subclass) may run Python code that changes what the
//! walk came from; a list's length is read again before each item, and a dict is walked by
//! `PyDict_Next`, which stays within its table. A scalar in a slot or a list is borrowed:
//! writing one runs no Python code (but reading an enum member's value, which holds it
//! first).

use pyo3::ffi;
use serde::ser::{Error as _, SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::plan::{Access, EnumPlan, Node};
use super::{type_name, Failure, Owned, Step};

/// One value of the object tree: `obj` (borrowed) as `node` says.
pub(super) struct Typed<'a> {
    pub node: &'a Node,
    pub obj: *mut ffi::PyObject,
    pub failure: &'a Failure,
}

impl<'a> Typed<'a> {
    /// `obj` as `node` says, in this walk.
    fn of(&self, node: &'a Node, obj: &Owned) -> Typed<'a> {
        Typed {
            node,
            obj: obj.as_ptr(),
            failure: self.failure,
        }
    }

    /// `obj`, a scalar `node` (`Node::is_scalar`) holds, in this walk, written inline; `obj`
    /// may be borrowed.
    fn scalar_of(&self, node: &'a Node, obj: *mut ffi::PyObject) -> Scalar<'a> {
        Scalar(Typed {
            node,
            obj,
            failure: self.failure,
        })
    }

    #[cold]
    fn fail<E: serde::ser::Error>(&self, message: String) -> E {
        E::custom(self.failure.set(message))
    }

    #[cold]
    fn wrong<E: serde::ser::Error>(&self, expected: &str) -> E {
        // SAFETY: `obj` is a live object (borrowed for this call).
        let got = unsafe { type_name(self.obj) };
        self.fail(format!("expected {expected}, got {got}"))
    }
}

impl Serialize for Typed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj;
        // SAFETY: `obj` is a live object the caller holds a reference to, and the GIL is held
        // (the codec's methods run with it); see the module's invariant.
        unsafe {
            match self.node {
                Node::Struct(plan) => {
                    let cls = plan.cls.as_ptr().cast::<ffi::PyTypeObject>();
                    let exact = ffi::Py_TYPE(obj) == cls;
                    if !exact && ffi::PyObject_IsInstance(obj, cls.cast()) != 1 {
                        ffi::PyErr_Clear();
                        return Err(self.wrong(&format!("a {}", plan.name)));
                    }
                    let mut out = s.serialize_struct(plan.name, plan.fields.len())?;
                    for field in &plan.fields {
                        let written = match (exact, field.access) {
                            (true, Access::Slot(offset)) => {
                                let slot =
                                    *obj.cast::<u8>().offset(offset).cast::<*mut ffi::PyObject>();
                                if slot.is_null() {
                                    let e = self.failure.set("the attribute is not set".into());
                                    self.failure.within(Step::Member(field.name));
                                    return Err(S::Error::custom(e));
                                }
                                if field.node.is_scalar() {
                                    // Borrowed: no Python code runs while a scalar is written.
                                    out.serialize_field(
                                        field.name,
                                        &self.scalar_of(&field.node, slot),
                                    )
                                } else {
                                    let value = Owned::from_borrowed(slot);
                                    out.serialize_field(field.name, &self.of(&field.node, &value))
                                }
                            }
                            _ => {
                                let got = ffi::PyObject_GetAttr(obj, field.py_name.as_ptr());
                                if got.is_null() {
                                    let e = self.failure.set(super::fetch_error());
                                    self.failure.within(Step::Member(field.name));
                                    return Err(S::Error::custom(e));
                                }
                                let value = Owned::take(got);
                                out.serialize_field(field.name, &self.of(&field.node, &value))
                            }
                        };
                        if let Err(e) = written {
                            self.failure.within(Step::Member(field.name));
                            return Err(e);
                        }
                    }
                    out.end()
                }
                Node::List(item) => {
                    let list = ffi::PyList_Check(obj) != 0;
                    if !list && ffi::PyTuple_Check(obj) == 0 {
                        return Err(self.wrong("a list"));
                    }
                    let len = |o| {
                        if list {
                            ffi::PyList_GET_SIZE(o)
                        } else {
                            ffi::PyTuple_GET_SIZE(o)
                        }
                    };
                    let mut out = s.serialize_seq(Some(len(obj) as usize))?;
                    let mut i = 0;
                    while i < len(obj) {
                        let got = if list {
                            ffi::PyList_GET_ITEM(obj, i)
                        } else {
                            ffi::PyTuple_GET_ITEM(obj, i)
                        };
                        let written = if item.is_scalar() {
                            // Borrowed: no Python code runs while a scalar is written.
                            out.serialize_element(&self.scalar_of(item, got))
                        } else {
                            out.serialize_element(&self.of(item, &Owned::from_borrowed(got)))
                        };
                        if let Err(e) = written {
                            self.failure.within(Step::Index(i as usize));
                            return Err(e);
                        }
                        i += 1;
                    }
                    out.end()
                }
                Node::Dict(key, value) => {
                    if ffi::PyDict_Check(obj) == 0 {
                        return Err(self.wrong("a dict"));
                    }
                    let mut out = s.serialize_map(Some(ffi::PyDict_Size(obj) as usize))?;
                    let (mut at, mut entry) = (0, 0);
                    let (mut k, mut v) = (std::ptr::null_mut(), std::ptr::null_mut());
                    // PyDict_Next stays within the table a property's code might change.
                    while ffi::PyDict_Next(obj, &mut at, &mut k, &mut v) != 0 {
                        let (k, v) = (Owned::from_borrowed(k), Owned::from_borrowed(v));
                        if let Err(e) = out.serialize_entry(&self.of(key, &k), &self.of(value, &v))
                        {
                            self.failure.within(Step::Index(entry));
                            return Err(e);
                        }
                        entry += 1;
                    }
                    out.end()
                }
                Node::Optional(item) => {
                    if obj == ffi::Py_None() {
                        s.serialize_none()
                    } else {
                        s.serialize_some(&Typed {
                            node: item,
                            ..*self
                        })
                    }
                }
                _ => self.scalar(s),
            }
        }
    }
}

/// A scalar, or an optional one (`Node::is_scalar`), written inline where its struct or list
/// is, not through a call of `Typed::serialize` of its own: the format's writer calls a
/// member's `serialize` per member, and most members are scalars (perf: the call's entry
/// and dispatch were a tenth of an object's walk). Made only for scalar nodes
/// ([`Typed::scalar_of`]): its object may be borrowed, which a compound's may not.
struct Scalar<'a>(Typed<'a>);

impl Serialize for Scalar<'_> {
    #[inline(always)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.node {
            Node::Optional(item) => {
                if self.0.obj == unsafe { ffi::Py_None() } {
                    s.serialize_none()
                } else {
                    s.serialize_some(&Scalar(Typed {
                        node: item,
                        ..self.0
                    }))
                }
            }
            _ => self.0.scalar(s),
        }
    }
}

impl Typed<'_> {
    /// A scalar node's value, inline; any other node through the general walk.
    #[inline(always)]
    fn scalar<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj;
        // SAFETY: as `serialize`'s.
        unsafe {
            match self.node {
                Node::Int {
                    lo,
                    hi,
                    enumeration,
                } => {
                    let value = self.integer(enumeration.as_deref())?;
                    match value {
                        Integer::Signed(v) if *lo <= v && v <= *hi => s.serialize_i64(v),
                        _ => Err(self.fail(format!(
                            "{} is out of the column's range {lo}..={hi}",
                            value
                        ))),
                    }
                }
                Node::Uint { max, enumeration } => match self.integer(enumeration.as_deref())? {
                    Integer::Signed(v) if v >= 0 && v as u64 <= *max => s.serialize_u64(v as u64),
                    Integer::Unsigned(v) if v <= *max => s.serialize_u64(v),
                    other => {
                        Err(self.fail(format!("{other} is out of the column's range 0..={max}")))
                    }
                },
                Node::Float32 => s.serialize_f32(self.float()? as f32),
                Node::Float64 => s.serialize_f64(self.float()?),
                Node::Bool => {
                    if obj == ffi::Py_True() {
                        s.serialize_bool(true)
                    } else if obj == ffi::Py_False() {
                        s.serialize_bool(false)
                    } else {
                        Err(self.wrong("a bool"))
                    }
                }
                Node::Str | Node::StrOfBytes => {
                    if ffi::PyUnicode_Check(obj) == 0 {
                        return Err(self.wrong("a str"));
                    }
                    let mut len: ffi::Py_ssize_t = 0;
                    let data = ffi::PyUnicode_AsUTF8AndSize(obj, &mut len);
                    if data.is_null() {
                        return Err(self.fail(super::fetch_error()));
                    }
                    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len as usize);
                    match self.node {
                        Node::Str => s.serialize_str(std::str::from_utf8_unchecked(bytes)),
                        _ => s.serialize_bytes(bytes),
                    }
                }
                Node::Bytes => {
                    if ffi::PyBytes_Check(obj) == 0 {
                        return Err(self.wrong("bytes"));
                    }
                    let data = ffi::PyBytes_AsString(obj);
                    let bytes = std::slice::from_raw_parts(
                        data.cast::<u8>(),
                        ffi::PyBytes_Size(obj) as usize,
                    );
                    s.serialize_bytes(bytes)
                }
                // Not a scalar: the general walk.
                Node::Struct(_) | Node::List(_) | Node::Dict(..) | Node::Optional(_) => {
                    Serialize::serialize(self, s)
                }
            }
        }
    }
}

enum Integer {
    Signed(i64),
    Unsigned(u64),
}

impl std::fmt::Display for Integer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Integer::Signed(v) => write!(f, "{v}"),
            Integer::Unsigned(v) => write!(f, "{v}"),
        }
    }
}

impl Typed<'_> {
    /// The integer `obj` holds: an int (an `IntEnum` member is one), or a member of the
    /// column's enum class by its value.
    unsafe fn integer<E: serde::ser::Error>(
        &self,
        enumeration: Option<&EnumPlan>,
    ) -> Result<Integer, E> {
        let obj = self.obj;
        if ffi::PyLong_Check(obj) == 0 || ffi::PyBool_Check(obj) != 0 {
            if let Some(e) = enumeration {
                // Python code may run from here on (an enum's `value` is a property): a
                // reference of our own keeps `obj` alive, which may be borrowed (`Scalar`).
                let held = Owned::from_borrowed(obj);
                if ffi::PyObject_IsInstance(held.as_ptr(), e.cls.as_ptr()) == 1 {
                    let value = ffi::PyObject_GetAttrString(held.as_ptr(), c"value".as_ptr());
                    if !value.is_null() {
                        let value = Owned::take(value);
                        return Typed {
                            obj: value.as_ptr(),
                            ..*self
                        }
                        .integer(None);
                    }
                }
                ffi::PyErr_Clear();
            }
            return Err(self.wrong("an int"));
        }
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
        if overflow == 0 {
            return Ok(Integer::Signed(v));
        }
        if overflow > 0 {
            let u = ffi::PyLong_AsUnsignedLongLong(obj);
            if !(u == u64::MAX && !ffi::PyErr_Occurred().is_null()) {
                return Ok(Integer::Unsigned(u));
            }
            ffi::PyErr_Clear();
        }
        Err(self.fail("the int is out of the 64-bit range".into()))
    }

    /// The float `obj` holds (an int is taken as its nearest float).
    unsafe fn float<E: serde::ser::Error>(&self) -> Result<f64, E> {
        let obj = self.obj;
        if ffi::PyFloat_Check(obj) != 0 {
            return Ok(ffi::PyFloat_AS_DOUBLE(obj));
        }
        if ffi::PyLong_Check(obj) != 0 && ffi::PyBool_Check(obj) == 0 {
            let v = ffi::PyLong_AsDouble(obj);
            if v == -1.0 && !ffi::PyErr_Occurred().is_null() {
                return Err(self.fail(super::fetch_error()));
            }
            return Ok(v);
        }
        Err(self.wrong("a float"))
    }
}
