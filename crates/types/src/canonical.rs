//! How a [`Type`] is written as a YSON [`Node`]: YT's type_v3 canonical form, the legacy
//! (`type` + `required`) pair, and the rules a well-formed type obeys.
//!
//! Invariants this module keeps:
//!
//! - `Type::from_node(&t.to_node()) == Ok(t)` for every valid `t` (the canonical form is a
//!   faithful encoding), and `to_node` prints exactly what YT's own serializer prints, up to
//!   map key order.
//! - `from_node` accepts what YT accepts: a primitive may also be written as a map
//!   `{type_name=int64}`; unknown map keys are ignored; attributes are ignored. It rejects
//!   everything else with an error whose path names the spot in the *node*
//!   (`members[2].type.item`), the same path `validate` uses, so errors read the same whether
//!   they come from parsing or from checking a type built in code.
//! - Nesting deeper than [`MAX_TYPE_DEPTH`] is an error, found before recursing further, so
//!   hostile input cannot exhaust the stack.
//!
//! The rules (`validate`) are YT's: decimal precision 1..=76 (YT raised its limit from 35 to
//! 76 when it added 256-bit decimals; we take the current one) and 0 <= scale <= precision;
//! struct and variant member names non-empty, unique, at most 256 bytes; tags non-empty and at
//! most 256 bytes; `yson` only as the direct item of an `optional`; no `yson` or `json`
//! anywhere inside a dict key.

use std::fmt;

use crate::error::{show_bytes, Path, TypeError};
use crate::{Member, Node, NodeValue, PrimitiveType, Type};

/// The deepest type nesting accepted (YT's `MaxSchemaDepth`): the root is at depth 0, and
/// every `item`, `key`, `value`, member or element goes one level down.
pub const MAX_TYPE_DEPTH: usize = 32;

/// YT's limit on the length in bytes of a column name, struct member name or tag.
pub const MAX_NAME_LENGTH: usize = 256;

/// The largest decimal precision YT accepts.
pub const MAX_DECIMAL_PRECISION: u8 = 76;

/// A type in YT's legacy column form: a primitive name (`boolean`, `any`, ...) and the
/// `required` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LegacyType {
    /// The legacy (v1) type name: `int64`, `boolean`, `any`, `string`, ...
    pub name: &'static str,
    /// `false` when the column may hold null.
    pub required: bool,
}

impl PrimitiveType {
    /// The name in YT's legacy `type` column attribute. It differs from the type_v3 name only
    /// for `bool` (`boolean`) and `yson` (`any`).
    pub fn legacy_name(self) -> &'static str {
        match self {
            PrimitiveType::Bool => "boolean",
            PrimitiveType::Yson => "any",
            other => other.name(),
        }
    }

    /// The primitive type with the given legacy name (`boolean`, `any`, `int64`, ...).
    pub fn from_legacy_name(name: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL
            .iter()
            .copied()
            .find(|p| p.legacy_name() == name)
    }
}

impl Type {
    /// The type_v3 canonical form: a bare string for a primitive, a map with `type_name` and
    /// the type's parameters otherwise.
    pub fn to_node(&self) -> Node {
        match self {
            Type::Primitive(p) => Node::string(p.name()),
            Type::Decimal { precision, scale } => Node::map([
                ("type_name", Node::string("decimal")),
                ("precision", Node::int64(i64::from(*precision))),
                ("scale", Node::int64(i64::from(*scale))),
            ]),
            Type::Optional(item) => composite("optional", [("item", item.to_node())]),
            Type::List(item) => composite("list", [("item", item.to_node())]),
            Type::Struct(members) => composite("struct", [("members", members_node(members))]),
            Type::Tuple(elements) => composite("tuple", [("elements", elements_node(elements))]),
            Type::VariantStruct(members) => {
                composite("variant", [("members", members_node(members))])
            }
            Type::VariantTuple(elements) => {
                composite("variant", [("elements", elements_node(elements))])
            }
            Type::Dict { key, value } => {
                composite("dict", [("key", key.to_node()), ("value", value.to_node())])
            }
            Type::Tagged { tag, item } => composite(
                "tagged",
                [
                    ("tag", Node::string(tag.as_str())),
                    ("item", item.to_node()),
                ],
            ),
        }
    }

