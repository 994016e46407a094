//! YSON, YTsaurus's data format: text, pretty and binary, byte-exact with YT's own writer.
//!
//! A YSON document is a [`Node`] (a scalar, list or map, any of which may carry attributes), or
//! a *fragment*: the items of a list (`1;2;3;`) or the entries of a map (`a=1;b=2;`) without the
//! brackets. Tables travel as list fragments of row maps with control entities between them.
//!
//! Layers, fastest first:
//! - [`PullParser`]: events ([`Event`]) one by one from a slice or any reader; strings are
//!   borrowed, scalars cost nothing — the fast path.
//! - [`FragmentReader`] / [`TableReader`]: items as nodes, rows and [`Control`] records, from
//!   any reader in constant memory.
//! - [`from_slice`] / [`to_vec`] / [`write_node`]: whole nodes.
//! - [`Writer`]: events in, bytes out; [`TableWriter`] for row streams.
//!
//! Text output spells everything exactly as `yt.yson.dumps` does (strings always quoted with C
//! escapes, doubles as `1.` / `0.0000001` / `1e+21`, every container item terminated by `;`);
//! the rules are in docs/formats/yson.md. Reading accepts the whole grammar (text and binary tokens
//! mixed, unquoted strings, optional trailing `;`), with a nesting limit
//! ([`DEFAULT_MAX_DEPTH`]) and errors that name the byte offset and what was expected.

use std::io::{self, Write};

use shapeshift_types::Node;

mod error;
mod parser;
mod source;
mod table;
mod text;
mod tree;
mod writer;

pub(crate) mod rows;

pub use error::YsonError;
pub(crate) use parser::{decode_varint_fast, zigzag_decode, FAST_PATH_WINDOW};
pub use parser::{Event, PullParser, DEFAULT_MAX_DEPTH};
pub use source::{ReadSource, SliceSource, Source};
pub use table::{Control, FragmentReader, TableItem, TableReader, TableWriter};
pub use text::{format_double, write_quoted};
pub use writer::Writer;

/// How YSON is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YsonFormat {
    /// Binary tokens for scalars (markers 0x01..0x06), ASCII structure.
    Binary,
    /// Compact text: `{"a"=1;"b"=[1;2;];}`.
    Text,
    /// Indented text, as `yt.yson.dumps(..., yson_format="pretty")`.
    Pretty,
}

/// What a document is: one node, or the items of a list or map without brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YsonType {
    Node,
    ListFragment,
    MapFragment,
}

/// Reads one node (text or binary) from `bytes`.
///
/// # Errors
/// A [`YsonError`] naming the byte offset and what was expected, for truncated, malformed or
/// too deeply nested input, or for anything but whitespace after the node.
pub fn from_slice(bytes: &[u8]) -> Result<Node, YsonError> {
    from_slice_with_depth(bytes, DEFAULT_MAX_DEPTH)
}

/// [`from_slice`] with a nesting limit.
///
/// # Errors
/// As [`from_slice`].
pub fn from_slice_with_depth(bytes: &[u8], max_depth: usize) -> Result<Node, YsonError> {
    let mut parser = PullParser::from_slice(bytes, YsonType::Node).with_max_depth(max_depth);
    let node = tree::read_value(&mut parser)?
        .ok_or_else(|| YsonError::new(0, "expected a value, found end of input"))?;
    // Checks that nothing but whitespace follows.
    let offset = parser.offset();
    match parser.next_event()? {
        None => Ok(node),
        Some(_) => Err(YsonError::new(
            offset,
            "expected end of input after the node",
        )),
    }
}

/// Reads every item of a list fragment from `bytes`.
///
/// # Errors
/// As [`from_slice`].
pub fn list_fragment_from_slice(bytes: &[u8]) -> Result<Vec<Node>, YsonError> {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut items = Vec::new();
    while let Some(item) = tree::read_value(&mut parser)? {
        items.push(item);
    }
    Ok(items)
}

/// Reads every entry of a map fragment from `bytes`, in document order.
///
/// # Errors
/// As [`from_slice`].
pub fn map_fragment_from_slice(bytes: &[u8]) -> Result<Vec<(Vec<u8>, Node)>, YsonError> {
    let mut parser = PullParser::from_slice(bytes, YsonType::MapFragment);
    let mut entries = Vec::new();
    loop {
        let offset = parser.offset();
        let key = match parser.next_event()? {
            None => return Ok(entries),
            Some(Event::Key(key)) => key.to_vec(),
            Some(_) => return Err(YsonError::new(offset, "expected a map fragment key")),
        };
        let value = tree::read_value(&mut parser)?
            .ok_or_else(|| YsonError::new(parser.offset(), "expected a value after a key"))?;
        entries.push((key, value));
    }
}

/// `node` as YSON bytes of `format`.
pub fn to_vec(node: &Node, format: YsonFormat) -> Vec<u8> {
    let mut writer = Writer::new(Vec::new(), format, YsonType::Node);
    // Writing a whole node into a Vec cannot fail: the event order is right by construction.
    let _ = writer.write_node(node);
    match writer.finish() {
        Ok(bytes) => bytes,
        Err(_) => Vec::new(),
    }
}

/// Writes `node` as YSON of `format` to `w`.
///
/// # Errors
/// The writer's error.
pub fn write_node<W: Write>(w: &mut W, node: &Node, format: YsonFormat) -> io::Result<()> {
    let mut writer = Writer::new(w, format, YsonType::Node);
    writer.write_node(node)?;
    writer.finish()?;
    Ok(())
}

/// Writes `items` as a list fragment (each item followed by `;`, and a newline in text).
///
/// # Errors
/// The writer's error.
pub fn write_list_fragment<'n, W: Write>(
    w: &mut W,
    items: impl IntoIterator<Item = &'n Node>,
    format: YsonFormat,
) -> io::Result<()> {
    let mut writer = Writer::new(w, format, YsonType::ListFragment);
    for item in items {
        writer.write_node(item)?;
    }
    writer.finish()?;
    Ok(())
}

/// Writes `entries` as a map fragment (`key=value;` each).
///
/// # Errors
/// The writer's error.
pub fn write_map_fragment<'n, W: Write>(
    w: &mut W,
    entries: impl IntoIterator<Item = &'n (Vec<u8>, Node)>,
    format: YsonFormat,
) -> io::Result<()> {
    let mut writer = Writer::new(w, format, YsonType::MapFragment);
    for (key, value) in entries {
        writer.key(key)?;
        writer.write_node(value)?;
    }
    writer.finish()?;
    Ok(())
}

/// Counts the top-level items of a list fragment by walking its events without building
/// anything: the fastest whole-input pass, for benchmarks and validation.
///
/// # Errors
/// As [`from_slice`].
pub fn count_list_fragment_items(bytes: &[u8]) -> Result<u64, YsonError> {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut items = 0u64;
    loop {
        let completes_value = match parser.next_event()? {
            None => return Ok(items),
            Some(event) => !matches!(
                event,
                Event::BeginAttributes | Event::EndAttributes | Event::Key(_)
            ),
        };
        if completes_value && parser.depth() == 0 {
            items += 1;
        }
    }
}
