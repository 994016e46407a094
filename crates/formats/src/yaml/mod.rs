//! YAML documents: one YSON node as YAML 1.2 and back, lossless (a document codec, not a
//! row format: it is not in the registry).
//!
//! Reading uses the event parser of `saphyr` (the maintained successor of yaml-rust) and
//! builds the node directly, so nesting depth is bounded like YSON's and alias expansion has
//! a node budget; writing builds `saphyr`'s tree and uses its emitter.
//!
//! # The convention (docs/formats/yaml.md)
//! - entity `#` is `null`; booleans, `int64` integers and doubles are plain YAML scalars
//!   (non-finite doubles are YAML's `.nan`, `.inf`, `-.inf`);
//! - `uint64` is tagged: `!uint64 18446744073709551615` (a plain integer above `i64::MAX` is
//!   read as `uint64` too);
//! - a string is a YAML string when it is UTF-8, otherwise `!!binary` with its bytes in
//!   base64 (YAML's own binary tag); map keys likewise;
//! - a node with attributes is `!attributes {attributes: {...}, value: ...}`;
//! - reading, a plain key that is not a string (`1: a`, `true: b`) becomes its text, the
//!   core schema's `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq` tags are
//!   honoured, and any other tag is an error. A stream holds exactly one document.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use saphyr::{Mapping, Scalar, Yaml, YamlEmitter};
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};
use shapeshift_types::{Node, NodeValue};

use crate::yson::DEFAULT_MAX_DEPTH;

/// The local tag of `uint64` scalars.
pub const UINT64_TAG: &str = "uint64";
/// The local tag of a node with attributes.
pub const ATTRIBUTES_TAG: &str = "attributes";
/// Nodes alias expansion may copy in one document (a "billion laughs" bound).
pub const ALIAS_NODE_BUDGET: usize = 1_000_000;

const CORE_SCHEMA: &str = "tag:yaml.org,2002:";

/// A YAML document that cannot be read, or a node that cannot be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("yaml: {}{message}", position(*.offset, *.line, *.column))]
pub struct YamlError {
    /// Byte offset in the input, where known.
    pub offset: Option<u64>,
    /// Line (1-based) and column (0-based, in characters), where known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

fn position(offset: Option<u64>, line: Option<usize>, column: Option<usize>) -> String {
    match (offset, line, column) {
        (Some(o), Some(l), Some(c)) => format!("at byte {o} (line {l}, column {c}): "),
        (Some(o), _, _) => format!("at byte {o}: "),
        _ => String::new(),
    }
}

/// Reads the one YAML document of `bytes` (UTF-8) as a node.
///
/// # Errors
/// A [`YamlError`] naming the byte offset, line and column of malformed YAML, invalid UTF-8,
/// an unknown tag, a scalar its tag does not fit, a collection as a map key, a repeated
/// key, nesting deeper than the parser's limit or [`DEFAULT_MAX_DEPTH`], aliases over
/// [`ALIAS_NODE_BUDGET`] nodes, or not exactly one document.
pub fn from_slice(bytes: &[u8]) -> Result<Node, YamlError> {
    let text = std::str::from_utf8(bytes).map_err(|e| YamlError {
        offset: Some(e.valid_up_to() as u64),
        line: None,
        column: None,
        message: "input is not UTF-8".to_owned(),
    })?;
    from_str(text)
}

/// [`from_slice`] of text.
///
/// # Errors
/// As [`from_slice`].
pub fn from_str(text: &str) -> Result<Node, YamlError> {
    let mut builder = Builder::default();
    let mut last = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| scan_error(text, &e))?;
        last = span.start.index();
        builder.event(event).map_err(|message| {
            error_at(text, last, span.start.line(), span.start.col(), message)
        })?;
    }
    builder.root.ok_or_else(|| YamlError {
        offset: Some(byte_offset(text, last)),
        line: None,
        column: None,
        message: "the input holds no YAML document".to_owned(),
    })
}

fn byte_offset(text: &str, char_index: usize) -> u64 {
    text.char_indices()
        .nth(char_index)
        .map_or(text.len(), |(at, _)| at) as u64
}

