//! Bytes of a format as objects of the caller's classes, built as the format's deserializer
//! hands values over (no row of `Value`s, no dicts): an instance made with `object.__new__`
//! and its slot members filled at their offsets (other fields through
//! `object.__setattr__`, which a frozen dataclass allows), then `__post_init__` where the class
//! has one; enum members from a table by value. Types the self-describing formats do not
//! check are checked here (integer ranges).

use std::fmt;

use pyo3::ffi;
use serde::de::{self, DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::plan::{Access, EnumPlan, Node, StructPlan};
use super::{Failure, Owned, Step};
use crate::text::str_of;

/// Builds the value of `node` from the deserializer it is given.
#[derive(Clone, Copy)]
pub(super) struct Seed<'a> {
    pub node: &'a Node,
    pub failure: &'a Failure,
}

impl<'a> Seed<'a> {
    /// A value of `node`, in this walk.
    fn of(self, node: &'a Node) -> Seed<'a> {
        Seed { node, ..self }
    }

    #[cold]
    fn fail<E: de::Error>(&self, message: String) -> E {
        E::custom(self.failure.set(message))
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Owned;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Owned, D::Error> {
        match self.node {
            Node::Struct(plan) => {
                d.deserialize_struct(plan.name, plan.keys, StructVisitor { plan, seed: self })
            }
            Node::List(item) => d.deserialize_seq(ListVisitor { item, seed: self }),
            Node::Dict(key, value) => d.deserialize_map(DictVisitor {
                key,
                value,
                seed: self,
            }),
            Node::Optional(item) => d.deserialize_option(OptionVisitor { item, seed: self }),
            Node::Int { .. } => d.deserialize_i64(ScalarVisitor(self)),
            Node::Uint { .. } => d.deserialize_u64(ScalarVisitor(self)),
            Node::Float32 => d.deserialize_f32(ScalarVisitor(self)),
            Node::Float64 => d.deserialize_f64(ScalarVisitor(self)),
            Node::Bool => d.deserialize_bool(ScalarVisitor(self)),
            Node::Str => d.deserialize_str(ScalarVisitor(self)),
            Node::Bytes | Node::StrOfBytes => d.deserialize_bytes(ScalarVisitor(self)),
        }
    }
}

/// A new object from a CPython constructor's result, or the Python error as a serde error.
fn made<E: de::Error>(seed: &Seed<'_>, ptr: *mut ffi::PyObject) -> Result<Owned, E> {
    if ptr.is_null() {
        Err(seed.fail(super::fetch_error()))
    } else {
        // SAFETY: a constructor's non-null result is a new reference.
        Ok(unsafe { Owned::take(ptr) })
    }
}

struct ScalarVisitor<'a>(Seed<'a>);

impl ScalarVisitor<'_> {
    fn int<E: de::Error>(&self, v: i128) -> Result<Owned, E> {
        let seed = &self.0;
        let (in_range, enumeration) = match seed.node {
            Node::Int {
                lo,
                hi,
                enumeration,
            } => (*lo as i128 <= v && v <= *hi as i128, enumeration),
            Node::Uint { max, enumeration } => (0 <= v && v <= *max as i128, enumeration),
            Node::Float32 | Node::Float64 => {
                // SAFETY: the GIL is held while the codec runs.
                return made(seed, unsafe { ffi::PyFloat_FromDouble(v as f64) });
            }
            _ => return Err(E::invalid_type(de::Unexpected::Other("an integer"), self)),
        };
        if !in_range {
            return Err(seed.fail(format!("{v} is out of the column's range")));
        }
        match enumeration {
            Some(e) => member(seed, e, v),
            // SAFETY: as above.
            None => made(seed, unsafe {
                if v <= i64::MAX as i128 {
                    ffi::PyLong_FromLongLong(v as i64)
                } else {
                    ffi::PyLong_FromUnsignedLongLong(v as u64)
                }
            }),
        }
    }

