//! A column type compiled to its protobuf field encoding, and the encoder driven by it (the
//! decoder is `to_yson.rs`, which reads the same encoding straight into binary YSON).
//!
//! Every type_v3 type has one encoding (docs/formats/protobuf.md has the table):
//! integers are `int64`/`uint64` varints, `float` a `float` (fixed32), `double` a `double`,
//! strings and every byte-held type `bytes`, `yson` `bytes` of binary YSON; `optional<T>` is
//! a field with presence, `list<T>` a repeated field (packed for numbers), struct and tuple
//! a nested message with members as fields 1..n, a variant a nested message whose fields
//! form a oneof, a dict a repeated entry message `{key = 1; value = 2}`.
//!
//! Presence is the invariant to keep: a field of a type that may encode to nothing (null,
//! void, optional, list, dict: "may be empty") cannot mark a present value by itself, so
//! where presence matters — the item of an optional, an element of a list, the alternative
//! of a variant — such a type is *wrapped* in a message `{ T value = 1; }` that is always
//! written. Scalars that are fields of a message are left out when they hold the default
//! (as proto3 does), except floats and doubles (so `-0.0` survives) and except where
//! presence matters (optional items and variant alternatives are always written).
//!
//! Decoding is driven by the type, so its recursion depth is bounded by the schema's, not
//! by the input; unknown fields are skipped; a field with the wrong wire type is an error.

use shapeshift_types::{Node, PrimitiveType, Type, Value};

use crate::protobuf::wire::{self, begin_len, end_len, put_tag, put_varint, Cursor, WireError};
use crate::yson::{self, YsonFormat};

/// The encoding of one type.
#[derive(Clone, Debug)]
pub(crate) enum Plan {
    Signed,
    Unsigned,
    Float,
    Double,
    Bool,
    Bytes,
    Yson,
    Null,
    Optional {
        item: Box<Plan>,
        item_nullable: bool,
        wrapped: bool,
    },
    List {
        item: Box<Plan>,
        wrapped: bool,
    },
    /// Struct or tuple: members are fields 1..n.
    Message(Vec<Plan>),
    /// Alternatives are fields 1..n of a oneof; each with its wrapped flag.
    Variant(Vec<(Plan, bool)>),
    Dict {
        key: Box<Plan>,
        value: Box<Plan>,
    },
    /// A scalar whose values are not all values of its type (narrow integers, dates,
    /// float range, utf8, uuid, decimals): `encode` checks them against `ty` first, so
    /// encoding a composite value needs no separate walk of `check_value`.
    Checked {
        inner: Box<Plan>,
        ty: Type,
    },
}

impl Plan {
    pub(crate) fn compile(ty: &Type) -> Plan {
        if let Type::Tagged { item, .. } = ty {
            return Plan::compile(item);
        }
        let plan = Plan::compile_unchecked(ty);
        let needs_check = match ty.untagged() {
            Type::Primitive(p) => !matches!(
                p,
                PrimitiveType::Int64
                    | PrimitiveType::Uint64
                    | PrimitiveType::Double
                    | PrimitiveType::Bool
                    | PrimitiveType::String
                    | PrimitiveType::Yson
                    | PrimitiveType::Null
                    | PrimitiveType::Void
            ),
            Type::Decimal { .. } => true,
            _ => false,
        };
        if needs_check {
            Plan::Checked {
                inner: Box::new(plan),
                ty: ty.untagged().clone(),
            }
        } else {
            plan
        }
    }

    /// The plan itself, unwrapped from [`Plan::Checked`].
    pub(crate) fn unchecked(&self) -> &Plan {
        match self {
            Plan::Checked { inner, .. } => inner.unchecked(),
            other => other,
        }
    }