fn error_at(
    text: &str,
    char_index: usize,
    line: usize,
    column: usize,
    message: String,
) -> YamlError {
    YamlError {
        offset: Some(byte_offset(text, char_index)),
        line: Some(line),
        column: Some(column),
        message,
    }
}

fn scan_error(text: &str, e: &ScanError) -> YamlError {
    let m = e.marker();
    error_at(text, m.index(), m.line(), m.col(), e.info().to_owned())
}

/// An open collection while reading.
enum Frame {
    List(Vec<Node>),
    /// Entries so far, the keys seen, and the key waiting for its value.
    Map(Vec<(Vec<u8>, Node)>, HashSet<Vec<u8>>, Option<Vec<u8>>),
}

struct Open {
    frame: Frame,
    anchor: usize,
    tag: Option<Tag>,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    anchors: HashMap<usize, Node>,
    alias_nodes: usize,
    documents: usize,
    root: Option<Node>,
}

impl Builder {
    fn event(&mut self, event: Event<'_>) -> Result<(), String> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err("more than one YAML document (a document codec reads one)".into());
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                let node = scalar(&text, style, tag.as_deref())?;
                self.complete(node, anchor)
            }
            Event::SequenceStart(anchor, tag) => self.open(Frame::List(Vec::new()), anchor, tag),
            Event::MappingStart(anchor, tag) => {
                self.open(Frame::Map(Vec::new(), HashSet::new(), None), anchor, tag)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self
                    .stack
                    .pop()
                    .ok_or("a collection ends that never began")?;
                let node = match open.frame {
                    Frame::List(items) => collection(Node::list(items), open.tag.as_ref())?,
                    Frame::Map(entries, _, _) => {
                        collection(Node::new(NodeValue::Map(entries)), open.tag.as_ref())?
                    }
                };
                self.complete(node, open.anchor)
            }
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .get(&id)
                    .ok_or("an alias of an unknown anchor")?
                    .clone();
                self.alias_nodes += count_nodes(&node);
                if self.alias_nodes > ALIAS_NODE_BUDGET {
                    return Err(format!(
                        "aliases expand to more than {ALIAS_NODE_BUDGET} nodes"
                    ));
                }
                self.complete(node, 0)
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
        }
    }

    fn open(
        &mut self,
        frame: Frame,
        anchor: usize,
        tag: Option<Cow<'_, Tag>>,
    ) -> Result<(), String> {
        if self.stack.len() >= DEFAULT_MAX_DEPTH {
            return Err(format!("nested deeper than {DEFAULT_MAX_DEPTH} levels"));
        }
        self.stack.push(Open {
            frame,
            anchor,
            tag: tag.map(Cow::into_owned),
        });
        Ok(())
    }

    fn complete(&mut self, node: Node, anchor: usize) -> Result<(), String> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some(node);
                Ok(())
            }
            Some(Open {
                frame: Frame::List(items),
                ..
            }) => {
                items.push(node);
                Ok(())
            }
            Some(Open {
                frame: Frame::Map(entries, seen, key),
                ..
            }) => {
                match key.take() {
                    None => {
                        let k = map_key(node)?;
                        if !seen.insert(k.clone()) {
                            return Err(format!(
                                "the map key {:?} appears twice (YAML maps have unique keys)",
                                String::from_utf8_lossy(&k)
                            ));
                        }
                        *key = Some(k);
                    }
                    Some(k) => entries.push((k, node)),
                }
                Ok(())
            }
        }
    }
}

fn count_nodes(node: &Node) -> usize {
    let inner = match &node.value {
        NodeValue::List(items) => items.iter().map(count_nodes).sum(),
        NodeValue::Map(entries) => entries.iter().map(|(_, v)| count_nodes(v)).sum(),
        _ => 0,
    };
    1 + inner
        + node
            .attributes
            .iter()
            .map(|(_, v)| count_nodes(v))
            .sum::<usize>()
}