    fn text<E: de::Error>(&self, v: &[u8]) -> Result<Owned, E> {
        // SAFETY: the GIL is held; the pointer and length describe `v`.
        unsafe {
            match self.0.node {
                Node::Str | Node::StrOfBytes => match std::str::from_utf8(v) {
                    Ok(text) => made(&self.0, str_of(text)),
                    Err(_) => Err(self
                        .0
                        .fail("the bytes are not UTF-8 (the annotation is str)".into())),
                },
                Node::Bytes => made(
                    &self.0,
                    ffi::PyBytes_FromStringAndSize(v.as_ptr().cast(), v.len() as ffi::Py_ssize_t),
                ),
                _ => Err(E::invalid_type(de::Unexpected::Bytes(v), self)),
            }
        }
    }
}

/// The member of enum `e` of value `v`.
fn member<E: de::Error>(seed: &Seed<'_>, e: &EnumPlan, v: i128) -> Result<Owned, E> {
    if let Some(Some(found)) = usize::try_from(v).ok().and_then(|i| e.small.get(i)) {
        // SAFETY: a member the plan holds; the GIL is held.
        return Ok(unsafe { Owned::from_borrowed(found.as_ptr()) });
    }
    // Values outside the table: the class decides (and raises for a value it has no member of).
    // SAFETY: as above.
    unsafe {
        let arg = match i64::try_from(v) {
            Ok(v) => ffi::PyLong_FromLongLong(v),
            Err(_) => ffi::PyLong_FromUnsignedLongLong(v as u64),
        };
        let arg = made(seed, arg)?;
        let args = made(seed, ffi::PyTuple_Pack(1, arg.as_ptr()))?;
        made(
            seed,
            ffi::PyObject_Call(e.cls.as_ptr(), args.as_ptr(), std::ptr::null_mut()),
        )
    }
}

impl<'de> Visitor<'de> for ScalarVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0.node {
            Node::Int { .. } | Node::Uint { .. } => "an integer",
            Node::Float32 | Node::Float64 => "a number",
            Node::Bool => "a bool",
            Node::Str | Node::StrOfBytes => "a string",
            _ => "bytes",
        })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Owned, E> {
        self.int(v as i128)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Owned, E> {
        self.int(v as i128)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Owned, E> {
        match self.0.node {
            // SAFETY: the GIL is held.
            Node::Float32 | Node::Float64 => made(&self.0, unsafe { ffi::PyFloat_FromDouble(v) }),
            _ => Err(E::invalid_type(de::Unexpected::Float(v), &self)),
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Owned, E> {
        match self.0.node {
            // SAFETY: the GIL is held; the singletons are immortal enough to take a reference.
            Node::Bool => Ok(unsafe {
                Owned::from_borrowed(if v { ffi::Py_True() } else { ffi::Py_False() })
            }),
            _ => Err(E::invalid_type(de::Unexpected::Bool(v), &self)),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Owned, E> {
        match self.0.node {
            // SAFETY: the GIL is held.
            Node::Str | Node::StrOfBytes => made(&self.0, unsafe { str_of(v) }),
            _ => self.text(v.as_bytes()),
        }
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Owned, E> {
        self.text(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        if !matches!(self.0.node, Node::Bytes) {
            return Err(A::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        self.text(&bytes)
    }
}

struct OptionVisitor<'a> {
    item: &'a Node,
    seed: Seed<'a>,
}

impl<'de> Visitor<'de> for OptionVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an optional value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Owned, E> {
        Ok(Owned::none())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Owned, E> {
        self.visit_none()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Owned, D::Error> {
        self.seed.of(self.item).deserialize(d)
    }
}

struct ListVisitor<'a> {
    item: &'a Node,
    seed: Seed<'a>,
}

impl<'de> Visitor<'de> for ListVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        // SAFETY: the GIL is held; PyList_Append takes its own reference to each item.
        unsafe {
            let list = made(&self.seed, ffi::PyList_New(0))?;
            let mut i = 0;
            loop {
                let next = seq
                    .next_element_seed(self.seed.of(self.item))
                    .inspect_err(|_| {
                        self.seed.failure.within(Step::Index(i));
                    })?;
                match next {
                    Some(item) => {
                        if ffi::PyList_Append(list.as_ptr(), item.as_ptr()) != 0 {
                            return Err(self.seed.fail(super::fetch_error()));
                        }
                    }
                    None => return Ok(list),
                }
                i += 1;
            }
        }
    }
}

struct DictVisitor<'a> {
    key: &'a Node,
    value: &'a Node,
    seed: Seed<'a>,
}

impl<'de> Visitor<'de> for DictVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a dict")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Owned, A::Error> {
        let failure = self.seed.failure;
        let (key_seed, value_seed) = (self.seed.of(self.key), self.seed.of(self.value));
        // SAFETY: the GIL is held; PyDict_SetItem takes its own references.
        unsafe {
            let dict = made(&self.seed, ffi::PyDict_New())?;
            let mut entry = 0;
            loop {
                let next = map
                    .next_key_seed(key_seed)
                    .inspect_err(|_| failure.within(Step::Index(entry)))?;
                let Some(key) = next else {
                    return Ok(dict);
                };
                let value = map
                    .next_value_seed(value_seed)
                    .inspect_err(|_| failure.within(Step::Index(entry)))?;
                // A repeated key (MessagePack and CBOR maps may hold one) would overwrite the
                // first value: refused rather than lost.
                match ffi::PyDict_Contains(dict.as_ptr(), key.as_ptr()) {
                    0 => {}
                    1 => {
                        let e = failure.set("a key repeated; a dict holds each key once".into());
                        failure.within(Step::Index(entry));
                        return Err(A::Error::custom(e));
                    }
                    _ => return Err(self.seed.fail(super::fetch_error())),
                }
                if ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) != 0 {
                    return Err(self.seed.fail(super::fetch_error()));
                }
                entry += 1;
            }
        }
    }
}

struct StructVisitor<'a> {
    plan: &'a StructPlan,
    seed: Seed<'a>,
}

/// An instance being filled as its members arrive, and which of them have.
struct Filling<'a> {
    plan: &'a StructPlan,
    obj: Owned,
    /// The class's own instance (slot offsets apply), not a subclass's `__new__` result.
    exact: bool,
    seen: Seen,
}