    /// Reads a type from its type_v3 form (canonical or any form YT accepts) and checks it.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] naming the path inside the description when the node is not a type
    /// description (wrong node kind, unknown type name, missing parameter, nesting deeper than
    /// [`MAX_TYPE_DEPTH`]) or describes a type YT rejects (see [`Type::validate`]).
    pub fn from_node(node: &Node) -> Result<Type, TypeError> {
        let ty = parse(node, &Path::Root, 0)?;
        ty.validate()?;
        Ok(ty)
    }

    /// Checks the rules YT imposes on types (see the module documentation).
    ///
    /// # Errors
    ///
    /// A [`TypeError`] whose path is where the offending part sits in the canonical form,
    /// e.g. `members[1].type: decimal precision 80 is not in 1..=76`.
    pub fn validate(&self) -> Result<(), TypeError> {
        validate(self, &Path::Root, 0, false)
    }

    /// YT's legacy form of this type (its `CastToV1Type`): the pair every schema still
    /// carries next to `type_v3`. Lossy for anything beyond a primitive or an optional
    /// primitive: composites become `any`, decimals `string`, tags are dropped.
    pub fn to_legacy(&self) -> LegacyType {
        match self {
            Type::Primitive(p) => LegacyType {
                name: p.legacy_name(),
                required: !self.is_nullable(),
            },
            Type::Decimal { .. } => LegacyType {
                name: "string",
                required: true,
            },
            Type::Optional(item) => {
                if item.is_nullable() {
                    LegacyType {
                        name: "any",
                        required: false,
                    }
                } else {
                    LegacyType {
                        required: false,
                        ..item.to_legacy()
                    }
                }
            }
            Type::Tagged { item, .. } => item.to_legacy(),
            Type::List(_)
            | Type::Struct(_)
            | Type::Tuple(_)
            | Type::VariantStruct(_)
            | Type::VariantTuple(_)
            | Type::Dict { .. } => LegacyType {
                name: "any",
                required: true,
            },
        }
    }

    /// Whether the legacy form says everything about this type, i.e.
    /// `Type::from_legacy(t.to_legacy())` gives `t` back.
    pub fn is_legacy_exact(&self) -> bool {
        let legacy = self.to_legacy();
        Type::from_legacy(legacy.name, legacy.required).as_ref() == Ok(self)
    }

    /// The type a legacy column (`type=<name>; required=<required>`) has, as YT maps it:
    /// `required=%false` wraps the primitive in `optional`, except `null` and `void`, which
    /// are nullable already.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] when `name` is not a legacy type name, when a `null`/`void` column is
    /// declared required, or when an `any` column is declared required (YT forbids both).
    pub fn from_legacy(name: &str, required: bool) -> Result<Type, TypeError> {
        let primitive = PrimitiveType::from_legacy_name(name).ok_or_else(|| {
            let hint = match PrimitiveType::from_name(name) {
                Some(p) => format!(" (the legacy name of {name:?} is {:?})", p.legacy_name()),
                None => String::new(),
            };
            TypeError::new("", format!("unknown legacy type {name:?}{hint}"))
        })?;
        let ty = Type::Primitive(primitive);
        if ty.is_nullable() {
            if required {
                return Err(TypeError::new(
                    "",
                    format!("a column of type {name:?} cannot be required"),
                ));
            }
            return Ok(ty);
        }
        if !required {
            return Ok(Type::optional(ty));
        }
        if primitive == PrimitiveType::Yson {
            return Err(TypeError::new(
                "",
                "a column of type \"any\" cannot be required",
            ));
        }
        Ok(ty)
    }
}

fn composite<const N: usize>(type_name: &str, params: [(&str, Node); N]) -> Node {
    let mut entries = Vec::with_capacity(N + 1);
    entries.push((b"type_name".to_vec(), Node::string(type_name)));
    entries.extend(params.into_iter().map(|(k, v)| (k.as_bytes().to_vec(), v)));
    Node::new(NodeValue::Map(entries))
}

fn members_node(members: &[Member]) -> Node {
    Node::list(
        members
            .iter()
            .map(|m| {
                Node::map([
                    ("name", Node::string(m.name.as_str())),
                    ("type", m.ty.to_node()),
                ])
            })
            .collect(),
    )
}

fn elements_node(elements: &[Type]) -> Node {
    Node::list(
        elements
            .iter()
            .map(|t| Node::map([("type", t.to_node())]))
            .collect(),
    )
}

