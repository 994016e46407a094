//! Typed values in self-describing binary trees (MessagePack, CBOR): one mapping, two
//! spellings.
//!
//! Both formats have the same data model (nil, booleans, signed and unsigned integers,
//! doubles, byte and text strings, arrays, maps with keys of any kind, and one extension
//! slot), so the mapping of the type model is shared; a [`Dialect`] spells the items.
//!
//! | type                              | item                                            |
//! |-----------------------------------|-------------------------------------------------|
//! | null, void, absent optional       | nil                                             |
//! | bool                              | boolean                                         |
//! | int8..int64, interval, *64 dates  | integer (signed, shortest form)                 |
//! | uint8..uint64, date, datetime, timestamp | integer (unsigned, shortest form)        |
//! | float, double                     | float64 (bit-exact: NaN payloads, -0.0)         |
//! | string, uuid, decimal             | byte string (decimals in YT's binary form)      |
//! | utf8, json                        | text string                                     |
//! | yson                              | the extension item holding binary YSON          |
//! | `optional<T>`, T not nullable     | nil or the T item                               |
//! | `optional<T>`, T nullable         | nil or a 1-item array of the T item             |
//! | list                              | array                                           |
//! | struct, tuple                     | array, one item per member (positional)         |
//! | variant                           | 2-item array: unsigned alternative index, item  |
//! | dict                              | map (keys of any type, in order, duplicates kept)|
//! | tagged                            | as its item                                     |
//!
//! A row is an array of its column items in schema order; a control record is a map from
//! text keys (`table_index`, `row_index`, `range_index`, `key_switch`) to integers or `true`.
//! Reading is as lenient as the integers allow (a signed item within range for an unsigned
//! column and back) and checks every value against its type. Recursion follows the type,
//! which is finite, never the input; no allocation is sized by a length read from the input
//! beyond the bytes that remain.

use std::collections::HashMap;
use std::marker::PhantomData;

use shapeshift_types::{
    check_value, PhysicalType, PrimitiveType, TableSchema, Type, Value, ValueRef,
};

use super::other_columns;
use super::position::{Control, PositionReader, PositionWriter};
use super::row_refs::RefsBuffer;
use super::values::{value_from_ref, ColumnCheck, ColumnKind};
use super::yson_binary;
use super::{FormatError, RowBlock, RowPosition, RowRef, RowSink, RowSource};

/// One item header or scalar of a tree format (MessagePack, CBOR): what the lowest-level
/// reader ([`ItemReader`]) yields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Item<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Bytes(&'a [u8]),
    Text(&'a [u8]),
    Array(u64),
    Map(u64),
    /// The extension item: binary YSON of a `yson` value.
    Yson(&'a [u8]),
}

impl Item<'_> {
    /// What the item is, for messages ("an integer", "a map", ...).
    pub fn name(&self) -> &'static str {
        match self {
            Item::Nil => "nil",
            Item::Bool(_) => "a boolean",
            Item::Int(_) | Item::Uint(_) => "an integer",
            Item::Double(_) => "a float",
            Item::Bytes(_) => "a byte string",
            Item::Text(_) => "a text string",
            Item::Array(_) => "an array",
            Item::Map(_) => "a map",
            Item::Yson(_) => "a yson extension",
        }
    }
}

/// A decoding failure: the byte offset and what was expected.
#[derive(Debug)]
pub struct TreeError {
    pub offset: usize,
    pub message: String,
    /// The item runs past the end of the bytes given: more input may complete it (a
    /// streaming reader refills and retries; at the end of the stream it is truncation).
    pub end_of_input: bool,
}

impl TreeError {
    #[cold]
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> TreeError {
        TreeError {
            offset,
            message: message.into(),
            end_of_input: false,
        }
    }

    /// An item that needs bytes past the end of the input.
    #[cold]
    pub(crate) fn end_of_input(offset: usize, message: impl Into<String>) -> TreeError {
        TreeError {
            end_of_input: true,
            ..TreeError::new(offset, message)
        }
    }

    /// The same error in column `name`.
    #[cold]
    fn in_column(mut self, name: &str) -> TreeError {
        self.message = format!("column \"{name}\": {}", self.message);
        self
    }
}

/// How one tree format spells items.
pub trait Dialect {
    /// The format's name in errors.
    const NAME: &'static str;
    fn nil(out: &mut Vec<u8>);
    fn boolean(out: &mut Vec<u8>, v: bool);
    fn int(out: &mut Vec<u8>, v: i64);
    fn uint(out: &mut Vec<u8>, v: u64);
    fn double(out: &mut Vec<u8>, v: f64);
    fn bytes(out: &mut Vec<u8>, v: &[u8]);
    /// A text string; the caller has checked that `v` is UTF-8.
    fn text(out: &mut Vec<u8>, v: &[u8]);
    fn array(out: &mut Vec<u8>, len: usize);
    fn map(out: &mut Vec<u8>, len: usize);
    fn yson(out: &mut Vec<u8>, binary_yson: &[u8]);

    /// Reads the item at `*pos`, moving `*pos` past its header (and past its payload for
    /// scalars and strings).
    ///
    /// # Errors
    /// For truncated input, a reserved or unsupported byte, or a length past the end.
    fn read<'a>(input: &'a [u8], pos: &mut usize) -> Result<Item<'a>, TreeError>;
}

fn mismatch(value: &Value, ty: &Type) -> String {
    format!("value {value:?} does not fit type {ty:?}")
}

fn is_text(ty: &Type) -> bool {
    matches!(
        ty.untagged(),
        Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json)
    )
}

/// Writes a control record.
pub(crate) fn encode_control<D: Dialect>(out: &mut Vec<u8>, control: Control) {
    D::map(out, 1);
    match control {
        Control::TableIndex(i) => {
            D::text(out, b"table_index");
            D::uint(out, i as u64);
        }
        Control::RowIndex(i) => {
            D::text(out, b"row_index");
            D::int(out, i);
        }
        Control::RangeIndex(i) => {
            D::text(out, b"range_index");
            D::int(out, i);
        }
        Control::KeySwitch => {
            D::text(out, b"key_switch");
            D::boolean(out, true);
        }
    }
}

