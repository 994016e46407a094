//! A column type compiled to its Avro schema and binary encoding, and the codec driven by it.
//!
//! The schema (JSON) and the plan are made in one walk, so they cannot disagree. Mapping
//! (docs/formats/avro.md has the table): narrow integers `int`, 64-bit and
//! `uint32` `long` (`uint64` as its bit pattern), `float`/`double`/`boolean`; `string` is
//! `bytes`, `utf8` `string`, `json` `string`, `yson` `bytes` of binary YSON; `uuid` a
//! `fixed(16)` (`"yt.type": "uuid"`; the `uuid` logicalType on a fixed is misread by
//! apache-avro 0.21); `date`/`date32` `int` with logicalType `date`;
//! `timestamp`/`timestamp64` `long` with `timestamp-micros`; `datetime*`/`interval*` plain
//! `long` (Avro's `duration` is months/days/millis, which does not fit microseconds);
//! `decimal(p, s)` a `fixed` of YT's width with logicalType `decimal` (two's complement:
//! YT's binary with the sign bit flipped back; `nan`/`±inf` are YT's sentinel integers,
//! outside the precision). Every schema node of a YT type that Avro does not name carries
//! `"yt.type"`; tags ride as `"yt.tag"`.
//!
//! Composites: `optional<T>` is the union `["null", T]`, or `["null", {value: T}]` when T is
//! nullable or a variant (Avro unions cannot nest); `list` an `array`; struct and tuple a
//! `record` (member names that are not Avro names become `f<i>` with `"yt.name"`); a
//! variant the union of records `{value: T_i}`; `dict<utf8, V>` a `map` (entries written in
//! order, duplicates kept), any other dict an `array` of records `{key, value}`.
//!
//! Decoding never allocates by a length it has not checked against the bytes left, and caps
//! the item count of arrays whose items may encode to nothing.

use serde_json::{json, Map as JsonMap, Value as Json};
use shapeshift_types::{Node, PrimitiveType, Type, Value};

use crate::yson::{self, YsonFormat};

/// The most items an array or map of zero-byte items may claim.
pub(crate) const MAX_EMPTY_ITEMS: u64 = 1 << 16;

#[derive(Clone, Debug)]
pub(crate) enum Plan {
    Null,
    Bool,
    /// Avro `int`; the value is `Uint64` when `unsigned`; `range` is the YT type's (the serde
    /// path checks it, the row path's `check_value` does).
    Int {
        unsigned: bool,
        range: IntRange,
    },
    /// Avro `long`; the value is `Uint64` (bit pattern) when `unsigned`.
    Long {
        unsigned: bool,
        range: IntRange,
    },
    Float,
    Double,
    Bytes,
    String,
    Fixed(usize),
    /// A `fixed` of `width` bytes holding a `decimal(precision, scale)`.
    Decimal {
        width: usize,
        precision: u8,
        scale: u8,
    },
    Yson,
    /// `["null", T]`; a `{value: T}` record around T encodes as T itself.
    Optional {
        item: Box<Plan>,
        item_nullable: bool,
    },
    Array(Box<Plan>),
    Record(Vec<Plan>),
    Variant(Vec<Plan>),
    Map(Box<Plan>),
    Pairs {
        key: Box<Plan>,
        value: Box<Plan>,
    },
}

/// The values of an integer column's YT type: `min..=max` (`max` as `u64`: `uint64`'s
/// range does not fit `i64`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntRange {
    pub(crate) ty: PrimitiveType,
    pub(crate) min: i64,
    pub(crate) max: u64,
}

impl IntRange {
    fn of(ty: PrimitiveType) -> IntRange {
        let (min, max) = match (
            shapeshift_types::signed_range(ty),
            shapeshift_types::unsigned_max(ty),
        ) {
            (Some((min, max)), _) => (min, max as u64),
            (None, Some(max)) => (0, max),
            (None, None) => (i64::MIN, i64::MAX as u64),
        };
        IntRange { ty, min, max }
    }
}

impl Plan {
    /// An Avro `int` of YT type `ty`.
    pub(crate) fn int(ty: PrimitiveType, unsigned: bool) -> Plan {
        Plan::Int {
            unsigned,
            range: IntRange::of(ty),
        }
    }

