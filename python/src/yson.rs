//! `shapeshift._native.yson`: YSON straight to and from Python objects.
//!
//! `loads` walks the pull parser's events and creates Python objects as it goes (no `Node`
//! tree in between); `dumps` walks Python objects and feeds the event writer. Both use the
//! CPython API directly on the hot types (exact `int`, `float`, `str`, `bytes`, `bool`, `None`,
//! `list`, `tuple`, `dict`), because the speed of this module is the speed of creating and
//! inspecting objects. Everything else (the `Yson*` wrapper classes of `shapeshift.yson` and of
//! `yt.yson`, subclasses, objects with `to_yson_type`) takes the general path.
//!
//! The wrapper classes are defined in Python (`shapeshift/yson.py`) and handed in on each call,
//! so this module holds no global state. Map keys repeat from row to row, so `loads` keeps a
//! small cache of key objects: a hit costs a compare and a reference count, and dict inserts
//! reuse the cached string's hash.
//!
//! Reference counting: every `*mut PyObject` returned by an `ffi` constructor is wrapped at once
//! in an owning `Bound` (`from_owned_ptr_or_err`), so no path leaks or double-frees.

use std::os::raw::c_int;

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use shapeshift_formats::yson::{
    Event, PullParser, SliceSource, Writer, YsonError as NativeError, YsonFormat, YsonType,
    DEFAULT_MAX_DEPTH,
};

create_exception!(
    yson,
    YsonError,
    PyValueError,
    "YSON could not be read or written; the message names the byte offset when reading."
);

/// The error with its byte offset as the second argument, for `shapeshift.yson`'s error
/// attributes (`offset`, `context`).
fn yson_error(error: NativeError) -> PyErr {
    YsonError::new_err((error.to_string(), error.offset()))
}

fn parse_type(yson_type: Option<&str>) -> PyResult<YsonType> {
    match yson_type {
        None | Some("node") => Ok(YsonType::Node),
        Some("list_fragment") => Ok(YsonType::ListFragment),
        Some("map_fragment") => Ok(YsonType::MapFragment),
        Some(other) => Err(YsonError::new_err(format!(
            "YSON type {other:?} is not supported (node, list_fragment, map_fragment)"
        ))),
    }
}

fn parse_format(yson_format: Option<&str>) -> PyResult<YsonFormat> {
    match yson_format {
        None | Some("text") => Ok(YsonFormat::Text),
        Some("binary") => Ok(YsonFormat::Binary),
        Some("pretty") => Ok(YsonFormat::Pretty),
        Some(other) => Err(YsonError::new_err(format!(
            "{other} format is not supported (binary, text, pretty)"
        ))),
    }
}

/// How strings come back.
enum Decoding {
    /// UTF-8 to `str`, else a string proxy.
    Utf8,
    /// `bytes` (encoding=None).
    Bytes,
    /// Another codec, through `bytes.decode`.
    Other(String),
}

/// The wrapper classes of `shapeshift.yson`, in the order `shapeshift/yson.py` passes them.
struct Classes<'py> {
    string: Bound<'py, PyAny>,
    unicode: Bound<'py, PyAny>,
    int64: Bound<'py, PyAny>,
    uint64: Bound<'py, PyAny>,
    double: Bound<'py, PyAny>,
    boolean: Bound<'py, PyAny>,
    list: Bound<'py, PyAny>,
    map: Bound<'py, PyAny>,
    entity: Bound<'py, PyAny>,
    proxy: Bound<'py, PyAny>,
}