/// A map key: strings as they are, other scalars as their text.
fn map_key(node: Node) -> Result<Vec<u8>, String> {
    if !node.attributes.is_empty() {
        return Err("a map key with attributes".into());
    }
    Ok(match node.value {
        NodeValue::String(s) => s,
        NodeValue::Entity => b"null".to_vec(),
        NodeValue::Bool(b) => b.to_string().into_bytes(),
        NodeValue::Int64(v) => v.to_string().into_bytes(),
        NodeValue::Uint64(v) => v.to_string().into_bytes(),
        NodeValue::Double(v) => v.to_string().into_bytes(),
        NodeValue::List(_) | NodeValue::Map(_) => {
            return Err("a list or map as a map key (YSON keys are strings)".into())
        }
    })
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Node, String> {
    if let Some(tag) = tag {
        let wrong = |what: &str| format!("{text:?} is not {what} (tag {tag})");
        return match (tag.handle.as_str(), tag.suffix.as_str()) {
            ("!", UINT64_TAG) => text
                .trim()
                .parse::<u64>()
                .map(Node::uint64)
                .map_err(|_| wrong("a uint64")),
            (CORE_SCHEMA, "binary") => {
                let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                base64::engine::general_purpose::STANDARD
                    .decode(compact)
                    .map(Node::string)
                    .map_err(|e| wrong(&format!("base64 ({e})")))
            }
            (CORE_SCHEMA, "str") => Ok(Node::string(text.as_bytes())),
            (CORE_SCHEMA, "int" | "float" | "bool" | "null") => {
                let resolved = Scalar::parse_from_cow_and_metadata(
                    Cow::Borrowed(text),
                    ScalarStyle::Plain,
                    Some(&Cow::Borrowed(tag)),
                )
                .ok_or_else(|| wrong(&format!("a {}", tag.suffix)))?;
                Ok(plain(resolved, text))
            }
            _ => Err(format!("unknown tag {tag} on a scalar")),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Node::string(text.as_bytes()));
    }
    if text.is_empty() {
        // An empty value (`key:`) is null in YAML 1.2's core schema.
        return Ok(Node::entity());
    }
    Ok(plain(Scalar::parse_from_cow(Cow::Borrowed(text)), text))
}

fn plain(value: Scalar<'_>, text: &str) -> Node {
    // An integer beyond int64 is read as uint64 when it fits (as YT's JSON does).
    if !matches!(value, Scalar::Integer(_)) && text.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(v) = text.parse::<u64>() {
            return Node::uint64(v);
        }
    }
    match value {
        Scalar::Null => Node::entity(),
        Scalar::Boolean(b) => Node::new(NodeValue::Bool(b)),
        Scalar::Integer(v) => Node::int64(v),
        Scalar::FloatingPoint(v) => Node::new(NodeValue::Double(v.into_inner())),
        Scalar::String(s) => Node::string(s.as_bytes()),
    }
}

fn collection(node: Node, tag: Option<&Tag>) -> Result<Node, String> {
    let Some(tag) = tag else {
        return Ok(node);
    };
    match (tag.handle.as_str(), tag.suffix.as_str(), node.value) {
        (CORE_SCHEMA, "seq", value @ NodeValue::List(_))
        | (CORE_SCHEMA, "map", value @ NodeValue::Map(_)) => Ok(Node::new(value)),
        ("!", ATTRIBUTES_TAG, NodeValue::Map(entries)) => {
            let mut attributes = None;
            let mut value = None;
            for (key, node) in entries {
                match key.as_slice() {
                    b"attributes" => attributes = Some(node),
                    b"value" => value = Some(node),
                    other => {
                        return Err(format!(
                            "!{ATTRIBUTES_TAG} has a key {:?} (only attributes and value)",
                            String::from_utf8_lossy(other)
                        ))
                    }
                }
            }
            let (Some(attributes), Some(value)) = (attributes, value) else {
                return Err(format!("!{ATTRIBUTES_TAG} needs both attributes and value"));
            };
            let NodeValue::Map(attributes) = attributes.value else {
                return Err(format!("!{ATTRIBUTES_TAG}: attributes must be a map"));
            };
            if !value.attributes.is_empty() {
                return Err(format!(
                    "!{ATTRIBUTES_TAG}: the value has attributes of its own"
                ));
            }
            Ok(Node {
                attributes,
                value: value.value,
            })
        }
        _ => Err(format!("unknown tag {tag} on a collection")),
    }
}

