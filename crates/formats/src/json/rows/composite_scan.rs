//! Composite columns spelled as the writer spells them, transcoded from the JSON text straight
//! to the interface's binary YSON, with no [`Json`] tree or [`Value`] in between.
//!
//! The row reader's steps for a composite value are: parse it into a tree (an owned `String`
//! per key and string), turn that into a `Value` by the type (`value_from_json`), check it
//! (`check_value`), then spell it as binary YSON (`yson_binary::value`: structs as maps by
//! member name). Here a [`Shape`], compiled once per column, walks the text and writes the same
//! YSON bytes as it goes, for the spelling the writer uses:
//! - a struct: an object with every member once, in order, keys as the writer spells them;
//! - a list or tuple: an array; an absent optional (of a type that is not itself nullable):
//!   `null`;
//! - scalars of the types whose check is a range or UTF-8, read token by token as the scan
//!   reads a plain column ([`fast_value`]: the same numbers, strings, checks).
//!
//! Any other type (variants, dicts, optionals of nullable types, dates, decimals, uuids,
//! `json`, `yson`) compiles to no shape, and its column keeps the row reader's steps. Any text
//! spelled otherwise (whitespace, keys out of order or missing, a wrong token, a value out of
//! range) makes [`transcode`] give up; the caller then restores its position and scratch and
//! reads the value the general way, which gives the same value or the error. So the bytes are
//! the general path's, or nothing is kept (property-tested with the scan against the row
//! reader).
//!
//! [`Json`]: crate::json::parse::Json
//! [`Value`]: shapeshift_types::Value

use shapeshift_types::Type;

use super::scalar_scan::{fast_scalar, fast_value, FastScalar};
use crate::json::parse::starts_with;
use crate::json::write_key;
use crate::table::scanned_cell::{Cell, Span};
use crate::table::values::ColumnCheck;
use crate::table::yson_binary;

/// How one composite type's text is transcoded.
pub(super) enum Shape {
    /// A primitive whose check is a range or UTF-8.
    Scalar {
        fast: FastScalar,
        check: ColumnCheck,
        ty: Type,
    },
    /// `optional<T>` of a `T` that is not nullable: `null` is `#`, else `T`'s value.
    Optional(Box<Shape>),
    List(Box<Shape>),
    Struct(Vec<Member>),
    Tuple(Vec<Member>),
}

/// A struct's member or a tuple's element.
pub(super) struct Member {
    /// `"name":` as the writer spells it; empty for a tuple's element.
    key: Vec<u8>,
    /// The name as a binary YSON string, then `=`; empty for a tuple's element.
    yson_key: Vec<u8>,
    shape: Shape,
}