impl<'py> Classes<'py> {
    fn from_tuple(classes: &Bound<'py, PyTuple>) -> PyResult<Classes<'py>> {
        if classes.len() != 10 {
            return Err(PyTypeError::new_err("expected the 10 Yson* classes"));
        }
        Ok(Classes {
            string: classes.get_item(0)?,
            unicode: classes.get_item(1)?,
            int64: classes.get_item(2)?,
            uint64: classes.get_item(3)?,
            double: classes.get_item(4)?,
            boolean: classes.get_item(5)?,
            list: classes.get_item(6)?,
            map: classes.get_item(7)?,
            entity: classes.get_item(8)?,
            proxy: classes.get_item(9)?,
        })
    }
}

const KEY_CACHE_SLOTS: usize = 256;

extern "C" {
    /// CPython's dict constructor with room for `minused` entries (exported by every CPython 3
    /// release; private only in name). Saves the resize a growing row dict would go through.
    fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
}

/// Map size hints are kept per nesting level (rows at level 0, their maps at level 1, ...).
const SIZE_HINT_LEVELS: usize = 8;

/// What the next event was, once its borrowed bytes have been turned into objects.
enum Head<'py> {
    Value(Bound<'py, PyAny>),
    BeginList,
    BeginMap,
    BeginAttributes,
    Key(Bound<'py, PyAny>),
    EndList,
    EndMap,
    EndAttributes,
    End,
}

struct Loader<'py> {
    py: Python<'py>,
    classes: Classes<'py>,
    wrap_everything: bool,
    decoding: Decoding,
    key_cache: Vec<Option<(Box<[u8]>, Bound<'py, PyAny>)>>,
    /// How many entries the last map at each level had: the next one likely has as many.
    map_size_hints: [usize; SIZE_HINT_LEVELS],
    level: usize,
}

#[inline(always)]
fn key_slot(key: &[u8]) -> usize {
    let mut hash = key.len() as u64;
    for &b in key.iter().take(8) {
        hash = hash.wrapping_mul(31).wrapping_add(b as u64);
    }
    if let Some(&last) = key.last() {
        hash = hash.wrapping_mul(31).wrapping_add(last as u64);
    }
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % KEY_CACHE_SLOTS
}

impl<'py> Loader<'py> {
    #[inline(always)]
    fn owned(&self, ptr: *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `ptr` is a new reference from a CPython constructor (or null with an error).
        unsafe { Bound::from_owned_ptr_or_err(self.py, ptr) }
    }

    /// A string value or key as this loader returns strings (without the wrapper class).
    #[inline]
    fn plain_string(&self, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        match &self.decoding {
            Decoding::Utf8 => {
                // SAFETY: pointer and length describe a live slice.
                let ptr = unsafe {
                    ffi::PyUnicode_DecodeUTF8(
                        bytes.as_ptr().cast(),
                        bytes.len() as ffi::Py_ssize_t,
                        c"strict".as_ptr(),
                    )
                };
                if ptr.is_null() {
                    // Not UTF-8: a proxy holding the bytes, as yt.yson returns.
                    let _ = PyErr::take(self.py);
                    return self.proxy(bytes);
                }
                self.owned(ptr)
            }
            Decoding::Bytes => Ok(PyBytes::new(self.py, bytes).into_any()),
            Decoding::Other(encoding) => {
                let raw = PyBytes::new(self.py, bytes);
                match raw.call_method1("decode", (encoding.as_str(),)) {
                    Ok(text) => Ok(text),
                    Err(_) => self.proxy(bytes),
                }
            }
        }
    }

    fn proxy(&self, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let proxy = self.classes.proxy.call0()?;
        proxy.setattr("_bytes", PyBytes::new(self.py, bytes))?;
        Ok(proxy)
    }

    fn is_proxy(&self, object: &Bound<'py, PyAny>) -> bool {
        object.get_type().is(&self.classes.proxy)
    }

    #[inline]
    fn key(&mut self, key: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let slot = key_slot(key);
        if let Some((cached, object)) = &self.key_cache[slot] {
            if &cached[..] == key {
                return Ok(object.clone());
            }
        }
        let object = self.plain_string(key)?;
        self.key_cache[slot] = Some((key.into(), object.clone()));
        Ok(object)
    }

    #[inline]
    fn string(&self, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let plain = self.plain_string(bytes)?;
        if !self.wrap_everything || self.is_proxy(&plain) {
            return Ok(plain);
        }
        if matches!(self.decoding, Decoding::Bytes) {
            self.classes.string.call1((plain,))
        } else {
            self.classes.unicode.call1((plain,))
        }
    }

    #[inline]
    fn int64(&self, value: i64) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: plain constructor call.
        let plain = self.owned(unsafe { ffi::PyLong_FromLongLong(value) })?;
        if self.wrap_everything {
            return self.classes.int64.call1((plain,));
        }
        Ok(plain)
    }

    #[inline]
    fn uint64(&self, value: u64) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: plain constructor call.
        let plain = self.owned(unsafe { ffi::PyLong_FromUnsignedLongLong(value) })?;
        // uint64 always comes back as the wrapper, as in yt.yson, so it writes back as uint64.
        self.classes.uint64.call1((plain,))
    }