    /// An Avro `long` of YT type `ty`.
    pub(crate) fn long(ty: PrimitiveType, unsigned: bool) -> Plan {
        Plan::Long {
            unsigned,
            range: IntRange::of(ty),
        }
    }
}

/// Makes schemas and plans; names records uniquely in walk order.
pub(crate) struct Compiler {
    records: usize,
}

fn is_avro_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn with_props(base: Json, props: &[(&str, Json)]) -> Json {
    if props.is_empty() {
        return base;
    }
    let mut object = match base {
        Json::Object(o) => o,
        other => {
            let mut o = JsonMap::new();
            o.insert("type".into(), other);
            o
        }
    };
    for (k, v) in props {
        object.insert((*k).to_owned(), v.clone());
    }
    Json::Object(object)
}

impl Compiler {
    pub(crate) fn new() -> Compiler {
        Compiler { records: 0 }
    }

    fn record_name(&mut self, kind: &str) -> String {
        self.records += 1;
        format!("{kind}_{}", self.records)
    }

    /// A record schema of named fields (names made Avro-valid, originals kept).
    pub(crate) fn record(
        &mut self,
        kind: &str,
        fields: &[(&str, &Type)],
        props: &[(&str, Json)],
    ) -> (Json, Vec<Plan>) {
        let name = self.record_name(kind);
        let mut json_fields = Vec::with_capacity(fields.len());
        let mut plans = Vec::with_capacity(fields.len());
        // A substitute name must not collide with a member's own valid name, nor with another
        // substitute: Avro refuses duplicate field names.
        let mut taken: std::collections::HashSet<String> = fields
            .iter()
            .filter(|(name, _)| is_avro_name(name))
            .map(|(name, _)| (*name).to_owned())
            .collect();
        for (i, (field_name, ty)) in fields.iter().enumerate() {
            let (schema, plan) = self.compile(ty);
            let mut field = JsonMap::new();
            if is_avro_name(field_name) {
                field.insert("name".into(), json!(field_name));
            } else {
                let mut substitute = format!("f{i}");
                while !taken.insert(substitute.clone()) {
                    substitute.push('_');
                }
                field.insert("name".into(), json!(substitute));
                field.insert("yt.name".into(), json!(field_name));
            }
            field.insert("type".into(), schema);
            json_fields.push(Json::Object(field));
            plans.push(plan);
        }
        let mut record = JsonMap::new();
        record.insert("type".into(), json!("record"));
        record.insert("name".into(), json!(name));
        record.insert("fields".into(), Json::Array(json_fields));
        for (k, v) in props {
            record.insert((*k).to_owned(), v.clone());
        }
        (Json::Object(record), plans)
    }