/// The composite type names (those that need parameters).
const COMPOSITE_NAMES: [&str; 8] = [
    "decimal", "optional", "list", "struct", "tuple", "variant", "dict", "tagged",
];

fn parse(node: &Node, path: &Path<'_>, depth: usize) -> Result<Type, TypeError> {
    if depth > MAX_TYPE_DEPTH {
        return Err(path.error(format!(
            "type nesting exceeds the depth limit of {MAX_TYPE_DEPTH}"
        )));
    }
    match &node.value {
        NodeValue::String(name) => {
            let name = utf8_name(name, path)?;
            if let Some(p) = PrimitiveType::from_name(name) {
                Ok(Type::Primitive(p))
            } else if COMPOSITE_NAMES.contains(&name) {
                Err(path.error(format!(
                    "type {name:?} must be written as a map with \"type_name\" and its parameters"
                )))
            } else {
                Err(path.error(unknown_type_message(name)))
            }
        }
        NodeValue::Map(_) => parse_map(node, path, depth),
        _ => Err(path.error(format!(
            "expected a type: a type name string or a map with \"type_name\", found {}",
            node.kind()
        ))),
    }
}

fn unknown_type_message(name: &str) -> String {
    match PrimitiveType::from_legacy_name(name) {
        Some(p) => format!(
            "unknown type {name:?} (a legacy name; type_v3 calls it {:?})",
            p.name()
        ),
        None => format!("unknown type {name:?}"),
    }
}

fn utf8_name<'n>(bytes: &'n [u8], path: &Path<'_>) -> Result<&'n str, TypeError> {
    std::str::from_utf8(bytes)
        .map_err(|_| path.error(format!("type name {} is not UTF-8", show_bytes(bytes))))
}

fn parse_map(node: &Node, path: &Path<'_>, depth: usize) -> Result<Type, TypeError> {
    let type_name_path = path.key("type_name");
    let type_name = match node.get(b"type_name") {
        None => return Err(path.error("missing \"type_name\"")),
        Some(n) => match n.as_bytes() {
            Some(bytes) => utf8_name(bytes, &type_name_path)?,
            None => {
                return Err(type_name_path.error(format!("expected a string, found {}", n.kind())))
            }
        },
    };
    let required = |key: &'static str| -> Result<&Node, TypeError> {
        node.get(key.as_bytes())
            .ok_or_else(|| path.error(format!("missing {key:?}, required for {type_name:?}")))
    };
    let child = |key: &'static str| -> Result<Type, TypeError> {
        parse(required(key)?, &path.key(key), depth + 1)
    };
    match type_name {
        "decimal" => {
            let precision = decimal_param(required("precision")?, &path.key("precision"))?;
            let scale = decimal_param(required("scale")?, &path.key("scale"))?;
            Ok(Type::Decimal { precision, scale })
        }
        "optional" => Ok(Type::optional(child("item")?)),
        "list" => Ok(Type::list(child("item")?)),
        "dict" => Ok(Type::dict(child("key")?, child("value")?)),
        "tagged" => {
            let tag_node = required("tag")?;
            let tag_path = path.key("tag");
            let tag = match tag_node.as_bytes() {
                Some(b) => std::str::from_utf8(b)
                    .map_err(|_| tag_path.error("tag is not UTF-8"))?
                    .to_owned(),
                None => {
                    return Err(
                        tag_path.error(format!("expected a string, found {}", tag_node.kind()))
                    )
                }
            };
            Ok(Type::tagged(tag, child("item")?))
        }
        "struct" => Ok(Type::Struct(parse_members(
            required("members")?,
            &path.key("members"),
            depth,
        )?)),
        "tuple" => Ok(Type::Tuple(parse_elements(
            required("elements")?,
            &path.key("elements"),
            depth,
        )?)),
        "variant" => match (node.get(b"members"), node.get(b"elements")) {
            (Some(_), Some(_)) => Err(path.error(
                "a variant has either \"members\" (named) or \"elements\" (unnamed), not both",
            )),
            (Some(members), None) => Ok(Type::VariantStruct(parse_members(
                members,
                &path.key("members"),
                depth,
            )?)),
            (None, Some(elements)) => Ok(Type::VariantTuple(parse_elements(
                elements,
                &path.key("elements"),
                depth,
            )?)),
            (None, None) => Err(path.error("a variant needs \"members\" or \"elements\"")),
        },
        name => match PrimitiveType::from_name(name) {
            Some(p) => Ok(Type::Primitive(p)),
            None => Err(type_name_path.error(unknown_type_message(name))),
        },
    }
}