    #[inline]
    fn double(&self, value: f64) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: plain constructor call.
        let plain = self.owned(unsafe { ffi::PyFloat_FromDouble(value) })?;
        if self.wrap_everything {
            return self.classes.double.call1((plain,));
        }
        Ok(plain)
    }

    #[inline]
    fn boolean(&self, value: bool) -> PyResult<Bound<'py, PyAny>> {
        if self.wrap_everything {
            return self.classes.boolean.call1((value,));
        }
        Ok(pyo3::types::PyBool::new(self.py, value)
            .to_owned()
            .into_any())
    }

    #[inline]
    fn entity(&self) -> PyResult<Bound<'py, PyAny>> {
        if self.wrap_everything {
            return self.classes.entity.call0();
        }
        Ok(self.py.None().into_bound(self.py))
    }

    #[inline]
    fn next_head(&mut self, parser: &mut PullParser<SliceSource<'_>>) -> PyResult<Head<'py>> {
        let event = parser.next_event().map_err(yson_error)?;
        Ok(match event {
            None => Head::End,
            Some(Event::Int64(v)) => Head::Value(self.int64(v)?),
            Some(Event::String(s)) => Head::Value(self.string(s)?),
            Some(Event::Double(v)) => Head::Value(self.double(v)?),
            Some(Event::Key(k)) => Head::Key(self.key(k)?),
            Some(Event::BeginMap) => Head::BeginMap,
            Some(Event::EndMap) => Head::EndMap,
            Some(Event::BeginList) => Head::BeginList,
            Some(Event::EndList) => Head::EndList,
            Some(Event::Bool(v)) => Head::Value(self.boolean(v)?),
            Some(Event::Entity) => Head::Value(self.entity()?),
            Some(Event::Uint64(v)) => Head::Value(self.uint64(v)?),
            Some(Event::BeginAttributes) => Head::BeginAttributes,
            Some(Event::EndAttributes) => Head::EndAttributes,
        })
    }

    /// The value that `head` starts (the parser guarantees `head` can start a value).
    fn value(
        &mut self,
        parser: &mut PullParser<SliceSource<'_>>,
        head: Head<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match head {
            Head::Value(value) => Ok(value),
            Head::BeginList => self.list(parser),
            Head::BeginMap => self.map(parser, Head::EndMap),
            Head::BeginAttributes => {
                let attributes =
                    self.map_entries(parser, PyDict::new(self.py), Head::EndAttributes)?;
                let head = self.next_head(parser)?;
                let value = self.value(parser, head)?;
                let wrapped = self.wrap(value)?;
                wrapped.setattr("attributes", attributes)?;
                Ok(wrapped)
            }
            _ => Err(YsonError::new_err(format!(
                "YSON error at byte {}: expected a value",
                parser.offset()
            ))),
        }
    }

    fn list(&mut self, parser: &mut PullParser<SliceSource<'_>>) -> PyResult<Bound<'py, PyAny>> {
        let list = if self.wrap_everything {
            self.classes.list.call0()?
        } else {
            PyList::empty(self.py).into_any()
        };
        loop {
            let head = self.next_head(parser)?;
            if matches!(head, Head::EndList) {
                return Ok(list);
            }
            let item = self.value(parser, head)?;
            // SAFETY: `list` is a list (or subclass); PyList_Append takes its own reference.
            if unsafe { ffi::PyList_Append(list.as_ptr(), item.as_ptr()) } != 0 {
                return Err(PyErr::fetch(self.py));
            }
        }
    }

    fn map(
        &mut self,
        parser: &mut PullParser<SliceSource<'_>>,
        end: Head<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let level = self.level.min(SIZE_HINT_LEVELS - 1);
        let dict = if self.wrap_everything {
            self.classes.map.call0()?
        } else {
            let hint = self.map_size_hints[level];
            // SAFETY: returns a new reference or null with an exception set.
            self.owned(unsafe { _PyDict_NewPresized(hint as ffi::Py_ssize_t) })?
        };
        self.level += 1;
        let result = self.map_entries(parser, dict, end);
        self.level -= 1;
        if let Ok(dict) = &result {
            // SAFETY: `dict` is a dict or subclass.
            self.map_size_hints[level] = unsafe { ffi::PyDict_Size(dict.as_ptr()) }.max(0) as usize;
        }
        result
    }

    /// Fills `dict` with entries until the event `end` (end of map, attributes or fragment).
    fn map_entries(
        &mut self,
        parser: &mut PullParser<SliceSource<'_>>,
        dict: Bound<'py, impl Sized>,
        end: Head<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let dict = dict.into_any();
        let end_discriminant = std::mem::discriminant(&end);
        loop {
            let key = match self.next_head(parser)? {
                Head::Key(key) => key,
                head if std::mem::discriminant(&head) == end_discriminant => return Ok(dict),
                _ => {
                    return Err(YsonError::new_err(format!(
                        "YSON error at byte {}: expected a map key",
                        parser.offset()
                    )))
                }
            };
            let head = self.next_head(parser)?;
            let value = self.value(parser, head)?;
            // SAFETY: `dict` is a dict (or subclass); PyDict_SetItem takes its own references.
            if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } != 0 {
                return Err(PyErr::fetch(self.py));
            }
        }
    }

    /// `value` as an instance of a wrapper class that can carry attributes.
    fn wrap(&self, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let classes = &self.classes;
        let wrappers = [
            &classes.string,
            &classes.unicode,
            &classes.int64,
            &classes.uint64,
            &classes.double,
            &classes.boolean,
            &classes.list,
            &classes.map,
            &classes.entity,
            &classes.proxy,
        ];
        let value_type = value.get_type();
        if wrappers.iter().any(|class| value_type.is(*class)) {
            return Ok(value);
        }
        if value.is_none() {
            classes.entity.call0()
        } else if value.is_instance_of::<pyo3::types::PyBool>() {
            classes.boolean.call1((value,))
        } else if value.is_instance_of::<pyo3::types::PyInt>() {
            classes.int64.call1((value,))
        } else if value.is_instance_of::<pyo3::types::PyFloat>() {
            classes.double.call1((value,))
        } else if value.is_instance_of::<PyString>() {
            classes.unicode.call1((value,))
        } else if value.is_instance_of::<PyBytes>() {
            classes.string.call1((value,))
        } else if value.is_instance_of::<PyList>() {
            classes.list.call1((value,))
        } else if value.is_instance_of::<PyDict>() {
            classes.map.call1((value,))
        } else {
            Ok(value)
        }
    }
}

