//! Skiff schemas and the `skiff` format description, as YT writes them in YSON.
//!
//! A schema node is a map `{wire_type=...; name=...; children=[...]}`; `name` is optional
//! (top-level table columns need it), `children` is required for composite wire types and
//! forbidden for simple ones. Anywhere a node may appear, a string `"$name"` may stand instead:
//! it refers to entry `name` of the format's `skiff_schema_registry`. References are resolved
//! when parsing; a reference to a missing entry or one that (directly or indirectly) refers to
//! itself is an error naming the chain of entries.

use shapeshift_types::{Node, NodeValue};

use super::error::SkiffError;
use super::wire_type::WireType;

/// Deepest schema nesting accepted; keeps recursive readers far from the stack's end.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// A Skiff schema node: a wire type, an optional name (empty when absent), and children.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SkiffSchema {
    pub wire_type: WireType,
    pub name: String,
    pub children: Vec<SkiffSchema>,
}

impl SkiffSchema {
    /// An unnamed simple (childless) node.
    pub fn simple(wire_type: WireType) -> SkiffSchema {
        SkiffSchema {
            wire_type,
            name: String::new(),
            children: Vec::new(),
        }
    }

    /// An unnamed composite node.
    pub fn composite(wire_type: WireType, children: Vec<SkiffSchema>) -> SkiffSchema {
        SkiffSchema {
            wire_type,
            name: String::new(),
            children,
        }
    }

    pub fn tuple(children: Vec<SkiffSchema>) -> SkiffSchema {
        SkiffSchema::composite(WireType::Tuple, children)
    }

    /// `variant8<nothing; item>`: how Skiff writes an optional value.
    pub fn optional(item: SkiffSchema) -> SkiffSchema {
        SkiffSchema::composite(
            WireType::Variant8,
            vec![SkiffSchema::simple(WireType::Nothing), item],
        )
    }

    /// The same node with a name.
    pub fn named(mut self, name: impl Into<String>) -> SkiffSchema {
        self.name = name.into();
        self
    }

    /// Checks the structural rules: children only on composite types, no more children than
    /// the tag width allows, nesting at most [`MAX_SCHEMA_DEPTH`].
    ///
    /// # Errors
    /// A [`SkiffErrorKind::Schema`](super::SkiffErrorKind::Schema) error naming the bad node.
    pub fn validate(&self) -> Result<(), SkiffError> {
        self.validate_at(0, &mut String::from("<root>"))
    }

    fn validate_at(&self, depth: usize, path: &mut String) -> Result<(), SkiffError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(SkiffError::schema(format!(
                "schema nesting deeper than {MAX_SCHEMA_DEPTH} at {path}"
            )));
        }
        let wire = self.wire_type;
        if !wire.is_composite() && !self.children.is_empty() {
            return Err(SkiffError::schema(format!(
                "{path}: simple wire type {wire} cannot have children"
            )));
        }
        if self.children.len() > wire.max_children() && wire.is_composite() {
            return Err(SkiffError::schema(format!(
                "{path}: {wire} allows at most {} children, got {}",
                wire.max_children(),
                self.children.len()
            )));
        }
        for (index, child) in self.children.iter().enumerate() {
            let saved = path.len();
            if child.name.is_empty() {
                path.push_str(&format!("/{index}"));
            } else {
                path.push_str(&format!("/{}", child.name));
            }
            child.validate_at(depth + 1, path)?;
            path.truncate(saved);
        }
        Ok(())
    }

    /// The YSON form `{wire_type=...; name=...; children=[...]}` (no `name` when empty, no
    /// `children` for simple types), keys in that order.
    pub fn to_node(&self) -> Node {
        let mut entries: Vec<(Vec<u8>, Node)> = Vec::with_capacity(3);
        entries.push((b"wire_type".to_vec(), Node::string(self.wire_type.name())));
        if !self.name.is_empty() {
            entries.push((b"name".to_vec(), Node::string(self.name.as_bytes())));
        }
        if self.wire_type.is_composite() {
            entries.push((
                b"children".to_vec(),
                Node::list(self.children.iter().map(SkiffSchema::to_node).collect()),
            ));
        }
        Node::new(NodeValue::Map(entries))
    }

    /// Parses a schema node with no registry (a `"$name"` reference is an error).
    ///
    /// # Errors
    /// A schema error naming the bad node and what was expected.
    pub fn from_node(node: &Node) -> Result<SkiffSchema, SkiffError> {
        let registry = Registry::new(None)?;
        registry.resolve(node)
    }
}

