//! Table schemas as YSON nodes, in YT's form:
//!
//! ```text
//! <strict=%true; unique_keys=%false>[
//!     {name=id; type=int64; required=%true; type_v3=int64; sort_order=ascending};
//!     {name=tags; type=any; required=%true; type_v3={type_name=list; item=string}};
//! ]
//! ```
//!
//! A column carries its type as `type_v3` (canonical form), as the legacy pair
//! `type` + `required`, or both — YT itself always writes both, the legacy pair being its
//! lossy `CastToV1Type` of the real type. Reading follows YT's column postprocessor: with only
//! the legacy pair, the type is `Type::from_legacy`; with both, the legacy pair must agree
//! with what `type_v3` casts to. Column attributes shapeshift does not model (`lock`,
//! `group`, `expression`, `aggregate`, `stable_name`, `max_inline_hunk_size`) are ignored on
//! input and not written.
//!
//! Table rules (YT's): column names non-empty, at most 256 bytes, unique; key (sorted)
//! columns form a prefix; `unique_keys` needs at least one key column; every type valid.

use crate::canonical::MAX_NAME_LENGTH;
use crate::error::{show_bytes, Path, TypeError};
use crate::{ColumnSchema, Node, NodeValue, SortOrder, TableSchema, Type};

/// Which type attributes a schema is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SchemaForm {
    /// `type_v3` only: exact and short.
    TypeV3,
    /// `type` + `required` only, for columns where that pair says everything
    /// ([`Type::is_legacy_exact`]); any other column is written as in `Both`, since the
    /// legacy pair alone would lose its type.
    Legacy,
    /// `type`, `required` and `type_v3`: what YT itself writes, readable by old and new
    /// clients.
    #[default]
    Both,
}

impl ColumnSchema {
    /// The column as a YSON map in the given form.
    pub fn to_node(&self, form: SchemaForm) -> Node {
        let mut entries: Vec<(Vec<u8>, Node)> = Vec::with_capacity(5);
        entries.push((b"name".to_vec(), Node::string(self.name.as_str())));
        let legacy_only = form == SchemaForm::Legacy && self.ty.is_legacy_exact();
        if form != SchemaForm::TypeV3 {
            let legacy = self.ty.to_legacy();
            entries.push((b"type".to_vec(), Node::string(legacy.name)));
            entries.push((
                b"required".to_vec(),
                Node::new(NodeValue::Bool(legacy.required)),
            ));
        }
        if !legacy_only {
            entries.push((b"type_v3".to_vec(), self.ty.to_node()));
        }
        if let Some(order) = self.sort_order {
            entries.push((b"sort_order".to_vec(), Node::string(order.name())));
        }
        Node::new(NodeValue::Map(entries))
    }

    /// Reads a column from its YSON map (any of the forms YT accepts) and checks its type.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] naming the attribute at fault: not a map, missing or empty `name`, no
    /// type at all, an invalid `type_v3`, an unknown legacy `type`, a legacy pair that
    /// contradicts `type_v3`, an unknown `sort_order`.
    pub fn from_node(node: &Node) -> Result<ColumnSchema, TypeError> {
        column_from_node(node, &Path::Root)
    }
}

impl TableSchema {
    /// The schema as YT writes it: a list of column maps with `strict` and `unique_keys`
    /// attributes.
    pub fn to_node(&self, form: SchemaForm) -> Node {
        Node {
            attributes: vec![
                (b"strict".to_vec(), Node::new(NodeValue::Bool(self.strict))),
                (
                    b"unique_keys".to_vec(),
                    Node::new(NodeValue::Bool(self.unique_keys)),
                ),
            ],
            value: NodeValue::List(self.columns.iter().map(|c| c.to_node(form)).collect()),
        }
    }

