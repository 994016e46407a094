//! Walking Skiff bytes: bounds-checked skipping that validates as it goes, and the little-endian
//! loads the row views use on bytes already validated.
//!
//! Invariant: [`skip`] returns `Ok(end)` only when every byte of the value in `data[pos..end]`
//! is well-formed for its plan — lengths fit the input, tags name a child, booleans are 0 or 1.
//! Everything that later reads the same bytes (row views, lazy fields, owned decoding) relies on
//! it and does not check again. Recursion depth is bounded by the schema's depth, which
//! [`super::schema::MAX_SCHEMA_DEPTH`] bounds; repeated variants loop instead of recursing.

use super::plan::{FieldPlan, Kind};
use super::wire_type::WireType;

/// Why bytes could not be read, and where (an index into the buffer being scanned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fail {
    /// The input ends before `needed` bytes of `what` (it has `available`).
    Truncated {
        at: usize,
        needed: u64,
        available: usize,
        what: &'static str,
    },
    BadBoolean {
        at: usize,
        byte: u8,
    },
    BadTag {
        at: usize,
        wire: WireType,
        tag: u16,
        children: usize,
    },
    BadTableIndex {
        at: usize,
        index: u16,
        tables: usize,
    },
    RowTooLong {
        at: usize,
    },
}

impl Fail {
    pub(crate) fn at(&self) -> usize {
        match *self {
            Fail::Truncated { at, .. }
            | Fail::BadBoolean { at, .. }
            | Fail::BadTag { at, .. }
            | Fail::BadTableIndex { at, .. }
            | Fail::RowTooLong { at } => at,
        }
    }

    pub(crate) fn is_truncation(&self) -> bool {
        matches!(self, Fail::Truncated { .. })
    }

    pub(crate) fn message(&self) -> String {
        match self {
            Fail::Truncated {
                needed,
                available,
                what,
                ..
            } => {
                format!("input ends inside {what}: expected {needed} bytes, {available} left")
            }
            Fail::BadBoolean { byte, .. } => format!("expected boolean 0 or 1, got {byte}"),
            Fail::BadTag {
                wire,
                tag,
                children,
                ..
            } => {
                if *children == 0 {
                    format!("expected no {wire} value (it has no alternatives), got tag {tag}")
                } else {
                    format!("expected {wire} tag 0..{}, got {tag}", children - 1)
                }
            }
            Fail::BadTableIndex { index, tables, .. } => {
                format!("expected table index 0..{}, got {index}", tables - 1)
            }
            Fail::RowTooLong { .. } => "row longer than 4 GiB".to_owned(),
        }
    }
}

