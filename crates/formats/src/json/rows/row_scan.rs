//! The in-place fast path of the interface's JSON reader: one row object, scanned straight from
//! the input into the row's cells, its strings borrowed from the input.
//!
//! The row reader proper ([`super::JsonRows`]) parses a row into a tree of [`Json`] values
//! (an owned `String` per key and per string), turns that into owned [`Value`]s, then the
//! interface turns those into borrowed refs. The fast path skips the tree for rows spelled as
//! the writer spells them: `{"key":value,...}` with the keys in schema order, no whitespace.
//!
//! What it accepts is a subset of what the row reader accepts, with the same meaning; every
//! row it is not sure of is answered with `None` before anything is consumed, and the row
//! reader reads it again from its first byte — so every error, the control records, the
//! other columns of a non-strict schema, escapes it does not take and keys out of order read
//! exactly as before. In particular:
//! - keys are compared with the predicted column's key as the writer spells it (`"name":`,
//!   bytes as code points, a leading `$` doubled); the parsed key of those bytes is the
//!   column's JSON key, so the match is the row reader's lookup. A key that is not the next
//!   column's is left to the row reader (order, unknown keys, duplicates, controls);
//! - scalars of plain columns ([`FastScalar`]) are read token by token: numbers by the row
//!   reader's grammar and classification (an integer is an `i64`, else a `u64`, else a double;
//!   anything with `.` or an exponent a double, by the same parser), strings without escapes or
//!   bytes outside printable ASCII borrowed as they are (those bytes are their code points),
//!   other strings decoded by the row reader's own string parser; then the JSON-to-value
//!   rules of `value_from_json` and the column's check ([`ColumnCheck::write`], which agrees
//!   with `check_value`);
//! - every other column (composites, `yson`, decimals, uuids, ...) goes through the row
//!   reader's own steps for one value — parse, `value_from_json`, `check_value` — and then the
//!   interface's binary YSON, exactly as [`OwnedRefs`](crate::table::OwnedRefs) spells it;
//! - columns after the last key are null when nullable (else the row reader reports them).
//!
//! [`Json`]: super::parse::Json
//! [`Value`]: shapeshift_types::Value
//! [`ColumnCheck::write`]: crate::table::values::ColumnCheck

use shapeshift_types::{check_value, PrimitiveType, TableSchema, Type, Value, ValueRef};

use crate::json::parse::{decoded_string, number, plain_string, Number, Parser};
use crate::json::{narrow_float, non_finite, value_from_json, write_key};
use crate::table::values::{ColumnCheck, ColumnKind};
use crate::table::yson_binary;

/// The JSON tokens a plain scalar column takes, by its physical type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastScalar {
    Bool,
    Int64,
    Uint64,
    Double,
    /// A `float` column: a number as the f32 it names.
    Float,
    /// Bytes (`string`, `utf8`).
    String,
}

/// How the scan reads one column, compiled per table.
pub(super) struct ScanColumn {
    /// `"name":` as the writer spells it.
    key: Vec<u8>,
    check: ColumnCheck,
    /// `None`: the value goes through the row reader's steps.
    fast: Option<FastScalar>,
}

impl ScanColumn {
    fn new(name: &str, ty: &Type) -> ScanColumn {
        let mut key = Vec::new();
        write_key(&mut key, name.as_bytes());
        let check = ColumnCheck::new(ty);
        ScanColumn {
            key,
            check,
            fast: (check.kind == ColumnKind::Scalar)
                .then(|| fast_scalar(ty))
                .flatten(),
        }
    }
}

/// The columns of `schema`, compiled for the scan.
pub(super) fn scan_columns(schema: &TableSchema) -> Vec<ScanColumn> {
    schema
        .columns
        .iter()
        .map(|c| ScanColumn::new(&c.name, &c.ty))
        .collect()
}

/// The fast scalar of a plain primitive column (optional or not), `None` for the rest.
fn fast_scalar(ty: &Type) -> Option<FastScalar> {
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

/// Bytes of a value: in the input, or in the row's scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    start: usize,
    end: usize,
    in_scratch: bool,
}