/// A `skiff` format description: one Skiff schema per table, in table-index order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkiffFormat {
    pub tables: Vec<SkiffSchema>,
}

impl SkiffFormat {
    pub fn new(tables: Vec<SkiffSchema>) -> SkiffFormat {
        SkiffFormat { tables }
    }

    /// Parses `<table_skiff_schemas=[...]; skiff_schema_registry={...}>skiff`.
    ///
    /// Also accepts the attributes as a plain map (`{table_skiff_schemas=...; ...}`), which is
    /// how they are often stored apart from the format.
    ///
    /// # Errors
    /// A schema error: not a skiff format, bad schema nodes, missing or cyclic references.
    pub fn from_node(node: &Node) -> Result<SkiffFormat, SkiffError> {
        let (schemas, registry) = match &node.value {
            NodeValue::String(name) => {
                if name != b"skiff" {
                    return Err(SkiffError::schema(format!(
                        "format is \"{}\", expected \"skiff\"",
                        String::from_utf8_lossy(name)
                    )));
                }
                (
                    node.attribute(b"table_skiff_schemas"),
                    node.attribute(b"skiff_schema_registry"),
                )
            }
            NodeValue::Map(_) => (
                node.get(b"table_skiff_schemas"),
                node.get(b"skiff_schema_registry"),
            ),
            _ => {
                return Err(SkiffError::schema(format!(
                    "a skiff format is the string \"skiff\" with attributes, got {}",
                    node.kind()
                )))
            }
        };
        let schemas =
            schemas.ok_or_else(|| SkiffError::schema("format has no \"table_skiff_schemas\""))?;
        let NodeValue::List(items) = &schemas.value else {
            return Err(SkiffError::schema(format!(
                "\"table_skiff_schemas\" must be a list, got {}",
                schemas.kind()
            )));
        };
        let registry = Registry::new(registry)?;
        let mut tables = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let schema = registry.resolve(item).map_err(|mut e| {
                e.message = format!("table_skiff_schemas[{index}]: {}", e.message);
                e
            })?;
            tables.push(schema);
        }
        Ok(SkiffFormat { tables })
    }

    /// `<table_skiff_schemas=[...]>skiff` with every schema written inline.
    pub fn to_node(&self) -> Node {
        Node {
            attributes: vec![(
                b"table_skiff_schemas".to_vec(),
                Node::list(self.tables.iter().map(SkiffSchema::to_node).collect()),
            )],
            value: NodeValue::String(b"skiff".to_vec()),
        }
    }

    /// `<table_skiff_schemas=["$0";...]; skiff_schema_registry={"0"=...}>skiff`: equal table
    /// schemas are written once in the registry and referred to, as YT's own client does.
    pub fn to_node_with_registry(&self) -> Node {
        let mut distinct: Vec<&SkiffSchema> = Vec::new();
        let mut references = Vec::with_capacity(self.tables.len());
        for table in &self.tables {
            let index = match distinct.iter().position(|d| *d == table) {
                Some(index) => index,
                None => {
                    distinct.push(table);
                    distinct.len() - 1
                }
            };
            references.push(Node::string(format!("${index}")));
        }
        let registry = distinct
            .iter()
            .enumerate()
            .map(|(index, schema)| (index.to_string().into_bytes(), schema.to_node()))
            .collect();
        Node {
            attributes: vec![
                (b"table_skiff_schemas".to_vec(), Node::list(references)),
                (
                    b"skiff_schema_registry".to_vec(),
                    Node::new(NodeValue::Map(registry)),
                ),
            ],
            value: NodeValue::String(b"skiff".to_vec()),
        }
    }
}

/// The registry of named schemas and the resolution of `"$name"` references.
struct Registry<'n> {
    entries: Vec<(&'n [u8], &'n Node)>,
}