    /// Reads a schema from its YSON form and checks it ([`TableSchema::validate`]).
    /// Missing `strict` means strict, missing `unique_keys` means no.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] whose path starts with the column index (`[2].type_v3.item: ...`)
    /// for a bad column, or names the attribute for a bad `strict`/`unique_keys`.
    pub fn from_node(node: &Node) -> Result<TableSchema, TypeError> {
        let root = Path::Root;
        let items = match &node.value {
            NodeValue::List(items) => items,
            _ => {
                return Err(root.error(format!(
                    "a table schema is a list of columns, found {}",
                    node.kind()
                )))
            }
        };
        let strict = bool_attribute(node, "strict", true)?;
        let unique_keys = bool_attribute(node, "unique_keys", false)?;
        let columns = items
            .iter()
            .enumerate()
            .map(|(i, c)| column_from_node(c, &root.index(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = TableSchema {
            columns,
            strict,
            unique_keys,
        };
        schema.validate()?;
        Ok(schema)
    }

    /// Checks YT's rules for a table schema (see the module documentation).
    ///
    /// # Errors
    ///
    /// A [`TypeError`] whose path is the column index, e.g. `[3]: column name "a" is used
    /// twice`, or `[1].type_v3...` for an invalid column type.
    pub fn validate(&self) -> Result<(), TypeError> {
        let root = Path::Root;
        let mut keys_ended = false;
        let mut key_count = 0;
        for (i, column) in self.columns.iter().enumerate() {
            let path = root.index(i);
            check_column_name(&column.name, &path)?;
            if self.columns[..i].iter().any(|c| c.name == column.name) {
                return Err(path.error(format!("column name {:?} is used twice", column.name)));
            }
            column
                .ty
                .validate()
                .map_err(|e| e.within(&path.key("type_v3").render()))?;
            match column.sort_order {
                Some(_) if keys_ended => {
                    return Err(path.error(format!(
                        "key column {:?} follows a non-key column: key columns must form a \
                         prefix of the schema",
                        column.name
                    )))
                }
                Some(_) => key_count += 1,
                None => keys_ended = true,
            }
        }
        if self.unique_keys && key_count == 0 {
            return Err(root.error("unique_keys is set but the schema has no key columns"));
        }
        Ok(())
    }
}

fn bool_attribute(node: &Node, name: &str, default: bool) -> Result<bool, TypeError> {
    match node.attribute(name.as_bytes()) {
        None => Ok(default),
        Some(value) => parse_bool(value).ok_or_else(|| {
            TypeError::new(
                format!("@{name}"),
                format!("expected a boolean, found {}", value.kind()),
            )
        }),
    }
}

/// A YSON boolean; YT also accepts the strings "true" and "false".
fn parse_bool(node: &Node) -> Option<bool> {
    match &node.value {
        NodeValue::Bool(b) => Some(*b),
        NodeValue::String(s) if s.as_slice() == b"true" => Some(true),
        NodeValue::String(s) if s.as_slice() == b"false" => Some(false),
        _ => None,
    }
}

fn check_column_name(name: &str, path: &Path<'_>) -> Result<(), TypeError> {
    if name.is_empty() {
        return Err(path.key("name").error("column name is empty"));
    }
    if name.len() > MAX_NAME_LENGTH {
        return Err(path.key("name").error(format!(
            "column name is {} bytes long, the limit is {MAX_NAME_LENGTH}",
            name.len()
        )));
    }
    Ok(())
}

fn string_attribute<'n>(node: &'n Node, path: &Path<'_>) -> Result<&'n str, TypeError> {
    match node.as_bytes() {
        Some(bytes) => std::str::from_utf8(bytes)
            .map_err(|_| path.error(format!("{} is not UTF-8", show_bytes(bytes)))),
        None => Err(path.error(format!("expected a string, found {}", node.kind()))),
    }
}

fn column_from_node(node: &Node, path: &Path<'_>) -> Result<ColumnSchema, TypeError> {
    if !matches!(node.value, NodeValue::Map(_)) {
        return Err(path.error(format!(
            "a column is a map {{name=...; type_v3=...}}, found {}",
            node.kind()
        )));
    }
    let name = match node.get(b"name") {
        Some(n) => string_attribute(n, &path.key("name"))?.to_owned(),
        None => return Err(path.error("missing \"name\"")),
    };
    check_column_name(&name, path)?;

    let type_v3 = match node.get(b"type_v3") {
        Some(n) => {
            let type_path = path.key("type_v3");
            Some(Type::from_node(n).map_err(|e| e.within(&type_path.render()))?)
        }
        None => None,
    };
    let legacy_name = match node.get(b"type") {
        Some(n) => Some(string_attribute(n, &path.key("type"))?),
        None => None,
    };
    let required = match node.get(b"required") {
        Some(n) => Some(parse_bool(n).ok_or_else(|| {
            path.key("required")
                .error(format!("expected a boolean, found {}", n.kind()))
        })?),
        None => None,
    };
    let ty = match (type_v3, legacy_name) {
        (Some(ty), legacy_name) => {
            let cast = ty.to_legacy();
            if let Some(legacy_name) = legacy_name {
                if legacy_name != cast.name {
                    return Err(path.key("type").error(format!(
                        "{legacy_name:?} does not match type_v3 {ty}, whose legacy type is {:?}",
                        cast.name
                    )));
                }
            }
            if let Some(required) = required {
                if required != cast.required {
                    return Err(path.key("required").error(format!(
                        "%{required} does not match type_v3 {ty}, which is {}",
                        if cast.required {
                            "required"
                        } else {
                            "nullable"
                        }
                    )));
                }
            }
            ty
        }
        (None, Some(legacy_name)) => Type::from_legacy(legacy_name, required.unwrap_or(false))
            .map_err(|e| path.key("type").error(e.message))?,
        (None, None) => {
            return Err(path.error(format!(
                "column {name:?} has no type: give \"type_v3\" or \"type\""
            )))
        }
    };

    let sort_order = match node.get(b"sort_order") {
        None => None,
        Some(n) if matches!(n.value, NodeValue::Entity) => None,
        Some(n) => {
            let order_path = path.key("sort_order");
            let text = string_attribute(n, &order_path)?;
            Some(SortOrder::from_name(text).ok_or_else(|| {
                order_path.error(format!(
                    "unknown sort order {text:?} (expected \"ascending\" or \"descending\")"
                ))
            })?)
        }
    };
    Ok(ColumnSchema {
        name,
        ty,
        sort_order,
    })
}
