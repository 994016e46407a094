//! Borrowed values read in place from a Skiff row at a byte position, for the block scan and
//! the binary-YSON walk alike.

use shapeshift_types::ValueRef;

use crate::skiff::plan::{FieldPlan, Kind};
use crate::skiff::scan::{read_u16, read_u32, read_u64};

/// The borrowed value of a borrowable plan (a scalar, string, yson, or optional of one) at
/// `data[pos..]` and where it ends; `None` when it is cut off or malformed (a boolean other
/// than 0 or 1, an optional's tag other than 0 or 1).
#[inline]
pub(crate) fn read_borrowed<'a>(
    plan: &FieldPlan,
    data: &'a [u8],
    pos: usize,
) -> Option<(ValueRef<'a>, usize)> {
    if plan.kind != Kind::Variant8 {
        return read_value(plan.kind, data, pos);
    }
    match *data.get(pos)? {
        0 => Some((ValueRef::Null, pos + 1)),
        1 => read_value(plan.children.get(1)?.kind, data, pos + 1),
        _ => None,
    }
}

/// Reads a value of `kind` at `data[pos..]`, a data column's (see a block scan's value step); returns
/// it and where it ends, or `None` when it is cut off or malformed.
#[inline(always)]
pub(super) fn read_value(kind: Kind, data: &[u8], pos: usize) -> Option<(ValueRef<'_>, usize)> {
    Some(match kind {
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
        // `readable` admits no other kind.
        _ => return None,
    })
}
