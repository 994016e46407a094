//! Block scans: scanning a row and handing out its values in one pass, for the row blocks of
//! the common interface.
//!
//! The general readers scan a row first (validating it and recording where its variable-size
//! children start, `reader.rs`) and read its fields afterwards through a [`crate::skiff::RowView`];
//! composite fields are walked a second time to re-spell them as binary YSON. A
//! [`BlockScan`] compiled once per table does it all at once: the leading fixed-size scalars
//! are checked once per row and read at fixed offsets, and every child after them is
//! validated and read by one [`Step`] — a scalar or string read in place, a composite
//! re-spelled as binary YSON by the validating walk of `binary_yson.rs`, a position field
//! (`$key_switch`, `$row_index`, `$range_index`) checked against the block's position, another
//! system field stepped over. No offsets are stored and nothing is walked twice.
//!
//! Invariant: [`BlockScan::scan_row`] hands out values only for a row it accepts whole, and it
//! accepts exactly the rows the general scanner (`scan.rs`) accepts for the same table: every
//! length in bounds, every boolean 0 or 1, every tag naming a child, system fields checked by
//! the general `skip`. A row it refuses (cut off by the end of the buffer, malformed, of
//! another table, or not continuing the block's position: a key switch, another range, a row
//! index that is not the previous plus one) leaves its outputs as they were; the caller ends its block there and lets
//! the row-by-row path refill or report the row with its offset, row and column. Columns
//! whose conversion could fail on bytes the scanner accepts (a yson payload inside a
//! composite, a decimal, a wide integer) have no step, and their tables no block scan: so a
//! block's first row, already accepted by the scanner, is always read.

use shapeshift_types::{TableSchema, Type, ValueRef};

use super::binary_yson::transcode;
use super::borrowed::read_value;
use crate::skiff::plan::{FieldPlan, Kind, TablePlan, ValueShape};
use crate::skiff::reader::{BlockEnd, BlockStart};
use crate::skiff::row::read_direct;
use crate::skiff::scan::{read_u16, read_u64, skip};
use crate::table::values::ColumnKind;

/// One child after the leading fixed-size scalars, as a block scan reads it.
#[derive(Clone, Debug)]
enum Step {
    /// A data column: a scalar, string or yson of kind `kind`; `optional` when it is a
    /// `variant8<nothing; T>` (tag 0 is null, tag 1 the value).
    Value { kind: Kind, optional: bool },
    /// A composite data column of type `ty`, handed out as binary YSON (`Any` when the
    /// column is `optional<yson>`-like, else `Composite`; `Null` for an absent optional).
    Composite {
        plan: Box<FieldPlan>,
        ty: Type,
        yson: bool,
    },
    /// `$key_switch`: a boolean, which only a block's first row may have set.
    KeySwitch,
    /// `$row_index` (`variant8<nothing; int64>`, or with a third alternative, `has_missing`,
    /// for no index): each row after a block's first must have the previous one's plus one.
    RowIndex { has_missing: bool },
    /// `$range_index` (`variant8<nothing; int64>`): the same in every row of a block.
    RangeIndex,
    /// A system field the block does not hand out (`$other_columns`, `$sparse_columns`):
    /// validated by the general scanner and stepped over.
    Skip { child: usize },
}

/// The position the rows of a block continue (see [`crate::table::RowBlock`]), as a block
/// scan checks it: a row that does not continue it ends the block, like a malformed one.
pub(crate) struct BlockPosition {
    /// The row being scanned is the block's first: its position is the block's, unchecked.
    pub first: bool,
    /// The resolved row index of the last row accepted (for the first row: its own).
    pub row_index: Option<i64>,
    /// The block's range index.
    pub range_index: Option<i64>,
}

/// The compiled one-pass scan of one table (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct BlockScan {
    /// Where the leading fixed-size scalars end (row-relative, table index included).
    prefix_end: usize,
    /// Row-relative offsets of the boolean bytes before `prefix_end`.
    prefix_booleans: Vec<u32>,
    /// The data columns before `prefix_end`: row-relative offset and kind.
    prefix_columns: Vec<(u32, Kind)>,
    /// The children from `prefix_end` on, in order.
    steps: Vec<Step>,
}

