//! The format's own readers of a stream held in memory: rows as owned values
//! ([`RowReader`]) and items with no schema ([`ItemReader`]).

use hashbrown::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use shapeshift_types::{check_value, PrimitiveType, TableSchema, Type, Value};

use super::decode::{Record, TreeDecoder};
use super::{Dialect, Item, TreeError};
use crate::table::other_columns;
use crate::table::position::PositionReader;
use crate::table::values::{ColumnCheck, ColumnKind};
use crate::table::{FormatError, RowPosition};

/// One table of a tree-format stream: its schema and its columns' compiled checks and
/// reading plans.
pub(crate) struct TreeTable {
    pub(super) schema: TableSchema,
    pub(super) checks: Vec<ColumnCheck>,
    pub(super) plans: Vec<ScalarPlan>,
}

/// How the streaming source reads a column's common scalar items without going through the
/// general check: one comparison against bounds compiled when the source opens. The bounds
/// are `check_value`'s own (`signed_bounds`, `unsigned_bound`, found by bisection), and an
/// item a plan does not accept takes the general path, so both accept the same values and
/// errors read the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ScalarPlan {
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
    pub(super) fn of(ty: &Type, check: &ColumnCheck) -> ScalarPlan {
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
                let (lo, hi) = crate::table::values::signed_bounds(ty);
                ScalarPlan::Signed { lo, hi }
            }
            _ if accepts(Value::Uint64(0)) => ScalarPlan::Unsigned {
                hi: crate::table::values::unsigned_bound(ty),
            },
            _ => ScalarPlan::General,
        }
    }
}

/// Where reading a whole tree-format stream held in memory stands: the next record's
/// offset, the positions the control records set, the row count.
pub(super) struct TreeStream {
    pub(super) format: &'static str,
    pub(super) tables: TreeTables,
    pub(super) positions: PositionReader,
    pub(super) pos: usize,
    pub(super) rows: u64,
}

/// Every table's compiled checks and plans, shared by the sources and sinks opened over them
/// (compiled once for many one-row streams: [`crate::registry::PreparedFormat`]).
pub(crate) type TreeTables = Arc<[TreeTable]>;

/// Compiles the tables of `schemas`.
pub(crate) fn compile_tables(schemas: &[TableSchema]) -> TreeTables {
    // Compiling a check bisects the type's bounds through `check_value` (dozens of trial
    // checks, each failure a formatted message): done once per distinct type, wide tables
    // repeat a few types over many columns (BM1: 10 over 1000).
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
}

impl TreeStream {
    pub(super) fn new(format: &'static str, tables: TreeTables) -> TreeStream {
        TreeStream {
            format,
            tables,
            positions: PositionReader::default(),
            pos: 0,
            rows: 0,
        }
    }

    /// `e` (an offset into the input given) as a [`FormatError`] at its offset in the
    /// stream (`base` + offset) in the current row.
    #[cold]
    pub(super) fn fail_at(&self, base: u64, e: TreeError) -> FormatError {
        FormatError::new(self.format, e.message)
            .at(base + e.offset as u64)
            .in_row(self.rows)
    }

    #[cold]
    pub(super) fn fail(&self, e: TreeError) -> FormatError {
        self.fail_at(0, e)
    }

    #[cold]
    pub(super) fn column_fail(&self, e: TreeError, column: &str) -> FormatError {
        self.fail(e.in_column(column))
    }

    /// Reads control records up to the next row's array header: the row's table and
    /// whether it carries other columns, or `None` at the end.
    #[inline]
    pub(super) fn next_record<D: Dialect>(
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
    pub(super) fn row_head<D: Dialect>(
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

    pub(super) fn record<D: Dialect>(
        &self,
        decoder: &mut TreeDecoder<'_, D>,
    ) -> Result<Record, TreeError> {
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
    pub(super) fn other_columns<D: Dialect>(
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
    pub(super) input: &'a [u8],
    pub(super) stream: TreeStream,
    pub(super) others: Vec<u8>,
    pub(super) dialect: PhantomData<D>,
}

impl<'a, D: Dialect> RowReader<'a, D> {
    /// A reader of `input`, whose rows belong to `schemas` (table index = position).
    pub fn new(schemas: &[TableSchema], input: &'a [u8]) -> RowReader<'a, D> {
        RowReader {
            input,
            stream: TreeStream::new(D::NAME, compile_tables(schemas)),
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
    pub(super) input: &'a [u8],
    pub(super) pos: usize,
    pub(super) dialect: PhantomData<D>,
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