    fn compile_unchecked(ty: &Type) -> Plan {
        match ty {
            Type::Primitive(p) => match p {
                PrimitiveType::Float => Plan::Float,
                PrimitiveType::Double => Plan::Double,
                PrimitiveType::Bool => Plan::Bool,
                PrimitiveType::Yson => Plan::Yson,
                PrimitiveType::Null | PrimitiveType::Void => Plan::Null,
                PrimitiveType::String
                | PrimitiveType::Utf8
                | PrimitiveType::Json
                | PrimitiveType::Uuid => Plan::Bytes,
                other => match other.physical() {
                    shapeshift_types::PhysicalType::Uint64 => Plan::Unsigned,
                    _ => Plan::Signed,
                },
            },
            Type::Decimal { .. } => Plan::Bytes,
            Type::Tagged { item, .. } => Plan::compile(item),
            Type::Optional(item) => {
                let plan = Plan::compile(item);
                Plan::Optional {
                    wrapped: plan.may_be_empty(),
                    item: Box::new(plan),
                    item_nullable: item.is_nullable(),
                }
            }
            Type::List(item) => {
                let plan = Plan::compile(item);
                Plan::List {
                    wrapped: plan.may_be_empty(),
                    item: Box::new(plan),
                }
            }
            Type::Struct(members) => {
                Plan::Message(members.iter().map(|m| Plan::compile(&m.ty)).collect())
            }
            Type::Tuple(elements) => Plan::Message(elements.iter().map(Plan::compile).collect()),
            Type::VariantStruct(members) => Plan::variant(members.iter().map(|m| &m.ty)),
            Type::VariantTuple(elements) => Plan::variant(elements.iter()),
            Type::Dict { key, value } => Plan::Dict {
                key: Box::new(Plan::compile(key)),
                value: Box::new(Plan::compile(value)),
            },
        }
    }