impl Span {
    #[inline(always)]
    fn bytes<'a>(self, input: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        let bytes = if self.in_scratch { scratch } else { input };
        &bytes[self.start..self.end]
    }
}

/// Where one value of a scanned row lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Cell {
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Span),
    Composite(Span),
    Any(Span),
}

impl Cell {
    #[inline(always)]
    pub(super) fn to_ref<'a>(self, input: &'a [u8], scratch: &'a [u8]) -> ValueRef<'a> {
        match self {
            Cell::Null => ValueRef::Null,
            Cell::Bool(v) => ValueRef::Bool(v),
            Cell::Int64(v) => ValueRef::Int64(v),
            Cell::Uint64(v) => ValueRef::Uint64(v),
            Cell::Double(v) => ValueRef::Double(v),
            Cell::String(span) => ValueRef::String(span.bytes(input, scratch)),
            Cell::Composite(span) => ValueRef::Composite(span.bytes(input, scratch)),
            Cell::Any(span) => ValueRef::Any(span.bytes(input, scratch)),
        }
    }
}

/// Scans the row object at `input[start]` (a `{`), appending one cell per column of `schema`
/// to `cells` (scratch spans in `scratch`); the position after its `}`. `None`: the row
/// reader reads it (the cells appended so far are for the caller to drop).
pub(super) fn scan_row(
    input: &[u8],
    start: usize,
    schema: &TableSchema,
    columns: &[ScanColumn],
    cells: &mut Vec<Cell>,
    scratch: &mut Vec<u8>,
) -> Option<usize> {
    debug_assert_eq!(input.get(start), Some(&b'{'));
    let base = cells.len();
    let mut at = start + 1;
    if *input.get(at)? != b'}' {
        loop {
            let column = columns.get(cells.len() - base)?;
            let rest = input.get(at..)?;
            if !rest.starts_with(&column.key) {
                return None;
            }
            at += column.key.len();
            let ty = &schema.columns[cells.len() - base].ty;
            let cell = match column.fast {
                Some(fast) => fast_value(input, &mut at, fast, column.check, ty, scratch)?,
                None => general_value(input, &mut at, ty, column.check.kind, scratch)?,
            };
            cells.push(cell);
            match *input.get(at)? {
                b',' => at += 1,
                b'}' => break,
                _ => return None,
            }
        }
    }
    // Columns the row does not name are null, when they may be.
    for column in &columns[cells.len() - base..] {
        if !column.check.nullable {
            return None;
        }
        cells.push(Cell::Null);
    }
    Some(at + 1)
}

