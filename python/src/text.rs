//! Python strs from UTF-8, the two ways the extension makes them: [`utf8_to_py`] for bytes
//! that may not be UTF-8 (CPython's decoder checks them while it decodes, once), [`str_of`]
//! for text Rust has checked already (a format's `&str`), made without a second check.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// `bytes` as a str when they are UTF-8, validated once by CPython's decoder (a check in
/// Rust first, then `PyString::new`, validated them twice).
pub(crate) fn utf8_to_py<'py>(py: Python<'py>, bytes: &[u8]) -> Option<Bound<'py, PyAny>> {
    let len = pyo3::ffi::Py_ssize_t::try_from(bytes.len()).ok()?;
    // SAFETY: the pointer and length describe `bytes`; the call returns a new reference, or
    // null with an exception set.
    let ptr =
        unsafe { pyo3::ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), len, c"strict".as_ptr()) };
    if ptr.is_null() {
        drop(PyErr::take(py));
        // Not UTF-8: the caller makes bytes instead. UTF-8 that CPython still could not
        // decode (out of memory) is not hidden as bytes: retried, a second failure raises.
        return std::str::from_utf8(bytes)
            .ok()
            .map(|text| PyString::new(py, text).into_any());
    }
    // SAFETY: a new, non-null reference.
    Some(unsafe { Bound::from_owned_ptr(py, ptr) })
}

/// A str of `text`, made at its final width at once: CPython's UTF-8 decoder starts narrow and
/// widens (a second allocation and copy) at the first character above Latin-1.
///
/// # Safety
/// The GIL is held.
pub(crate) unsafe fn str_of(text: &str) -> *mut ffi::PyObject {
    let bytes = text.as_bytes();
    let ascii = ascii_prefix(bytes);
    // The byte at `ascii` (if any) is above ASCII, so a character starts there.
    let rest = &text[ascii..];
    let (mut count, mut max) = (ascii, 0x7f);
    for c in rest.chars() {
        count += 1;
        max = max.max(c as u32);
    }
    let obj = ffi::PyUnicode_New(count as ffi::Py_ssize_t, max);
    if obj.is_null() {
        return obj;
    }
    let data = ffi::PyUnicode_DATA(obj);
    // The width PyUnicode_New chose for `max`: 1, 2 or 4 bytes a character.
    match max {
        0..=0xff => fill(data.cast::<u8>(), &bytes[..ascii], rest, |c| c as u8),
        0x100..=0xffff => fill(data.cast::<u16>(), &bytes[..ascii], rest, |c| c as u16),
        _ => fill(data.cast::<u32>(), &bytes[..ascii], rest, |c| c as u32),
    }
    obj
}

/// The length of the ASCII run `bytes` starts with, eight bytes at a time.
#[inline]
fn ascii_prefix(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        if u64::from_le_bytes(chunk.try_into().unwrap_or([0x80; 8])) & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        at += 8;
    }
    at + bytes[at..].iter().take_while(|b| b.is_ascii()).count()
}

/// Writes the ASCII `prefix` then the characters of `rest` as code units of `T`.
///
/// # Safety
/// `data` has room for `prefix.len()` plus `rest`'s character count units of `T`.
#[inline]
unsafe fn fill<T: From<u8>>(data: *mut T, prefix: &[u8], rest: &str, unit: impl Fn(char) -> T) {
    for (i, &b) in prefix.iter().enumerate() {
        *data.add(i) = T::from(b);
    }
    for (i, c) in rest.chars().enumerate() {
        *data.add(prefix.len() + i) = unit(c);
    }
}
