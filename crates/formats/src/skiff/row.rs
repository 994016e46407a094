//! Rows as the readers hand them out: [`RowView`] (borrowed, zero-copy), [`FieldRef`] and
//! [`LazyField`] for its fields, [`OwnedRow`] and [`SystemFields`] for owned rows, and
//! [`RowBuffer`] for editing a row's bytes in place.
//!
//! A view exists only for a row whose bytes the scanner has validated (see `scan.rs`), so
//! reading its fields cannot fail; only converting a yson32 payload to a node can.

use shapeshift_types::{Value, ValueRef};

use super::convert::{decode, scalar_ref};
use super::error::SkiffError;
use super::owned_row::{OwnedRow, SystemFields};
use super::plan::{FieldPlan, Kind, TablePlan};
use super::scan::{read_bytes32, read_u16, read_u64, skip};
use super::writer::encode_value;

/// One field of a row: a borrowed value, or a lazily read composite.
#[derive(Clone, Copy, Debug)]
pub enum FieldRef<'a> {
    /// Scalars, strings, yson (binary or text YSON bytes, as on the wire) and optionals of them.
    Value(ValueRef<'a>),
    /// Lists, structs, tuples, variants, dicts, nullable optionals, wide integers, decimals.
    Lazy(LazyField<'a>),
}

impl<'a> FieldRef<'a> {
    #[inline(always)]
    pub(crate) fn new(plan: &'a FieldPlan, data: &'a [u8], pos: usize) -> FieldRef<'a> {
        if plan.borrowable {
            FieldRef::Value(scalar_ref(plan, data, pos))
        } else {
            FieldRef::Lazy(LazyField { plan, data, pos })
        }
    }

    /// The borrowed value, when the field is not lazy.
    #[inline]
    pub fn as_value_ref(&self) -> Option<ValueRef<'a>> {
        match self {
            FieldRef::Value(value) => Some(*value),
            FieldRef::Lazy(_) => None,
        }
    }

    /// The owned value.
    ///
    /// # Errors
    /// When a yson32 payload inside is not valid YSON.
    pub fn to_value(&self) -> Result<Value, SkiffError> {
        match self {
            FieldRef::Value(value) => value_ref_to_value(*value),
            FieldRef::Lazy(lazy) => lazy.to_value(),
        }
    }
}

fn value_ref_to_value(value: ValueRef<'_>) -> Result<Value, SkiffError> {
    Ok(match value {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(b) => Value::Bool(b),
        ValueRef::Int64(v) => Value::Int64(v),
        ValueRef::Uint64(v) => Value::Uint64(v),
        ValueRef::Double(v) => Value::Double(v),
        ValueRef::String(s) => Value::String(s.to_vec()),
        ValueRef::Any(bytes) | ValueRef::Composite(bytes) => {
            Value::Any(super::yson_bridge::parse(bytes)?)
        }
    })
}

/// Reads a simple fixed-width scalar (never string, yson, variant or wide) of the fixed prefix.
///
/// Only called for [`FastColumn`](super::plan::FastColumn)s marked `direct`: such a column lies
/// in the table's fixed prefix, so `at + width <= prefix end`, and a [`RowView`] exists only for
/// a row the scanner found to be at least that long (a block scan passes the prefix itself,
/// sliced to the prefix's length). That invariant is what makes the
/// unchecked loads below sound; it is also asserted in debug builds.
#[inline(always)]
pub(crate) fn read_direct(kind: Kind, row: &[u8], at: usize) -> ValueRef<'_> {
    #[inline(always)]
    fn load<const N: usize>(row: &[u8], at: usize) -> [u8; N] {
        debug_assert!(at + N <= row.len());
        // SAFETY: `at + N <= row.len()` by the fixed-prefix invariant documented above.
        unsafe { std::ptr::read_unaligned(row.as_ptr().add(at) as *const [u8; N]) }
    }
    match kind {
        Kind::I8 => ValueRef::Int64(i8::from_le_bytes(load::<1>(row, at)) as i64),
        Kind::I16 => ValueRef::Int64(i16::from_le_bytes(load::<2>(row, at)) as i64),
        Kind::I32 => ValueRef::Int64(i32::from_le_bytes(load::<4>(row, at)) as i64),
        Kind::I64 => ValueRef::Int64(i64::from_le_bytes(load::<8>(row, at))),
        Kind::U8 => ValueRef::Uint64(u8::from_le_bytes(load::<1>(row, at)) as u64),
        Kind::U16 => ValueRef::Uint64(u16::from_le_bytes(load::<2>(row, at)) as u64),
        Kind::U32 => ValueRef::Uint64(u32::from_le_bytes(load::<4>(row, at)) as u64),
        Kind::U64 => ValueRef::Uint64(u64::from_le_bytes(load::<8>(row, at))),
        Kind::Double => ValueRef::Double(f64::from_le_bytes(load::<8>(row, at))),
        Kind::Bool => ValueRef::Bool(load::<1>(row, at)[0] == 1),
        _ => ValueRef::Null,
    }
}

