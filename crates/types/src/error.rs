//! The one error type of the types layer, and the paths it names.
//!
//! Every error says *where* as a path from the root of what was being read or checked:
//! `members[2].type.item` inside a type description, `[3].price` inside a value,
//! `columns[1].type_v3` inside a schema. Paths are built on the stack while walking (a linked
//! list of borrowed segments) and rendered only when an error is actually raised, so a
//! successful walk allocates nothing for them.

use std::fmt;

/// An error reading, writing or checking a type, schema or typed value.
///
/// `path` locates the offending element (empty for the root); `message` says what is wrong.
/// `Display` renders `path: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeError {
    /// Where the problem is, e.g. `members[2].type.item`; empty at the root.
    pub path: String,
    /// What the problem is, e.g. `unknown type "int65"`.
    pub message: String,
}

impl TypeError {
    /// An error at `path` (rendered already) with `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> TypeError {
        TypeError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The same error seen from one level up: `prefix` is prepended to the path.
    pub(crate) fn within(mut self, prefix: &str) -> TypeError {
        if self.path.is_empty() {
            self.path = prefix.to_owned();
        } else if self.path.starts_with('[') {
            self.path = format!("{prefix}{}", self.path);
        } else {
            self.path = format!("{prefix}.{}", self.path);
        }
        self
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for TypeError {}

/// A path under construction: a chain of segments living on the walker's stack.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    /// `parent.key`
    Key(&'a Path<'a>, &'a str),
    /// `parent[index]`
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    pub(crate) fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }

    /// An error located at this path.
    pub(crate) fn error(&self, message: impl Into<String>) -> TypeError {
        TypeError::new(self.render(), message)
    }

    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match *self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.render_into(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, index) => {
                parent.render_into(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
}

/// Bytes shown in an error message: UTF-8 as is, anything else escaped.
pub(crate) fn show_bytes(bytes: &[u8]) -> String {
    const LIMIT: usize = 64;
    let shown = &bytes[..bytes.len().min(LIMIT)];
    let mut out = String::from("\"");
    for chunk in shown.utf8_chunks() {
        out.extend(chunk.valid().escape_debug());
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    if bytes.len() > LIMIT {
        out.push_str("...");
    }
    out.push('"');
    out
}
