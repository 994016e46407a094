//! Composite Skiff values re-spelled as binary YSON in one pass: the common interface's
//! convention for composite columns (`ValueRef::Composite`, see [`crate::table`]).
//!
//! The walk follows the compiled plan and the column type together and returns where each
//! value ends, so every byte is visited once. (Walking through [`LazyField`]'s iterators
//! instead re-skips every item to find the next one: twice the work on lists and dicts.)
//!
//! Invariant: the bytes were accepted by `scan::skip` for the same plan (they come from a
//! [`LazyField`] of a validated row), so tags name children and lengths fit; the loads below
//! still go through bounds-checked indexing, so a broken invariant panics rather than reads
//! out of bounds. The output is exactly what `table::yson_binary::value` writes for the owned
//! value: structs as maps by member name, named variants by name, nullable optionals of a
//! present value as a one-item list.

use shapeshift_types::{Type, ValueRef};

use super::convert::{decode, scalar_ref};
use super::plan::{FieldPlan, Kind};
use super::row::LazyField;
use super::scan::{read_u16, read_u32, skip};
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
fn transcode(
    plan: &FieldPlan,
    ty: &Type,
    data: &[u8],
    pos: usize,
    out: &mut Vec<u8>,
) -> Result<usize, String> {
    if plan.borrowable {
        scalar(scalar_ref(plan, data, pos), out)?;
        return Ok(borrowable_end(plan, data, pos));
    }
    let shape = |what: &str| format!("the skiff field does not have the shape of {what}");
    match ty.untagged() {
        Type::Optional(item) => {
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("an optional"))?;
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
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("a variant"))?;
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
            let (tag, at) = variant_tag(plan, data, pos).ok_or_else(|| shape("a variant"))?;
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

/// Where the value of a borrowable plan (a scalar, string, yson or optional of one) ends.
#[inline]
fn borrowable_end(plan: &FieldPlan, data: &[u8], pos: usize) -> usize {
    if let Some(size) = plan.fixed_size {
        return pos + size as usize;
    }
    match plan.kind {
        Kind::String32 | Kind::Yson32 => pos + 4 + read_u32(data, pos) as usize,
        Kind::Variant8 if data[pos] == 0 => pos + 1,
        Kind::Variant8 => borrowable_end(&plan.children[1], data, pos + 1),
        // Not reached for borrowable plans; the general walk is still right.
        _ => skip(plan, data, pos).unwrap_or(data.len()),
    }
}

/// A variant's tag and where its alternative starts; `None` when `plan` is not a variant.
#[inline]
fn variant_tag(plan: &FieldPlan, data: &[u8], pos: usize) -> Option<(usize, usize)> {
    match plan.kind {
        Kind::Variant8 => Some((usize::from(data[pos]), pos + 1)),
        Kind::Variant16 => Some((usize::from(read_u16(data, pos)), pos + 2)),
        _ => None,
    }
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
            let tag = read_u16(data, at);
            at += 2;
            if tag == u16::MAX {
                break Ok(at);
            }
            usize::from(tag)
        } else {
            let tag = data[at];
            at += 1;
            if tag == u8::MAX {
                break Ok(at);
            }
            usize::from(tag)
        };
        let Some(child) = plan.children.get(tag) else {
            break Err("the skiff field has a repeated item tag out of range".to_owned());
        };
        match item(child, at, out) {
            Ok(end) => at = end,
            Err(e) => break Err(e),
        }
    })
}