/// Writes `value` of `ty` (the caller has checked it with `check_value`).
///
/// # Errors
/// A message when the value's shape does not fit the type.
pub(crate) fn encode_value<D: Dialect>(
    out: &mut Vec<u8>,
    value: &Value,
    ty: &Type,
) -> Result<(), String> {
    match (ty, value) {
        (Type::Tagged { item, .. }, _) => encode_value::<D>(out, value, item)?,
        (_, Value::Null) => D::nil(out),
        (Type::Primitive(PrimitiveType::Yson), Value::Any(node))
        | (Type::Optional(_), Value::Any(node)) => {
            let mut bytes = Vec::new();
            yson_binary::node(&mut bytes, node);
            D::yson(out, &bytes);
        }
        (Type::Optional(item), Value::Some(inner)) if item.is_nullable() => {
            D::array(out, 1);
            encode_value::<D>(out, inner, item)?;
        }
        (Type::Optional(item), _) => encode_value::<D>(out, value, item)?,
        (_, Value::Bool(v)) => D::boolean(out, *v),
        (_, Value::Int64(v)) => D::int(out, *v),
        (_, Value::Uint64(v)) => D::uint(out, *v),
        (_, Value::Double(v)) => D::double(out, *v),
        (_, Value::String(v)) if is_text(ty) => {
            let text =
                std::str::from_utf8(v).map_err(|_| "invalid UTF-8 in a utf8 value".to_owned())?;
            D::text(out, text.as_bytes());
        }
        (_, Value::String(v)) => D::bytes(out, v),
        (Type::List(item), Value::List(items)) => {
            D::array(out, items.len());
            for v in items {
                encode_value::<D>(out, v, item)?;
            }
        }
        (Type::Struct(members), Value::Tuple(items)) if members.len() == items.len() => {
            D::array(out, items.len());
            for (member, v) in members.iter().zip(items) {
                encode_value::<D>(out, v, &member.ty)?;
            }
        }
        (Type::Tuple(elements), Value::Tuple(items)) if elements.len() == items.len() => {
            D::array(out, items.len());
            for (element, v) in elements.iter().zip(items) {
                encode_value::<D>(out, v, element)?;
            }
        }
        (Type::VariantStruct(members), Value::Variant(index, v)) => {
            let member = members
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            D::array(out, 2);
            D::uint(out, u64::from(*index));
            encode_value::<D>(out, v, &member.ty)?;
        }
        (Type::VariantTuple(elements), Value::Variant(index, v)) => {
            let element = elements
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            D::array(out, 2);
            D::uint(out, u64::from(*index));
            encode_value::<D>(out, v, element)?;
        }
        (Type::Dict { key, value: item }, Value::Dict(pairs)) => {
            D::map(out, pairs.len());
            for (k, v) in pairs {
                encode_value::<D>(out, k, key)?;
                encode_value::<D>(out, v, item)?;
            }
        }
        _ => return Err(mismatch(value, ty)),
    }
    Ok(())
}

/// A reader of typed values from one input.
pub(crate) struct TreeDecoder<'a, D> {
    pub input: &'a [u8],
    pub pos: usize,
    dialect: std::marker::PhantomData<D>,
}

/// What the stream holds next.
pub(crate) enum Record {
    /// A row's array header; `other_columns`: one more item than columns follows, the
    /// binary YSON map of the columns a non-strict schema does not name.
    Row {
        other_columns: bool,
    },
    Control(Vec<Control>),
    End,
}

impl<'a, D: Dialect> TreeDecoder<'a, D> {
    pub(crate) fn new(input: &'a [u8], pos: usize) -> Self {
        TreeDecoder {
            input,
            pos,
            dialect: std::marker::PhantomData,
        }
    }

    #[inline(always)]
    fn item(&mut self) -> Result<Item<'a>, TreeError> {
        D::read(self.input, &mut self.pos)
    }

    /// Reads the next top-level item: a row's array header (checked against `columns` of the
    /// current table by the caller's closure), a control record, or the end.
    ///
    /// # Errors
    /// For anything else, or a malformed control record.
    pub(crate) fn record(
        &mut self,
        columns: impl Fn(usize) -> Option<(usize, bool)>,
        table: usize,
    ) -> Result<Record, TreeError> {
        if self.pos >= self.input.len() {
            return Ok(Record::End);
        }
        let start = self.pos;
        match self.item()? {
            Item::Array(n) => {
                let (expected, others) = columns(table).unwrap_or((0, false));
                if n == expected as u64 {
                    return Ok(Record::Row {
                        other_columns: false,
                    });
                }
                if others && n == expected as u64 + 1 {
                    return Ok(Record::Row {
                        other_columns: true,
                    });
                }
                let or_more = if others {
                    format!(" (or {} with other columns)", expected + 1)
                } else {
                    String::new()
                };
                Err(TreeError::new(
                    start,
                    format!("a row of table {table} has {expected} columns{or_more}, found an array of {n} items"),
                ))
            }
            Item::Map(n) => {
                let mut controls = Vec::new();
                for _ in 0..n {
                    let at = self.pos;
                    let key = match self.item()? {
                        Item::Text(key) => key,
                        other => {
                            return Err(TreeError::new(
                                at,
                                format!("expected a control key, found {}", other.name()),
                            ))
                        }
                    };
                    let at = self.pos;
                    let value = self.item()?;
                    let control = match (key, value) {
                        (b"table_index", Item::Uint(i)) => {
                            let index = usize::try_from(i).unwrap_or(usize::MAX);
                            if columns(index).is_none() {
                                return Err(TreeError::new(at, format!("table index {i} has no table schema")));
                            }
                            Control::TableIndex(index)
                        }
                        (b"row_index", Item::Int(i)) => Control::RowIndex(i),
                        (b"row_index", Item::Uint(i)) if i <= i64::MAX as u64 => Control::RowIndex(i as i64),
                        (b"range_index", Item::Int(i)) => Control::RangeIndex(i),
                        (b"range_index", Item::Uint(i)) if i <= i64::MAX as u64 => Control::RangeIndex(i as i64),
                        (b"key_switch", Item::Bool(true)) => Control::KeySwitch,
                        (b"key_switch", Item::Bool(false)) => continue,
                        _ => {
                            return Err(TreeError::new(
                                at,
                                format!(
                                    "bad control record entry \"{}\" = {} (expected table_index, row_index, range_index: integer; key_switch: boolean)",
                                    String::from_utf8_lossy(key),
                                    value.name()
                                ),
                            ))
                        }
                    };
                    controls.push(control);
                }
                Ok(Record::Control(controls))
            }
            other => Err(TreeError::new(
                start,
                format!(
                    "expected a row (array) or a control record (map), found {}",
                    other.name()
                ),
            )),
        }
    }

    /// Reads a value of `ty` and checks it.
    ///
    /// # Errors
    /// When the items do not spell a value of `ty`.
    pub(crate) fn column(&mut self, ty: &Type) -> Result<Value, TreeError> {
        let start = self.pos;
        let value = self.value(ty)?;
        check_value(&value, ty).map_err(|e| TreeError::new(start, e.to_string()))?;
        Ok(value)
    }

    fn expect_len(&mut self, n: u64) -> usize {
        // Every item takes at least one byte: no more can follow than bytes remain.
        usize::try_from(n)
            .unwrap_or(usize::MAX)
            .min(self.input.len() - self.pos.min(self.input.len()))
    }

    pub(crate) fn value(&mut self, ty: &Type) -> Result<Value, TreeError> {
        let start = self.pos;
        let item = self.item()?;
        self.value_from(item, start, ty)
    }

    fn value_from(&mut self, item: Item<'a>, start: usize, ty: &Type) -> Result<Value, TreeError> {
        let wrong = |item: Item<'_>| {
            Err(TreeError::new(
                start,
                format!(
                    "expected a value of type {}, found {}",
                    type_name(ty),
                    item.name()
                ),
            ))
        };
        Ok(match ty {
            Type::Tagged { item: inner, .. } => return self.value_from(item, start, inner),
            Type::Optional(inner) => match item {
                Item::Nil => Value::Null,
                Item::Yson(_)
                    if matches!(inner.untagged(), Type::Primitive(PrimitiveType::Yson)) =>
                {
                    match self.value_from(item, start, inner)? {
                        Value::Any(node)
                            if node.attributes.is_empty()
                                && matches!(node.value, shapeshift_types::NodeValue::Entity) =>
                        {
                            Value::Null
                        }
                        value => value,
                    }
                }
                Item::Array(1) if inner.is_nullable() => Value::Some(Box::new(self.value(inner)?)),
                _ if inner.is_nullable() => return wrong(item),
                _ => self.value_from(item, start, inner)?,
            },
            Type::Primitive(p) => match (p.physical(), item) {
                (PhysicalType::Null, Item::Nil) => Value::Null,
                (PhysicalType::Bool, Item::Bool(v)) => Value::Bool(v),
                (PhysicalType::Int64, Item::Int(v)) => Value::Int64(v),
                (PhysicalType::Int64, Item::Uint(v)) if v <= i64::MAX as u64 => {
                    Value::Int64(v as i64)
                }
                (PhysicalType::Uint64, Item::Uint(v)) => Value::Uint64(v),
                (PhysicalType::Uint64, Item::Int(v)) if v >= 0 => Value::Uint64(v as u64),
                (PhysicalType::Double, Item::Double(v)) => Value::Double(v),
                (PhysicalType::String, Item::Bytes(v) | Item::Text(v)) => Value::String(v.to_vec()),
                (PhysicalType::Any, Item::Yson(bytes)) => Value::Any(
                    crate::yson::from_slice(bytes)
                        .map_err(|e| TreeError::new(start, format!("yson value: {e}")))?,
                ),
                _ => return wrong(item),
            },
            Type::Decimal { .. } => match item {
                Item::Bytes(v) => Value::String(v.to_vec()),
                _ => return wrong(item),
            },
            Type::List(inner) => match item {
                Item::Array(n) => {
                    let mut items = Vec::with_capacity(self.expect_len(n));
                    for _ in 0..n {
                        items.push(self.value(inner)?);
                    }
                    Value::List(items)
                }
                _ => return wrong(item),
            },
            Type::Struct(members) => match item {
                Item::Array(n) if n == members.len() as u64 => {
                    let mut items = Vec::with_capacity(members.len());
                    for member in members {
                        items.push(self.value(&member.ty)?);
                    }
                    Value::Tuple(items)
                }
                _ => return wrong(item),
            },
            Type::Tuple(elements) => match item {
                Item::Array(n) if n == elements.len() as u64 => {
                    let mut items = Vec::with_capacity(elements.len());
                    for element in elements {
                        items.push(self.value(element)?);
                    }
                    Value::Tuple(items)
                }
                _ => return wrong(item),
            },
            Type::VariantStruct(_) | Type::VariantTuple(_) => {
                let alternatives: Vec<&Type> = match ty {
                    Type::VariantStruct(members) => members.iter().map(|m| &m.ty).collect(),
                    Type::VariantTuple(elements) => elements.iter().collect(),
                    _ => Vec::new(),
                };
                let Item::Array(2) = item else {
                    return wrong(item);
                };
                let at = self.pos;
                let index = match self.item()? {
                    Item::Uint(i) if (i as usize) < alternatives.len() => i as u32,
                    other => {
                        return Err(TreeError::new(
                            at,
                            format!(
                                "expected a variant index below {}, found {}",
                                alternatives.len(),
                                match other {
                                    Item::Uint(i) => i.to_string(),
                                    other => other.name().to_owned(),
                                }
                            ),
                        ))
                    }
                };
                Value::Variant(index, Box::new(self.value(alternatives[index as usize])?))
            }
            Type::Dict { key, value } => match item {
                Item::Map(n) => {
                    let mut pairs = Vec::with_capacity(self.expect_len(n) / 2);
                    for _ in 0..n {
                        let k = self.value(key)?;
                        let v = self.value(value)?;
                        pairs.push((k, v));
                    }
                    Value::Dict(pairs)
                }
                _ => return wrong(item),
            },
        })
    }
}