    fn variant<'t>(types: impl Iterator<Item = &'t Type>) -> Plan {
        Plan::Variant(
            types
                .map(|t| {
                    let plan = Plan::compile(t);
                    let wrapped = plan.may_be_empty();
                    (plan, wrapped)
                })
                .collect(),
        )
    }

    /// Whether a value of this encoding may write no bytes at all.
    fn may_be_empty(&self) -> bool {
        matches!(
            self.unchecked(),
            Plan::Null | Plan::Optional { .. } | Plan::List { .. } | Plan::Dict { .. }
        )
    }

    fn packable(&self) -> bool {
        matches!(
            self.unchecked(),
            Plan::Signed | Plan::Unsigned | Plan::Float | Plan::Double | Plan::Bool
        )
    }

    /// The value a field of this encoding has when the message leaves it out.
    pub(crate) fn default_value(&self) -> Value {
        match self {
            Plan::Checked { inner, .. } => inner.default_value(),
            Plan::Signed => Value::Int64(0),
            Plan::Unsigned => Value::Uint64(0),
            Plan::Float | Plan::Double => Value::Double(0.0),
            Plan::Bool => Value::Bool(false),
            Plan::Bytes => Value::String(Vec::new()),
            Plan::Yson => Value::Any(Node::entity()),
            Plan::Null | Plan::Optional { .. } => Value::Null,
            Plan::List { .. } => Value::List(Vec::new()),
            Plan::Message(members) => {
                Value::Tuple(members.iter().map(Plan::default_value).collect())
            }
            Plan::Variant(alternatives) => Value::Variant(
                0,
                Box::new(
                    alternatives
                        .first()
                        .map_or(Value::Null, |(p, _)| p.default_value()),
                ),
            ),
            Plan::Dict { .. } => Value::Dict(Vec::new()),
        }
    }

    /// Encodes `value` as field `field`; `always` writes scalars even when default.
    ///
    /// # Errors
    /// When the value's shape does not follow the plan (callers check values first).
    pub(crate) fn encode(
        &self,
        value: &Value,
        field: u32,
        always: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        match (self, value) {
            (Plan::Checked { inner, ty }, value) => {
                shapeshift_types::check_value(value, ty).map_err(|e| e.to_string())?;
                inner.encode(value, field, always, out)?;
            }
            (Plan::Signed, Value::Int64(v)) => {
                if *v != 0 || always {
                    put_tag(out, field, wire::VARINT);
                    put_varint(out, *v as u64);
                }
            }
            (Plan::Unsigned, Value::Uint64(v)) => {
                if *v != 0 || always {
                    put_tag(out, field, wire::VARINT);
                    put_varint(out, *v);
                }
            }
            (Plan::Float, Value::Double(v)) => {
                put_tag(out, field, wire::FIXED32);
                out.extend_from_slice(&(*v as f32).to_le_bytes());
            }
            (Plan::Double, Value::Double(v)) => {
                put_tag(out, field, wire::FIXED64);
                out.extend_from_slice(&v.to_le_bytes());
            }
            (Plan::Bool, Value::Bool(v)) => {
                if *v || always {
                    put_tag(out, field, wire::VARINT);
                    out.push(u8::from(*v));
                }
            }
            (Plan::Bytes, Value::String(s)) => {
                if !s.is_empty() || always {
                    put_bytes(out, field, s);
                }
            }
            (Plan::Yson, Value::Any(node)) => {
                let start = begin_len(out, field);
                // Writing into a Vec cannot fail.
                let _ = yson::write_node(out, node, YsonFormat::Binary);
                end_len(out, start);
            }
            (Plan::Null, Value::Null) => {}
            (Plan::Optional { .. }, Value::Null) => {}
            (
                Plan::Optional {
                    item,
                    item_nullable,
                    wrapped,
                },
                value,
            ) => {
                let inner = match (item_nullable, value) {
                    (true, Value::Some(inner)) => inner.as_ref(),
                    (true, _) => return Err("optional of a nullable type needs Some".into()),
                    (false, v) => v,
                };
                if *wrapped {
                    let start = begin_len(out, field);
                    item.encode(inner, 1, false, out)?;
                    end_len(out, start);
                } else {
                    item.encode(inner, field, true, out)?;
                }
            }
            (Plan::List { item, wrapped }, Value::List(items)) => {
                if item.packable() && !*wrapped {
                    let fixed_width = match item.unchecked() {
                        Plan::Double => Some(8),
                        Plan::Float => Some(4),
                        _ => None,
                    };
                    if let (Some(width), false) = (fixed_width, items.is_empty()) {
                        // The body's length is known: no placeholder to move afterwards.
                        put_tag(out, field, wire::LEN);
                        put_varint(out, (items.len() * width) as u64);
                        out.reserve(items.len() * width);
                        for v in items {
                            item.encode_packed(v, out)?;
                        }
                    } else if !items.is_empty() {
                        let start = begin_len(out, field);
                        for v in items {
                            item.encode_packed(v, out)?;
                        }
                        end_len(out, start);
                    }
                } else {
                    for v in items {
                        if *wrapped {
                            let start = begin_len(out, field);
                            item.encode(v, 1, false, out)?;
                            end_len(out, start);
                        } else {
                            item.encode(v, field, true, out)?;
                        }
                    }
                }
            }
            (Plan::Message(members), Value::Tuple(values)) if members.len() == values.len() => {
                let start = begin_len(out, field);
                encode_members(members, values, out)?;
                end_len(out, start);
            }
            (Plan::Variant(alternatives), Value::Variant(index, v)) => {
                let (plan, wrapped) = alternatives
                    .get(*index as usize)
                    .ok_or_else(|| format!("variant index {index} out of range"))?;
                let start = begin_len(out, field);
                if *wrapped {
                    let inner = begin_len(out, index + 1);
                    plan.encode(v, 1, false, out)?;
                    end_len(out, inner);
                } else {
                    plan.encode(v, index + 1, true, out)?;
                }
                end_len(out, start);
            }
            (Plan::Dict { key, value }, Value::Dict(pairs)) => {
                for (k, v) in pairs {
                    let start = begin_len(out, field);
                    key.encode(k, 1, false, out)?;
                    value.encode(v, 2, false, out)?;
                    end_len(out, start);
                }
            }
            (plan, value) => {
                return Err(format!("value {value:?} does not fit encoding {plan:?}"));
            }
        }
        Ok(())
    }

    fn encode_packed(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        match (self, value) {
            (Plan::Checked { inner, ty }, value) => {
                shapeshift_types::check_value(value, ty).map_err(|e| e.to_string())?;
                inner.encode_packed(value, out)?;
            }
            (Plan::Signed, Value::Int64(v)) => put_varint(out, *v as u64),
            (Plan::Unsigned, Value::Uint64(v)) => put_varint(out, *v),
            (Plan::Float, Value::Double(v)) => out.extend_from_slice(&(*v as f32).to_le_bytes()),
            (Plan::Double, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (Plan::Bool, Value::Bool(v)) => out.push(u8::from(*v)),
            (plan, value) => return Err(format!("value {value:?} does not fit encoding {plan:?}")),
        }
        Ok(())
    }
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, wire::LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(crate) fn encode_members(
    members: &[Plan],
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    for (i, (plan, value)) in members.iter().zip(values).enumerate() {
        plan.encode(value, i as u32 + 1, false, out)?;
    }
    Ok(())
}

pub(crate) fn expect_wire(cursor: &Cursor<'_>, found: u8, expected: u8) -> Result<(), WireError> {
    if found == expected {
        Ok(())
    } else {
        Err(cursor.error(format!(
            "wire type {found} where the schema needs wire type {expected}"
        )))
    }
}