    /// The Avro schema and the plan of `ty`.
    pub(crate) fn compile(&mut self, ty: &Type) -> (Json, Plan) {
        use PrimitiveType as P;
        let yt = |p: P| ("yt.type", json!(p.name()));
        match ty {
            Type::Tagged { tag, item } => {
                let (schema, plan) = self.compile(item);
                (with_props(schema, &[("yt.tag", json!(tag))]), plan)
            }
            Type::Primitive(p) => match p {
                P::Null | P::Void => (with_props(json!("null"), &[yt(*p)]), Plan::Null),
                P::Bool => (json!("boolean"), Plan::Bool),
                P::Int8 | P::Int16 => (with_props(json!("int"), &[yt(*p)]), Plan::int(*p, false)),
                P::Int32 => (json!("int"), Plan::int(*p, false)),
                P::Int64 => (json!("long"), Plan::long(*p, false)),
                P::Uint8 | P::Uint16 => (with_props(json!("int"), &[yt(*p)]), Plan::int(*p, true)),
                P::Uint32 | P::Uint64 => {
                    (with_props(json!("long"), &[yt(*p)]), Plan::long(*p, true))
                }
                P::Float => (json!("float"), Plan::Float),
                P::Double => (json!("double"), Plan::Double),
                P::String => (json!("bytes"), Plan::Bytes),
                P::Utf8 => (json!("string"), Plan::String),
                P::Json => (with_props(json!("string"), &[yt(*p)]), Plan::String),
                P::Yson => (with_props(json!("bytes"), &[yt(*p)]), Plan::Yson),
                P::Uuid => {
                    let name = self.record_name("uuid");
                    (
                        // Not logicalType "uuid": apache-avro 0.21 decodes that as bytes
                        // even on a fixed, and misreads the rest of the record.
                        json!({"type": "fixed", "name": name, "size": 16, "yt.type": "uuid"}),
                        Plan::Fixed(16),
                    )
                }
                P::Date => (
                    json!({"type": "int", "logicalType": "date", "yt.type": "date"}),
                    Plan::int(*p, true),
                ),
                P::Date32 => (
                    json!({"type": "int", "logicalType": "date", "yt.type": "date32"}),
                    Plan::int(*p, false),
                ),
                P::Timestamp => (
                    json!({"type": "long", "logicalType": "timestamp-micros", "yt.type": "timestamp"}),
                    Plan::long(*p, true),
                ),
                P::Timestamp64 => (
                    json!({"type": "long", "logicalType": "timestamp-micros", "yt.type": "timestamp64"}),
                    Plan::long(*p, false),
                ),
                P::Datetime => (with_props(json!("long"), &[yt(*p)]), Plan::long(*p, true)),
                P::Datetime64 | P::Interval | P::Interval64 => {
                    (with_props(json!("long"), &[yt(*p)]), Plan::long(*p, false))
                }
            },
            Type::Decimal { precision, scale } => {
                let width = Type::decimal_byte_width(*precision);
                let name = self.record_name("decimal");
                (
                    json!({"type": "fixed", "name": name, "size": width, "logicalType": "decimal",
                           "precision": precision, "scale": scale}),
                    Plan::Decimal {
                        width,
                        precision: *precision,
                        scale: *scale,
                    },
                )
            }
            Type::Optional(item) => {
                let wrapped = item.is_nullable()
                    || matches!(
                        item.untagged(),
                        Type::VariantStruct(_) | Type::VariantTuple(_)
                    );
                let (schema, plan) = if wrapped {
                    let (schema, mut plans) = self.record("some", &[("value", item)], &[]);
                    (schema, plans.pop().unwrap_or(Plan::Null))
                } else {
                    self.compile(item)
                };
                (
                    json!(["null", schema]),
                    Plan::Optional {
                        item: Box::new(plan),
                        item_nullable: item.is_nullable(),
                    },
                )
            }
            Type::List(item) => {
                let (schema, plan) = self.compile(item);
                (
                    json!({"type": "array", "items": schema}),
                    Plan::Array(Box::new(plan)),
                )
            }
            Type::Struct(members) => {
                let fields: Vec<(&str, &Type)> =
                    members.iter().map(|m| (m.name.as_str(), &m.ty)).collect();
                let (schema, plans) = self.record("struct", &fields, &[]);
                (schema, Plan::Record(plans))
            }
            Type::Tuple(elements) => {
                let names: Vec<String> = (1..=elements.len()).map(|i| format!("_{i}")).collect();
                let fields: Vec<(&str, &Type)> =
                    names.iter().map(String::as_str).zip(elements).collect();
                let (schema, plans) = self.record("tuple", &fields, &[("yt.type", json!("tuple"))]);
                (schema, Plan::Record(plans))
            }
            Type::VariantStruct(members) => {
                let alternatives: Vec<(&str, &Type)> =
                    members.iter().map(|m| (m.name.as_str(), &m.ty)).collect();
                self.variant(&alternatives)
            }
            Type::VariantTuple(elements) => {
                let names: Vec<String> = (1..=elements.len()).map(|i| format!("_{i}")).collect();
                let alternatives: Vec<(&str, &Type)> =
                    names.iter().map(String::as_str).zip(elements).collect();
                self.variant(&alternatives)
            }
            Type::Dict { key, value } => {
                if matches!(key.untagged(), Type::Primitive(PrimitiveType::Utf8))
                    && !matches!(key.as_ref(), Type::Tagged { .. })
                {
                    let (schema, plan) = self.compile(value);
                    (
                        json!({"type": "map", "values": schema}),
                        Plan::Map(Box::new(plan)),
                    )
                } else {
                    let (schema, mut plans) =
                        self.record("entry", &[("key", key), ("value", value)], &[]);
                    let value_plan = plans.pop().unwrap_or(Plan::Null);
                    let key_plan = plans.pop().unwrap_or(Plan::Null);
                    (
                        json!({"type": "array", "items": schema, "yt.type": "dict"}),
                        Plan::Pairs {
                            key: Box::new(key_plan),
                            value: Box::new(value_plan),
                        },
                    )
                }
            }
        }
    }

