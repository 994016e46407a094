//! Composite Skiff values re-spelled as binary YSON in one pass: the common interface's
//! convention for composite columns (`ValueRef::Composite`, see [`crate::table`]).
//!
//! The walk follows the compiled plan and the column type together and returns where each
//! value ends, so every byte is visited once. (Walking through [`LazyField`]'s iterators
//! instead re-skips every item to find the next one: twice the work on lists and dicts.)
//!
//! The walk validates as it goes, exactly as `scan::skip` does (lengths in bounds, tags that
//! name a child, booleans 0 or 1): a block scan (`block_scan.rs`) re-spells the composites of
//! rows nobody has scanned yet, and ends its block before a row whose walk fails. Bytes that
//! come from a [`LazyField`] of a scanned row always pass. The output is exactly what `table::yson_binary::value` writes for the owned
//! value: structs as maps by member name, named variants by name, nullable optionals of a
//! present value as a one-item list.

use shapeshift_types::{Type, ValueRef};

use super::borrowed::read_borrowed;
use crate::skiff::convert::decode;
use crate::skiff::plan::{FieldPlan, Kind};
use crate::skiff::row::LazyField;
use crate::skiff::scan::{read_u16, skip};
use crate::table::yson_binary;

/// Appends the binary YSON of `field`, a value of column type `ty`.
///
/// # Errors
/// A message when the plan does not have the shape of `ty` (the codec was compiled for
/// another type), a yson32 payload inside is not valid YSON, or a decoded value does not fit
/// `ty`.
pub(crate) fn lazy_to_binary_yson(
    field: &LazyField<'_>,
    ty: &Type,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let (plan, data, pos) = field.parts();
    transcode(plan, ty, data, pos, out).map(|_| ())
}

/// Appends the binary YSON of the value of `plan` at `data[pos..]`; returns where it ends.
///
/// # Errors
/// As [`lazy_to_binary_yson`], and [`MALFORMED`] for bytes `scan::skip` would refuse.
pub(crate) fn transcode(
    plan: &FieldPlan,
    ty: &Type,
    data: &[u8],
    pos: usize,
    out: &mut Vec<u8>,
) -> Result<usize, String> {
    if plan.borrowable {
        let (value, end) = read_borrowed(plan, data, pos).ok_or_else(malformed)?;
        scalar(value, out)?;
        return Ok(end);
    }
    let shape = |what: &str| format!("the skiff field does not have the shape of {what}");
    match ty.untagged() {
        Type::Optional(item) => {
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("an optional"))??;
            let child = plan.children.get(tag).ok_or_else(|| shape("an optional"))?;
            if tag == 0 {
                out.push(b'#');
                Ok(at + child.fixed_size.unwrap_or(0) as usize)
            } else if item.is_nullable() {
                out.push(b'[');
                let end = transcode(child, item, data, at, out)?;
                out.extend_from_slice(b";]");
                Ok(end)
            } else {
                transcode(child, item, data, at, out)
            }
        }
        Type::List(item) => {
            out.push(b'[');
            let end = repeated(
                plan,
                data,
                pos,
                |child, at, out| {
                    let end = transcode(child, item, data, at, out)?;
                    out.push(b';');
                    Ok(end)
                },
                out,
            )
            .ok_or_else(|| shape("a list"))??;
            out.push(b']');
            Ok(end)
        }
        Type::Dict { key, value } => {
            out.push(b'[');
            let end = repeated(
                plan,
                data,
                pos,
                |entry, at, out| {
                    let [key_plan, value_plan] = entry.children.as_slice() else {
                        return Err(shape("a dict entry"));
                    };
                    if entry.kind != Kind::Tuple {
                        return Err(shape("a dict entry"));
                    }
                    out.push(b'[');
                    let at = transcode(key_plan, key, data, at, out)?;
                    out.push(b';');
                    let end = transcode(value_plan, value, data, at, out)?;
                    out.extend_from_slice(b";];");
                    Ok(end)
                },
                out,
            )
            .ok_or_else(|| shape("a dict"))??;
            out.push(b']');
            Ok(end)
        }
        Type::Struct(members) => {
            if plan.kind != Kind::Tuple || plan.children.len() != members.len() {
                return Err(shape("a struct"));
            }
            out.push(b'{');
            let mut at = pos;
            for (member, child) in members.iter().zip(&plan.children) {
                yson_binary::string(out, member.name.as_bytes());
                out.push(b'=');
                at = transcode(child, &member.ty, data, at, out)?;
                out.push(b';');
            }
            out.push(b'}');
            Ok(at)
        }
        Type::Tuple(elements) => {
            if plan.kind != Kind::Tuple || plan.children.len() != elements.len() {
                return Err(shape("a tuple"));
            }
            out.push(b'[');
            let mut at = pos;
            for (element, child) in elements.iter().zip(&plan.children) {
                at = transcode(child, element, data, at, out)?;
                out.push(b';');
            }
            out.push(b']');
            Ok(at)
        }
        Type::VariantStruct(members) => {
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("a variant"))??;
            let (member, child) = members
                .get(tag)
                .zip(plan.children.get(tag))
                .ok_or_else(|| shape("a variant"))?;
            out.push(b'[');
            yson_binary::string(out, member.name.as_bytes());
            out.push(b';');
            let end = transcode(child, &member.ty, data, at, out)?;
            out.extend_from_slice(b";]");
            Ok(end)
        }
        Type::VariantTuple(elements) => {
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("a variant"))??;
            let (element, child) = elements
                .get(tag)
                .zip(plan.children.get(tag))
                .ok_or_else(|| shape("a variant"))?;
            out.push(b'[');
            yson_binary::int64(out, tag as i64);
            out.push(b';');
            let end = transcode(child, element, data, at, out)?;
            out.extend_from_slice(b";]");
            Ok(end)
        }
        // Decimals, wide integers and anything else read whole: a scalar at most.
        _ => {
            // `decode` trusts its bytes: check them first (only decimals and wide integers
            // come here, rarely).
            skip(plan, data, pos).map_err(|_| malformed())?;
            let (value, end) = decode(plan, data, pos).map_err(|e| e.to_string())?;
            yson_binary::value(out, &value, ty)?;
            Ok(end)
        }
    }
}