/// A composite (or wide) value still in Skiff bytes: a cursor over a validated sub-slice.
#[derive(Clone, Copy, Debug)]
pub struct LazyField<'a> {
    plan: &'a FieldPlan,
    data: &'a [u8],
    pos: usize,
}

impl<'a> LazyField<'a> {
    /// The plan, the validated bytes and where the value starts in them.
    #[inline]
    pub(crate) fn parts(&self) -> (&'a FieldPlan, &'a [u8], usize) {
        (self.plan, self.data, self.pos)
    }

    /// The compiled schema node of this value.
    pub fn plan(&self) -> &'a FieldPlan {
        self.plan
    }

    /// The value's Skiff bytes.
    pub fn bytes(&self) -> &'a [u8] {
        let end = skip(self.plan, self.data, self.pos).unwrap_or(self.pos);
        &self.data[self.pos..end]
    }

    /// The owned value.
    ///
    /// # Errors
    /// When a yson32 payload inside is not valid YSON.
    pub fn to_value(&self) -> Result<Value, SkiffError> {
        decode(self.plan, self.data, self.pos).map(|(value, _)| value)
    }

    /// A tuple's (struct's) children in order; empty for other wire types.
    pub fn tuple_fields(&self) -> TupleFields<'a> {
        TupleFields {
            plan: self.plan,
            data: self.data,
            pos: self.pos,
            next_child: if self.plan.kind == Kind::Tuple {
                0
            } else {
                usize::MAX
            },
        }
    }

    /// A variant's (or optional's) tag and alternative; `None` for other wire types.
    pub fn variant(&self) -> Option<(u16, FieldRef<'a>)> {
        let (tag, at) = match self.plan.kind {
            Kind::Variant8 => (self.data[self.pos] as u16, self.pos + 1),
            Kind::Variant16 => (read_u16(self.data, self.pos), self.pos + 2),
            _ => return None,
        };
        let child = &self.plan.children[tag as usize];
        Some((tag, FieldRef::new(child, self.data, at)))
    }

    /// A repeated variant's (list's, dict's) `(tag, item)` pairs; empty for other wire types.
    pub fn repeated(&self) -> RepeatedItems<'a> {
        RepeatedItems {
            plan: self.plan,
            data: self.data,
            pos: self.pos,
            done: !matches!(self.plan.kind, Kind::Repeated8 | Kind::Repeated16),
        }
    }
}

/// Iterator over a tuple's fields (see [`LazyField::tuple_fields`]).
pub struct TupleFields<'a> {
    plan: &'a FieldPlan,
    data: &'a [u8],
    pos: usize,
    next_child: usize,
}

impl<'a> Iterator for TupleFields<'a> {
    type Item = FieldRef<'a>;

    fn next(&mut self) -> Option<FieldRef<'a>> {
        let child = self.plan.children.get(self.next_child)?;
        let field = FieldRef::new(child, self.data, self.pos);
        self.pos = skip(child, self.data, self.pos).unwrap_or(self.data.len());
        self.next_child += 1;
        Some(field)
    }
}