    fn variant(&mut self, alternatives: &[(&str, &Type)]) -> (Json, Plan) {
        let mut schemas = Vec::with_capacity(alternatives.len());
        let mut plans = Vec::with_capacity(alternatives.len());
        for (name, ty) in alternatives {
            let (schema, mut record_plans) =
                self.record("alternative", &[("value", ty)], &[("yt.name", json!(name))]);
            schemas.push(schema);
            plans.push(record_plans.pop().unwrap_or(Plan::Null));
        }
        (Json::Array(schemas), Plan::Variant(plans))
    }
}

// Encoding.

#[inline]
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    crate::varint::put(out, crate::varint::zigzag(v));
}

#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_long(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

fn mismatch(plan: &Plan, value: &Value) -> String {
    format!("value {value:?} does not fit Avro encoding {plan:?}")
}

impl Plan {
    pub(crate) fn encode(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        match (self, value) {
            (Plan::Null, Value::Null) => {}
            (Plan::Bool, Value::Bool(v)) => out.push(u8::from(*v)),
            (
                Plan::Int {
                    unsigned: false, ..
                }
                | Plan::Long {
                    unsigned: false, ..
                },
                Value::Int64(v),
            ) => put_long(out, *v),
            (
                Plan::Int { unsigned: true, .. } | Plan::Long { unsigned: true, .. },
                Value::Uint64(v),
            ) => put_long(out, *v as i64),
            (Plan::Float, Value::Double(v)) => out.extend_from_slice(&(*v as f32).to_le_bytes()),
            (Plan::Double, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (Plan::Bytes | Plan::String, Value::String(s)) => put_bytes(out, s),
            (Plan::Fixed(n), Value::String(s)) if s.len() == *n => out.extend_from_slice(s),
            (Plan::Decimal { width: n, .. }, Value::String(s)) if s.len() == *n => {
                out.extend_from_slice(s);
                let first = out.len() - n;
                out[first] ^= 0x80;
            }
            (Plan::Yson, Value::Any(node)) => {
                put_bytes(out, &yson::to_vec(node, YsonFormat::Binary))
            }
            (Plan::Optional { .. }, Value::Null) => out.push(0),
            (
                Plan::Optional {
                    item,
                    item_nullable,
                    ..
                },
                value,
            ) => {
                let inner = match (item_nullable, value) {
                    (true, Value::Some(inner)) => inner.as_ref(),
                    (true, other) => return Err(mismatch(self, other)),
                    (false, v) => v,
                };
                out.push(2); // union branch 1, zigzag
                item.encode(inner, out)?;
            }
            (Plan::Array(item), Value::List(items)) => {
                if !items.is_empty() {
                    put_long(out, items.len() as i64);
                    for v in items {
                        item.encode(v, out)?;
                    }
                }
                out.push(0);
            }
            (Plan::Record(members), Value::Tuple(values)) if members.len() == values.len() => {
                for (plan, v) in members.iter().zip(values) {
                    plan.encode(v, out)?;
                }
            }
            (Plan::Variant(alternatives), Value::Variant(index, v)) => {
                let plan = alternatives
                    .get(*index as usize)
                    .ok_or_else(|| format!("variant index {index} out of range"))?;
                put_long(out, i64::from(*index));
                plan.encode(v, out)?;
            }
            (Plan::Map(value_plan), Value::Dict(pairs)) => {
                if !pairs.is_empty() {
                    put_long(out, pairs.len() as i64);
                    for (k, v) in pairs {
                        match k {
                            Value::String(key) => put_bytes(out, key),
                            other => return Err(mismatch(self, other)),
                        }
                        value_plan.encode(v, out)?;
                    }
                }
                out.push(0);
            }
            (
                Plan::Pairs {
                    key,
                    value: value_plan,
                },
                Value::Dict(pairs),
            ) => {
                if !pairs.is_empty() {
                    put_long(out, pairs.len() as i64);
                    for (k, v) in pairs {
                        key.encode(k, out)?;
                        value_plan.encode(v, out)?;
                    }
                }
                out.push(0);
            }
            (plan, value) => return Err(mismatch(plan, value)),
        }
        Ok(())
    }

    /// The fewest bytes a value of this encoding takes.
    pub(crate) fn min_size(&self) -> usize {
        match self {
            Plan::Null => 0,
            Plan::Fixed(n) | Plan::Decimal { width: n, .. } => *n,
            Plan::Float => 4,
            Plan::Double => 8,
            Plan::Record(members) => members.iter().map(Plan::min_size).sum(),
            Plan::Variant(alternatives) => {
                1 + alternatives.iter().map(Plan::min_size).min().unwrap_or(0)
            }
            _ => 1,
        }
    }
}

// Decoding.

/// A cursor over Avro binary; errors carry the offset relative to `base`.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) base: u64,
}