// ---------------------------------------------------------------------------------------------
// Writing

fn local_tag(suffix: &str) -> Cow<'static, Tag> {
    Cow::Owned(Tag {
        handle: "!".to_owned(),
        suffix: suffix.to_owned(),
    })
}

fn text(bytes: &[u8]) -> Yaml<'static> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Yaml::Value(Scalar::String(Cow::Owned(s.to_owned()))),
        // `Tag`'s Display puts the handle "!" before the suffix: "!" + "!binary" is "!!binary".
        Err(_) => Yaml::Tagged(
            local_tag("!binary"),
            Box::new(Yaml::Value(Scalar::String(Cow::Owned(
                base64::engine::general_purpose::STANDARD.encode(bytes),
            )))),
        ),
    }
}

fn to_yaml(node: &Node) -> Yaml<'static> {
    let value = match &node.value {
        NodeValue::Entity => Yaml::Value(Scalar::Null),
        NodeValue::Bool(b) => Yaml::Value(Scalar::Boolean(*b)),
        NodeValue::Int64(v) => Yaml::Value(Scalar::Integer(*v)),
        NodeValue::Uint64(v) => Yaml::Tagged(
            local_tag(UINT64_TAG),
            Box::new(Yaml::Value(Scalar::String(Cow::Owned(v.to_string())))),
        ),
        NodeValue::Double(v) => Yaml::Value(Scalar::FloatingPoint((*v).into())),
        NodeValue::String(s) => text(s),
        NodeValue::List(items) => Yaml::Sequence(items.iter().map(to_yaml).collect()),
        NodeValue::Map(entries) => mapping(entries),
    };
    if node.attributes.is_empty() {
        return value;
    }
    let mut wrapper = Mapping::new();
    wrapper.insert(text(b"attributes"), mapping(&node.attributes));
    wrapper.insert(text(b"value"), value);
    Yaml::Tagged(local_tag(ATTRIBUTES_TAG), Box::new(Yaml::Mapping(wrapper)))
}

fn mapping(entries: &[(Vec<u8>, Node)]) -> Yaml<'static> {
    let mut map = Mapping::with_capacity(entries.len());
    for (key, value) in entries {
        map.insert(text(key), to_yaml(value));
    }
    Yaml::Mapping(map)
}

/// `node` as a YAML document (block style, starting with `---`, ending with a newline).
///
/// # Errors
/// When a map holds the same key twice (YAML forbids it) or the emitter fails.
pub fn to_string(node: &Node) -> Result<String, YamlError> {
    check_unique_keys(node)?;
    let mut out = String::new();
    YamlEmitter::new(&mut out)
        .dump(&to_yaml(node))
        .map_err(|e| YamlError {
            offset: None,
            line: None,
            column: None,
            message: format!("cannot write YAML: {e}"),
        })?;
    out.push('\n');
    Ok(out)
}

fn check_unique_keys(node: &Node) -> Result<(), YamlError> {
    let check = |entries: &[(Vec<u8>, Node)]| -> Result<(), YamlError> {
        let mut seen = std::collections::HashSet::with_capacity(entries.len());
        for (key, value) in entries {
            if !seen.insert(key.as_slice()) {
                return Err(YamlError {
                    offset: None,
                    line: None,
                    column: None,
                    message: format!(
                        "the map key {:?} appears twice (YAML maps have unique keys)",
                        String::from_utf8_lossy(key)
                    ),
                });
            }
            check_unique_keys(value)?;
        }
        Ok(())
    };
    check(&node.attributes)?;
    match &node.value {
        NodeValue::Map(entries) => check(entries),
        NodeValue::List(items) => items.iter().try_for_each(check_unique_keys),
        _ => Ok(()),
    }
}