/// A scalar of a plain column at `*at`.
#[inline(always)]
fn fast_value(
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
                Cell::String(Span {
                    start,
                    end,
                    in_scratch: false,
                }),
            ),
            None => {
                // Escapes or bytes above ASCII: the row reader's string parser, into scratch.
                let (start, end) = decoded_string(input, at, scratch)?;
                check
                    .write(ValueRef::String(&scratch[start..end]), ty)
                    .ok()?;
                return Some(Cell::String(Span {
                    start,
                    end,
                    in_scratch: true,
                }));
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

/// A value through the row reader's own steps, then as the interface carries it.
#[cold]
#[inline(never)]
fn general_value(
    input: &[u8],
    at: &mut usize,
    ty: &Type,
    kind: ColumnKind,
    scratch: &mut Vec<u8>,
) -> Option<Cell> {
    let mut parser = Parser::new(input, *at);
    // Depth 1: the row object is depth 0, as in the row reader.
    let json = parser.value(1).ok()?;
    let value = value_from_json(&json, ty).ok()?;
    check_value(&value, ty).ok()?;
    *at = parser.pos;
    let start = scratch.len();
    // As `OwnedRefs::refs` spells a value.
    if kind != ColumnKind::Scalar && !matches!(value, Value::Null) {
        yson_binary::value(scratch, &value, ty).ok()?;
    }
    let span = Span {
        start,
        end: scratch.len(),
        in_scratch: true,
    };
    Some(match (value, kind) {
        (Value::Null, _) => Cell::Null,
        (Value::Bool(v), _) => Cell::Bool(v),
        (Value::Int64(v), _) => Cell::Int64(v),
        (Value::Uint64(v), _) => Cell::Uint64(v),
        (Value::Double(v), _) => Cell::Double(v),
        (Value::String(v), ColumnKind::Scalar) => {
            scratch.extend_from_slice(&v);
            Cell::String(Span {
                start,
                end: scratch.len(),
                in_scratch: true,
            })
        }
        (_, ColumnKind::Yson) => Cell::Any(span),
        _ => Cell::Composite(span),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number_of(text: &str) -> Option<Number> {
        let mut input = text.as_bytes().to_vec();
        input.push(b',');
        let mut at = 0;
        let number = number(&input, &mut at)?;
        assert_eq!(at, text.len(), "{text}");
        Some(number)
    }

    /// The row reader's parser on the same text.
    fn parsed(text: &str) -> Option<Number> {
        use crate::json::parse::Json;
        let mut input = text.as_bytes().to_vec();
        input.push(b',');
        match Parser::new(&input, 0).value(1).ok()? {
            Json::Int(v) => Some(Number::Int(v)),
            Json::Uint(v) => Some(Number::Uint(v)),
            Json::Float(v) => Some(Number::Float(v)),
            _ => None,
        }
    }

    #[test]
    fn numbers_are_classified_as_the_row_reader_classifies_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-12",
            "123456789012345678",
            "-123456789012345678",
            "1234567890123456789",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1.5",
            "0.1",
            "-0.30000001",
            "9007199254740992.0",
            "9007199254740993.0",
            "1e22",
            "1e23",
            "4.5e-22",
            "4.5e-23",
            "123456789.123456789e-5",
            "1234567890123456789.5",
            "0.0000001",
            "-0.0e5",
            "1.7976931348623157e308",
            "5e-324",
            "1e99999999999999999999",
            "-0.0",
            "1e3",
            "1E-3",
            "2.5e+10",
            "01",
            "1.",
            "1e",
            "-",
            "1.e5",
            "00.5",
        ] {
            assert_eq!(number_of(text), parsed(text), "{text}");
        }
    }

    proptest::proptest! {
        /// The shortest text of any finite double or float (what writers write), and such
        /// digits scaled, read as core's correctly rounded parse reads them, in and out of
        /// the exact fast case; a float's text narrows back to the float.
        #[test]
        fn shortest_float_texts_read_exactly(bits: u64, narrow: u32, exponent in -30i32..30) {
            let wide = f64::from_bits(bits);
            let float = f32::from_bits(narrow);
            let texts = [
                format!("{wide:?}"),
                format!("{float:?}"),
                format!("{:?}", f64::from(float) * 10f64.powi(exponent)),
                format!("{}e{exponent}", narrow % 100_000),
            ];
            for text in texts {
                let expected: f64 = text.parse().unwrap_or(f64::NAN);
                if !expected.is_finite() || !text.contains(['.', 'e']) {
                    continue;
                }
                let Some(Number::Float(v)) = number_of(&text) else {
                    panic!("{text} is no float");
                };
                proptest::prop_assert_eq!(v.to_bits(), expected.to_bits(), "{}", text);
            }
            if float.is_finite() {
                let Some(Number::Float(v)) = number_of(&format!("{float:?}")) else {
                    panic!("{float:?} is no float");
                };
                proptest::prop_assert_eq!((v as f32).to_bits(), float.to_bits());
            }
        }

        #[test]
        fn any_number_text_reads_as_the_row_reader_reads_it(text in "-?[0-9]{0,22}(\\.[0-9]{0,20})?([eE][+-]?[0-9]{0,3})?") {
            let ours = number_of(&text);
            let theirs = parsed(&text);
            match (ours, theirs) {
                (Some(Number::Float(a)), Some(Number::Float(b))) => proptest::prop_assert_eq!(a.to_bits(), b.to_bits()),
                (a, b) => proptest::prop_assert_eq!(a, b),
            }
        }
    }
}