/// A borrowed scalar as binary YSON (yson payloads, which may be text YSON, re-spelled).
#[inline]
fn scalar(value: ValueRef<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    match value {
        ValueRef::Null => out.push(b'#'),
        ValueRef::Bool(v) => yson_binary::boolean(out, v),
        ValueRef::Int64(v) => yson_binary::int64(out, v),
        ValueRef::Uint64(v) => yson_binary::uint64(out, v),
        ValueRef::Double(v) => yson_binary::double(out, v),
        ValueRef::String(v) => yson_binary::string(out, v),
        ValueRef::Any(bytes) | ValueRef::Composite(bytes) => {
            let node = crate::yson::from_slice(bytes).map_err(|e| format!("yson value: {e}"))?;
            yson_binary::node(out, &node);
        }
    }
    Ok(())
}

/// What the walk reports for bytes `scan::skip` would refuse (cut off, a tag naming no
/// child, a boolean other than 0 or 1).
pub(crate) const MALFORMED: &str = "malformed skiff bytes inside the value";

#[cold]
fn malformed() -> String {
    MALFORMED.to_owned()
}

/// A variant's tag and where its alternative starts; `None` when `plan` is not a variant,
/// an error when the tag is cut off or names no child.
#[inline]
fn variant_tag(
    plan: &FieldPlan,
    data: &[u8],
    pos: usize,
) -> Option<Result<(usize, usize), String>> {
    let tag = match plan.kind {
        Kind::Variant8 => data.get(pos).map(|&tag| (usize::from(tag), pos + 1)),
        Kind::Variant16 => data
            .get(pos..pos + 2)
            .map(|bytes| (usize::from(read_u16(bytes, 0)), pos + 2)),
        _ => return None,
    };
    Some(match tag {
        Some((tag, at)) if tag < plan.children.len() => Ok((tag, at)),
        _ => Err(malformed()),
    })
}

/// Calls `item(child plan, start, out)` for each item of a repeated variant (which returns
/// where the item ends); returns where the whole value ends, or `None` when `plan` is not a
/// repeated variant.
#[inline]
fn repeated(
    plan: &FieldPlan,
    data: &[u8],
    pos: usize,
    mut item: impl FnMut(&FieldPlan, usize, &mut Vec<u8>) -> Result<usize, String>,
    out: &mut Vec<u8>,
) -> Option<Result<usize, String>> {
    let wide_tag = match plan.kind {
        Kind::Repeated8 => false,
        Kind::Repeated16 => true,
        _ => return None,
    };
    let mut at = pos;
    Some(loop {
        let tag = if wide_tag {
            let Some(bytes) = data.get(at..at + 2) else {
                break Err(malformed());
            };
            let tag = read_u16(bytes, 0);
            at += 2;
            if tag == u16::MAX {
                break Ok(at);
            }
            usize::from(tag)
        } else {
            let Some(&tag) = data.get(at) else {
                break Err(malformed());
            };
            at += 1;
            if tag == u8::MAX {
                break Ok(at);
            }
            usize::from(tag)
        };
        let Some(child) = plan.children.get(tag) else {
            break Err(malformed());
        };
        match item(child, at, out) {
            Ok(end) => at = end,
            Err(e) => break Err(e),
        }
    })
}
