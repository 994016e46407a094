//! The streaming writer: events in, YSON bytes out, in YT's exact spelling.
//!
//! Invariants: every item inside a container (and every fragment item) is *terminated* by `;`,
//! as YT writes it, so the writer emits the `;` when an item completes (a scalar, a closing
//! bracket), never before the next one. Pretty output opens a container's line only when its
//! first item arrives, so empty containers stay `[]` / `{}`. Misuse (a key outside a map, a
//! mismatched close, a second top-level node) is an `InvalidInput` error, never bad bytes.
//! Bytes are gathered in an internal buffer and handed to the sink in large writes.

use std::io::{self, Write};

use shapeshift_types::{Node, NodeValue};

use super::text::{format_double, format_i64, format_u64, write_quoted};
use super::{YsonFormat, YsonType};
use crate::varint;

const FLUSH_THRESHOLD: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    TopNode,
    TopList,
    TopMap,
    List,
    Map,
    Attributes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    Key,
    Done,
}

/// Writes YSON from events (`begin_map`, `key`, `int64`, `end_map`, …) or whole nodes.
///
/// Call [`Writer::finish`] at the end to flush and check the document is complete.
pub struct Writer<W: Write> {
    sink: W,
    buffer: Vec<u8>,
    format: YsonFormat,
    indent: usize,
    frames: Vec<(Frame, bool)>,
    expect: Expect,
    after_attributes: bool,
}

fn misuse(message: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("YSON writer: {message}"),
    )
}

impl<W: Write> Writer<W> {
    /// A writer of one document of kind `yson_type` (a node, or the items of a fragment).
    pub fn new(sink: W, format: YsonFormat, yson_type: YsonType) -> Writer<W> {
        let (bottom, expect) = match yson_type {
            YsonType::Node => (Frame::TopNode, Expect::Value),
            YsonType::ListFragment => (Frame::TopList, Expect::Value),
            YsonType::MapFragment => (Frame::TopMap, Expect::Key),
        };
        Writer {
            sink,
            buffer: Vec::with_capacity(1024),
            format,
            indent: 4,
            frames: vec![(bottom, true)],
            expect,
            after_attributes: false,
        }
    }

    /// Sets the indentation of [`YsonFormat::Pretty`] in spaces (4 by default, as YT).
    pub fn with_indent(mut self, indent: usize) -> Writer<W> {
        self.indent = indent;
        self
    }

    /// Flushes and returns the sink.
    ///
    /// # Errors
    /// The sink's error, or `InvalidInput` when a node is incomplete (or no node was written
    /// for [`YsonType::Node`]).
    pub fn finish(mut self) -> io::Result<W> {
        if self.frames.len() != 1 || (self.expect == Expect::Value && self.after_attributes) {
            return Err(misuse("finish with containers still open"));
        }
        if self.frames[0].0 == Frame::TopNode && self.expect != Expect::Done {
            return Err(misuse("finish before the node was written"));
        }
        self.flush_buffer()?;
        self.sink.flush()?;
        Ok(self.sink)
    }