/// Iterator over a repeated variant's items (see [`LazyField::repeated`]).
pub struct RepeatedItems<'a> {
    plan: &'a FieldPlan,
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Iterator for RepeatedItems<'a> {
    type Item = (u16, FieldRef<'a>);

    fn next(&mut self) -> Option<(u16, FieldRef<'a>)> {
        if self.done {
            return None;
        }
        let (tag, at) = if self.plan.kind == Kind::Repeated8 {
            let tag = self.data[self.pos];
            (
                if tag == u8::MAX { u16::MAX } else { tag as u16 },
                self.pos + 1,
            )
        } else {
            (read_u16(self.data, self.pos), self.pos + 2)
        };
        if tag == u16::MAX {
            self.done = true;
            return None;
        }
        let child = &self.plan.children[tag as usize];
        let field = FieldRef::new(child, self.data, at);
        self.pos = skip(child, self.data, at).unwrap_or(self.data.len());
        Some((tag, field))
    }
}

/// A borrowed, validated row. Field access reads bytes in place.
#[derive(Clone, Copy, Debug)]
pub struct RowView<'a> {
    pub(crate) row: &'a [u8],
    pub(crate) table: &'a TablePlan,
    pub(crate) table_index: u16,
    /// Row-relative offsets of the children after the fixed prefix, and the row end.
    pub(crate) variable_offsets: &'a [u32],
    pub(crate) row_index: Option<i64>,
    pub(crate) stream_offset: u64,
}

impl<'a> RowView<'a> {
    #[inline]
    pub fn table_index(&self) -> u16 {
        self.table_index
    }