/// Where a block scan puts a row's composite values: their binary YSON one after another in
/// `bytes`, and per value `(index in the block's values, start, end)` in `bytes`, to be
/// patched into the values once the block is complete (`bytes` may move as it grows).
pub(crate) struct CompositeOut<'o> {
    pub bytes: &'o mut Vec<u8>,
    pub spans: &'o mut Vec<(usize, usize, usize, bool)>,
}

impl BlockScan {
    /// Reads up to `max_rows` rows (at least the first, which the general scanner accepted)
    /// of the block that starts at `start`, appending their values to `out` row after row and
    /// their composite values to `composites`; ends before the first row it refuses (see the
    /// module docs). For [`crate::skiff::StreamReader::scan_block`]: `None` only if the first
    /// row is refused, a broken invariant for the caller to report rather than loop on.
    pub(crate) fn scan_block<'s>(
        &self,
        start: BlockStart<'s>,
        max_rows: usize,
        out: &mut Vec<ValueRef<'s>>,
        composites: &mut CompositeOut<'_>,
    ) -> Option<BlockEnd> {
        let mut position = BlockPosition {
            first: true,
            row_index: start.first.row_index(),
            range_index: start.first.range_index(),
        };
        let mut pos = start.first_start;
        let mut rows = 0;
        while rows < max_rows && pos < start.data.len() {
            match self.scan_row(
                start.table,
                start.table_index,
                start.data,
                pos,
                out,
                composites,
                &mut position,
            ) {
                Some(row_end) => {
                    pos = row_end;
                    rows += 1;
                }
                None => break,
            }
        }
        (rows > 0).then_some(BlockEnd {
            rows,
            end: pos,
            last_row_index: position.row_index,
        })
    }

    /// The block scan of `table` (compiled with column types `types`), when it has one: a
    /// step for every data column (see the module docs).
    pub(crate) fn compile(table: &TablePlan, types: Option<&TableSchema>) -> Option<BlockScan> {
        let system = &table.system;
        let position_step = |child: usize| {
            if system.key_switch == Some(child) {
                Some(Step::KeySwitch)
            } else if system.row_index == Some(child) {
                Some(Step::RowIndex {
                    has_missing: system.row_index_has_missing,
                })
            } else if system.range_index == Some(child) {
                Some(Step::RangeIndex)
            } else {
                None
            }
        };
        // The leading children of the fixed prefix that are direct scalars (or system fields
        // other than the position's); from the first other one on, every child takes a step.
        let mut leading = 0;
        let mut column = 0;
        for (child, _) in table.fields.iter().enumerate().take(table.fixed_prefix) {
            if position_step(child).is_some() {
                break;
            }
            if table.columns.get(column) == Some(&child) {
                if !table.fast[column].direct {
                    break;
                }
                column += 1;
            }
            leading += 1;
        }
        let prefix_end = table.prefix_offsets[leading];
        let prefix_columns = table.fast[..column]
            .iter()
            .map(|fast| (fast.offset, fast.kind))
            .collect();
        let mut steps = Vec::new();
        for (child, field) in table.fields.iter().enumerate().skip(leading) {
            steps.push(if table.columns.get(column) == Some(&child) {
                column += 1;
                let ty = types
                    .and_then(|t| t.columns.iter().find(|c| c.name == field.name))
                    .map(|c| &c.ty);
                value_step(field, ty)?
            } else if let Some(step) = position_step(child) {
                step
            } else {
                Step::Skip { child }
            });
        }
        Some(BlockScan {
            prefix_end: prefix_end as usize,
            prefix_booleans: table
                .prefix_booleans
                .iter()
                .copied()
                .filter(|&offset| offset < prefix_end)
                .collect(),
            prefix_columns,
            steps,
        })
    }

    /// Scans the row of table `table_index` at `data[start..]`, appends its values to `out`
    /// (composites as placeholders, see [`CompositeOut`]); returns the row's end. `None`, and
    /// every output as it was, for a row that is cut off, malformed or of another table (see
    /// the module docs).
    #[inline(always)]
    pub(crate) fn scan_row<'a>(
        &self,
        table: &TablePlan,
        table_index: u16,
        data: &'a [u8],
        start: usize,
        out: &mut Vec<ValueRef<'a>>,
        composites: &mut CompositeOut<'_>,
        position: &mut BlockPosition,
    ) -> Option<usize> {
        let row = data.get(start..start.checked_add(self.prefix_end)?)?;
        if read_u16(row, 0) != table_index {
            return None;
        }
        for &offset in &self.prefix_booleans {
            if row[offset as usize] > 1 {
                return None;
            }
        }
        let mark = out.len();
        // An exact-length iterator: `extend` checks the capacity once, not per value.
        out.extend(
            self.prefix_columns
                .iter()
                .map(|&(offset, kind)| read_direct(kind, row, offset as usize)),
        );
        let bytes_mark = composites.bytes.len();
        let spans_mark = composites.spans.len();
        let mut pos = start + self.prefix_end;
        for step in &self.steps {
            let next = match step {
                Step::Value { kind, optional } => value(*kind, *optional, data, pos, out),
                Step::Composite { plan, ty, yson } => {
                    composite(plan, ty, *yson, data, pos, out, composites)
                }
                // (No `?` in these arms: a refused row must reach the rollback below.)
                Step::KeySwitch => key_switch(data, pos, position),
                Step::RowIndex { has_missing } => row_index(*has_missing, data, pos, position),
                Step::RangeIndex => range_index(data, pos, position),
                Step::Skip { child } => skip(&table.fields[*child], data, pos).ok(),
            };
            match next {
                Some(next) => pos = next,
                None => {
                    out.truncate(mark);
                    composites.bytes.truncate(bytes_mark);
                    composites.spans.truncate(spans_mark);
                    return None;
                }
            }
        }
        if !position.first {
            position.row_index = position.row_index.and_then(|index| index.checked_add(1));
        }
        position.first = false;
        Some(pos)
    }
}

