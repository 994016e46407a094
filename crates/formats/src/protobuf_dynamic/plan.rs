//! A column type compiled to its protobuf field encoding, and the encoder/decoder driven by it.
//!
//! Every type_v3 type has one encoding (docs/formats-protobuf-arrow-avro.md has the table):
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

use super::wire::{self, begin_len, end_len, put_tag, put_varint, Cursor, WireError};
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
}

impl Plan {
    pub(crate) fn compile(ty: &Type) -> Plan {
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
            self,
            Plan::Null | Plan::Optional { .. } | Plan::List { .. } | Plan::Dict { .. }
        )
    }

    fn packable(&self) -> bool {
        matches!(
            self,
            Plan::Signed | Plan::Unsigned | Plan::Float | Plan::Double | Plan::Bool
        )
    }

    /// The value a field of this encoding has when the message leaves it out.
    pub(crate) fn default_value(&self) -> Value {
        match self {
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
                    if !items.is_empty() {
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
            (Plan::Signed, Value::Int64(v)) => put_varint(out, *v as u64),
            (Plan::Unsigned, Value::Uint64(v)) => put_varint(out, *v),
            (Plan::Float, Value::Double(v)) => out.extend_from_slice(&(*v as f32).to_le_bytes()),
            (Plan::Double, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (Plan::Bool, Value::Bool(v)) => out.push(u8::from(*v)),
            (plan, value) => return Err(format!("value {value:?} does not fit encoding {plan:?}")),
        }
        Ok(())
    }

    /// Decodes one occurrence of a field of this encoding into `slot` (merging repeated
    /// fields, last one wins for the rest).
    pub(crate) fn decode(
        &self,
        wire_type: u8,
        cursor: &mut Cursor<'_>,
        slot: &mut Value,
    ) -> Result<(), WireError> {
        match self {
            Plan::Signed | Plan::Unsigned | Plan::Float | Plan::Double | Plan::Bool => {
                expect_wire(cursor, wire_type, self.scalar_wire_type())?;
                *slot = self.decode_scalar(cursor)?;
            }
            Plan::Bytes => {
                expect_wire(cursor, wire_type, wire::LEN)?;
                let mut body = cursor.len_delimited()?;
                *slot = Value::String(body.take(body.bytes.len())?.to_vec());
            }
            Plan::Yson => {
                expect_wire(cursor, wire_type, wire::LEN)?;
                let body = cursor.len_delimited()?;
                let node = yson::from_slice(body.bytes).map_err(|e| WireError {
                    offset: body.base + e.offset(),
                    message: format!("yson field: {}", e.message()),
                })?;
                *slot = Value::Any(node);
            }
            Plan::Null => return Err(cursor.error("a field for a null-typed value")),
            Plan::Optional {
                item,
                item_nullable,
                wrapped,
            } => {
                let mut inner = item.default_value();
                if *wrapped {
                    expect_wire(cursor, wire_type, wire::LEN)?;
                    let mut body = cursor.len_delimited()?;
                    decode_wrapper(item, &mut body, &mut inner)?;
                } else {
                    item.decode(wire_type, cursor, &mut inner)?;
                }
                *slot = if *item_nullable {
                    Value::Some(Box::new(inner))
                } else {
                    inner
                };
            }
            Plan::List { item, wrapped } => {
                if !matches!(slot, Value::List(_)) {
                    *slot = Value::List(Vec::new());
                }
                let Value::List(items) = slot else {
                    unreachable!("set to a list just above")
                };
                if item.packable() && wire_type == wire::LEN && !*wrapped {
                    let mut body = cursor.len_delimited()?;
                    while !body.at_end() {
                        items.push(item.decode_scalar(&mut body)?);
                    }
                } else {
                    let mut element = item.default_value();
                    if *wrapped {
                        expect_wire(cursor, wire_type, wire::LEN)?;
                        let mut body = cursor.len_delimited()?;
                        decode_wrapper(item, &mut body, &mut element)?;
                    } else {
                        item.decode(wire_type, cursor, &mut element)?;
                    }
                    items.push(element);
                }
            }
            Plan::Message(members) => {
                expect_wire(cursor, wire_type, wire::LEN)?;
                let mut body = cursor.len_delimited()?;
                let mut values: Vec<Value> = members.iter().map(Plan::default_value).collect();
                decode_members(members, &mut body, &mut values)?;
                *slot = Value::Tuple(values);
            }
            Plan::Variant(alternatives) => {
                expect_wire(cursor, wire_type, wire::LEN)?;
                let mut body = cursor.len_delimited()?;
                let start = body.pos;
                let mut found = None;
                while !body.at_end() {
                    let (field, wire_type) = body.tag()?;
                    match alternatives.get(field as usize - 1) {
                        Some((plan, wrapped)) => {
                            let mut value = plan.default_value();
                            if *wrapped {
                                expect_wire(&body, wire_type, wire::LEN)?;
                                let mut inner = body.len_delimited()?;
                                decode_wrapper(plan, &mut inner, &mut value)?;
                            } else {
                                plan.decode(wire_type, &mut body, &mut value)?;
                            }
                            found = Some(Value::Variant(field - 1, Box::new(value)));
                        }
                        None => body.skip(wire_type)?,
                    }
                }
                *slot = found.ok_or_else(|| WireError {
                    offset: body.base + start as u64,
                    message: "variant message sets none of its alternatives".into(),
                })?;
            }
            Plan::Dict { key, value } => {
                expect_wire(cursor, wire_type, wire::LEN)?;
                let mut body = cursor.len_delimited()?;
                let mut k = key.default_value();
                let mut v = value.default_value();
                while !body.at_end() {
                    let (field, wire_type) = body.tag()?;
                    match field {
                        1 => key.decode(wire_type, &mut body, &mut k)?,
                        2 => value.decode(wire_type, &mut body, &mut v)?,
                        _ => body.skip(wire_type)?,
                    }
                }
                if !matches!(slot, Value::Dict(_)) {
                    *slot = Value::Dict(Vec::new());
                }
                if let Value::Dict(pairs) = slot {
                    pairs.push((k, v));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn scalar_wire_type(&self) -> u8 {
        match self {
            Plan::Float => wire::FIXED32,
            Plan::Double => wire::FIXED64,
            Plan::Signed | Plan::Unsigned | Plan::Bool => wire::VARINT,
            _ => wire::LEN,
        }
    }

    fn decode_scalar(&self, cursor: &mut Cursor<'_>) -> Result<Value, WireError> {
        Ok(match self {
            Plan::Signed => Value::Int64(cursor.varint()? as i64),
            Plan::Unsigned => Value::Uint64(cursor.varint()?),
            Plan::Float => Value::Double(f64::from(f32::from_bits(cursor.fixed32()?))),
            Plan::Double => Value::Double(f64::from_bits(cursor.fixed64()?)),
            Plan::Bool => Value::Bool(cursor.varint()? != 0),
            _ => return Err(cursor.error("not a scalar encoding")),
        })
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

fn decode_members(
    members: &[Plan],
    body: &mut Cursor<'_>,
    values: &mut [Value],
) -> Result<(), WireError> {
    while !body.at_end() {
        let (field, wire_type) = body.tag()?;
        match members.get(field as usize - 1) {
            Some(plan) => plan.decode(wire_type, body, &mut values[field as usize - 1])?,
            None => body.skip(wire_type)?,
        }
    }
    Ok(())
}

/// Reads a wrapper message `{ T value = 1; }` into `value` (left at its default if absent).
fn decode_wrapper(item: &Plan, body: &mut Cursor<'_>, value: &mut Value) -> Result<(), WireError> {
    while !body.at_end() {
        let (field, wire_type) = body.tag()?;
        if field == 1 {
            item.decode(wire_type, body, value)?;
        } else {
            body.skip(wire_type)?;
        }
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