/// A decode error: input offset and message.
#[derive(Debug)]
pub(crate) struct DecodeError {
    pub(crate) offset: u64,
    pub(crate) message: String,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: u64) -> Self {
        Reader {
            bytes,
            pos: 0,
            base,
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> DecodeError {
        DecodeError {
            offset: self.base + self.pos as u64,
            message: message.into(),
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn long(&mut self) -> Result<i64, DecodeError> {
        let mut z = 0u64;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.error("input ends inside a varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.error("varint longer than 64 bits"));
            }
            z |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(((z >> 1) as i64) ^ -((z & 1) as i64));
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.error(format!("{n} bytes needed, {} left", self.remaining())));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn length(&mut self) -> Result<usize, DecodeError> {
        let start = self.pos;
        let len = self.long()?;
        usize::try_from(len).map_err(|_| {
            self.pos = start;
            self.error(format!("negative length {len}"))
        })
    }

    fn bytes_field(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.length()?;
        self.take(len)
    }

    /// The item count of the next block (0 at the end); a negative count is followed by
    /// the block's byte size, as the spec allows.
    fn block_count(&mut self, min: usize) -> Result<usize, DecodeError> {
        let start = self.pos;
        let count = self.long()?;
        let count = if count < 0 {
            self.length()?;
            count.unsigned_abs()
        } else {
            count as u64
        };
        let min = min as u64;
        let fits = if min == 0 {
            count <= MAX_EMPTY_ITEMS
        } else {
            count.saturating_mul(min) <= self.remaining() as u64
        };
        if !fits {
            self.pos = start;
            return Err(self.error(format!("block of {count} items cannot fit the input left")));
        }
        Ok(count as usize)
    }
}

impl Plan {
    pub(crate) fn decode(&self, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
        Ok(match self {
            Plan::Null => Value::Null,
            Plan::Bool => match r.take(1)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                other => {
                    r.pos -= 1;
                    return Err(r.error(format!("boolean byte {other}")));
                }
            },
            Plan::Int { unsigned, .. } => {
                let start = r.pos;
                let v = r.long()?;
                if i32::try_from(v).is_err() {
                    r.pos = start;
                    return Err(r.error(format!("int {v} out of 32 bits")));
                }
                if *unsigned {
                    Value::Uint64(u64::try_from(v).map_err(|_| r.error(format!("negative {v}")))?)
                } else {
                    Value::Int64(v)
                }
            }
            Plan::Long { unsigned, .. } => {
                let v = r.long()?;
                if *unsigned {
                    Value::Uint64(v as u64)
                } else {
                    Value::Int64(v)
                }
            }
            Plan::Float => {
                let b = r.take(4)?;
                Value::Double(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            }
            Plan::Double => {
                let mut a = [0u8; 8];
                a.copy_from_slice(r.take(8)?);
                Value::Double(f64::from_le_bytes(a))
            }
            Plan::Bytes => Value::String(r.bytes_field()?.to_vec()),
            Plan::String => {
                let start = r.pos;
                let bytes = r.bytes_field()?;
                if crate::utf8::text(bytes).is_err() {
                    r.pos = start;
                    return Err(r.error("invalid UTF-8 in a string"));
                }
                Value::String(bytes.to_vec())
            }
            Plan::Fixed(n) => Value::String(r.take(*n)?.to_vec()),
            Plan::Decimal { width: n, .. } => {
                let mut bytes = r.take(*n)?.to_vec();
                bytes[0] ^= 0x80;
                Value::String(bytes)
            }
            Plan::Yson => {
                let start = r.pos;
                let bytes = r.bytes_field()?;
                let node: Node = yson::from_slice(bytes).map_err(|e| DecodeError {
                    offset: r.base + start as u64,
                    message: format!("yson value: {e}"),
                })?;
                Value::Any(node)
            }
            Plan::Optional {
                item,
                item_nullable,
                ..
            } => {
                let start = r.pos;
                match r.long()? {
                    0 => Value::Null,
                    1 => {
                        let inner = item.decode(r)?;
                        if *item_nullable {
                            Value::Some(Box::new(inner))
                        } else {
                            inner
                        }
                    }
                    other => {
                        r.pos = start;
                        return Err(r.error(format!("union branch {other} of an optional")));
                    }
                }
            }
            Plan::Array(item) => {
                let mut items = Vec::new();
                loop {
                    let count = r.block_count(item.min_size())?;
                    if count == 0 {
                        break;
                    }
                    items.reserve(count);
                    for _ in 0..count {
                        items.push(item.decode(r)?);
                    }
                }
                Value::List(items)
            }
            Plan::Record(members) => Value::Tuple(
                members
                    .iter()
                    .map(|m| m.decode(r))
                    .collect::<Result<_, _>>()?,
            ),
            Plan::Variant(alternatives) => {
                let start = r.pos;
                let index = r.long()?;
                let plan = usize::try_from(index)
                    .ok()
                    .and_then(|i| alternatives.get(i))
                    .ok_or_else(|| {
                        r.pos = start;
                        r.error(format!(
                            "union branch {index} of a variant of {}",
                            alternatives.len()
                        ))
                    })?;
                Value::Variant(index as u32, Box::new(plan.decode(r)?))
            }
            Plan::Map(value) => {
                let mut pairs = Vec::new();
                loop {
                    let count = r.block_count(1 + value.min_size())?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        let key = Plan::String.decode(r)?;
                        pairs.push((key, value.decode(r)?));
                    }
                }
                Value::Dict(pairs)
            }
            Plan::Pairs { key, value } => {
                let min = key.min_size() + value.min_size();
                let mut pairs = Vec::new();
                loop {
                    let count = r.block_count(min)?;
                    if count == 0 {
                        break;
                    }
                    for _ in 0..count {
                        let k = key.decode(r)?;
                        pairs.push((k, value.decode(r)?));
                    }
                }
                Value::Dict(pairs)
            }
        })
    }
}

/// The part of a schema that decides the binary encoding: types, field names, sizes, the
/// order of union branches. Names of named types, logical types and properties (`yt.*`,
/// docs) are dropped, so a file written by another library from the same schema matches.
pub(crate) fn structural(schema: &Json) -> Json {
    match schema {
        Json::Array(branches) => Json::Array(branches.iter().map(structural).collect()),
        Json::Object(object) => {
            let Some(kind) = object.get("type") else {
                return Json::Null;
            };
            match kind.as_str() {
                Some("record") | Some("error") => {
                    let fields = object
                        .get("fields")
                        .and_then(Json::as_array)
                        .map(|fields| {
                            fields
                                .iter()
                                .map(|f| {
                                    json!({
                                        "name": f.get("name").cloned().unwrap_or(Json::Null),
                                        "type": f.get("type").map(structural).unwrap_or(Json::Null),
                                    })
                                })
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default();
                    json!({"type": "record", "fields": fields})
                }
                Some("fixed") => {
                    json!({"type": "fixed", "size": object.get("size").cloned().unwrap_or(Json::Null)})
                }
                Some("array") => {
                    json!({"type": "array", "items": object.get("items").map(structural).unwrap_or(Json::Null)})
                }
                Some("map") => {
                    json!({"type": "map", "values": object.get("values").map(structural).unwrap_or(Json::Null)})
                }
                Some("enum") => {
                    json!({"type": "enum", "symbols": object.get("symbols").cloned().unwrap_or(Json::Null)})
                }
                // A primitive with attributes, or a nested type object.
                _ => structural(kind),
            }
        }
        other => other.clone(),
    }
}