impl<'a, D: Dialect> TreeDecoder<'a, D> {
    /// Reads a value of `ty` whose first item (at `start`) is `item`, checking it, and writes
    /// it as binary YSON (YT's named form, as `value_to_node` spells it) into `out`: the
    /// interface's composite values without building a `Value` tree.
    ///
    /// # Errors
    /// When the items do not spell a value of `ty`, with the offset of the first that does not.
    pub(crate) fn transcode_from(
        &mut self,
        item: Item<'a>,
        start: usize,
        ty: &Type,
        out: &mut Vec<u8>,
    ) -> Result<(), TreeError> {
        let wrong = |item: Item<'_>| {
            Err(TreeError::new(
                start,
                format!(
                    "expected a value of type {}, found {}",
                    type_name(ty),
                    item.name()
                ),
            ))
        };
        match ty {
            Type::Tagged { item: inner, .. } => {
                return self.transcode_from(item, start, inner, out)
            }
            Type::Optional(inner) => match item {
                Item::Nil => out.push(b'#'),
                Item::Array(1) if inner.is_nullable() => {
                    out.push(b'[');
                    self.transcode(inner, out)?;
                    out.extend_from_slice(b";]");
                }
                _ if inner.is_nullable() => return wrong(item),
                _ => self.transcode_from(item, start, inner, out)?,
            },
            Type::Primitive(PrimitiveType::Yson) | Type::Decimal { .. } => {
                // Rare inside composites: through the checked owned value.
                self.pos = start;
                let value = self.column(ty)?;
                yson_binary::value(out, &value, ty).map_err(|m| TreeError::new(start, m))?;
            }
            Type::Primitive(p) => {
                let value = match (p.physical(), item) {
                    (PhysicalType::Null, Item::Nil) => ValueRef::Null,
                    (PhysicalType::Bool, Item::Bool(v)) => ValueRef::Bool(v),
                    (PhysicalType::Int64, Item::Int(v)) => ValueRef::Int64(v),
                    (PhysicalType::Int64, Item::Uint(v)) if v <= i64::MAX as u64 => {
                        ValueRef::Int64(v as i64)
                    }
                    (PhysicalType::Uint64, Item::Uint(v)) => ValueRef::Uint64(v),
                    (PhysicalType::Uint64, Item::Int(v)) if v >= 0 => ValueRef::Uint64(v as u64),
                    (PhysicalType::Double, Item::Double(v)) => ValueRef::Double(v),
                    (PhysicalType::String, Item::Bytes(v) | Item::Text(v)) => ValueRef::String(v),
                    _ => return wrong(item),
                };
                if !plainly_fits(*p, value) {
                    super::values::check_ref(value, ty)
                        .map_err(|e| TreeError::new(start, e.to_string()))?;
                }
                match value {
                    ValueRef::Bool(v) => yson_binary::boolean(out, v),
                    ValueRef::Int64(v) => yson_binary::int64(out, v),
                    ValueRef::Uint64(v) => yson_binary::uint64(out, v),
                    ValueRef::Double(v) => yson_binary::double(out, v),
                    ValueRef::String(v) => yson_binary::string(out, v),
                    _ => out.push(b'#'),
                }
            }
            Type::List(inner) => {
                let Item::Array(n) = item else {
                    return wrong(item);
                };
                out.push(b'[');
                for _ in 0..n {
                    self.transcode(inner, out)?;
                    out.push(b';');
                }
                out.push(b']');
            }
            Type::Struct(members) => match item {
                Item::Array(n) if n == members.len() as u64 => {
                    out.push(b'{');
                    for member in members {
                        yson_binary::string(out, member.name.as_bytes());
                        out.push(b'=');
                        self.transcode(&member.ty, out)?;
                        out.push(b';');
                    }
                    out.push(b'}');
                }
                _ => return wrong(item),
            },
            Type::Tuple(elements) => match item {
                Item::Array(n) if n == elements.len() as u64 => {
                    out.push(b'[');
                    for element in elements {
                        self.transcode(element, out)?;
                        out.push(b';');
                    }
                    out.push(b']');
                }
                _ => return wrong(item),
            },
            Type::VariantStruct(_) | Type::VariantTuple(_) => {
                let Item::Array(2) = item else {
                    return wrong(item);
                };
                let count = match ty {
                    Type::VariantStruct(members) => members.len(),
                    Type::VariantTuple(elements) => elements.len(),
                    _ => 0,
                };
                let at = self.pos;
                let index = match self.item()? {
                    Item::Uint(i) if i < count as u64 => i as usize,
                    other => {
                        return Err(TreeError::new(
                            at,
                            format!(
                                "expected a variant index below {count}, found {}",
                                match other {
                                    Item::Uint(i) => i.to_string(),
                                    other => other.name().to_owned(),
                                }
                            ),
                        ))
                    }
                };
                out.push(b'[');
                let alternative = match ty {
                    Type::VariantStruct(members) => {
                        yson_binary::string(out, members[index].name.as_bytes());
                        &members[index].ty
                    }
                    Type::VariantTuple(elements) => {
                        yson_binary::int64(out, index as i64);
                        &elements[index]
                    }
                    _ => return wrong(item),
                };
                out.push(b';');
                self.transcode(alternative, out)?;
                out.extend_from_slice(b";]");
            }
            Type::Dict { key, value } => {
                let Item::Map(n) = item else {
                    return wrong(item);
                };
                out.push(b'[');
                for _ in 0..n {
                    out.push(b'[');
                    self.transcode(key, out)?;
                    out.push(b';');
                    self.transcode(value, out)?;
                    out.extend_from_slice(b";];");
                }
                out.push(b']');
            }
        }
        Ok(())
    }

    fn transcode(&mut self, ty: &Type, out: &mut Vec<u8>) -> Result<(), TreeError> {
        let start = self.pos;
        let item = self.item()?;
        self.transcode_from(item, start, ty, out)
    }
}