    /// The plan of this row's table (column names, fixed offsets, ...).
    pub fn table(&self) -> &'a TablePlan {
        self.table
    }

    /// The row's bytes, table index included: write them out to copy the row unchanged.
    pub fn raw(&self) -> &'a [u8] {
        self.row
    }

    /// Byte offset of the row in the input.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.stream_offset
    }

    /// Number of data columns.
    pub fn len(&self) -> usize {
        self.table.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.columns.is_empty()
    }

    #[inline(always)]
    fn child_offset(&self, child: usize) -> usize {
        let prefix = self.table.fixed_prefix;
        if child < prefix {
            self.table.prefix_offsets[child] as usize
        } else {
            self.variable_offsets[child - prefix] as usize
        }
    }

    #[inline(always)]
    fn child(&self, child: usize) -> FieldRef<'a> {
        FieldRef::new(
            &self.table.fields[child],
            self.row,
            self.child_offset(child),
        )
    }

    /// Data column `column`, or `None` past the last column.
    #[inline]
    pub fn get(&self, column: usize) -> Option<FieldRef<'a>> {
        let fast = self.table.fast.get(column)?;
        if fast.direct {
            return Some(FieldRef::Value(read_direct(
                fast.kind,
                self.row,
                fast.offset as usize,
            )));
        }
        Some(self.child(self.table.columns[column]))
    }

    /// Data column `column` as a borrowed value, when it is not lazy.
    #[inline]
    pub fn value_ref(&self, column: usize) -> Option<ValueRef<'a>> {
        let fast = self.table.fast.get(column)?;
        if fast.direct {
            return Some(read_direct(fast.kind, self.row, fast.offset as usize));
        }
        self.get(column)?.as_value_ref()
    }

    /// The data column named `name`.
    pub fn get_by_name(&self, name: &str) -> Option<FieldRef<'a>> {
        self.get(self.table.column_index(name)?)
    }

    /// All data columns in order.
    pub fn fields(&self) -> impl Iterator<Item = FieldRef<'a>> + '_ {
        self.table
            .columns
            .iter()
            .map(move |&child| self.child(child))
    }

    /// Calls `f(column, value)` for every data column, in order, with the borrowed value of
    /// each non-lazy field (lazy ones are skipped). The fastest way through a row: scalars of
    /// the fixed prefix are read straight from their precomputed offsets.
    #[inline]
    pub fn for_each_value(&self, mut f: impl FnMut(usize, ValueRef<'a>)) {
        let table = self.table;
        for (column, fast) in table.fast.iter().enumerate() {
            if fast.direct {
                f(
                    column,
                    read_direct(fast.kind, self.row, fast.offset as usize),
                );
            } else {
                let plan = &table.fields[table.columns[column]];
                if plan.borrowable {
                    f(
                        column,
                        scalar_ref(plan, self.row, self.child_offset(table.columns[column])),
                    );
                }
            }
        }
    }

    /// Every data column as a borrowed value, in order, for a row whose columns are all
    /// borrowable (a lazy column gives `Null`). The iterator has an exact, trusted length,
    /// so `Vec::extend` writes the values without a capacity check per value.
    #[inline]
    pub(crate) fn borrowed_values(&self) -> impl Iterator<Item = ValueRef<'a>> + '_ {
        let table = self.table;
        table
            .fast
            .iter()
            .zip(&table.columns)
            .map(move |(fast, &child)| {
                if fast.direct {
                    read_direct(fast.kind, self.row, fast.offset as usize)
                } else {
                    let plan = &table.fields[child];
                    if plan.borrowable {
                        scalar_ref(plan, self.row, self.child_offset(child))
                    } else {
                        ValueRef::Null
                    }
                }
            })
    }

    #[inline]
    pub fn key_switch(&self) -> bool {
        self.table
            .system
            .key_switch
            .is_some_and(|child| self.row[self.child_offset(child)] == 1)
    }

    /// `$row_index`, resolved against the previous row's index.
    #[inline]
    pub fn row_index(&self) -> Option<i64> {
        self.row_index
    }

    #[inline]
    pub fn range_index(&self) -> Option<i64> {
        let child = self.table.system.range_index?;
        let at = self.child_offset(child);
        (self.row[at] == 1).then(|| read_u64(self.row, at + 1) as i64)
    }

    /// The `$other_columns` bytes (a YSON map).
    pub fn other_columns(&self) -> Option<&'a [u8]> {
        let child = self.table.system.other_columns?;
        Some(read_bytes32(self.row, self.child_offset(child)))
    }

    /// The `$sparse_columns` present in this row: `(index among sparse columns, name, value)`.
    pub fn sparse(&self) -> impl Iterator<Item = (u16, &'a str, FieldRef<'a>)> + 'a {
        let items = self.table.system.sparse.map(|child| {
            LazyField {
                plan: &self.table.fields[child],
                data: self.row,
                pos: self.child_offset(child),
            }
            .repeated()
        });
        let table = self.table;
        items.into_iter().flatten().map(move |(tag, field)| {
            let sparse = &table.fields[table.system.sparse.unwrap_or(0)];
            (tag, sparse.children[tag as usize].name.as_str(), field)
        })
    }

    /// The data columns as owned values.
    ///
    /// # Errors
    /// When a yson32 payload is not valid YSON.
    pub fn to_values(&self) -> Result<Vec<Value>, SkiffError> {
        let mut values = Vec::with_capacity(self.table.columns.len());
        for (column, (&child, fast)) in self.table.columns.iter().zip(&self.table.fast).enumerate()
        {
            if fast.direct {
                values.push(
                    match read_direct(fast.kind, self.row, fast.offset as usize) {
                        ValueRef::Bool(b) => Value::Bool(b),
                        ValueRef::Int64(v) => Value::Int64(v),
                        ValueRef::Uint64(v) => Value::Uint64(v),
                        ValueRef::Double(v) => Value::Double(v),
                        _ => Value::Null,
                    },
                );
                continue;
            }
            let value = decode(
                &self.table.fields[child],
                self.row,
                self.child_offset(child),
            )
            .map_err(|e| {
                e.in_column(self.table.column_name(column))
                    .at(self.stream_offset)
            })?;
            values.push(value.0);
        }
        Ok(values)
    }

    /// The whole row, owned.
    ///
    /// # Errors
    /// When a yson32 payload is not valid YSON.
    pub fn to_owned_row(&self) -> Result<OwnedRow, SkiffError> {
        let mut sparse = Vec::new();
        for (tag, _, field) in self.sparse() {
            sparse.push((tag, field.to_value()?));
        }
        Ok(OwnedRow {
            table_index: self.table_index,
            values: self.to_values()?,
            system: SystemFields {
                key_switch: self.key_switch(),
                row_index: self.row_index,
                range_index: self.range_index(),
                sparse,
                other_columns: self.other_columns().map(<[u8]>::to_vec),
            },
        })
    }

    /// A copy of the row's bytes that can be edited in place.
    pub fn to_buffer(&self) -> RowBuffer {
        let mut buffer = RowBuffer::default();
        self.copy_into(&mut buffer);
        buffer
    }

    /// Copies the row into `buffer`, reusing its allocations (the loop form of
    /// [`RowView::to_buffer`]: read, patch, write, next).
    pub fn copy_into(&self, buffer: &mut RowBuffer) {
        let children = self.table.fields.len();
        buffer.table_index = self.table_index;
        buffer.bytes.clear();
        buffer.bytes.extend_from_slice(self.row);
        buffer.offsets.clear();
        buffer
            .offsets
            .extend((0..children).map(|child| self.child_offset(child) as u32));
        buffer.offsets.push(self.row.len() as u32);
    }
}

