//! The in-place fast path of the row reader: one whole binary-YSON row map, scanned straight
//! from the read buffer into the row's cells.
//!
//! What it accepts is a strict subset of what the pull parser accepts, with the same meaning:
//! a row spelled the way binary writers spell it (`{`, then `key=value;` entries with binary
//! string keys, binary scalars, `#`, nested `[ ] { } < >`, no whitespace, no text tokens),
//! followed by the `;` that ends a list-fragment item. Everything else, and every row with a
//! problem (unknown or repeated column, a value that does not fit its column, a missing
//! required column, malformed bytes), is answered with [`Bail::Fallback`] before anything is
//! consumed: the caller re-reads the row with the pull parser, which names the error and its
//! byte offset exactly as before. [`Bail::NeedMore`] says the row runs past the buffered bytes.
//!
//! So the fast path never decides an error and never consumes a byte; its only job is to be
//! right about rows it accepts:
//! - keys are compared with the predicted column's precomputed binary key (`\x01`, length,
//!   name, `=`) first — rows list their columns in schema order — then looked up by name;
//! - scalars are checked with the same [`ColumnCheck::read`] the pull-parser path uses;
//! - composite and `yson` values are validated by [`skip_value`] and handed out as the very
//!   bytes of the input: binary YSON already, the interface's convention for them. Nesting is
//!   bounded by [`MAX_SKIP_DEPTH`] (deeper values go to the parser, which has the real limit).

use shapeshift_types::{PrimitiveType, Type, ValueRef};

use super::{Cell, Span, Table};
use crate::table::values::ColumnKind;
use crate::yson::zigzag_decode;

/// Why a row was not scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bail {
    /// The row continues past the buffered bytes.
    NeedMore,
    /// Not a plain binary row, or a row with a problem: the pull parser reads it.
    Fallback,
}

/// Nesting the scan follows inside one value; deeper values are left to the parser.
pub(super) const MAX_SKIP_DEPTH: usize = 64;

#[inline(always)]
fn byte(window: &[u8], at: usize) -> Result<u8, Bail> {
    window.get(at).copied().ok_or(Bail::NeedMore)
}

/// A varint at `*at` (at most 10 bytes, overflow bits dropped as the parser drops them).
#[inline(always)]
fn varint(window: &[u8], at: &mut usize) -> Result<u64, Bail> {
    let first = byte(window, *at)?;
    if first < 0x80 {
        *at += 1;
        return Ok(u64::from(first));
    }
    let mut value = 0u64;
    for index in 0..10 {
        let b = byte(window, *at + index)?;
        value |= u64::from(b & 0x7f) << (7 * index);
        if b < 0x80 {
            *at += index + 1;
            return Ok(value);
        }
    }
    Err(Bail::Fallback)
}

/// A binary string's bytes after its `0x01` marker: `start..end` in `window`.
#[inline(always)]
fn string_body(window: &[u8], at: &mut usize) -> Result<(usize, usize), Bail> {
    let length = zigzag_decode(varint(window, at)?);
    if length < 0 {
        return Err(Bail::Fallback);
    }
    let start = *at;
    let end = usize::try_from(length)
        .ok()
        .and_then(|length| start.checked_add(length))
        .ok_or(Bail::Fallback)?;
    if end > window.len() {
        return Err(Bail::NeedMore);
    }
    *at = end;
    Ok((start, end))
}

