//! The YSON data model: a tree of scalars, lists and maps, any of which may carry attributes.
//!
//! `Node` is what a YSON document is, independent of its encoding (text, pretty, binary).
//! Type descriptions, schemas and `yson`-typed column values are all nodes. Map entries keep
//! their order (and duplicates), because writing a document back must give the same bytes.

/// A YSON string or map key: arbitrary bytes, not necessarily UTF-8.
pub type Bytes = Vec<u8>;

/// A YSON node: a value with (possibly empty) attributes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Node {
    /// Attributes in document order; empty when the node has none (no allocation then).
    pub attributes: Vec<(Bytes, Node)>,
    pub value: NodeValue,
}

/// The value part of a [`Node`].
#[derive(Clone, Debug, PartialEq, Default)]
pub enum NodeValue {
    /// `#`
    #[default]
    Entity,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Bytes),
    List(Vec<Node>),
    /// Entries in document order.
    Map(Vec<(Bytes, Node)>),
}

impl Node {
    /// A node without attributes.
    pub fn new(value: NodeValue) -> Node {
        Node {
            attributes: Vec::new(),
            value,
        }
    }

    pub fn entity() -> Node {
        Node::new(NodeValue::Entity)
    }

    pub fn string(s: impl Into<Bytes>) -> Node {
        Node::new(NodeValue::String(s.into()))
    }

    pub fn int64(v: i64) -> Node {
        Node::new(NodeValue::Int64(v))
    }

    pub fn uint64(v: u64) -> Node {
        Node::new(NodeValue::Uint64(v))
    }

    pub fn list(items: Vec<Node>) -> Node {
        Node::new(NodeValue::List(items))
    }

    /// A map from `(key, value)` pairs, in the given order.
    pub fn map<K: Into<Bytes>>(entries: impl IntoIterator<Item = (K, Node)>) -> Node {
        Node::new(NodeValue::Map(
            entries.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        ))
    }

    /// The attribute named `key`, if present (the last one wins when repeated).
    pub fn attribute(&self, key: &[u8]) -> Option<&Node> {
        self.attributes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The map entry named `key`, if this is a map that has it (the last one wins when repeated).
    pub fn get(&self, key: &[u8]) -> Option<&Node> {
        match &self.value {
            NodeValue::Map(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string value, if this is a string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.value {
            NodeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string value as UTF-8, if this is a string holding valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// A short name of the node's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            NodeValue::Entity => "entity",
            NodeValue::Bool(_) => "boolean",
            NodeValue::Int64(_) => "int64",
            NodeValue::Uint64(_) => "uint64",
            NodeValue::Double(_) => "double",
            NodeValue::String(_) => "string",
            NodeValue::List(_) => "list",
            NodeValue::Map(_) => "map",
        }
    }
}

impl From<NodeValue> for Node {
    fn from(value: NodeValue) -> Node {
        Node::new(value)
    }
}