/// Whether `value` fits primitive `p` by a test cheaper than the general check (which is
/// the judge, and gives the error, whenever this says no): the types whose physical kind is
/// the whole check, narrow integers in their native range, UTF-8 text. Never true for a value
/// the general check refuses.
#[inline(always)]
fn plainly_fits(p: PrimitiveType, value: ValueRef<'_>) -> bool {
    use PrimitiveType as P;
    match (p, value) {
        (P::Int64, ValueRef::Int64(_))
        | (P::Uint64, ValueRef::Uint64(_))
        | (P::Double, ValueRef::Double(_))
        | (P::Bool, ValueRef::Bool(_))
        | (P::String, ValueRef::String(_)) => true,
        (P::Int32, ValueRef::Int64(v)) => i32::try_from(v).is_ok(),
        (P::Int16, ValueRef::Int64(v)) => i16::try_from(v).is_ok(),
        (P::Int8, ValueRef::Int64(v)) => i8::try_from(v).is_ok(),
        (P::Uint32, ValueRef::Uint64(v)) => u32::try_from(v).is_ok(),
        (P::Uint16, ValueRef::Uint64(v)) => u16::try_from(v).is_ok(),
        (P::Uint8, ValueRef::Uint64(v)) => u8::try_from(v).is_ok(),
        (P::Utf8 | P::Json, ValueRef::String(v)) => std::str::from_utf8(v).is_ok(),
        _ => false,
    }
}

fn type_name(ty: &Type) -> String {
    let node = ty.to_node();
    String::from_utf8_lossy(&crate::yson::to_vec(&node, crate::yson::YsonFormat::Text)).into_owned()
}

/// One table of a tree-format stream: its schema and its columns' compiled checks and
/// reading plans.
struct TreeTable {
    schema: TableSchema,
    checks: Vec<ColumnCheck>,
    plans: Vec<ScalarPlan>,
}

/// How the streaming source reads a column's common scalar items without going through the
/// general check: one comparison against bounds compiled when the source opens. The bounds
/// are `check_value`'s own (`signed_bounds`, `unsigned_bound`, found by bisection), and an
/// item a plan does not accept takes the general path, so both accept the same values and
/// errors read the same.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ScalarPlan {
    /// A signed integer column: an integer item within `lo..=hi` (either sign class).
    Signed {
        lo: i64,
        hi: i64,
    },
    /// An unsigned integer column: an integer item within `0..=hi` (either sign class).
    Unsigned {
        hi: u64,
    },
    /// `double`: a float item.
    Double,
    Bool,
    /// `string`: a byte or text string.
    Bytes,
    /// `utf8`, `json`: a byte or text string of valid UTF-8.
    Utf8,
    /// Everything else (nulls, `float`, `uuid`, decimals, dates with bounds checked by
    /// `check_value` alone, composites, `yson`).
    General,
}

impl ScalarPlan {
    fn of(ty: &Type, check: &ColumnCheck) -> ScalarPlan {
        use PrimitiveType as P;
        if check.kind != ColumnKind::Scalar {
            return ScalarPlan::General;
        }
        let primitive = match ty.untagged() {
            Type::Optional(item) => item.untagged(),
            other => other,
        };
        let Type::Primitive(p) = primitive else {
            return ScalarPlan::General;
        };
        let accepts = |value: Value| check_value(&value, ty).is_ok();
        match p {
            P::Bool => ScalarPlan::Bool,
            P::Double => ScalarPlan::Double,
            P::String => ScalarPlan::Bytes,
            P::Utf8 | P::Json => ScalarPlan::Utf8,
            P::Float | P::Uuid | P::Null | P::Void | P::Yson => ScalarPlan::General,
            _ if accepts(Value::Int64(0)) => {
                let (lo, hi) = super::values::signed_bounds(ty);
                ScalarPlan::Signed { lo, hi }
            }
            _ if accepts(Value::Uint64(0)) => ScalarPlan::Unsigned {
                hi: super::values::unsigned_bound(ty),
            },
            _ => ScalarPlan::General,
        }
    }
}

/// Where reading a whole tree-format stream held in memory stands: the next record's
/// offset, the positions the control records set, the row count.
struct TreeStream {
    format: &'static str,
    tables: Vec<TreeTable>,
    positions: PositionReader,
    pos: usize,
    rows: u64,
}