fn decimal_param(node: &Node, path: &Path<'_>) -> Result<u8, TypeError> {
    let value: i128 = match node.value {
        NodeValue::Int64(v) => v.into(),
        NodeValue::Uint64(v) => v.into(),
        _ => return Err(path.error(format!("expected an integer, found {}", node.kind()))),
    };
    u8::try_from(value).map_err(|_| path.error(format!("{value} is out of range")))
}

fn list_items<'n>(node: &'n Node, path: &Path<'_>) -> Result<&'n [Node], TypeError> {
    match &node.value {
        NodeValue::List(items) => Ok(items),
        _ => Err(path.error(format!("expected a list, found {}", node.kind()))),
    }
}

fn parse_members(node: &Node, path: &Path<'_>, depth: usize) -> Result<Vec<Member>, TypeError> {
    let items = list_items(node, path)?;
    let mut members = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        if !matches!(item.value, NodeValue::Map(_)) {
            return Err(item_path.error(format!(
                "expected a map {{name=...; type=...}}, found {}",
                item.kind()
            )));
        }
        let name_path = item_path.key("name");
        let name = match item.get(b"name") {
            None => return Err(item_path.error("missing \"name\"")),
            Some(n) => match n.as_bytes() {
                Some(b) => std::str::from_utf8(b)
                    .map_err(|_| name_path.error(format!("name {} is not UTF-8", show_bytes(b))))?
                    .to_owned(),
                None => {
                    return Err(name_path.error(format!("expected a string, found {}", n.kind())))
                }
            },
        };
        let ty = match item.get(b"type") {
            None => return Err(item_path.error("missing \"type\"")),
            Some(t) => parse(t, &item_path.key("type"), depth + 1)?,
        };
        members.push(Member { name, ty });
    }
    Ok(members)
}

fn parse_elements(node: &Node, path: &Path<'_>, depth: usize) -> Result<Vec<Type>, TypeError> {
    let items = list_items(node, path)?;
    let mut elements = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        if !matches!(item.value, NodeValue::Map(_)) {
            return Err(item_path.error(format!(
                "expected a map {{type=...}}, found {}",
                item.kind()
            )));
        }
        match item.get(b"type") {
            None => return Err(item_path.error("missing \"type\"")),
            Some(t) => elements.push(parse(t, &item_path.key("type"), depth + 1)?),
        }
    }
    Ok(elements)
}

/// `in_optional`: whether `ty` is the direct item of an `optional` (where `yson` may appear).
fn validate(ty: &Type, path: &Path<'_>, depth: usize, in_optional: bool) -> Result<(), TypeError> {
    if depth > MAX_TYPE_DEPTH {
        return Err(path.error(format!(
            "type nesting exceeds the depth limit of {MAX_TYPE_DEPTH}"
        )));
    }
    match ty {
        Type::Primitive(PrimitiveType::Yson) if !in_optional => Err(path.error(
            "type \"yson\" is allowed only as the item of an optional (write optional<yson>)",
        )),
        Type::Primitive(_) => Ok(()),
        Type::Decimal { precision, scale } => {
            if *precision < 1 || *precision > MAX_DECIMAL_PRECISION {
                return Err(path.error(format!(
                    "decimal precision {precision} is not in 1..={MAX_DECIMAL_PRECISION}"
                )));
            }
            if scale > precision {
                return Err(path.error(format!(
                    "decimal scale {scale} exceeds precision {precision}"
                )));
            }
            Ok(())
        }
        Type::Optional(item) => validate(item, &path.key("item"), depth + 1, true),
        Type::List(item) => validate(item, &path.key("item"), depth + 1, false),
        Type::Tagged { tag, item } => {
            if tag.is_empty() {
                return Err(path.key("tag").error("tag is empty"));
            }
            if tag.len() > MAX_NAME_LENGTH {
                return Err(path.key("tag").error(format!(
                    "tag is {} bytes long, the limit is {MAX_NAME_LENGTH}",
                    tag.len()
                )));
            }
            validate(item, &path.key("item"), depth + 1, false)
        }
        Type::Struct(members) | Type::VariantStruct(members) => {
            let members_path = path.key("members");
            for (i, member) in members.iter().enumerate() {
                let member_path = members_path.index(i);
                check_member_name(&member.name, &member_path)?;
                if members[..i].iter().any(|m| m.name == member.name) {
                    return Err(member_path
                        .key("name")
                        .error(format!("member name {:?} is used twice", member.name)));
                }
                validate(&member.ty, &member_path.key("type"), depth + 1, false)?;
            }
            Ok(())
        }
        Type::Tuple(elements) | Type::VariantTuple(elements) => {
            let elements_path = path.key("elements");
            for (i, element) in elements.iter().enumerate() {
                validate(
                    element,
                    &elements_path.index(i).key("type"),
                    depth + 1,
                    false,
                )?;
            }
            Ok(())
        }
        Type::Dict { key, value } => {
            let key_path = path.key("key");
            validate(key, &key_path, depth + 1, false)?;
            check_dict_key(key, &key_path)?;
            validate(value, &path.key("value"), depth + 1, false)
        }
    }
}