    /// Flushes the bytes gathered so far to the sink.
    ///
    /// # Errors
    /// The sink's error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_buffer()?;
        self.sink.flush()
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        if !self.buffer.is_empty() {
            self.sink.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Bytes written but not yet flushed (the whole output when the writer is kept to the end).
    pub fn buffered(&self) -> &[u8] {
        &self.buffer
    }

    #[inline(always)]
    fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    fn write_indent(&mut self, depth: usize) {
        let count = depth * self.indent;
        self.buffer.resize(self.buffer.len() + count, b' ');
    }

    /// Opens an item in a list, with pretty layout; a no-op after attributes or outside lists.
    #[inline(always)]
    fn begin_value(&mut self) -> io::Result<()> {
        if self.expect != Expect::Value {
            return Err(misuse(if self.expect == Expect::Key {
                "a value where a key is expected"
            } else {
                "a second top-level node"
            }));
        }
        if self.after_attributes {
            return Ok(());
        }
        if self.format == YsonFormat::Pretty {
            let depth = self.depth();
            if let Some((Frame::List, empty)) = self.frames.last_mut() {
                if *empty {
                    *empty = false;
                    self.buffer.push(b'\n');
                }
                self.write_indent(depth);
            }
        }
        Ok(())
    }

    /// Closes an item: the `;` terminator (and newline where YT puts one).
    #[inline(always)]
    fn end_value(&mut self) -> io::Result<()> {
        self.after_attributes = false;
        let top = self.frames.last().map_or(Frame::TopNode, |f| f.0);
        match top {
            Frame::TopNode => {
                self.expect = Expect::Done;
            }
            Frame::TopList | Frame::TopMap => {
                if self.format == YsonFormat::Binary {
                    self.buffer.push(b';');
                } else {
                    self.buffer.extend_from_slice(b";\n");
                }
                self.expect = if top == Frame::TopList {
                    Expect::Value
                } else {
                    Expect::Key
                };
            }
            Frame::List | Frame::Map | Frame::Attributes => {
                if self.format == YsonFormat::Pretty {
                    self.buffer.extend_from_slice(b";\n");
                } else {
                    self.buffer.push(b';');
                }
                self.expect = if top == Frame::List {
                    Expect::Value
                } else {
                    Expect::Key
                };
            }
        }
        if self.buffer.len() >= FLUSH_THRESHOLD && self.frames.len() == 1 {
            self.flush_buffer()?;
        }
        Ok(())
    }

    #[inline(always)]
    fn raw_string(&mut self, bytes: &[u8]) {
        if self.format == YsonFormat::Binary {
            self.buffer.push(0x01);
            varint::put(&mut self.buffer, varint::zigzag(bytes.len() as i64));
            self.buffer.extend_from_slice(bytes);
        } else {
            write_quoted(bytes, &mut self.buffer);
        }
    }

    /// Writes `#`.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn entity(&mut self) -> io::Result<()> {
        self.begin_value()?;
        self.buffer.push(b'#');
        self.end_value()
    }

