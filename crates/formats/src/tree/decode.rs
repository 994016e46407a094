//! Reading typed values from tree items: [`TreeDecoder`], the one decoder every reader uses.

use shapeshift_types::{check_value, PhysicalType, PrimitiveType, Type, Value, ValueRef};

use super::{Dialect, Item, TreeError};
use crate::table::position::Control;
use crate::table::yson_binary;

/// A reader of typed values from one input.
pub(crate) struct TreeDecoder<'a, D> {
    pub input: &'a [u8],
    pub pos: usize,
    pub(super) dialect: std::marker::PhantomData<D>,
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
    pub(super) fn item(&mut self) -> Result<Item<'a>, TreeError> {
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

    pub(super) fn expect_len(&mut self, n: u64) -> usize {
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

    pub(super) fn value_from(
        &mut self,
        item: Item<'a>,
        start: usize,
        ty: &Type,
    ) -> Result<Value, TreeError> {
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
                    crate::table::values::check_ref(value, ty)
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

    pub(super) fn transcode(&mut self, ty: &Type, out: &mut Vec<u8>) -> Result<(), TreeError> {
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
pub(super) fn plainly_fits(p: PrimitiveType, value: ValueRef<'_>) -> bool {
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
        (P::Utf8 | P::Json, ValueRef::String(v)) => crate::utf8::text(v).is_ok(),
        _ => false,
    }
}

pub(super) fn type_name(ty: &Type) -> String {
    let node = ty.to_node();
    String::from_utf8_lossy(&crate::yson::to_vec(&node, crate::yson::YsonFormat::Text)).into_owned()
}