impl TreeStream {
    fn new(format: &'static str, schemas: &[TableSchema]) -> TreeStream {
        TreeStream {
            format,
            tables: {
                // Compiling a check bisects the type's bounds through `check_value` (dozens
                // of trial checks, each failure a formatted message): done once per distinct
                // type, wide tables repeat a few types over many columns (BM1: 10 over 1000).
                let mut compiled: HashMap<&Type, (ColumnCheck, ScalarPlan)> = HashMap::new();
                schemas
                    .iter()
                    .map(|schema| {
                        let (checks, plans) = schema
                            .columns
                            .iter()
                            .map(|c| {
                                *compiled.entry(&c.ty).or_insert_with(|| {
                                    let check = ColumnCheck::new(&c.ty);
                                    (check, ScalarPlan::of(&c.ty, &check))
                                })
                            })
                            .unzip();
                        TreeTable {
                            checks,
                            plans,
                            schema: schema.clone(),
                        }
                    })
                    .collect()
            },
            positions: PositionReader::default(),
            pos: 0,
            rows: 0,
        }
    }

    /// `e` (an offset into the input given) as a [`FormatError`] at its offset in the
    /// stream (`base` + offset) in the current row.
    #[cold]
    fn fail_at(&self, base: u64, e: TreeError) -> FormatError {
        FormatError::new(self.format, e.message)
            .at(base + e.offset as u64)
            .in_row(self.rows)
    }

    #[cold]
    fn fail(&self, e: TreeError) -> FormatError {
        self.fail_at(0, e)
    }

    #[cold]
    fn column_fail(&self, e: TreeError, column: &str) -> FormatError {
        self.fail(e.in_column(column))
    }

    /// Reads control records up to the next row's array header: the row's table and
    /// whether it carries other columns, or `None` at the end.
    #[inline]
    fn next_record<D: Dialect>(
        &mut self,
        input: &[u8],
    ) -> Result<Option<(usize, bool)>, FormatError> {
        loop {
            let mut decoder = TreeDecoder::<D>::new(input, self.pos);
            let tables = &self.tables;
            let record = decoder
                .record(
                    |t| {
                        tables
                            .get(t)
                            .map(|t| (t.schema.columns.len(), !t.schema.strict))
                    },
                    self.positions.table(),
                )
                .map_err(|e| self.fail(e))?;
            self.pos = decoder.pos;
            match record {
                Record::End => return Ok(None),
                Record::Control(controls) => {
                    for control in controls {
                        self.positions.control(control);
                    }
                }
                Record::Row { other_columns } => {
                    return Ok(Some((self.positions.table(), other_columns)))
                }
            }
        }
    }

    /// Reads the next record of the current table (see [`TreeDecoder::record`]).
    #[inline(always)]
    /// Reads the next record up to a row's columns: `Some(whether other columns follow)` for
    /// a row, `None` for control records, which are applied and stepped over (`consumed`).
    ///
    /// # Errors
    /// A malformed record, or the end of the input.
    fn row_head<D: Dialect>(
        &mut self,
        decoder: &mut TreeDecoder<'_, D>,
        consumed: &mut usize,
    ) -> Result<Option<bool>, TreeError> {
        match self.record(decoder)? {
            Record::Row { other_columns } => Ok(Some(other_columns)),
            Record::Control(controls) => {
                for control in controls {
                    self.positions.control(control);
                }
                *consumed = decoder.pos;
                Ok(None)
            }
            Record::End => Err(TreeError::end_of_input(decoder.pos, "the input ends")),
        }
    }

    fn record<D: Dialect>(&self, decoder: &mut TreeDecoder<'_, D>) -> Result<Record, TreeError> {
        let tables = &self.tables;
        decoder.record(
            |t| {
                tables
                    .get(t)
                    .map(|t| (t.schema.columns.len(), !t.schema.strict))
            },
            self.positions.table(),
        )
    }

    /// Reads the other-columns item that ends a row of `table` into `out` (binary YSON map).
    fn other_columns<D: Dialect>(
        &self,
        decoder: &mut TreeDecoder<'_, D>,
        table: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), TreeError> {
        let start = decoder.pos;
        match decoder.item()? {
            Item::Yson(bytes) => {
                other_columns::normalize(bytes, &self.tables[table].schema, table, out)
                    .map_err(|message| TreeError::new(start, message))
            }
            other => Err(TreeError::new(
                start,
                format!(
                    "expected the row's other columns (a yson extension item), found {}",
                    other.name()
                ),
            )),
        }
    }
}

/// Reads the rows of a tree-format stream held in memory as owned values: the format's own
/// typed reader (`msgpack::RowReader`, `cbor::RowReader`).
pub struct RowReader<'a, D> {
    input: &'a [u8],
    stream: TreeStream,
    others: Vec<u8>,
    dialect: PhantomData<D>,
}

impl<'a, D: Dialect> RowReader<'a, D> {
    /// A reader of `input`, whose rows belong to `schemas` (table index = position).
    pub fn new(schemas: &[TableSchema], input: &'a [u8]) -> RowReader<'a, D> {
        RowReader {
            input,
            stream: TreeStream::new(D::NAME, schemas),
            others: Vec::new(),
            dialect: PhantomData,
        }
    }

    /// Decodes the next row into `values` (cleared first); its position, or `None` at the end.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset and row number for malformed input.
    pub fn next_row(
        &mut self,
        values: &mut Vec<Value>,
    ) -> Result<Option<RowPosition>, FormatError> {
        let Some((table, has_others)) = self.stream.next_record::<D>(self.input)? else {
            return Ok(None);
        };
        let mut decoder = TreeDecoder::<D>::new(self.input, self.stream.pos);
        values.clear();
        for column in &self.stream.tables[table].schema.columns {
            let value = decoder
                .column(&column.ty)
                .map_err(|e| self.stream.column_fail(e, &column.name))?;
            values.push(value);
        }
        self.others.clear();
        if has_others {
            self.stream
                .other_columns(&mut decoder, table, &mut self.others)
                .map_err(|e| self.stream.fail(e))?;
        }
        self.stream.pos = decoder.pos;
        self.stream.rows += 1;
        Ok(Some(self.stream.positions.next_row()))
    }

    /// The binary YSON map of the columns the last row carries outside its (non-strict)
    /// schema; `None` when it has none.
    pub fn other_columns(&self) -> Option<&[u8]> {
        (!self.others.is_empty()).then_some(self.others.as_slice())
    }
}

/// Reads the items of a tree-format stream one by one, with no schema: the format's
/// lowest-level reader (`msgpack::ItemReader`, `cbor::ItemReader`).
pub struct ItemReader<'a, D> {
    input: &'a [u8],
    pos: usize,
    dialect: PhantomData<D>,
}

impl<'a, D: Dialect> ItemReader<'a, D> {
    pub fn new(input: &'a [u8]) -> ItemReader<'a, D> {
        ItemReader {
            input,
            pos: 0,
            dialect: PhantomData,
        }
    }

    /// The next item (an array or map item is its header; its items follow), or `None` at the
    /// end of the input.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset for a truncated or malformed item.
    #[inline]
    pub fn next_item(&mut self) -> Result<Option<Item<'a>>, FormatError> {
        if self.pos >= self.input.len() {
            return Ok(None);
        }
        D::read(self.input, &mut self.pos)
            .map(Some)
            .map_err(|e| FormatError::new(D::NAME, e.message).at(e.offset as u64))
    }