/// Steps over `$key_switch` at `data[pos..]`; `None` when it is malformed or set after a
/// block's first row.
#[inline]
fn key_switch(data: &[u8], pos: usize, position: &BlockPosition) -> Option<usize> {
    match *data.get(pos)? {
        0 => Some(pos + 1),
        1 if position.first => Some(pos + 1),
        _ => None,
    }
}

/// Steps over `$row_index` at `data[pos..]`; `None` when it is malformed or, after a block's
/// first row, is not the previous row's index plus one (resolved as the row-by-row reader
/// does: tag 0 is the previous plus one, tag 1 the number, tag 2 none).
#[inline]
fn row_index(
    has_missing: bool,
    data: &[u8],
    pos: usize,
    position: &BlockPosition,
) -> Option<usize> {
    let next = position.row_index.and_then(|index| index.checked_add(1));
    let (index, end) = match *data.get(pos)? {
        0 => (next, pos + 1),
        1 => (
            Some(read_u64(data.get(pos + 1..pos + 9)?, 0) as i64),
            pos + 9,
        ),
        2 if has_missing => (None, pos + 1),
        _ => return None,
    };
    (position.first || index == next).then_some(end)
}

/// Steps over `$range_index` at `data[pos..]`; `None` when it is malformed or, after a
/// block's first row, differs from the block's.
#[inline]
fn range_index(data: &[u8], pos: usize, position: &BlockPosition) -> Option<usize> {
    let (range, end) = match *data.get(pos)? {
        0 => (None, pos + 1),
        1 => (
            Some(read_u64(data.get(pos + 1..pos + 9)?, 0) as i64),
            pos + 9,
        ),
        _ => return None,
    };
    (position.first || range == position.range_index).then_some(end)
}

