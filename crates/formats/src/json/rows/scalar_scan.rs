//! The scan's scalars: one JSON token of a plain column (or of a scalar inside a composite
//! column's shape) read straight from the input into a [`Cell`], with the row reader's
//! grammar, JSON-to-value rules and column check (see `row_scan`).

use shapeshift_types::{PrimitiveType, Type, ValueRef};

use crate::json::parse::{decoded_string, number, plain_string, Number};
use crate::json::{narrow_float, non_finite};
use crate::table::scanned_cell::{Cell, Span};
use crate::table::values::ColumnCheck;

/// The JSON tokens a plain scalar column takes, by its physical type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FastScalar {
    Bool,
    Int64,
    Uint64,
    Double,
    /// A `float` column: a number as the f32 it names.
    Float,
    /// Bytes (`string`, `utf8`).
    String,
}

/// The fast scalar of a plain primitive column (optional or not), `None` for the rest.
pub(super) fn fast_scalar(ty: &Type) -> Option<FastScalar> {
    use PrimitiveType as P;
    let ty = match ty.untagged() {
        Type::Optional(item) => item.untagged(),
        other => other,
    };
    let Type::Primitive(primitive) = ty else {
        return None;
    };
    // Only types whose check is a range or UTF-8: the rest (json, uuid, dates, ...) keep the
    // row reader's steps.
    Some(match primitive {
        P::Bool => FastScalar::Bool,
        P::Int8 | P::Int16 | P::Int32 | P::Int64 => FastScalar::Int64,
        P::Uint8 | P::Uint16 | P::Uint32 | P::Uint64 => FastScalar::Uint64,
        P::Float => FastScalar::Float,
        P::Double => FastScalar::Double,
        P::String | P::Utf8 => FastScalar::String,
        _ => return None,
    })
}

/// A scalar of a plain column (or inside a composite's shape) at `*at`.
#[inline(always)]
pub(super) fn fast_value(
    input: &[u8],
    at: &mut usize,
    fast: FastScalar,
    check: ColumnCheck,
    ty: &Type,
    scratch: &mut Vec<u8>,
) -> Option<Cell> {
    let (value, cell) = match (*input.get(*at)?, fast) {
        (b'n', _) => {
            if !check.nullable || !input[*at..].starts_with(b"null") {
                return None;
            }
            *at += 4;
            return Some(Cell::Null);
        }
        (b't', FastScalar::Bool) if input[*at..].starts_with(b"true") => {
            *at += 4;
            return Some(Cell::Bool(true));
        }
        (b'f', FastScalar::Bool) if input[*at..].starts_with(b"false") => {
            *at += 5;
            return Some(Cell::Bool(false));
        }
        (b'-' | b'0'..=b'9', _) => {
            let value = match (number(input, at)?, fast) {
                (Number::Int(v), FastScalar::Int64) => ValueRef::Int64(v),
                (Number::Int(v), FastScalar::Uint64) => ValueRef::Uint64(u64::try_from(v).ok()?),
                (Number::Uint(v), FastScalar::Uint64) => ValueRef::Uint64(v),
                (Number::Int(v), FastScalar::Double) => ValueRef::Double(v as f64),
                (Number::Float(v), FastScalar::Double) => ValueRef::Double(v),
                (Number::Int(v), FastScalar::Float) => ValueRef::Double(narrow_float(v as f64)),
                (Number::Float(v), FastScalar::Float) => ValueRef::Double(narrow_float(v)),
                _ => return None,
            };
            let cell = match value {
                ValueRef::Int64(v) => Cell::Int64(v),
                ValueRef::Uint64(v) => Cell::Uint64(v),
                ValueRef::Double(v) => Cell::Double(v),
                _ => return None,
            };
            (value, cell)
        }
        (b'"', FastScalar::String) => match plain_string(input, at) {
            Some((start, end)) => (
                ValueRef::String(&input[start..end]),
                Cell::String(Span::in_input(start, end)),
            ),
            None => {
                // Escapes or bytes above ASCII: the row reader's string parser, into scratch.
                let (start, end) = decoded_string(input, at, scratch)?;
                check
                    .write(ValueRef::String(&scratch[start..end]), ty)
                    .ok()?;
                return Some(Cell::String(Span::in_scratch(start, end)));
            }
        },
        (b'"', FastScalar::Double | FastScalar::Float) => {
            // "nan", "inf", "-inf": plain strings only (an escaped one is the reader's).
            let (start, end) = plain_string(input, at)?;
            let v = non_finite(std::str::from_utf8(&input[start..end]).ok()?)?;
            (ValueRef::Double(v), Cell::Double(v))
        }
        _ => return None,
    };
    // The type's range or UTF-8: what `check_value` asks of the value.
    check.write(value, ty).ok()?;
    Some(cell)
}