    /// The offset of the next item.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

/// The most bytes one record (a row, or a control record) of a streaming tree-format source
/// may take: the read buffer grows to hold a record larger than itself, up to this.
pub(crate) const MAX_RECORD_BYTES: usize = 1 << 30;

/// The read buffer a streaming tree-format source starts with.
const READ_BUFFER_BYTES: usize = 256 << 10;

/// The input of a streaming source: a window of the stream in a buffer that rows are decoded
/// from in place (their strings borrow it).
///
/// `buffer[consumed..filled]` is the part not decoded yet; `buffer[0]` is byte `base` of the
/// stream. Refilling moves the undecoded tail to the front, doubles the buffer only when that
/// tail fills it (a record larger than the buffer, up to [`MAX_RECORD_BYTES`]), and reads
/// until the tail has at least doubled: a record that needs `k` refills is decoded `k + 1`
/// times over a geometric series of lengths, so decoding stays linear in the input even for
/// a reader that returns a few bytes at a time.
struct InputWindow {
    reader: Box<dyn std::io::Read>,
    buffer: Vec<u8>,
    consumed: usize,
    filled: usize,
    base: u64,
    eof: bool,
}

impl InputWindow {
    fn new(reader: Box<dyn std::io::Read>) -> InputWindow {
        InputWindow {
            reader,
            buffer: Vec::new(),
            consumed: 0,
            filled: 0,
            base: 0,
            eof: false,
        }
    }

    /// Reads more of the stream after a record at `consumed` ran past `filled`.
    ///
    /// # Errors
    /// On I/O failure, or when the record would outgrow [`MAX_RECORD_BYTES`].
    #[cold]
    fn refill(&mut self, format: &'static str) -> Result<(), FormatError> {
        if self.consumed > 0 {
            self.buffer.copy_within(self.consumed..self.filled, 0);
            self.filled -= self.consumed;
            self.base += self.consumed as u64;
            self.consumed = 0;
        }
        let pending = self.filled;
        if pending == self.buffer.len() {
            if self.buffer.len() >= MAX_RECORD_BYTES {
                return Err(FormatError::new(
                    format,
                    format!(
                        "a record is larger than {MAX_RECORD_BYTES} bytes (the reader's limit)"
                    ),
                )
                .at(self.base));
            }
            let grown = (self.buffer.len() * 2).clamp(READ_BUFFER_BYTES, MAX_RECORD_BYTES);
            self.buffer.resize(grown, 0);
        }
        let target = (pending * 2).clamp(pending + 1, self.buffer.len());
        while self.filled < target {
            match self.reader.read(&mut self.buffer[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(FormatError::io(format, &e).at(self.base + self.filled as u64))
                }
            }
        }
        Ok(())
    }
}

/// A [`RowSource`](super::RowSource) over a tree-format stream, read through a window.
///
/// Rows are decoded in one pass in place in the input window, straight into the row's refs:
/// scalars are checked by their column's plan (or compiled check), strings borrow the
/// window, composite and `yson` values are decoded, checked and written as binary YSON into a
/// per-row scratch buffer, whose refs are filled in once it stops growing (`spans`). A record
/// that runs past the bytes read so far is decoded again after a refill (control records
/// are consumed one by one, so a retry never applies one twice).
pub(crate) struct TreeSource<D> {
    window: InputWindow,
    stream: TreeStream,
    scratch: Vec<u8>,
    /// The row's values held in `scratch`: column, span, `yson` (else composite).
    spans: Vec<(usize, usize, usize, bool)>,
    others: Vec<u8>,
    refs: RefsBuffer,
    dialect: PhantomData<D>,
}

/// A decoded row and the columns it carries outside its schema.
type RowWithOthers<'a> = (RowRef<'a>, Option<&'a [u8]>);

/// Calls `$step` (a method of the source that decodes from the window) until it yields a
/// result or the stream ends, refilling the window whenever a record runs past its end: the
/// one driver of `read` and `read_block`.
macro_rules! refilling {
    ($source:ident, $step:ident) => {
        loop {
            if $source.window.consumed == $source.window.filled {
                if $source.window.eof {
                    return Ok(None);
                }
                $source.window.refill(D::NAME)?;
                continue;
            }
            let this: *mut Self = $source;
            // SAFETY: the borrow of `*this` leaves the loop only in the returned value; on
            // every other path its result is dropped (the error owns nothing borrowed) before
            // the source is used again. This is NLL's "problem case #3" (a conditional return
            // of a borrow in a loop), which the borrow checker refuses and Polonius accepts.
            match unsafe { &mut *this }.$step() {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => {}
                Err(e) if e.end_of_input && !$source.window.eof => {
                    $source.window.refill(D::NAME)?
                }
                Err(e) => return Err($source.stream.fail_at($source.window.base, e)),
            }
        }
    };
}

impl<D: Dialect> TreeSource<D> {
    pub(crate) fn open(
        schemas: &[TableSchema],
        input: Box<dyn std::io::Read>,
    ) -> Result<Self, FormatError> {
        Ok(TreeSource {
            window: InputWindow::new(input),
            stream: TreeStream::new(D::NAME, schemas),
            scratch: Vec::new(),
            spans: Vec::new(),
            others: Vec::new(),
            refs: RefsBuffer::default(),
            dialect: PhantomData,
        })
    }

    /// Decodes the record at the window's `consumed` offset: the row, or `None` for a
    /// control record (applied). Nothing but the scratch buffers changes unless the record
    /// is complete, so a record cut by the window's end can be decoded again after a refill.
    #[inline(always)]
    fn step(&mut self) -> Result<Option<RowWithOthers<'_>>, TreeError> {
        let TreeSource {
            window,
            stream,
            scratch,
            spans,
            others,
            refs,
            ..
        } = self;
        let input: &[u8] = &window.buffer[..window.filled];
        let mut decoder = TreeDecoder::<D>::new(input, window.consumed);
        let Some(has_others) = stream.row_head(&mut decoder, &mut window.consumed)? else {
            return Ok(None);
        };
        let table = stream.positions.table();
        scratch.clear();
        spans.clear();
        let refs = refs.loan();
        decode_columns(&mut decoder, &stream.tables[table], refs, scratch, spans)?;
        others.clear();
        if has_others {
            stream.other_columns(&mut decoder, table, others)?;
        }
        window.consumed = decoder.pos;
        stream.rows += 1;
        let position = stream.positions.next_row();
        place_spans(refs, scratch, spans);
        let others = (!others.is_empty()).then_some(others.as_slice());
        Ok(Some((
            RowRef {
                position,
                values: refs,
            },
            others,
        )))
    }