impl Shape {
    /// The shape of `ty`, or `None` when some part of it keeps the row reader's steps.
    pub(super) fn compile(ty: &Type) -> Option<Shape> {
        Some(match ty {
            Type::Tagged { item, .. } => return Shape::compile(item),
            Type::Optional(item) if !item.is_nullable() => {
                Shape::Optional(Box::new(Shape::compile(item)?))
            }
            Type::Primitive(_) => Shape::Scalar {
                fast: fast_scalar(ty)?,
                check: ColumnCheck::new(ty),
                ty: ty.clone(),
            },
            Type::List(item) => Shape::List(Box::new(Shape::compile(item)?)),
            Type::Struct(members) => Shape::Struct(
                members
                    .iter()
                    .map(|member| {
                        let mut key = Vec::new();
                        write_key(&mut key, member.name.as_bytes());
                        let mut yson_key = Vec::new();
                        yson_binary::string(&mut yson_key, member.name.as_bytes());
                        yson_key.push(b'=');
                        Some(Member {
                            key,
                            yson_key,
                            shape: Shape::compile(&member.ty)?,
                        })
                    })
                    .collect::<Option<_>>()?,
            ),
            Type::Tuple(elements) => Shape::Tuple(
                elements
                    .iter()
                    .map(|ty| {
                        Some(Member {
                            key: Vec::new(),
                            yson_key: Vec::new(),
                            shape: Shape::compile(ty)?,
                        })
                    })
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        })
    }
}

/// A composite column's cell: `null` (when the column may be null), or the value transcoded
/// into `scratch`; `None` with `*at` and `scratch` as they were when the text is not spelled
/// as the writer spells it, for the row reader's steps.
#[inline]
pub(super) fn composite_cell(
    input: &[u8],
    at: &mut usize,
    shape: &Shape,
    nullable: bool,
    scratch: &mut Vec<u8>,
) -> Option<Cell> {
    if input.get(*at..)?.starts_with(b"null") {
        if !nullable {
            return None;
        }
        *at += 4;
        return Some(Cell::Null);
    }
    let (from, start) = (*at, scratch.len());
    if transcode(input, at, shape, scratch).is_none() {
        *at = from;
        scratch.truncate(start);
        return None;
    }
    Some(Cell::Composite(Span::in_scratch(start, scratch.len())))
}

/// Appends the binary YSON of the value at `input[*at]` to `out` and moves `*at` past it;
/// `None` when the text is not spelled as the writer spells it (then `*at` and `out` hold
/// partial work for the caller to undo).
fn transcode(input: &[u8], at: &mut usize, shape: &Shape, out: &mut Vec<u8>) -> Option<()> {
    match shape {
        Shape::Scalar { fast, check, ty } => {
            let start = out.len();
            match fast_value(input, at, *fast, *check, ty, out)? {
                Cell::Bool(v) => yson_binary::boolean(out, v),
                Cell::Int64(v) => yson_binary::int64(out, v),
                Cell::Uint64(v) => yson_binary::uint64(out, v),
                Cell::Double(v) => yson_binary::double(out, v),
                Cell::String(span) if span.in_scratch => {
                    // Decoded (escapes, bytes above ASCII) into `out` itself: moved behind
                    // its token.
                    let bytes = out[span.start..span.end].to_vec();
                    out.truncate(start);
                    yson_binary::string(out, &bytes);
                }
                Cell::String(span) => yson_binary::string(out, &input[span.start..span.end]),
                Cell::Null | Cell::Composite(_) | Cell::Any(_) => return None,
            }
        }
        Shape::Optional(item) => {
            if input.get(*at..)?.starts_with(b"null") {
                *at += 4;
                out.push(b'#');
            } else {
                transcode(input, at, item, out)?;
            }
        }
        Shape::List(item) => {
            expect(input, at, b'[')?;
            out.push(b'[');
            if input.get(*at) == Some(&b']') {
                *at += 1;
            } else {
                loop {
                    transcode(input, at, item, out)?;
                    out.push(b';');
                    match *input.get(*at)? {
                        b',' => *at += 1,
                        b']' => {
                            *at += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            out.push(b']');
        }
        // A struct's members by key, a tuple's elements by place: `{...}` and `[...]` alike
        // in both texts.
        Shape::Struct(members) => sequence(input, at, members, *b"{}", out)?,
        Shape::Tuple(elements) => sequence(input, at, elements, *b"[]", out)?,
    }
    Some(())
}

/// A struct's members or a tuple's elements between `brackets`, each after its key (none for
/// a tuple's).
fn sequence(
    input: &[u8],
    at: &mut usize,
    members: &[Member],
    brackets: [u8; 2],
    out: &mut Vec<u8>,
) -> Option<()> {
    expect(input, at, brackets[0])?;
    out.push(brackets[0]);
    for (i, member) in members.iter().enumerate() {
        if i > 0 {
            expect(input, at, b',')?;
        }
        if !starts_with(input.get(*at..)?, &member.key) {
            return None;
        }
        *at += member.key.len();
        out.extend_from_slice(&member.yson_key);
        transcode(input, at, &member.shape, out)?;
        out.push(b';');
    }
    expect(input, at, brackets[1])?;
    out.push(brackets[1]);
    Some(())
}

#[inline(always)]
fn expect(input: &[u8], at: &mut usize, byte: u8) -> Option<()> {
    if input.get(*at) != Some(&byte) {
        return None;
    }
    *at += 1;
    Some(())
}