fn check_member_name(name: &str, member_path: &Path<'_>) -> Result<(), TypeError> {
    if name.is_empty() {
        return Err(member_path.key("name").error("member name is empty"));
    }
    if name.len() > MAX_NAME_LENGTH {
        return Err(member_path.key("name").error(format!(
            "member name is {} bytes long, the limit is {MAX_NAME_LENGTH}",
            name.len()
        )));
    }
    Ok(())
}

/// YT compares and hashes dict keys, so no part of a key may be `yson` or `json`.
fn check_dict_key(ty: &Type, path: &Path<'_>) -> Result<(), TypeError> {
    match ty {
        Type::Primitive(p @ (PrimitiveType::Yson | PrimitiveType::Json)) => {
            Err(path.error(format!("type {:?} is not allowed in a dict key", p.name())))
        }
        Type::Primitive(_) | Type::Decimal { .. } => Ok(()),
        Type::Optional(item) | Type::List(item) | Type::Tagged { item, .. } => {
            check_dict_key(item, &path.key("item"))
        }
        Type::Struct(members) | Type::VariantStruct(members) => {
            let members_path = path.key("members");
            for (i, m) in members.iter().enumerate() {
                check_dict_key(&m.ty, &members_path.index(i).key("type"))?;
            }
            Ok(())
        }
        Type::Tuple(elements) | Type::VariantTuple(elements) => {
            let elements_path = path.key("elements");
            for (i, e) in elements.iter().enumerate() {
                check_dict_key(e, &elements_path.index(i).key("type"))?;
            }
            Ok(())
        }
        Type::Dict { key, value } => {
            check_dict_key(key, &path.key("key"))?;
            check_dict_key(value, &path.key("value"))
        }
    }
}

/// YT's text form of a type, as its error messages print it: `optional<int64>`,
/// `struct<a=int64;b=string>`, `named_variant<...>`, `tagged<"t";int64>`, `decimal(10,2)`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn members(f: &mut fmt::Formatter<'_>, ms: &[Member]) -> fmt::Result {
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    f.write_str(";")?;
                }
                write!(f, "{}={}", m.name, m.ty)?;
            }
            Ok(())
        }
        fn elements(f: &mut fmt::Formatter<'_>, es: &[Type]) -> fmt::Result {
            for (i, e) in es.iter().enumerate() {
                if i > 0 {
                    f.write_str(";")?;
                }
                write!(f, "{e}")?;
            }
            Ok(())
        }
        match self {
            Type::Primitive(p) => f.write_str(p.name()),
            Type::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            Type::Optional(item) => write!(f, "optional<{item}>"),
            Type::List(item) => write!(f, "list<{item}>"),
            Type::Struct(ms) => {
                f.write_str("struct<")?;
                members(f, ms)?;
                f.write_str(">")
            }
            Type::VariantStruct(ms) => {
                f.write_str("named_variant<")?;
                members(f, ms)?;
                f.write_str(">")
            }
            Type::Tuple(es) => {
                f.write_str("tuple<")?;
                elements(f, es)?;
                f.write_str(">")
            }
            Type::VariantTuple(es) => {
                f.write_str("variant<")?;
                elements(f, es)?;
                f.write_str(">")
            }
            Type::Dict { key, value } => write!(f, "dict<{key};{value}>"),
            Type::Tagged { tag, item } => write!(f, "tagged<{tag:?};{item}>"),
        }
    }
}