/// Re-spells the composite at `data[pos..]` into `composites` and pushes its placeholder
/// (`Null` for an absent optional, which needs none); returns where it ends.
#[inline]
fn composite<'a>(
    plan: &FieldPlan,
    ty: &Type,
    yson: bool,
    data: &'a [u8],
    pos: usize,
    out: &mut Vec<ValueRef<'a>>,
    composites: &mut CompositeOut<'_>,
) -> Option<usize> {
    let start = composites.bytes.len();
    let end = transcode(plan, ty, data, pos, composites.bytes).ok()?;
    // An absent optional (tag 0 of a nullable column's variant) is the row's null.
    let absent = ty.is_nullable() && plan.kind == Kind::Variant8 && data[pos] == 0;
    if absent {
        composites.bytes.truncate(start);
    } else {
        composites
            .spans
            .push((out.len(), start, composites.bytes.len(), yson));
    }
    out.push(ValueRef::Null);
    Some(end)
}

/// Reads and pushes the value of a data column at `data[pos..]`; returns where it ends, or
/// `None` when it is cut off or malformed.
#[inline(always)]
fn value<'a>(
    kind: Kind,
    optional: bool,
    data: &'a [u8],
    pos: usize,
    out: &mut Vec<ValueRef<'a>>,
) -> Option<usize> {
    let pos = if optional {
        match *data.get(pos)? {
            0 => {
                out.push(ValueRef::Null);
                return Some(pos + 1);
            }
            1 => pos + 1,
            _ => return None,
        }
    } else {
        pos
    };
    let (value, end) = read_value(kind, data, pos)?;
    out.push(value);
    Some(end)
}

/// The step of a data column after the fixed prefix; `None` for a column a block scan does
/// not read (wide integers, decimals, yson inside a composite: values whose conversion can
/// fail on bytes the scanner accepts).
fn value_step(field: &FieldPlan, ty: Option<&Type>) -> Option<Step> {
    if !field.borrowable {
        let ty = ty?;
        if !transcodes_surely(field, ty) {
            return None;
        }
        return Some(Step::Composite {
            plan: Box::new(field.clone()),
            ty: ty.clone(),
            yson: ColumnKind::of(ty) == ColumnKind::Yson,
        });
    }
    let (kind, optional) = match field.shape {
        ValueShape::Scalar => (field.kind, false),
        ValueShape::Optional { .. } if field.kind == Kind::Variant8 => {
            (field.children.get(1)?.kind, true)
        }
        _ => return None,
    };
    readable(kind).then_some(Step::Value { kind, optional })
}

/// Whether [`read_value`] reads values of `kind`.
fn readable(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Nothing
            | Kind::Bool
            | Kind::I8
            | Kind::I16
            | Kind::I32
            | Kind::I64
            | Kind::U8
            | Kind::U16
            | Kind::U32
            | Kind::U64
            | Kind::Double
            | Kind::String32
            | Kind::Yson32
    )
}