    /// Decodes a run of rows from the window's `consumed` offset into one block: `None` for
    /// a control record before the first row (applied). The run ends before a control record
    /// (the next block starts with it, so every row after a block's first counts on from it:
    /// same table and range, no key switch, the row index plus one), at the window's end, at
    /// [`BLOCK_VALUES`] values, and before a record that fails to decode: the rows before it
    /// are returned, and the next call decodes the bad record again, first, and fails on it.
    /// The window moves past each complete row only, so an error reads as it does row by row.
    fn step_block(&mut self) -> Result<Option<RowBlock<'_>>, TreeError> {
        let TreeSource {
            window,
            stream,
            scratch,
            spans,
            others,
            refs,
            ..
        } = self;
        let input: &[u8] = &window.buffer[..window.filled];
        let mut decoder = TreeDecoder::<D>::new(input, window.consumed);
        let Some(has_others) = stream.row_head(&mut decoder, &mut window.consumed)? else {
            return Ok(None);
        };
        let table = stream.positions.table();
        let spec = &stream.tables[table];
        let columns = spec.schema.columns.len();
        let max_rows = (BLOCK_VALUES / columns.max(1)).max(1);
        scratch.clear();
        spans.clear();
        let refs = refs.loan();
        // The first row: its errors are the block's.
        decode_columns(&mut decoder, spec, refs, scratch, spans)?;
        if has_others {
            others.clear();
            stream.other_columns(&mut decoder, table, others)?;
        }
        window.consumed = decoder.pos;
        stream.rows += 1;
        let first = stream.positions.next_row();
        let mut rows = 1;
        // The rows after it, while they are whole rows of the same table.
        while rows < max_rows && decoder.pos < input.len() {
            let (values_before, scratch_before, spans_before) =
                (refs.len(), scratch.len(), spans.len());
            let row = match stream.record(&mut decoder) {
                Ok(Record::Row { other_columns }) => {
                    decode_columns(&mut decoder, spec, refs, scratch, spans).and_then(|()| {
                        if other_columns {
                            others.clear();
                            stream.other_columns(&mut decoder, table, others)
                        } else {
                            Ok(())
                        }
                    })
                }
                // A control record, the end or an error: the next block starts there.
                _ => Err(TreeError::new(decoder.pos, "")),
            };
            if row.is_err() {
                refs.truncate(values_before);
                scratch.truncate(scratch_before);
                spans.truncate(spans_before);
                break;
            }
            window.consumed = decoder.pos;
            stream.rows += 1;
            stream.positions.next_row();
            rows += 1;
        }
        place_spans(refs, scratch, spans);
        Ok(Some(RowBlock {
            first,
            rows,
            columns,
            values: refs,
        }))
    }

    /// The next row, refilling the window as records need; `None` at the end of the stream.
    #[inline(always)]
    fn read(&mut self) -> Result<Option<RowWithOthers<'_>>, FormatError> {
        refilling!(self, step)
    }

    /// The next block of rows, refilling the window as records need; `None` at the end.
    fn read_block(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        refilling!(self, step_block)
    }
}

/// The most values a block of [`TreeSource::next_rows`] holds (but at least one row): enough
/// to spread the call over many rows, few enough for the refs to stay in the L1/L2 caches.
const BLOCK_VALUES: usize = 2048;

/// Decodes the column values of one row of `spec` (its array header read) and appends them
/// to `refs`: scalars checked by their column's plan (or compiled check), strings borrowed
/// from the input, composite and `yson` values transcoded into `scratch` (their refs are
/// placeholders until [`place_spans`], recorded in `spans` as value index, span, `yson`).
///
/// # Errors
/// The first value that does not decode or fit its column, named; the buffers may then hold
/// part of the row (the caller truncates or clears them).
#[inline(always)]
fn decode_columns<'a, D: Dialect>(
    decoder: &mut TreeDecoder<'a, D>,
    spec: &TreeTable,
    refs: &mut Vec<ValueRef<'a>>,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize, usize, bool)>,
) -> Result<(), TreeError> {
    let columns = spec
        .schema
        .columns
        .iter()
        .zip(&spec.checks)
        .zip(&spec.plans);
    refs.reserve(spec.schema.columns.len());
    for ((def, check), plan) in columns {
        let start = decoder.pos;
        let item = decoder.item().map_err(|e| e.in_column(&def.name))?;
        // The common scalars by the column's plan; anything else (and every value the plan
        // refuses, for its error) by the general path below.
        let value = match (*plan, item) {
            (ScalarPlan::Signed { lo, hi }, Item::Int(v)) if lo <= v && v <= hi => {
                ValueRef::Int64(v)
            }
            (ScalarPlan::Signed { lo: _, hi }, Item::Uint(v)) if hi >= 0 && v <= hi as u64 => {
                ValueRef::Int64(v as i64)
            }
            (ScalarPlan::Unsigned { hi }, Item::Uint(v)) if v <= hi => ValueRef::Uint64(v),
            (ScalarPlan::Unsigned { hi }, Item::Int(v)) if v >= 0 && v as u64 <= hi => {
                ValueRef::Uint64(v as u64)
            }
            (ScalarPlan::Double, Item::Double(v)) => ValueRef::Double(v),
            (ScalarPlan::Bool, Item::Bool(v)) => ValueRef::Bool(v),
            (ScalarPlan::Bytes, Item::Bytes(v) | Item::Text(v)) => ValueRef::String(v),
            (ScalarPlan::Utf8, Item::Bytes(v) | Item::Text(v))
                if std::str::from_utf8(v).is_ok() =>
            {
                ValueRef::String(v)
            }
            // What the general path makes of nil in a nullable column of any kind.
            (_, Item::Nil) if check.nullable => ValueRef::Null,
            _ => general_value(decoder, item, start, def, check, refs.len(), scratch, spans)?,
        };
        refs.push(value);
    }
    Ok(())
}

/// A column value the plan did not take: other scalars through the compiled check (with
/// its error), composite and `yson` values into `scratch` (a `Null` placeholder ref and a
/// span for value `index`).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn general_value<'a, D: Dialect>(
    decoder: &mut TreeDecoder<'a, D>,
    item: Item<'a>,
    start: usize,
    def: &shapeshift_types::ColumnSchema,
    check: &ColumnCheck,
    index: usize,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize, usize, bool)>,
) -> Result<ValueRef<'a>, TreeError> {
    Ok(match check.kind {
        ColumnKind::Scalar => {
            let value = match item {
                Item::Nil => ValueRef::Null,
                Item::Bool(v) => ValueRef::Bool(v),
                Item::Int(v) => ValueRef::Int64(v),
                Item::Uint(v) => ValueRef::Uint64(v),
                Item::Double(v) => ValueRef::Double(v),
                Item::Bytes(v) | Item::Text(v) => ValueRef::String(v),
                other => return Err(wrong_item(start, &def.ty, other).in_column(&def.name)),
            };
            check
                .read(value, &def.ty)
                .map_err(|e| TreeError::new(start, e.to_string()).in_column(&def.name))?
        }
        _ if matches!(item, Item::Nil) && check.nullable => ValueRef::Null,
        ColumnKind::Composite => {
            let at = scratch.len();
            decoder
                .transcode_from(item, start, &def.ty, scratch)
                .map_err(|e| e.in_column(&def.name))?;
            spans.push((index, at, scratch.len(), false));
            ValueRef::Null
        }
        ColumnKind::Yson => {
            decoder.pos = start;
            let value = decoder
                .column(&def.ty)
                .map_err(|e| e.in_column(&def.name))?;
            if !matches!(value, Value::Null) {
                let at = scratch.len();
                yson_binary::value(scratch, &value, &def.ty)
                    .map_err(|m| TreeError::new(start, m).in_column(&def.name))?;
                spans.push((index, at, scratch.len(), true));
            }
            ValueRef::Null
        }
    })
}

