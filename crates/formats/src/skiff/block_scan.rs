//! Block scans: scanning a row and handing out its values in one pass, for the row blocks of
//! the common interface.
//!
//! The general readers scan a row first (validating it and recording where its variable-size
//! children start, `reader.rs`) and read its fields afterwards through a [`super::RowView`].
//! For a table whose every data column is a borrowed value (scalars, strings, yson, optionals
//! of those) and whose rows carry no position (no `$key_switch`, `$row_index`,
//! `$range_index`), a [`BlockScan`] compiled once per table does both at once: the fixed
//! prefix is checked once per row and its columns read at fixed offsets, and every child
//! after it is validated and read by one [`Step`] (no offsets are stored, no wire type is
//! matched through the general plan tree).
//!
//! Invariant: [`BlockScan::scan_row`] pushes values only for a row it accepts whole, and it
//! accepts exactly the rows the general scanner (`scan.rs`) accepts for the same table: every
//! length in bounds, every boolean 0 or 1, every optional tag 0 or 1, other children checked
//! by the general `skip`. A row it refuses (cut off by the end of the buffer, malformed, or of
//! another table) leaves `out` as it was; the caller ends its block there and lets the
//! row-by-row path refill or report the row with its offset, row and column.

use shapeshift_types::ValueRef;

use super::plan::{FieldPlan, Kind, TablePlan, ValueShape};
use super::row::read_direct;
use super::scan::{read_u16, read_u32, read_u64, skip};

/// One child after the fixed prefix, as a block scan reads it.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A data column: a scalar, string or yson of kind `kind`; `optional` when it is a
    /// `variant8<nothing; T>` (tag 0 is null, tag 1 the value).
    Value { kind: Kind, optional: bool },
    /// A system field the block does not hand out (`$other_columns`, `$sparse_columns`):
    /// validated by the general scanner and stepped over.
    Skip { child: usize },
}

/// The compiled one-pass scan of one table (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct BlockScan {
    /// Where the variable part starts (row-relative, table index included).
    prefix_end: usize,
    /// Row-relative offsets of the boolean bytes of the fixed prefix.
    prefix_booleans: Vec<u32>,
    /// The data columns of the fixed prefix: row-relative offset and kind.
    prefix_columns: Vec<(u32, Kind)>,
    /// The children after the fixed prefix, in order.
    steps: Vec<Step>,
}

impl BlockScan {
    /// The block scan of `table`, when it has one: every data column borrowed, no position
    /// fields.
    pub(crate) fn compile(table: &TablePlan) -> Option<BlockScan> {
        let system = &table.system;
        if system.key_switch.is_some() || system.row_index.is_some() || system.range_index.is_some()
        {
            return None;
        }
        let mut prefix_columns = Vec::new();
        let mut steps = Vec::new();
        let mut columns = table.columns.iter().peekable();
        for (child, field) in table.fields.iter().enumerate() {
            let is_column = columns.next_if(|&&c| c == child).is_some();
            if child < table.fixed_prefix {
                if is_column {
                    let fast = table.fast[prefix_columns.len()];
                    if !fast.direct {
                        return None;
                    }
                    prefix_columns.push((fast.offset, fast.kind));
                }
                continue;
            }
            steps.push(if is_column {
                value_step(field)?
            } else {
                Step::Skip { child }
            });
        }
        Some(BlockScan {
            prefix_end: *table.prefix_offsets.last()? as usize,
            prefix_booleans: table.prefix_booleans.clone(),
            prefix_columns,
            steps,
        })
    }

    /// Scans the row of table `table_index` at `data[start..]` and appends its values to
    /// `out`; returns the row's end. `None` (and `out` unchanged) for a row that is cut off,
    /// malformed or of another table (see the module docs).
    #[inline(always)]
    pub(crate) fn scan_row<'a>(
        &self,
        table: &TablePlan,
        table_index: u16,
        data: &'a [u8],
        start: usize,
        out: &mut Vec<ValueRef<'a>>,
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
        let mut pos = start + self.prefix_end;
        for step in &self.steps {
            let next = match *step {
                Step::Value { kind, optional } => value(kind, optional, data, pos, out),
                Step::Skip { child } => skip(&table.fields[child], data, pos).ok(),
            };
            match next {
                Some(next) => pos = next,
                None => {
                    out.truncate(mark);
                    return None;
                }
            }
        }
        Some(pos)
    }
}

/// The step of a data column after the fixed prefix; `None` for a column a block scan does
/// not read (composites, wide integers, decimals).
fn value_step(field: &FieldPlan) -> Option<Step> {
    if !field.borrowable {
        return None;
    }
    let (kind, optional) = match field.shape {
        ValueShape::Scalar => (field.kind, false),
        ValueShape::Optional { .. } if field.kind == Kind::Variant8 => {
            (field.children.get(1)?.kind, true)
        }
        _ => return None,
    };
    let readable = matches!(
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
    );
    readable.then_some(Step::Value { kind, optional })
}

/// Reads and pushes the value of a data column at `data[pos..]`; returns where it ends, or
/// `None` when it is cut off or malformed.
#[inline(always)]
fn value<'a>(
    kind: Kind,
    optional: bool,
    data: &'a [u8],
    mut pos: usize,
    out: &mut Vec<ValueRef<'a>>,
) -> Option<usize> {
    if optional {
        match *data.get(pos)? {
            0 => {
                out.push(ValueRef::Null);
                return Some(pos + 1);
            }
            1 => pos += 1,
            _ => return None,
        }
    }
    let (value, end) = match kind {
        Kind::String32 | Kind::Yson32 => {
            let body = pos.checked_add(4)?;
            let length = read_u32(data.get(pos..body)?, 0) as usize;
            let end = body.checked_add(length)?;
            let bytes = data.get(body..end)?;
            let value = if kind == Kind::String32 {
                ValueRef::String(bytes)
            } else {
                ValueRef::Any(bytes)
            };
            (value, end)
        }
        Kind::Nothing => (ValueRef::Null, pos),
        Kind::Bool => match *data.get(pos)? {
            byte @ (0 | 1) => (ValueRef::Bool(byte == 1), pos + 1),
            _ => return None,
        },
        Kind::I8 => (ValueRef::Int64(*data.get(pos)? as i8 as i64), pos + 1),
        Kind::U8 => (ValueRef::Uint64(*data.get(pos)? as u64), pos + 1),
        Kind::I16 | Kind::U16 => {
            let bits = read_u16(data.get(pos..pos + 2)?, 0);
            let value = if kind == Kind::I16 {
                ValueRef::Int64(bits as i16 as i64)
            } else {
                ValueRef::Uint64(bits as u64)
            };
            (value, pos + 2)
        }
        Kind::I32 | Kind::U32 => {
            let bits = read_u32(data.get(pos..pos + 4)?, 0);
            let value = if kind == Kind::I32 {
                ValueRef::Int64(bits as i32 as i64)
            } else {
                ValueRef::Uint64(bits as u64)
            };
            (value, pos + 4)
        }
        Kind::I64 | Kind::U64 | Kind::Double => {
            let bits = read_u64(data.get(pos..pos + 8)?, 0);
            let value = match kind {
                Kind::I64 => ValueRef::Int64(bits as i64),
                Kind::U64 => ValueRef::Uint64(bits),
                _ => ValueRef::Double(f64::from_bits(bits)),
            };
            (value, pos + 8)
        }
        // `value_step` compiles no other kind.
        _ => return None,
    };
    out.push(value);
    Some(end)
}