#[inline(always)]
pub(crate) fn need(data: &[u8], pos: usize, size: usize, what: &'static str) -> Result<(), Fail> {
    if data.len().saturating_sub(pos) < size {
        return Err(truncated(data, pos, size as u64, what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn truncated(data: &[u8], pos: usize, needed: u64, what: &'static str) -> Fail {
    Fail::Truncated {
        at: pos,
        needed,
        available: data.len().saturating_sub(pos),
        what,
    }
}

/// What a wire type is called in truncation messages.
pub(crate) fn wire_what(wire: WireType) -> &'static str {
    match wire {
        WireType::Int8 => "int8",
        WireType::Int16 => "int16",
        WireType::Int32 => "int32",
        WireType::Int64 => "int64",
        WireType::Int128 => "int128",
        WireType::Int256 => "int256",
        WireType::Uint8 => "uint8",
        WireType::Uint16 => "uint16",
        WireType::Uint32 => "uint32",
        WireType::Uint64 => "uint64",
        WireType::Uint128 => "uint128",
        WireType::Uint256 => "uint256",
        WireType::Double => "double",
        WireType::Boolean => "boolean",
        WireType::Variant8 | WireType::RepeatedVariant8 => "variant8 tag",
        WireType::Variant16 | WireType::RepeatedVariant16 => "variant16 tag",
        _ => "value",
    }
}

/// Validates the value of `plan` at `data[pos..]` and returns where it ends.
pub(crate) fn skip(plan: &FieldPlan, data: &[u8], pos: usize) -> Result<usize, Fail> {
    match plan.kind {
        Kind::Nothing => Ok(pos),
        Kind::Bool => {
            need(data, pos, 1, "boolean")?;
            let byte = data[pos];
            if byte > 1 {
                return Err(Fail::BadBoolean { at: pos, byte });
            }
            Ok(pos + 1)
        }
        Kind::I8
        | Kind::U8
        | Kind::I16
        | Kind::U16
        | Kind::I32
        | Kind::U32
        | Kind::I64
        | Kind::U64
        | Kind::Double
        | Kind::Wide => {
            let width = plan.wire.fixed_width().unwrap_or(0);
            need(data, pos, width, wire_what(plan.wire))?;
            Ok(pos + width)
        }
        Kind::String32 | Kind::Yson32 => {
            let (what_len, what_bytes) = if plan.kind == Kind::String32 {
                ("string32 length", "string32 bytes")
            } else {
                ("yson32 length", "yson32 bytes")
            };
            need(data, pos, 4, what_len)?;
            let length = read_u32(data, pos) as usize;
            let body = pos + 4;
            if data.len() - body < length {
                return Err(truncated(data, body, length as u64, what_bytes));
            }
            Ok(body + length)
        }
        Kind::Tuple => {
            let mut at = pos;
            for child in &plan.children {
                at = skip(child, data, at)?;
            }
            Ok(at)
        }
        Kind::Variant8 => {
            need(data, pos, 1, "variant8 tag")?;
            let tag = data[pos] as usize;
            let Some(child) = plan.children.get(tag) else {
                return Err(bad_tag(plan, pos, tag as u16));
            };
            skip(child, data, pos + 1)
        }
        Kind::Variant16 => {
            need(data, pos, 2, "variant16 tag")?;
            let tag = read_u16(data, pos);
            let Some(child) = plan.children.get(tag as usize) else {
                return Err(bad_tag(plan, pos, tag));
            };
            skip(child, data, pos + 2)
        }
        Kind::Repeated8 => {
            let mut at = pos;
            loop {
                need(data, at, 1, "repeated_variant8 tag")?;
                let tag = data[at];
                if tag == u8::MAX {
                    return Ok(at + 1);
                }
                let Some(child) = plan.children.get(tag as usize) else {
                    return Err(bad_tag(plan, at, tag as u16));
                };
                at = skip(child, data, at + 1)?;
            }
        }
        Kind::Repeated16 => {
            let mut at = pos;
            loop {
                need(data, at, 2, "repeated_variant16 tag")?;
                let tag = read_u16(data, at);
                if tag == u16::MAX {
                    return Ok(at + 2);
                }
                let Some(child) = plan.children.get(tag as usize) else {
                    return Err(bad_tag(plan, at, tag));
                };
                at = skip(child, data, at + 2)?;
            }
        }
    }
}

#[cold]
#[inline(never)]
fn bad_tag(plan: &FieldPlan, at: usize, tag: u16) -> Fail {
    Fail::BadTag {
        at,
        wire: plan.wire,
        tag,
        children: plan.children.len(),
    }
}

#[inline(always)]
pub(crate) fn read_u16(data: &[u8], pos: usize) -> u16 {
    u16::from_le_bytes([data[pos], data[pos + 1]])
}

#[inline(always)]
pub(crate) fn read_u32(data: &[u8], pos: usize) -> u32 {
    let bytes: [u8; 4] = data[pos..pos + 4].try_into().unwrap_or([0; 4]);
    u32::from_le_bytes(bytes)
}

#[inline(always)]
pub(crate) fn read_u64(data: &[u8], pos: usize) -> u64 {
    let bytes: [u8; 8] = data[pos..pos + 8].try_into().unwrap_or([0; 8]);
    u64::from_le_bytes(bytes)
}

/// The bytes of a length-prefixed value (string32, yson32) at `pos`, already validated.
#[inline(always)]
pub(crate) fn read_bytes32(data: &[u8], pos: usize) -> &[u8] {
    let length = read_u32(data, pos) as usize;
    &data[pos + 4..pos + 4 + length]
}