/// Members set so far: a bit each (one word for up to 64 members).
enum Seen {
    Word(u64),
    Many(Vec<bool>),
}

impl Seen {
    fn new(n: usize) -> Seen {
        if n <= 64 {
            Seen::Word(0)
        } else {
            Seen::Many(vec![false; n])
        }
    }

    /// Marks member `i`; false when it was marked already.
    fn mark(&mut self, i: usize) -> bool {
        match self {
            Seen::Word(w) => {
                let had = *w >> i & 1 == 1;
                *w |= 1 << i;
                !had
            }
            Seen::Many(v) => !std::mem::replace(&mut v[i], true),
        }
    }

    fn has(&self, i: usize) -> bool {
        match self {
            Seen::Word(w) => *w >> i & 1 == 1,
            Seen::Many(v) => v[i],
        }
    }
}

impl StructVisitor<'_> {
    fn field_seed(&self, i: usize) -> Seed<'_> {
        self.seed.of(&self.plan.fields[i].node)
    }

    /// Member `i` failed: its name joins the recorded error's path.
    #[cold]
    fn failed_in(&self, i: usize) {
        self.seed
            .failure
            .within(Step::Member(self.plan.fields[i].name));
    }

    /// A new instance of the class, made as `cls.__new__(cls)` (no `__init__`).
    fn start<E: de::Error>(&self) -> Result<Filling<'_>, E> {
        let plan = self.plan;
        let cls = plan.cls.as_ptr().cast::<ffi::PyTypeObject>();
        // SAFETY: the GIL is held; `cls` is a class (compiled from one), whose `tp_new` is
        // `object.__new__` or its own `__new__`, called with no arguments.
        unsafe {
            let Some(new) = (*cls).tp_new else {
                return Err(self
                    .seed
                    .fail(format!("{} cannot be instantiated", plan.name)));
            };
            let obj = made(
                &self.seed,
                new(cls, plan.no_args.as_ptr(), std::ptr::null_mut()),
            )?;
            Ok(Filling {
                plan,
                exact: ffi::Py_TYPE(obj.as_ptr()) == cls,
                obj,
                seen: Seen::new(plan.fields.len()),
            })
        }
    }

    /// Sets member `i` of `f` to `value`.
    fn set<E: de::Error>(&self, f: &mut Filling<'_>, i: usize, value: Owned) -> Result<(), E> {
        if !f.seen.mark(i) {
            return Err(self
                .seed
                .fail(format!("member `{}` twice", self.plan.fields[i].name)));
        }
        let field = &self.plan.fields[i];
        // SAFETY: the GIL is held; a slot offset was read from the class's member descriptor,
        // so it lies inside every instance of the class itself, and the slot takes the new
        // reference (releasing the one it held, if any).
        unsafe {
            match field.access {
                Access::Slot(offset) if f.exact => {
                    let slot = f
                        .obj
                        .as_ptr()
                        .cast::<u8>()
                        .offset(offset)
                        .cast::<*mut ffi::PyObject>();
                    let old = std::ptr::replace(slot, value.into_ptr());
                    ffi::Py_XDECREF(old);
                }
                _ => {
                    if ffi::PyObject_GenericSetAttr(
                        f.obj.as_ptr(),
                        field.py_name.as_ptr(),
                        value.as_ptr(),
                    ) != 0
                    {
                        return Err(self.seed.fail(super::fetch_error()));
                    }
                }
            }
        }
        Ok(())
    }

    /// The instance: members not met are `None` where optional (an error elsewhere), then
    /// `__post_init__` where the class has one.
    fn finish<E: de::Error>(&self, mut f: Filling<'_>) -> Result<Owned, E> {
        for i in 0..self.plan.fields.len() {
            if f.seen.has(i) {
                continue;
            }
            let field = &self.plan.fields[i];
            if !matches!(field.node, Node::Optional(_)) {
                return Err(self
                    .seed
                    .fail(format!("member `{}` is missing", field.name)));
            }
            self.set(&mut f, i, Owned::none())?;
        }
        if f.plan.post_init {
            // SAFETY: the GIL is held; a live object and a C string method name.
            let done = unsafe {
                ffi::PyObject_CallMethod(
                    f.obj.as_ptr(),
                    c"__post_init__".as_ptr(),
                    std::ptr::null(),
                )
            };
            made(&self.seed, done)?;
        }
        Ok(f.obj)
    }
}