/// Whether re-spelling a value of `plan` and column type `ty` as binary YSON
/// ([`transcode`]) can fail only on bytes the scanner refuses: every leaf a borrowed scalar
/// or string (no yson payload to parse, no wide integer or decimal to convert), every
/// composite of the shape its type expects. So a block's first row, which the scanner has
/// accepted, is always read whole.
fn transcodes_surely(plan: &FieldPlan, ty: &Type) -> bool {
    if plan.borrowable {
        let leaf = match plan.kind {
            Kind::Variant8 => plan.children.get(1).map(|c| c.kind),
            kind => Some(kind),
        };
        return leaf.is_some_and(|kind| readable(kind) && kind != Kind::Yson32);
    }
    let children = &plan.children;
    match ty.untagged() {
        Type::Optional(item) => {
            plan.kind == Kind::Variant8
                && children.len() == 2
                && children[0].kind == Kind::Nothing
                && transcodes_surely(&children[1], item)
        }
        Type::List(item) => {
            matches!(plan.kind, Kind::Repeated8 | Kind::Repeated16)
                && children.len() == 1
                && transcodes_surely(&children[0], item)
        }
        Type::Dict { key, value } => {
            matches!(plan.kind, Kind::Repeated8 | Kind::Repeated16)
                && children.len() == 1
                && children[0].kind == Kind::Tuple
                && children[0].children.len() == 2
                && transcodes_surely(&children[0].children[0], key)
                && transcodes_surely(&children[0].children[1], value)
        }
        Type::Struct(members) => {
            plan.kind == Kind::Tuple
                && children.len() == members.len()
                && members
                    .iter()
                    .zip(children)
                    .all(|(m, c)| transcodes_surely(c, &m.ty))
        }
        Type::Tuple(elements) => {
            plan.kind == Kind::Tuple
                && children.len() == elements.len()
                && elements
                    .iter()
                    .zip(children)
                    .all(|(e, c)| transcodes_surely(c, e))
        }
        Type::VariantStruct(members) => {
            matches!(plan.kind, Kind::Variant8 | Kind::Variant16)
                && children.len() == members.len()
                && members
                    .iter()
                    .zip(children)
                    .all(|(m, c)| transcodes_surely(c, &m.ty))
        }
        Type::VariantTuple(elements) => {
            matches!(plan.kind, Kind::Variant8 | Kind::Variant16)
                && children.len() == elements.len()
                && elements
                    .iter()
                    .zip(children)
                    .all(|(e, c)| transcodes_surely(c, e))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type};

    use crate::skiff::{Codec, MappingOptions};

    fn has_block_scan(columns: Vec<(&str, Type)>, options: &MappingOptions) -> bool {
        let schema = TableSchema::new(
            columns
                .into_iter()
                .map(|(name, ty)| ColumnSchema::new(name, ty))
                .collect(),
        );
        let codec = Codec::for_table_schemas(std::slice::from_ref(&schema), options).unwrap();
        super::BlockScan::compile(codec.table(0).unwrap(), Some(&schema)).is_some()
    }

    #[test]
    fn tables_of_scalars_strings_and_plain_composites_have_a_block_scan() {
        let plain = MappingOptions::default();
        let p = Type::Primitive;
        assert!(has_block_scan(
            vec![("id", p(P::Uint32)), ("data", p(P::String))],
            &plain
        ));
        assert!(has_block_scan(
            vec![
                ("maybe", Type::optional(p(P::String))),
                ("values", Type::list(p(P::Double))),
                (
                    "pair",
                    Type::Struct(vec![
                        Member::new("foo", p(P::Int32)),
                        Member::new("bar", p(P::String)),
                    ])
                ),
                ("dict", Type::dict(p(P::Int64), p(P::String))),
                ("any", p(P::Yson)),
            ],
            &plain
        ));
        // A fixed-size struct in the fixed prefix, before a scalar.
        assert!(has_block_scan(
            vec![
                (
                    "pair",
                    Type::Struct(vec![
                        Member::new("a", p(P::Int32)),
                        Member::new("b", p(P::Bool)),
                    ])
                ),
                ("n", p(P::Int64)),
            ],
            &plain
        ));
    }

    #[test]
    fn conversions_that_can_fail_have_none() {
        let plain = MappingOptions::default();
        let p = Type::Primitive;
        // A yson payload inside a composite must be parsed; a decimal converted.
        assert!(!has_block_scan(
            vec![("items", Type::list(p(P::Yson)))],
            &plain
        ));
        assert!(!has_block_scan(
            vec![(
                "price",
                Type::Decimal {
                    precision: 10,
                    scale: 2
                }
            )],
            &plain
        ));
    }

    #[test]
    fn position_fields_are_steps() {
        let system = MappingOptions {
            key_switch: true,
            row_index: true,
            range_index: true,
            ..MappingOptions::default()
        };
        let p = Type::Primitive;
        assert!(has_block_scan(
            vec![("id", p(P::Int64)), ("name", p(P::String))],
            &system
        ));
    }
}