/// Skips one binary scalar whose marker is `marker` at `*at`; `false` when it is none.
#[inline(always)]
fn skip_scalar(window: &[u8], at: &mut usize, marker: u8) -> Result<bool, Bail> {
    match marker {
        0x01 => {
            *at += 1;
            string_body(window, at)?;
        }
        0x02 | 0x06 => {
            *at += 1;
            varint(window, at)?;
        }
        0x03 => {
            if *at + 9 > window.len() {
                return Err(Bail::NeedMore);
            }
            *at += 9;
        }
        0x04 | 0x05 | b'#' => *at += 1,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Validates one binary YSON value from `*at` and moves past it.
pub(super) fn skip_value(window: &[u8], at: &mut usize, max_depth: usize) -> Result<(), Bail> {
    // Open containers: `]`, `}` or `>` closes each.
    let mut closes = [0u8; MAX_SKIP_DEPTH];
    let mut depth = 0usize;
    let max_depth = max_depth.min(MAX_SKIP_DEPTH);
    // A value is expected; `attributes_allowed` is false right after `<...>`.
    let mut attributes_allowed = true;
    loop {
        // A value (or, right after `[`, `;` in a list, the list's `]`).
        let marker = byte(window, *at)?;
        if !skip_scalar(window, at, marker)? {
            match marker {
                b'[' | b'{' | b'<' => {
                    if depth == max_depth || (marker == b'<' && !attributes_allowed) {
                        return Err(Bail::Fallback);
                    }
                    closes[depth] = match marker {
                        b'[' => b']',
                        b'{' => b'}',
                        _ => b'>',
                    };
                    depth += 1;
                    *at += 1;
                    if marker == b'[' {
                        // A list item or the list's end.
                        if byte(window, *at)? == b']' {
                            depth -= 1;
                            *at += 1;
                        } else {
                            attributes_allowed = true;
                            continue;
                        }
                    } else {
                        // A key or the map's end.
                        match key_or_close(window, at, closes[depth - 1])? {
                            true => {
                                depth -= 1;
                                if marker == b'<' {
                                    attributes_allowed = false;
                                    continue;
                                }
                            }
                            false => {
                                attributes_allowed = true;
                                continue;
                            }
                        }
                    }
                }
                _ => return Err(Bail::Fallback),
            }
        }
        // A complete value: after it, a separator or closes.
        loop {
            if depth == 0 {
                return Ok(());
            }
            let close = closes[depth - 1];
            match byte(window, *at)? {
                b';' => {
                    *at += 1;
                    if close == b']' {
                        if byte(window, *at)? == b']' {
                            *at += 1;
                            depth -= 1;
                            continue;
                        }
                        attributes_allowed = true;
                        break;
                    }
                    if key_or_close(window, at, close)? {
                        depth -= 1;
                        if close == b'>' {
                            attributes_allowed = false;
                            break;
                        }
                        continue;
                    }
                    attributes_allowed = true;
                    break;
                }
                b if b == close => {
                    *at += 1;
                    depth -= 1;
                    if close == b'>' {
                        attributes_allowed = false;
                        break;
                    }
                }
                _ => return Err(Bail::Fallback),
            }
        }
    }
}

/// In a map or attribute map: either its `close` (`true`, consumed) or a binary key and its
/// `=` (`false`, consumed; a value follows).
#[inline(always)]
fn key_or_close(window: &[u8], at: &mut usize, close: u8) -> Result<bool, Bail> {
    match byte(window, *at)? {
        b if b == close => {
            *at += 1;
            Ok(true)
        }
        0x01 => {
            *at += 1;
            string_body(window, at)?;
            if byte(window, *at)? != b'=' {
                return Err(Bail::Fallback);
            }
            *at += 1;
            Ok(false)
        }
        _ => Err(Bail::Fallback),
    }
}

/// How the scan recognises one column's key and checks its scalars, compiled per table.
pub(super) struct ScanColumn {
    /// The column's binary key with its `=` (`\x01`, length, name, `=`), little-endian, and
    /// the mask of its length: one 16-byte compare instead of a `memcmp` call. `None` for
    /// keys longer than 16 bytes (compared as slices).
    key_word: Option<(u128, u128)>,
    key_length: usize,
    rule: FastRule,
}

/// Scalar checks that need no call: the column's type takes every value of the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastRule {
    AnyInt64,
    AnyDouble,
    AnyBool,
    AnyBytes,
    /// Anything else goes through [`ColumnCheck::read`](crate::table::values::ColumnCheck).
    Checked,
}

impl ScanColumn {
    /// `key` is the column's binary key with its `=`.
    pub(super) fn new(key: &[u8], ty: &Type) -> ScanColumn {
        let key_word = (key.len() <= 16).then(|| {
            let mut bytes = [0u8; 16];
            bytes[..key.len()].copy_from_slice(key);
            let mask = if key.len() == 16 {
                u128::MAX
            } else {
                (1u128 << (8 * key.len())) - 1
            };
            (u128::from_le_bytes(bytes), mask)
        });
        // Only the plain types: tagged, optional and other types keep the full check.
        let rule = match ty {
            Type::Primitive(PrimitiveType::Int64) => FastRule::AnyInt64,
            Type::Primitive(PrimitiveType::Double) => FastRule::AnyDouble,
            Type::Primitive(PrimitiveType::Bool) => FastRule::AnyBool,
            Type::Primitive(PrimitiveType::String) => FastRule::AnyBytes,
            _ => FastRule::Checked,
        };
        ScanColumn {
            key_word,
            key_length: key.len(),
            rule,
        }
    }

    /// True when `window[at..]` starts with this column's key.
    #[inline(always)]
    fn key_at(&self, window: &[u8], at: usize, key: &[u8]) -> bool {
        if let (Some((word, mask)), Some(chunk)) =
            (self.key_word, window.get(at..at.wrapping_add(16)))
        {
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(chunk);
            return u128::from_le_bytes(bytes) & mask == word;
        }
        window.get(at..at + key.len()) == Some(key)
    }
}

/// Row-scoped state the scan reuses across rows.
pub(super) struct ScanState {
    /// `seen[column] == stamp` when the current row named the column.
    seen: Vec<u64>,
    stamp: u64,
}

impl ScanState {
    pub(super) fn new(max_columns: usize) -> ScanState {
        ScanState {
            seen: vec![0; max_columns],
            stamp: 0,
        }
    }
}

/// Scans the row map at the start of `window` (whose first byte is `{`) into `cells` (one per
/// column of `table`; spans relative to `window`); returns the length of the row with its
/// `;`.
#[inline]
pub(super) fn scan_row(
    window: &[u8],
    table: &Table,
    cells: &mut [Cell],
    state: &mut ScanState,
    max_depth: usize,
) -> Result<usize, Bail> {
    debug_assert_eq!(window.first(), Some(&b'{'));
    let columns = table.checks.len();
    debug_assert!(cells.len() == columns && state.seen.len() >= columns);
    state.stamp += 1;
    let stamp = state.stamp;
    let mut at = 1usize;
    let mut expected = 0usize;
    let mut found = 0usize;
    if byte(window, at)? != b'}' {
        loop {
            let column = match table.scan_columns.get(expected) {
                Some(plan) if plan.key_at(window, at, &table.keys[expected]) => {
                    at += plan.key_length;
                    expected
                }
                _ => {
                    if byte(window, at)? != 0x01 {
                        return Err(Bail::Fallback);
                    }
                    at += 1;
                    let (start, end) = string_body(window, &mut at)?;
                    if byte(window, at)? != b'=' {
                        return Err(Bail::Fallback);
                    }
                    at += 1;
                    *table.index.get(&window[start..end]).ok_or(Bail::Fallback)?
                }
            };
            // A repeated column is the parser's error to report.
            let seen = &mut state.seen[column];
            if *seen == stamp {
                return Err(Bail::Fallback);
            }
            *seen = stamp;
            found += 1;
            cells[column] = scan_value(window, &mut at, table, column, max_depth)?;
            expected = column + 1;
            match byte(window, at)? {
                b';' => {
                    at += 1;
                    if byte(window, at)? == b'}' {
                        break;
                    }
                }
                b'}' => break,
                _ => return Err(Bail::Fallback),
            }
        }
    }
    // The `}` and the `;` that ends the list-fragment item.
    at += 1;
    if byte(window, at)? != b';' {
        return Err(Bail::Fallback);
    }
    at += 1;
    if found < columns {
        for (column, cell) in cells.iter_mut().enumerate() {
            if state.seen[column] != stamp {
                if !table.checks[column].nullable {
                    return Err(Bail::Fallback);
                }
                *cell = Cell::Null;
            }
        }
    }
    Ok(at)
}

/// One column value at `*at`.
#[inline(always)]
fn scan_value(
    window: &[u8],
    at: &mut usize,
    table: &Table,
    column: usize,
    max_depth: usize,
) -> Result<Cell, Bail> {
    let check = &table.checks[column];
    let marker = byte(window, *at)?;
    if check.kind == ColumnKind::Scalar {
        let mut string = (0, 0);
        let value = match marker {
            0x01 => {
                *at += 1;
                string = string_body(window, at)?;
                ValueRef::String(&window[string.0..string.1])
            }
            0x02 => {
                *at += 1;
                ValueRef::Int64(zigzag_decode(varint(window, at)?))
            }
            0x06 => {
                *at += 1;
                ValueRef::Uint64(varint(window, at)?)
            }
            0x03 => {
                let bytes = window.get(*at + 1..*at + 9).ok_or(Bail::NeedMore)?;
                let mut bits = [0u8; 8];
                bits.copy_from_slice(bytes);
                *at += 9;
                ValueRef::Double(f64::from_le_bytes(bits))
            }
            0x04 | 0x05 => {
                *at += 1;
                ValueRef::Bool(marker == 0x05)
            }
            b'#' => {
                *at += 1;
                ValueRef::Null
            }
            _ => return Err(Bail::Fallback),
        };
        let fits_as_is = matches!(
            (table.scan_columns[column].rule, value),
            (FastRule::AnyInt64, ValueRef::Int64(_))
                | (FastRule::AnyDouble, ValueRef::Double(_))
                | (FastRule::AnyBool, ValueRef::Bool(_))
                | (FastRule::AnyBytes, ValueRef::String(_))
        );
        let value = if fits_as_is {
            value
        } else {
            check
                .read(value, &table.schema.columns[column].ty)
                .map_err(|_| Bail::Fallback)?
        };
        return Ok(match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Bool(v) => Cell::Bool(v),
            ValueRef::Int64(v) => Cell::Int64(v),
            ValueRef::Uint64(v) => Cell::Uint64(v),
            ValueRef::Double(v) => Cell::Double(v),
            ValueRef::String(_) => Cell::String(Span::in_row(string.0, string.1)),
            ValueRef::Composite(_) | ValueRef::Any(_) => return Err(Bail::Fallback),
        });
    }
    if marker == b'#' && check.nullable {
        *at += 1;
        return Ok(Cell::Null);
    }
    let start = *at;
    // The row map is one level already.
    skip_value(window, at, max_depth.saturating_sub(1))?;
    let span = Span::in_row(start, *at);
    Ok(if check.kind == ColumnKind::Yson {
        Cell::Any(span)
    } else {
        Cell::Composite(span)
    })
}