impl<'de> Visitor<'de> for StructVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a struct for {}", self.plan.name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        let n = self.plan.fields.len();
        let mut filling = self.start()?;
        for i in 0..n {
            let next = seq
                .next_element_seed(self.field_seed(i))
                .inspect_err(|_| self.failed_in(i))?;
            match next {
                Some(value) => self.set(&mut filling, i, value)?,
                None => break,
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(self
                .seed
                .fail(format!("more than the struct's {n} members")));
        }
        self.finish(filling)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Owned, A::Error> {
        let mut filling = self.start()?;
        while let Some(i) = map.next_key_seed(KeySeed {
            plan: self.plan,
            seed: self.seed,
        })? {
            let value = map
                .next_value_seed(self.field_seed(i))
                .inspect_err(|_| self.failed_in(i))?;
            self.set(&mut filling, i, value)?;
        }
        self.finish(filling)
    }
}

/// A struct's key: a member's index (the schema formats) or name (MessagePack, CBOR).
#[derive(Clone, Copy)]
struct KeySeed<'a> {
    plan: &'a StructPlan,
    seed: Seed<'a>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a member name of {}", self.plan.name)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        match usize::try_from(v) {
            Ok(i) if i < self.plan.fields.len() => Ok(i),
            _ => Err(self.seed.fail(format!(
                "member index {v} is out of the struct's {}",
                self.plan.fields.len()
            ))),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.visit_bytes(v.as_bytes())
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<usize, E> {
        match self.plan.fields.iter().position(|f| f.name.as_bytes() == v) {
            Some(i) => Ok(i),
            None => Err(self.seed.fail(format!(
                "member `{}` is not in the schema's struct",
                String::from_utf8_lossy(v)
            ))),
        }
    }
}