impl<'n> Registry<'n> {
    fn new(node: Option<&'n Node>) -> Result<Registry<'n>, SkiffError> {
        let mut entries = Vec::new();
        if let Some(node) = node {
            match &node.value {
                NodeValue::Map(map) => {
                    for (key, value) in map {
                        entries.push((key.as_slice(), value));
                    }
                }
                NodeValue::Entity => {}
                _ => {
                    return Err(SkiffError::schema(format!(
                        "\"skiff_schema_registry\" must be a map, got {}",
                        node.kind()
                    )))
                }
            }
        }
        Ok(Registry { entries })
    }

    fn resolve(&self, node: &'n Node) -> Result<SkiffSchema, SkiffError> {
        let mut chain: Vec<&'n [u8]> = Vec::new();
        let schema = self.resolve_in(node, &mut chain, 0)?;
        schema.validate()?;
        Ok(schema)
    }

    fn resolve_in(
        &self,
        node: &'n Node,
        chain: &mut Vec<&'n [u8]>,
        depth: usize,
    ) -> Result<SkiffSchema, SkiffError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(SkiffError::schema(format!(
                "schema nesting deeper than {MAX_SCHEMA_DEPTH}"
            )));
        }
        match &node.value {
            NodeValue::String(reference) => {
                let Some(name) = reference.strip_prefix(b"$") else {
                    return Err(SkiffError::schema(format!(
                        "a schema given as a string must be a \"$name\" registry reference, got \"{}\"",
                        String::from_utf8_lossy(reference)
                    )));
                };
                if chain.contains(&name) {
                    let mut cycle: Vec<String> = chain
                        .iter()
                        .map(|n| format!("${}", String::from_utf8_lossy(n)))
                        .collect();
                    cycle.push(format!("${}", String::from_utf8_lossy(name)));
                    return Err(SkiffError::schema(format!(
                        "cyclic registry reference: {}",
                        cycle.join(" -> ")
                    )));
                }
                let Some((_, target)) = self.entries.iter().rev().find(|(key, _)| *key == name)
                else {
                    return Err(SkiffError::schema(format!(
                        "reference \"${}\" names no entry of skiff_schema_registry",
                        String::from_utf8_lossy(name)
                    )));
                };
                chain.push(name);
                let resolved = self.resolve_in(target, chain, depth + 1);
                chain.pop();
                resolved
            }
            NodeValue::Map(_) => self.resolve_map(node, chain, depth),
            _ => Err(SkiffError::schema(format!(
                "a schema node is a map or a \"$name\" reference, got {}",
                node.kind()
            ))),
        }
    }

    fn resolve_map(
        &self,
        node: &'n Node,
        chain: &mut Vec<&'n [u8]>,
        depth: usize,
    ) -> Result<SkiffSchema, SkiffError> {
        let wire_node = node
            .get(b"wire_type")
            .ok_or_else(|| SkiffError::schema("schema node has no \"wire_type\""))?;
        let wire_name = wire_node.as_str().ok_or_else(|| {
            SkiffError::schema(format!(
                "\"wire_type\" must be a string, got {}",
                wire_node.kind()
            ))
        })?;
        let wire_type = WireType::from_name(wire_name)
            .ok_or_else(|| SkiffError::schema(format!("unknown wire type \"{wire_name}\"")))?;
        let name = match node.get(b"name") {
            None => String::new(),
            Some(name) => name
                .as_str()
                .ok_or_else(|| {
                    SkiffError::schema(format!(
                        "\"name\" must be a UTF-8 string, got {}",
                        name.kind()
                    ))
                })?
                .to_owned(),
        };
        let mut children = Vec::new();
        match node.get(b"children") {
            None if wire_type.is_composite() => {
                return Err(SkiffError::schema(format!(
                    "{wire_type} node{} needs \"children\"",
                    describe_name(&name)
                )))
            }
            None => {}
            Some(list) => {
                let NodeValue::List(items) = &list.value else {
                    return Err(SkiffError::schema(format!(
                        "\"children\" must be a list, got {}",
                        list.kind()
                    )));
                };
                if !wire_type.is_composite() && !items.is_empty() {
                    return Err(SkiffError::schema(format!(
                        "simple wire type {wire_type}{} cannot have children",
                        describe_name(&name)
                    )));
                }
                children.reserve(items.len().min(1 << 16));
                for item in items {
                    children.push(self.resolve_in(item, chain, depth + 1)?);
                }
            }
        }
        Ok(SkiffSchema {
            wire_type,
            name,
            children,
        })
    }
}

fn describe_name(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" '{name}'")
    }
}
