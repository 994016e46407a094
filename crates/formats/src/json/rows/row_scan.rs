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
//! - composite columns spelled as the writer spells them are transcoded straight to the
//!   interface's binary YSON (`composite_scan`); one spelled otherwise, and every other
//!   column (`yson`, decimals, uuids, dates, variants, dicts, ...) goes through the row
//!   reader's own steps for one value — parse, `value_from_json`, `check_value` — and then
//!   the interface's binary YSON, exactly as [`OwnedRefs`](crate::table::OwnedRefs) spells it;
//! - columns after the last key are null when nullable (else the row reader reports them).
//!
//! [`Json`]: super::parse::Json
//! [`Value`]: shapeshift_types::Value
//! [`ColumnCheck::write`]: crate::table::values::ColumnCheck

use shapeshift_types::{check_value, TableSchema, Type, Value};

use crate::json::parse::{starts_with, Parser};
use crate::json::{value_from_json, write_key};
use crate::table::values::{ColumnCheck, ColumnKind};
use crate::table::yson_binary;

use super::composite_scan::{composite_cell, Shape};
use super::scalar_scan::{fast_scalar, fast_value, FastScalar};
use crate::table::scanned_cell::{Cell, Span};

/// How the scan reads one column, compiled per table.
pub(super) struct ScanColumn {
    /// `"name":` as the writer spells it.
    key: Vec<u8>,
    check: ColumnCheck,
    /// `None`: the value is a composite's (when `composite` has its shape) or goes
    /// through the row reader's steps.
    fast: Option<FastScalar>,
    /// A composite column's shape, when its type has one.
    composite: Option<Shape>,
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
            composite: (check.kind == ColumnKind::Composite)
                .then(|| Shape::compile(ty))
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
            if !starts_with(rest, &column.key) {
                return None;
            }
            at += column.key.len();
            let ty = &schema.columns[cells.len() - base].ty;
            let cell = match (column.fast, &column.composite) {
                (Some(fast), _) => fast_value(input, &mut at, fast, column.check, ty, scratch)?,
                (None, Some(shape)) => {
                    match composite_cell(input, &mut at, shape, column.check.nullable, scratch) {
                        Some(cell) => cell,
                        None => general_value(input, &mut at, ty, column.check.kind, scratch)?,
                    }
                }
                (None, None) => general_value(input, &mut at, ty, column.check.kind, scratch)?,
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
    let span = Span::in_scratch(start, scratch.len());
    Some(match (value, kind) {
        (Value::Null, _) => Cell::Null,
        (Value::Bool(v), _) => Cell::Bool(v),
        (Value::Int64(v), _) => Cell::Int64(v),
        (Value::Uint64(v), _) => Cell::Uint64(v),
        (Value::Double(v), _) => Cell::Double(v),
        (Value::String(v), ColumnKind::Scalar) => {
            scratch.extend_from_slice(&v);
            Cell::String(Span::in_scratch(start, scratch.len()))
        }
        (_, ColumnKind::Yson) => Cell::Any(span),
        _ => Cell::Composite(span),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse::{number, Number};

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