/// A row's bytes, owned and editable: patch fixed-size fields in place, append a trailing
/// column, then write [`RowBuffer::as_bytes`] out as is.
#[derive(Clone, Debug, Default)]
pub struct RowBuffer {
    table_index: u16,
    bytes: Vec<u8>,
    /// Row-relative offset of every child of the table's tuple, then the row end.
    offsets: Vec<u32>,
    /// Reused by `patch` for the encoded value.
    scratch: Vec<u8>,
}

impl PartialEq for RowBuffer {
    fn eq(&self, other: &RowBuffer) -> bool {
        self.table_index == other.table_index
            && self.bytes == other.bytes
            && self.offsets == other.offsets
    }
}

impl Eq for RowBuffer {}

impl RowBuffer {
    pub fn table_index(&self) -> u16 {
        self.table_index
    }

    /// The row's bytes, table index included.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Overwrites data column `column` of `table` (the table this row belongs to) with `value`.
    /// Only fixed-size fields can be patched; the row keeps its length.
    ///
    /// # Errors
    /// A value error when the column does not exist, is not fixed-size, or `value` does not fit.
    pub fn patch(
        &mut self,
        table: &TablePlan,
        column: usize,
        value: &Value,
    ) -> Result<(), SkiffError> {
        let child = *table
            .columns
            .get(column)
            .ok_or_else(|| SkiffError::value(format!("no column {column} to patch")))?;
        let plan = &table.fields[child];
        let name = plan.name.as_str();
        let size = plan.fixed_size().ok_or_else(|| {
            SkiffError::value("only fixed-size fields can be patched in place").in_column(name)
        })?;
        let start = self.offsets.get(child).copied().unwrap_or(0) as usize;
        self.scratch.clear();
        encode_value(plan, value, &mut self.scratch).map_err(|e| e.in_column(name))?;
        if self.scratch.len() != size || start + size > self.bytes.len() {
            return Err(SkiffError::value("patched field changed size").in_column(name));
        }
        self.bytes[start..start + size].copy_from_slice(&self.scratch);
        Ok(())
    }

    /// Appends `value` encoded by `plan` at the end of the row: the row then matches a schema
    /// with that column added last (put it before `$other_columns` yourself if there is one).
    ///
    /// # Errors
    /// A value error when `value` does not fit `plan`.
    pub fn append(&mut self, plan: &FieldPlan, value: &Value) -> Result<(), SkiffError> {
        let before = self.bytes.len();
        if let Err(error) = encode_value(plan, value, &mut self.bytes) {
            self.bytes.truncate(before);
            return Err(error.in_column(plan.name()));
        }
        self.offsets.push(self.bytes.len() as u32);
        Ok(())
    }
}