/// Parses YSON `data` into Python objects. A list fragment comes back as a list of its items,
/// a map fragment as a dict; `shapeshift.yson` wraps this with yt.yson's signature.
#[pyfunction]
#[pyo3(signature = (data, yson_type, always_create_attributes, encoding, classes, max_depth=DEFAULT_MAX_DEPTH))]
fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    yson_type: Option<&str>,
    always_create_attributes: bool,
    encoding: Option<&str>,
    classes: &Bound<'py, PyTuple>,
    max_depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let yson_type = parse_type(yson_type)?;
    let decoding = match encoding {
        None => Decoding::Bytes,
        Some(e) if e.eq_ignore_ascii_case("utf-8") || e.eq_ignore_ascii_case("utf8") => {
            Decoding::Utf8
        }
        Some(e) => Decoding::Other(e.to_string()),
    };
    let bytes: &[u8] = if let Ok(bytes) = data.cast::<PyBytes>() {
        bytes.as_bytes()
    } else {
        return Err(PyTypeError::new_err(
            "YSON input must be bytes (encode str first)",
        ));
    };
    let mut loader = Loader {
        py,
        classes: Classes::from_tuple(classes)?,
        wrap_everything: always_create_attributes,
        decoding,
        key_cache: (0..KEY_CACHE_SLOTS).map(|_| None).collect(),
        map_size_hints: [0; SIZE_HINT_LEVELS],
        level: 0,
    };
    let mut parser = PullParser::from_slice(bytes, yson_type).with_max_depth(max_depth);
    match yson_type {
        YsonType::Node => {
            let head = loader.next_head(&mut parser)?;
            let value = loader.value(&mut parser, head)?;
            match loader.next_head(&mut parser)? {
                Head::End => Ok(value),
                _ => Err(YsonError::new_err(format!(
                    "YSON error at byte {}: expected end of input after the node",
                    parser.offset()
                ))),
            }
        }
        YsonType::ListFragment => {
            let items = PyList::empty(py);
            loop {
                let head = loader.next_head(&mut parser)?;
                if matches!(head, Head::End) {
                    return Ok(items.into_any());
                }
                items.append(loader.value(&mut parser, head)?)?;
            }
        }
        YsonType::MapFragment => loader.map(&mut parser, Head::End),
    }
}

/// Classes `dumps` recognises beyond the builtins; each a tuple of classes (ours and, when
/// loaded, yt.yson's).
struct Kinds<'py> {
    uint64: Bound<'py, PyAny>,
    int64: Bound<'py, PyAny>,
    boolean: Bound<'py, PyAny>,
    proxy: Bound<'py, PyAny>,
    entity: Bound<'py, PyAny>,
}

const MAX_DUMP_DEPTH: usize = 1024;

struct Dumper<'py> {
    py: Python<'py>,
    writer: Writer<Vec<u8>>,
    kinds: Kinds<'py>,
    encoding: Option<String>,
    utf8: bool,
    sort_keys: bool,
    ignore_inner_attributes: bool,
    check_circular: bool,
    path: Vec<*mut ffi::PyObject>,
}

fn write_error(error: std::io::Error) -> PyErr {
    YsonError::new_err(error.to_string())
}

impl<'py> Dumper<'py> {
    fn enter(&mut self, object: &Bound<'py, PyAny>) -> PyResult<()> {
        if self.path.len() >= MAX_DUMP_DEPTH {
            return Err(YsonError::new_err(format!(
                "nesting deeper than {MAX_DUMP_DEPTH} levels"
            )));
        }
        if self.check_circular && self.path.contains(&object.as_ptr()) {
            return Err(YsonError::new_err(
                "circular reference: an object contains itself",
            ));
        }
        self.path.push(object.as_ptr());
        Ok(())
    }