    /// Writes a boolean.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn bool(&mut self, value: bool) -> io::Result<()> {
        self.begin_value()?;
        match (self.format, value) {
            (YsonFormat::Binary, false) => self.buffer.push(0x04),
            (YsonFormat::Binary, true) => self.buffer.push(0x05),
            (_, false) => self.buffer.extend_from_slice(b"%false"),
            (_, true) => self.buffer.extend_from_slice(b"%true"),
        }
        self.end_value()
    }

    /// Writes an int64.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn int64(&mut self, value: i64) -> io::Result<()> {
        self.begin_value()?;
        if self.format == YsonFormat::Binary {
            self.buffer.push(0x02);
            varint::put(&mut self.buffer, varint::zigzag(value));
        } else {
            format_i64(value, &mut self.buffer);
        }
        self.end_value()
    }

    /// Writes a uint64 (`5u` in text).
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn uint64(&mut self, value: u64) -> io::Result<()> {
        self.begin_value()?;
        if self.format == YsonFormat::Binary {
            self.buffer.push(0x06);
            varint::put(&mut self.buffer, value);
        } else {
            format_u64(value, &mut self.buffer);
            self.buffer.push(b'u');
        }
        self.end_value()
    }

    /// Writes a double.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn double(&mut self, value: f64) -> io::Result<()> {
        self.begin_value()?;
        if self.format == YsonFormat::Binary {
            self.buffer.push(0x03);
            self.buffer.extend_from_slice(&value.to_le_bytes());
        } else {
            format_double(value, &mut self.buffer);
        }
        self.end_value()
    }

    /// Writes a string (any bytes).
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    #[inline]
    pub fn string(&mut self, value: &[u8]) -> io::Result<()> {
        self.begin_value()?;
        self.raw_string(value);
        self.end_value()
    }

    /// Writes a map key (in a map, attribute map or map fragment).
    ///
    /// # Errors
    /// `InvalidInput` where a key is not allowed.
    #[inline]
    pub fn key(&mut self, key: &[u8]) -> io::Result<()> {
        if self.expect != Expect::Key {
            return Err(misuse("a key where a value is expected"));
        }
        if self.format == YsonFormat::Pretty {
            let depth = self.depth();
            if let Some((Frame::Map | Frame::Attributes, empty)) = self.frames.last_mut() {
                if *empty {
                    *empty = false;
                    self.buffer.push(b'\n');
                }
            }
            self.write_indent(depth);
        }
        self.raw_string(key);
        if self.format == YsonFormat::Pretty {
            self.buffer.extend_from_slice(b" = ");
        } else {
            self.buffer.push(b'=');
        }
        self.expect = Expect::Value;
        Ok(())
    }

    fn open(&mut self, frame: Frame, bracket: u8, expect: Expect) -> io::Result<()> {
        self.buffer.push(bracket);
        self.frames.push((frame, true));
        self.expect = expect;
        self.after_attributes = false;
        Ok(())
    }

    fn close(&mut self, frame: Frame, bracket: u8) -> io::Result<()> {
        let wanted = if frame == Frame::List {
            Expect::Value
        } else {
            Expect::Key
        };
        match self.frames.last() {
            Some(&(top, empty))
                if top == frame && self.expect == wanted && !self.after_attributes =>
            {
                self.frames.pop();
                if self.format == YsonFormat::Pretty && !empty {
                    let depth = self.depth();
                    self.write_indent(depth);
                }
                self.buffer.push(bracket);
                Ok(())
            }
            _ => Err(misuse("a close that does not match the open container")),
        }
    }

    /// Opens a list.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed.
    pub fn begin_list(&mut self) -> io::Result<()> {
        self.begin_value()?;
        self.open(Frame::List, b'[', Expect::Value)
    }

    /// Closes the open list.
    ///
    /// # Errors
    /// `InvalidInput` when the innermost open container is not a list; the sink's error.
    pub fn end_list(&mut self) -> io::Result<()> {
        self.close(Frame::List, b']')?;
        self.end_value()
    }

    /// Opens a map.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed.
    pub fn begin_map(&mut self) -> io::Result<()> {
        self.begin_value()?;
        self.open(Frame::Map, b'{', Expect::Key)
    }

    /// Closes the open map.
    ///
    /// # Errors
    /// `InvalidInput` when the innermost open container is not a map or a value is missing.
    pub fn end_map(&mut self) -> io::Result<()> {
        self.close(Frame::Map, b'}')?;
        self.end_value()
    }

    /// Opens the attribute map of the next value.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed or right after another attribute map.
    pub fn begin_attributes(&mut self) -> io::Result<()> {
        if self.after_attributes {
            return Err(misuse("a second attribute map for one value"));
        }
        self.begin_value()?;
        self.open(Frame::Attributes, b'<', Expect::Key)
    }

    /// Closes the attribute map; the next event is its value.
    ///
    /// # Errors
    /// `InvalidInput` when the innermost open container is not an attribute map.
    pub fn end_attributes(&mut self) -> io::Result<()> {
        self.close(Frame::Attributes, b'>')?;
        if self.format == YsonFormat::Pretty {
            self.buffer.push(b' ');
        }
        self.expect = Expect::Value;
        self.after_attributes = true;
        Ok(())
    }

    /// Writes a whole node (with its attributes) where a value is expected.
    ///
    /// # Errors
    /// `InvalidInput` where a value is not allowed; the sink's error.
    pub fn write_node(&mut self, node: &Node) -> io::Result<()> {
        if !node.attributes.is_empty() {
            self.begin_attributes()?;
            for (key, value) in &node.attributes {
                self.key(key)?;
                self.write_node(value)?;
            }
            self.end_attributes()?;
        }
        match &node.value {
            NodeValue::Entity => self.entity(),
            NodeValue::Bool(v) => self.bool(*v),
            NodeValue::Int64(v) => self.int64(*v),
            NodeValue::Uint64(v) => self.uint64(*v),
            NodeValue::Double(v) => self.double(*v),
            NodeValue::String(v) => self.string(v),
            NodeValue::List(items) => {
                self.begin_list()?;
                for item in items {
                    self.write_node(item)?;
                }
                self.end_list()
            }
            NodeValue::Map(entries) => {
                self.begin_map()?;
                for (key, value) in entries {
                    self.key(key)?;
                    self.write_node(value)?;
                }
                self.end_map()
            }
        }
    }
}