/// Points the placeholder refs of the values held in `scratch` at their bytes.
#[inline]
fn place_spans<'a>(
    refs: &mut [ValueRef<'a>],
    scratch: &'a [u8],
    spans: &[(usize, usize, usize, bool)],
) {
    for &(index, start, end, yson) in spans {
        let bytes = &scratch[start..end];
        refs[index] = if yson {
            ValueRef::Any(bytes)
        } else {
            ValueRef::Composite(bytes)
        };
    }
}

/// The error of an item that cannot start a value of `ty`.
#[cold]
fn wrong_item(start: usize, ty: &Type, item: Item<'_>) -> TreeError {
    TreeError::new(
        start,
        format!(
            "expected a value of type {}, found {}",
            type_name(ty),
            item.name()
        ),
    )
}

impl<D: Dialect> RowSource for TreeSource<D> {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        Ok(self.read()?.map(|(row, _)| row))
    }

    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        self.read_block()
    }

    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        self.read()
    }
}

/// A [`RowSink`](super::RowSink) of a tree format.
pub(crate) struct TreeSink<D> {
    tables: Vec<TreeTable>,
    output: Box<dyn std::io::Write>,
    buffer: Vec<u8>,
    others: Vec<u8>,
    positions: PositionWriter,
    rows: u64,
    dialect: PhantomData<D>,
}

impl<D: Dialect> TreeSink<D> {
    pub(crate) fn new(schemas: &[TableSchema], output: Box<dyn std::io::Write>) -> Self {
        TreeSink {
            tables: TreeStream::new(D::NAME, schemas).tables,
            output,
            buffer: Vec::with_capacity(1 << 16),
            others: Vec::new(),
            positions: PositionWriter::default(),
            rows: 0,
            dialect: PhantomData,
        }
    }

    #[inline]
    fn row_done(
        &mut self,
        start: usize,
        result: Result<(), FormatError>,
    ) -> Result<(), FormatError> {
        if let Err(e) = result {
            self.buffer.truncate(start);
            return Err(e.in_row(self.rows));
        }
        self.rows += 1;
        if self.buffer.len() >= 1 << 16 {
            self.output
                .write_all(&self.buffer)
                .map_err(|e| FormatError::io(D::NAME, &e))?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Writes the control records and the array header of a row of `count` values (plus its
    /// other columns when `others`); the row's table.
    #[inline]
    fn begin(
        &mut self,
        position: &RowPosition,
        count: usize,
        others: bool,
    ) -> Result<usize, FormatError> {
        let table = self.tables.get(position.table_index).ok_or_else(|| {
            FormatError::new(
                D::NAME,
                format!(
                    "table index {} is out of range: {} table schemas",
                    position.table_index,
                    self.tables.len()
                ),
            )
        })?;
        if count != table.schema.columns.len() {
            return Err(FormatError::new(
                D::NAME,
                format!(
                    "table {} has {} columns, the row has {count} values",
                    position.table_index,
                    table.schema.columns.len()
                ),
            ));
        }
        let out = &mut self.buffer;
        let _ = self.positions.controls(position, |c| {
            encode_control::<D>(out, c);
            Ok::<(), ()>(())
        });
        D::array(out, count + usize::from(others));
        Ok(position.table_index)
    }

    fn write_refs(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        others: bool,
    ) -> Result<(), FormatError> {
        let table = self.begin(position, values.len(), others)?;
        let out = &mut self.buffer;
        let spec = &self.tables[table];
        for ((value, column), check) in values.iter().zip(&spec.schema.columns).zip(&spec.checks) {
            let fail = |e: &dyn std::fmt::Display| {
                FormatError::new(D::NAME, format!("column \"{}\": {e}", column.name))
            };
            match *value {
                ValueRef::Composite(_) | ValueRef::Any(_) => {
                    let owned = value_from_ref(*value, &column.ty).map_err(|e| fail(&e))?;
                    encode_value::<D>(out, &owned, &column.ty).map_err(|e| fail(&e))?;
                }
                scalar => {
                    check.write(scalar, &column.ty).map_err(|e| fail(&e))?;
                    encode_scalar::<D>(out, scalar, check);
                }
            }
        }
        if others {
            D::yson(out, &self.others);
        }
        Ok(())
    }
}

/// Writes a scalar (or null) of a column, checked by `check` (which has verified the UTF-8
/// of text columns).
#[inline]
fn encode_scalar<D: Dialect>(out: &mut Vec<u8>, value: ValueRef<'_>, check: &ColumnCheck) {
    match value {
        ValueRef::Bool(v) => D::boolean(out, v),
        ValueRef::Int64(v) => D::int(out, v),
        ValueRef::Uint64(v) => D::uint(out, v),
        ValueRef::Double(v) => D::double(out, v),
        ValueRef::String(v) if check.is_text() => D::text(out, v),
        ValueRef::String(v) => D::bytes(out, v),
        _ => D::nil(out),
    }
}

impl<D: Dialect> RowSink for TreeSink<D> {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let start = self.buffer.len();
        let result = self.write_refs(position, values, false);
        self.row_done(start, result)
    }

    fn write_row_with_other_columns(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        other_columns: Option<&[u8]>,
    ) -> Result<(), FormatError> {
        let Some(bytes) = other_columns else {
            return self.write_row(position, values);
        };
        let start = self.buffer.len();
        let mut others = std::mem::take(&mut self.others);
        others.clear();
        let result = match self.tables.get(position.table_index) {
            Some(table) => {
                other_columns::normalize(bytes, &table.schema, position.table_index, &mut others)
                    .map_err(|m| FormatError::new(D::NAME, m))
            }
            None => Ok(()),
        };
        let has_others = !others.is_empty();
        self.others = others;
        let result = result.and_then(|()| self.write_refs(position, values, has_others));
        self.row_done(start, result)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let start = self.buffer.len();
        let result = (|| {
            let table = self.begin(position, values.len(), false)?;
            let out = &mut self.buffer;
            let spec = &self.tables[table];
            for ((value, column), check) in
                values.iter().zip(&spec.schema.columns).zip(&spec.checks)
            {
                let fail = |e: &dyn std::fmt::Display| {
                    FormatError::new(D::NAME, format!("column \"{}\": {e}", column.name))
                };
                check.write_owned(value, &column.ty).map_err(|e| fail(&e))?;
                match super::values::scalar_ref(value) {
                    Some(scalar) if check.kind == ColumnKind::Scalar => {
                        encode_scalar::<D>(out, scalar, check)
                    }
                    _ => encode_value::<D>(out, value, &column.ty).map_err(|e| fail(&e))?,
                }
            }
            Ok(())
        })();
        self.row_done(start, result)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.output
            .write_all(&self.buffer)
            .and_then(|()| self.output.flush())
            .map_err(|e| FormatError::io(D::NAME, &e))?;
        self.buffer.clear();
        Ok(())
    }
}