    /// The bytes of a `str` in the chosen encoding.
    fn encode_str<'a>(
        &self,
        object: &'a Bound<'py, PyAny>,
        scratch: &'a mut Option<Bound<'py, PyBytes>>,
    ) -> PyResult<&'a [u8]> {
        if self.utf8 {
            let mut size: ffi::Py_ssize_t = 0;
            // SAFETY: `object` is a str; the UTF-8 buffer lives as long as the object.
            let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(object.as_ptr(), &mut size) };
            if data.is_null() {
                return Err(PyErr::fetch(self.py));
            }
            // SAFETY: CPython guarantees `size` bytes at `data`.
            return Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) });
        }
        let Some(encoding) = self.encoding.as_deref() else {
            return Err(YsonError::new_err(format!(
                "Cannot encode unicode object {} to bytes since \"encoding\" parameter is None",
                object.repr()?
            )));
        };
        let encoded = object
            .call_method1("encode", (encoding,))?
            .cast_into::<PyBytes>()?;
        *scratch = Some(encoded);
        Ok(scratch.as_ref().map(|b| b.as_bytes()).unwrap_or_default())
    }

    fn key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        let mut scratch = None;
        let bytes: &[u8] = if key.is_instance_of::<PyString>() {
            self.encode_str(key, &mut scratch)?
        } else if let Ok(bytes) = key.cast::<PyBytes>() {
            bytes.as_bytes()
        } else if key.is_instance(&self.kinds.proxy)? {
            let raw = key.getattr("_bytes")?.cast_into::<PyBytes>()?;
            scratch = Some(raw);
            scratch.as_ref().map(|b| b.as_bytes()).unwrap_or_default()
        } else {
            return Err(YsonError::new_err(format!(
                "Map key should be string, found {}",
                key.repr()?
            )));
        };
        self.writer.key(bytes).map_err(write_error)
    }

    fn int(&mut self, object: &Bound<'py, PyAny>, kind: IntKind) -> PyResult<()> {
        let mut overflow: c_int = 0;
        // SAFETY: `object` is an int (or subclass).
        let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(object.as_ptr(), &mut overflow) };
        if value == -1 && overflow == 0 {
            if let Some(error) = PyErr::take(self.py) {
                return Err(error);
            }
        }
        let out_of_range = || {
            YsonError::new_err(format!(
                "Integer {} cannot be serialized to YSON since it is out of range [-2^63, 2^64 - 1]",
                object.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        };
        if overflow < 0 {
            return Err(out_of_range());
        }
        if overflow > 0 {
            if kind == IntKind::Int64 {
                return Err(YsonError::new_err(
                    "Can not dump YsonInt64 greater than 2^63 - 1 as YSON int64",
                ));
            }
            // SAFETY: `object` is an int above i64::MAX.
            let unsigned = unsafe { ffi::PyLong_AsUnsignedLongLong(object.as_ptr()) };
            if unsigned == u64::MAX {
                if PyErr::take(self.py).is_some() {
                    return Err(out_of_range());
                }
            }
            return self.writer.uint64(unsigned).map_err(write_error);
        }
        match kind {
            IntKind::Uint64 => {
                if value < 0 {
                    return Err(YsonError::new_err(
                        "Can not dump negative integer as YSON uint64",
                    ));
                }
                self.writer.uint64(value as u64)
            }
            _ => self.writer.int64(value),
        }
        .map_err(write_error)
    }

    #[inline]
    fn value(&mut self, object: &Bound<'py, PyAny>) -> PyResult<()> {
        // SAFETY: reading the type pointer and comparing with the builtin type objects.
        let tp = unsafe { ffi::Py_TYPE(object.as_ptr()) };
        unsafe {
            if tp == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
                return self.int(object, IntKind::Plain);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
                let mut scratch = None;
                let bytes = self.encode_str(object, &mut scratch)?;
                return self.writer.string(bytes).map_err(write_error);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
                let value = ffi::PyFloat_AS_DOUBLE(object.as_ptr());
                return self.writer.double(value).map_err(write_error);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
                return self.map(object.cast_unchecked::<PyDict>());
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyList_Type) {
                return self.list(object);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
                return self
                    .writer
                    .bool(object.as_ptr() == ffi::Py_True())
                    .map_err(write_error);
            }
            if object.as_ptr() == ffi::Py_None() {
                return self.writer.entity().map_err(write_error);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyBytes_Type) {
                let bytes = object.cast_unchecked::<PyBytes>().as_bytes();
                return self.writer.string(bytes).map_err(write_error);
            }
            if tp == std::ptr::addr_of_mut!(ffi::PyTuple_Type) {
                return self.list(object);
            }
        }
        self.general(object)
    }

    /// Everything but the exact builtins: wrappers with attributes, subclasses, proxies.
    fn general(&mut self, object: &Bound<'py, PyAny>) -> PyResult<()> {
        if let Ok(convert) = object.getattr("to_yson_type") {
            if convert.is_callable() {
                let converted = convert.call0()?;
                return self.value(&converted);
            }
        }
        let depth = self.path.len();
        let attributes = object
            .getattr("__dict__")
            .ok()
            .and_then(|d| d.cast_into::<PyDict>().ok())
            .and_then(|d| d.get_item("attributes").ok().flatten())
            .filter(|a| !a.is_none());
        if let Some(attributes) = attributes {
            let Ok(attributes) = attributes.cast_into::<PyDict>() else {
                return Err(YsonError::new_err(
                    "Invalid field \"attributes\": it must be a dict or None",
                ));
            };
            if !attributes.is_empty() && (!self.ignore_inner_attributes || depth == 0) {
                self.writer.begin_attributes().map_err(write_error)?;
                self.entries(&attributes)?;
                self.writer.end_attributes().map_err(write_error)?;
            }
        }
        if object.is_instance(&self.kinds.boolean)?
            || object.is_instance_of::<pyo3::types::PyBool>()
        {
            return self.writer.bool(object.is_truthy()?).map_err(write_error);
        }
        if object.is_instance_of::<pyo3::types::PyInt>() {
            let kind = if object.is_instance(&self.kinds.uint64)? {
                IntKind::Uint64
            } else if object.is_instance(&self.kinds.int64)? {
                IntKind::Int64
            } else {
                IntKind::Plain
            };
            return self.int(object, kind);
        }
        if let Ok(value) = object.cast::<pyo3::types::PyFloat>() {
            return self.writer.double(value.value()).map_err(write_error);
        }
        if object.is_instance_of::<PyString>() {
            let mut scratch = None;
            let bytes = self.encode_str(object, &mut scratch)?;
            return self.writer.string(bytes).map_err(write_error);
        }
        if let Ok(bytes) = object.cast::<PyBytes>() {
            return self.writer.string(bytes.as_bytes()).map_err(write_error);
        }
        if object.is_instance(&self.kinds.proxy)? {
            let raw = object.getattr("_bytes")?.cast_into::<PyBytes>()?;
            return self.writer.string(raw.as_bytes()).map_err(write_error);
        }
        if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
            return self.list(object);
        }
        if let Ok(dict) = object.cast::<PyDict>() {
            return self.map(dict);
        }
        if object.is_none() || object.is_instance(&self.kinds.entity)? {
            return self.writer.entity().map_err(write_error);
        }
        let mapping = self.py.import("collections.abc")?.getattr("Mapping")?;
        if object.is_instance(&mapping)? {
            return self.mapping(object);
        }
        Err(YsonError::new_err(format!(
            "Value {} cannot be serialized to YSON since it has unsupported type \"{}\"",
            object.repr()?,
            object.get_type().repr()?
        )))
    }

    fn list(&mut self, object: &Bound<'py, PyAny>) -> PyResult<()> {
        self.enter(object)?;
        self.writer.begin_list().map_err(write_error)?;
        if let Ok(list) = object.cast::<PyList>() {
            let mut index = 0;
            // The list may change while items are written (a `to_yson_type` hook): re-check len.
            while index < list.len() {
                let item = list.get_item(index)?;
                self.value(&item)?;
                index += 1;
            }
        } else {
            for item in object.try_iter()? {
                self.value(&item?)?;
            }
        }
        self.writer.end_list().map_err(write_error)?;
        self.path.pop();
        Ok(())
    }

    fn map(&mut self, dict: &Bound<'py, PyDict>) -> PyResult<()> {
        self.enter(dict.as_any())?;
        self.writer.begin_map().map_err(write_error)?;
        self.entries(dict)?;
        self.writer.end_map().map_err(write_error)?;
        self.path.pop();
        Ok(())
    }

    /// A `Mapping` that is not a dict (`FrozenDict`, `MappingProxyType`, a lazy map): written
    /// from its items, in their order.
    fn mapping(&mut self, object: &Bound<'py, PyAny>) -> PyResult<()> {
        self.enter(object)?;
        self.writer.begin_map().map_err(write_error)?;
        let items = PyDict::new(self.py);
        for item in object.call_method0("items")?.try_iter()? {
            let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
            items.set_item(key, value)?;
        }
        self.entries(&items)?;
        self.writer.end_map().map_err(write_error)?;
        self.path.pop();
        Ok(())
    }

    fn entries(&mut self, dict: &Bound<'py, PyDict>) -> PyResult<()> {
        if self.sort_keys {
            let mut items: Vec<(Vec<u8>, Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
            for (key, value) in dict.iter() {
                let mut scratch = None;
                let sort_key = if key.is_instance_of::<PyString>() {
                    self.encode_str(&key, &mut scratch)?.to_vec()
                } else if let Ok(bytes) = key.cast::<PyBytes>() {
                    bytes.as_bytes().to_vec()
                } else {
                    key.str()?.to_string().into_bytes()
                };
                items.push((sort_key, key, value));
            }
            items.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, key, value) in items {
                self.key(&key)?;
                self.value(&value)?;
            }
            return Ok(());
        }
        let mut position: ffi::Py_ssize_t = 0;
        let mut key_ptr: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value_ptr: *mut ffi::PyObject = std::ptr::null_mut();
        let expected_len = dict.len();
        // SAFETY: PyDict_Next hands out borrowed references, turned into owned ones at once.
        while unsafe {
            ffi::PyDict_Next(dict.as_ptr(), &mut position, &mut key_ptr, &mut value_ptr)
        } != 0
        {
            let key = unsafe { Bound::from_borrowed_ptr(self.py, key_ptr) };
            let value = unsafe { Bound::from_borrowed_ptr(self.py, value_ptr) };
            if self.utf8 && unsafe { ffi::PyUnicode_CheckExact(key_ptr) } != 0 {
                let mut size: ffi::Py_ssize_t = 0;
                let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(key.as_ptr(), &mut size) };
                if data.is_null() {
                    return Err(PyErr::fetch(self.py));
                }
                let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) };
                self.writer.key(bytes).map_err(write_error)?;
            } else {
                self.key(&key)?;
            }
            self.value(&value)?;
            if dict.len() != expected_len {
                return Err(PyValueError::new_err(
                    "dictionary changed size during dumps",
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IntKind {
    Plain,
    Int64,
    Uint64,
}

/// Writes `object` as YSON; `shapeshift.yson` wraps this with yt.yson's signature.
#[pyfunction]
#[pyo3(signature = (object, yson_format, yson_type, indent, ignore_inner_attributes, encoding, sort_keys, check_circular, kinds))]
#[allow(clippy::too_many_arguments)]
fn dumps<'py>(
    py: Python<'py>,
    object: &Bound<'py, PyAny>,
    yson_format: Option<&str>,
    yson_type: Option<&str>,
    indent: usize,
    ignore_inner_attributes: bool,
    encoding: Option<String>,
    sort_keys: bool,
    check_circular: bool,
    kinds: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyBytes>> {
    let format = parse_format(yson_format)?;
    let yson_type = parse_type(yson_type)?;
    if kinds.len() != 5 {
        return Err(PyTypeError::new_err("expected 5 tuples of classes"));
    }
    let utf8 = encoding
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("utf-8") || e.eq_ignore_ascii_case("utf8"));
    let mut dumper = Dumper {
        py,
        writer: Writer::new(Vec::new(), format, yson_type).with_indent(indent),
        kinds: Kinds {
            uint64: kinds.get_item(0)?,
            int64: kinds.get_item(1)?,
            boolean: kinds.get_item(2)?,
            proxy: kinds.get_item(3)?,
            entity: kinds.get_item(4)?,
        },
        encoding,
        utf8,
        sort_keys,
        ignore_inner_attributes,
        check_circular,
        path: Vec::new(),
    };
    match yson_type {
        YsonType::Node => dumper.value(object)?,
        YsonType::ListFragment => {
            for item in object.try_iter()? {
                dumper.value(&item?)?;
            }
        }
        YsonType::MapFragment => {
            let dict = object
                .cast::<PyDict>()
                .map_err(|_| YsonError::new_err("a map fragment must be written from a dict"))?;
            dumper.entries(dict)?;
        }
    }
    let bytes = dumper.writer.finish().map_err(write_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Where the next value starts: `from` with separators (whitespace, `;` between items, `=`
/// after a key) skipped. The parser reports the offset after an event; the next value's first
/// byte follows these.
fn skip_separators(data: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < data.len() && matches!(data[at], b' ' | b'\t' | b'\r' | b'\n' | b';' | b'=') {
        at += 1;
    }
    at
}

/// Whether `data` is exactly one complete YSON node.
fn is_node(data: &[u8], max_depth: usize) -> bool {
    let mut parser = PullParser::from_slice(data, YsonType::Node).with_max_depth(max_depth);
    loop {
        match parser.next_event() {
            Ok(None) => return true,
            Ok(Some(_)) => {}
            Err(_) => return false,
        }
    }
}

/// The end of the value in `data[start..end]`, `end` being the parser's offset after the
/// value's last event: the parser takes a `;` right after a value along with it, so a final
/// `;` is dropped when the bytes before it are a complete node (when the `;` is the last byte of
/// a binary string, they are not).
fn value_end(data: &[u8], start: usize, end: usize, max_depth: usize) -> usize {
    if end > start && data[end - 1] == b';' && is_node(&data[start..end - 1], max_depth) {
        end - 1
    } else {
        end
    }
}

/// Where each item of a list fragment starts and ends (`(start, end)`, attributes included,
/// separators not). Raw mode hands out `data[start_i..start_(i+1)]`, separators included, as
/// yt.yson's bindings do; lazy mode parses `data[start..end]` as a node.
#[pyfunction]
#[pyo3(signature = (data, max_depth=DEFAULT_MAX_DEPTH))]
fn list_fragment_item_spans(data: &[u8], max_depth: usize) -> PyResult<Vec<(usize, usize)>> {
    let mut parser = PullParser::from_slice(data, YsonType::ListFragment).with_max_depth(max_depth);
    let mut spans = Vec::new();
    let mut start = None;
    loop {
        let before = parser.offset() as usize;
        let ends_attributes = match parser.next_event().map_err(yson_error)? {
            None => break,
            Some(event) => matches!(event, Event::EndAttributes),
        };
        if start.is_none() {
            start = Some(skip_separators(data, before));
        }
        if parser.depth() == 0 && !ends_attributes {
            if let Some(item_start) = start.take() {
                let end = value_end(data, item_start, parser.offset() as usize, max_depth);
                spans.push((item_start, end));
            }
        }
    }
    Ok(spans)
}

/// What `map_spans` needs of an event (keys copied out of the parser's buffer).
enum Step {
    Key(Vec<u8>),
    BeginAttributes,
    EndAttributes,
    BeginMap,
    Other,
}

/// A map's entries as (key bytes, value start, value end), the value bytes being a complete
/// YSON node (attributes included), for lazy parsing.
type Spans = Vec<(Vec<u8>, usize, usize)>;

/// The entries of a map for lazy parsing: for a node, `(attribute spans or None, map spans or
/// None when the node is not a map)`; for a map fragment, `(None, spans)`.
#[pyfunction]
#[pyo3(signature = (data, yson_type, max_depth=DEFAULT_MAX_DEPTH))]
fn map_spans(
    data: &[u8],
    yson_type: Option<&str>,
    max_depth: usize,
) -> PyResult<(Option<Spans>, Option<Spans>)> {
    let yson_type = parse_type(yson_type)?;
    let level = match yson_type {
        YsonType::MapFragment => 0,
        YsonType::Node => 1,
        YsonType::ListFragment => {
            return Err(YsonError::new_err(
                "lazy parsing reads a node or a map fragment",
            ))
        }
    };
    let mut parser = PullParser::from_slice(data, yson_type).with_max_depth(max_depth);
    let mut attributes: Option<Spans> = None;
    let mut entries: Option<Spans> = if level == 0 { Some(Vec::new()) } else { None };
    let mut in_attributes = false;
    // The entry whose value is being read: (key, value start).
    let mut pending: Option<(Vec<u8>, usize)> = None;
    let mut saw_body = false;
    loop {
        let before = parser.offset() as usize;
        let depth_before = parser.depth();
        let event = match parser.next_event().map_err(yson_error)? {
            None => break,
            Some(Event::Key(key)) => Step::Key(key.to_vec()),
            Some(Event::BeginAttributes) => Step::BeginAttributes,
            Some(Event::EndAttributes) => Step::EndAttributes,
            Some(Event::BeginMap) => Step::BeginMap,
            Some(_) => Step::Other,
        };
        let depth = parser.depth();
        if level == 1 && depth == 0 && matches!(event, Step::EndAttributes) {
            in_attributes = false;
            continue;
        }
        if level == 1 && depth_before == 0 {
            match event {
                Step::BeginAttributes if !saw_body => {
                    in_attributes = true;
                    attributes = Some(Vec::new());
                }
                Step::BeginMap => {
                    saw_body = true;
                    entries = Some(Vec::new());
                }
                _ => saw_body = true,
            }
            continue;
        }
        if depth_before == level && pending.is_none() {
            if let Step::Key(key) = event {
                pending = Some((key, 0));
            }
            continue;
        }
        if let Some((_, start)) = pending.as_mut() {
            if *start == 0 && depth_before == level {
                *start = skip_separators(data, before);
            }
        }
        let value_done = depth == level && !matches!(event, Step::EndAttributes);
        if value_done {
            if let Some((key, start)) = pending.take() {
                let end = value_end(data, start, parser.offset() as usize, max_depth);
                let target = if in_attributes {
                    &mut attributes
                } else {
                    &mut entries
                };
                if let Some(spans) = target.as_mut() {
                    spans.push((key, start, end));
                }
            }
        }
    }
    Ok((attributes, entries))
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(loads, module)?)?;
    module.add_function(wrap_pyfunction!(dumps, module)?)?;
    module.add_function(wrap_pyfunction!(list_fragment_item_spans, module)?)?;
    module.add_function(wrap_pyfunction!(map_spans, module)?)?;
    module.add("YsonError", module.py().get_type::<YsonError>())?;
    module.add("DEFAULT_MAX_DEPTH", DEFAULT_MAX_DEPTH)?;
    Ok(())
}
