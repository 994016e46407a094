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

use shapeshift_types::{check_value, PhysicalType, PrimitiveType, Type, Value};

use super::position::Control;
use super::yson_binary;

/// One item header or scalar of a tree format.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item<'a> {
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
    fn name(&self) -> &'static str {
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
pub(crate) struct TreeError {
    pub offset: usize,
    pub message: String,
}

impl TreeError {
    #[cold]
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> TreeError {
        TreeError {
            offset,
            message: message.into(),
        }
    }
}

/// How one tree format spells items.
pub(crate) trait Dialect {
    fn nil(out: &mut Vec<u8>);
    fn boolean(out: &mut Vec<u8>, v: bool);
    fn int(out: &mut Vec<u8>, v: i64);
    fn uint(out: &mut Vec<u8>, v: u64);
    fn double(out: &mut Vec<u8>, v: f64);
    fn bytes(out: &mut Vec<u8>, v: &[u8]);
    fn text(out: &mut Vec<u8>, v: &str);
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
            D::text(out, "table_index");
            D::uint(out, i as u64);
        }
        Control::RowIndex(i) => {
            D::text(out, "row_index");
            D::int(out, i);
        }
        Control::RangeIndex(i) => {
            D::text(out, "range_index");
            D::int(out, i);
        }
        Control::KeySwitch => {
            D::text(out, "key_switch");
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
            D::text(out, text);
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
    Row,
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
        columns: impl Fn(usize) -> Option<usize>,
        table: usize,
    ) -> Result<Record, TreeError> {
        if self.pos >= self.input.len() {
            return Ok(Record::End);
        }
        let start = self.pos;
        match self.item()? {
            Item::Array(n) => {
                let expected = columns(table).unwrap_or(0);
                if n != expected as u64 {
                    return Err(TreeError::new(
                        start,
                        format!("a row of table {table} has {expected} columns, found an array of {n} items"),
                    ));
                }
                Ok(Record::Row)
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

    fn value(&mut self, ty: &Type) -> Result<Value, TreeError> {
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

fn type_name(ty: &Type) -> String {
    let node = ty.to_node();
    String::from_utf8_lossy(&crate::yson::to_vec(&node, crate::yson::YsonFormat::Text)).into_owned()
}

/// Reads the rows of a whole tree-format stream held in memory.
pub(crate) struct TreeRows<D> {
    format: &'static str,
    schemas: Vec<shapeshift_types::TableSchema>,
    positions: super::position::PositionReader,
    pos: usize,
    rows: u64,
    dialect: std::marker::PhantomData<D>,
}

impl<D: Dialect> TreeRows<D> {
    pub(crate) fn new(format: &'static str, schemas: &[shapeshift_types::TableSchema]) -> Self {
        TreeRows {
            format,
            schemas: schemas.to_vec(),
            positions: super::position::PositionReader::default(),
            pos: 0,
            rows: 0,
            dialect: std::marker::PhantomData,
        }
    }

    /// Decodes the next row of `input` into `values`; `None` at the end.
    ///
    /// # Errors
    /// A [`FormatError`](super::FormatError) with the byte offset and row number.
    pub(crate) fn next_row(
        &mut self,
        input: &[u8],
        values: &mut Vec<Value>,
    ) -> Result<Option<(super::RowPosition, usize)>, super::FormatError> {
        let fail = |e: TreeError, rows: u64, format| {
            super::FormatError::new(format, e.message)
                .at(e.offset as u64)
                .in_row(rows)
        };
        loop {
            let mut decoder = TreeDecoder::<D>::new(input, self.pos);
            let schemas = &self.schemas;
            let record = decoder
                .record(
                    |t| schemas.get(t).map(|s| s.columns.len()),
                    self.positions.table(),
                )
                .map_err(|e| fail(e, self.rows, self.format))?;
            match record {
                Record::End => return Ok(None),
                Record::Control(controls) => {
                    self.pos = decoder.pos;
                    for control in controls {
                        self.positions.control(control);
                    }
                }
                Record::Row => {
                    let table = self.positions.table();
                    values.clear();
                    for column in &self.schemas[table].columns {
                        let value = decoder.column(&column.ty).map_err(|e| {
                            fail(
                                TreeError::new(
                                    e.offset,
                                    format!("column \"{}\": {}", column.name, e.message),
                                ),
                                self.rows,
                                self.format,
                            )
                        })?;
                        values.push(value);
                    }
                    self.pos = decoder.pos;
                    self.rows += 1;
                    return Ok(Some((self.positions.next_row(), table)));
                }
            }
        }
    }
}

/// A [`RowSource`](super::RowSource) over a tree-format stream, read whole into memory.
pub(crate) struct TreeSource<D> {
    input: Vec<u8>,
    rows: TreeRows<D>,
    values: Vec<Value>,
    refs: super::OwnedRefs,
}

impl<D: Dialect> TreeSource<D> {
    pub(crate) fn open(
        format: &'static str,
        schemas: &[shapeshift_types::TableSchema],
        mut input: Box<dyn std::io::Read>,
    ) -> Result<Self, super::FormatError> {
        let mut bytes = Vec::new();
        input
            .read_to_end(&mut bytes)
            .map_err(|e| super::FormatError::io(format, &e))?;
        Ok(TreeSource {
            input: bytes,
            rows: TreeRows::new(format, schemas),
            values: Vec::new(),
            refs: super::OwnedRefs::new(),
        })
    }
}

impl<D: Dialect> super::RowSource for TreeSource<D> {
    fn next_row(&mut self) -> Result<Option<super::RowRef<'_>>, super::FormatError> {
        let Some((position, table)) = self.rows.next_row(&self.input, &mut self.values)? else {
            return Ok(None);
        };
        let format = self.rows.format;
        let values = self
            .refs
            .refs(&self.values, &self.rows.schemas[table])
            .map_err(|e| super::FormatError::new(format, e.to_string()))?;
        Ok(Some(super::RowRef { position, values }))
    }
}

/// A [`RowSink`](super::RowSink) of a tree format.
pub(crate) struct TreeSink<D> {
    format: &'static str,
    schemas: Vec<shapeshift_types::TableSchema>,
    output: Box<dyn std::io::Write>,
    buffer: Vec<u8>,
    positions: super::position::PositionWriter,
    rows: u64,
    dialect: std::marker::PhantomData<D>,
}

impl<D: Dialect> TreeSink<D> {
    pub(crate) fn new(
        format: &'static str,
        schemas: &[shapeshift_types::TableSchema],
        output: Box<dyn std::io::Write>,
    ) -> Self {
        TreeSink {
            format,
            schemas: schemas.to_vec(),
            output,
            buffer: Vec::with_capacity(1 << 16),
            positions: super::position::PositionWriter::default(),
            rows: 0,
            dialect: std::marker::PhantomData,
        }
    }

    fn row_done(
        &mut self,
        start: usize,
        result: Result<(), super::FormatError>,
    ) -> Result<(), super::FormatError> {
        if let Err(e) = result {
            self.buffer.truncate(start);
            return Err(e.in_row(self.rows));
        }
        self.rows += 1;
        if self.buffer.len() >= 1 << 16 {
            self.output
                .write_all(&self.buffer)
                .map_err(|e| super::FormatError::io(self.format, &e))?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn begin(
        &mut self,
        position: &super::RowPosition,
        count: usize,
    ) -> Result<usize, super::FormatError> {
        let format = self.format;
        let schema = self.schemas.get(position.table_index).ok_or_else(|| {
            super::FormatError::new(
                format,
                format!(
                    "table index {} is out of range: {} table schemas",
                    position.table_index,
                    self.schemas.len()
                ),
            )
        })?;
        if count != schema.columns.len() {
            return Err(super::FormatError::new(
                format,
                format!(
                    "table {} has {} columns, the row has {count} values",
                    position.table_index,
                    schema.columns.len()
                ),
            ));
        }
        let out = &mut self.buffer;
        let _ = self.positions.controls(position, |c| {
            encode_control::<D>(out, c);
            Ok::<(), ()>(())
        });
        D::array(out, count);
        Ok(position.table_index)
    }
}

impl<D: Dialect> super::RowSink for TreeSink<D> {
    fn write_row(
        &mut self,
        position: &super::RowPosition,
        values: &[shapeshift_types::ValueRef<'_>],
    ) -> Result<(), super::FormatError> {
        use shapeshift_types::ValueRef;
        let start = self.buffer.len();
        let result = (|| {
            let table = self.begin(position, values.len())?;
            let format = self.format;
            let out = &mut self.buffer;
            for (value, column) in values.iter().zip(&self.schemas[table].columns) {
                let fail = |e: &dyn std::fmt::Display| {
                    super::FormatError::new(format, format!("column \"{}\": {e}", column.name))
                };
                match *value {
                    ValueRef::Composite(_) | ValueRef::Any(_) => {
                        let owned =
                            super::value_from_ref(*value, &column.ty).map_err(|e| fail(&e))?;
                        encode_value::<D>(out, &owned, &column.ty).map_err(|e| fail(&e))?;
                    }
                    scalar => {
                        super::values::check_ref(scalar, &column.ty).map_err(|e| fail(&e))?;
                        match scalar {
                            ValueRef::Bool(v) => D::boolean(out, v),
                            ValueRef::Int64(v) => D::int(out, v),
                            ValueRef::Uint64(v) => D::uint(out, v),
                            ValueRef::Double(v) => D::double(out, v),
                            ValueRef::String(v) if is_text(column_scalar_type(&column.ty)) => {
                                // check_ref has verified the UTF-8.
                                D::text(out, std::str::from_utf8(v).map_err(|e| fail(&e))?)
                            }
                            ValueRef::String(v) => D::bytes(out, v),
                            _ => D::nil(out),
                        }
                    }
                }
            }
            Ok(())
        })();
        self.row_done(start, result)
    }

    fn write_owned_row(
        &mut self,
        position: &super::RowPosition,
        values: &[Value],
    ) -> Result<(), super::FormatError> {
        let start = self.buffer.len();
        let result = (|| {
            let table = self.begin(position, values.len())?;
            let format = self.format;
            let out = &mut self.buffer;
            for (value, column) in values.iter().zip(&self.schemas[table].columns) {
                let fail = |e: &dyn std::fmt::Display| {
                    super::FormatError::new(format, format!("column \"{}\": {e}", column.name))
                };
                check_value(value, &column.ty).map_err(|e| fail(&e))?;
                encode_value::<D>(out, value, &column.ty).map_err(|e| fail(&e))?;
            }
            Ok(())
        })();
        self.row_done(start, result)
    }

    fn finish(&mut self) -> Result<(), super::FormatError> {
        self.output
            .write_all(&self.buffer)
            .and_then(|()| self.output.flush())
            .map_err(|e| super::FormatError::io(self.format, &e))?;
        self.buffer.clear();
        Ok(())
    }
}

/// The primitive under an optional and tags.
fn column_scalar_type(ty: &Type) -> &Type {
    match ty.untagged() {
        Type::Optional(item) => item.untagged(),
        other => other,
    }
}
