//! The in-place fast path of the row reader: one whole row map, scanned straight from the read
//! buffer into the row's cells, in either spelling writers use.
//!
//! What it accepts is a strict subset of what the pull parser accepts, with the same meaning:
//! - *binary*: `{`, `key=value;` entries with binary string keys, binary scalars, `#`, nested
//!   `[ ] { } < >`, no whitespace, no text tokens;
//! - *text*: `{`, `"key"=value;` entries with quoted keys and strings without escapes,
//!   number literals, `%true` / `%false` / `%nan` / `%inf` / `%-inf`, `#`, nested containers,
//!   no whitespace inside the row; composite and `yson` values are re-spelled as binary YSON
//!   into the row's scratch exactly as the parser path re-spells them (escaped strings are
//!   left to the parser);
//!
//! each followed by the `;` that ends a list-fragment item. Everything else, and every row
//! with a problem (unknown or repeated column, a value that does not fit its column, a missing
//! required column, malformed bytes), is answered with [`Bail::Fallback`] before anything is
//! consumed: the caller re-reads the row with the pull parser, which names the error and its
//! byte offset exactly as before. [`Bail::NeedMore`] says the row runs past the buffered bytes.
//!
//! So the fast path never decides an error and never consumes a byte; its only job is to be
//! right about rows it accepts:
//! - keys are compared with the predicted column's precomputed key (`\x01`, length, name, `=`
//!   in binary; `"name"=` as the text writer quotes it) first — rows list their columns in
//!   schema order — then looked up by name;
//! - a binary entry is first tried whole by [`binary_entry`]: predicted key, marker, varint
//!   and check in one step over a 32-byte head; it only accepts (else the general entry reads
//!   the same bytes and decides);
//! - while every key is the predicted one, no column can repeat and the missing columns are
//!   the trailing ones, so repeats are tracked (row stamps) only after a key out of order;
//! - scalars are checked by compiled rules that agree with [`ColumnCheck::read`] (they take a
//!   value only where it would; anything else goes to `ColumnCheck::read`, which decides);
//!   text number literals are classified exactly as the parser's lexer does;
//! - binary composite and `yson` values are validated by [`skip_value`] and handed out as the
//!   very bytes of the input: binary YSON already, the interface's convention for them.
//!   Nesting is bounded by [`MAX_SKIP_DEPTH`] (deeper values go to the parser, which has the
//!   real limit).
//!
//! [`ColumnCheck::read`]: crate::table::values::ColumnCheck

use std::mem::MaybeUninit;

use shapeshift_types::ValueRef;

use super::Table;
use crate::table::scanned_cell::{Cell, Span};
use crate::table::values::{ColumnCheck, ColumnKind, ScalarRule};
use crate::table::yson_binary;
use crate::yson::write_quoted;
use crate::yson::{decode_varint_fast, zigzag_decode, FAST_PATH_WINDOW};

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
    binary_key: PredictedKey,
    text_key: PredictedKey,
    rule: FastRule,
}

/// A column's key with its `=` as one spelling writes it.
struct PredictedKey {
    bytes: Vec<u8>,
    /// The bytes little-endian and the mask of their length: one 16-byte compare instead of a
    /// `memcmp` call. `None` for keys longer than 16 bytes (compared as slices).
    word: Option<(u128, u128)>,
}

impl PredictedKey {
    fn new(bytes: Vec<u8>) -> PredictedKey {
        let word = (bytes.len() <= 16).then(|| {
            let mut padded = [0u8; 16];
            padded[..bytes.len()].copy_from_slice(&bytes);
            let mask = if bytes.len() == 16 {
                u128::MAX
            } else {
                (1u128 << (8 * bytes.len())) - 1
            };
            (u128::from_le_bytes(padded), mask)
        });
        PredictedKey { bytes, word }
    }

    /// The key's length when `window[at..]` starts with it.
    #[inline(always)]
    fn at(&self, window: &[u8], at: usize) -> Option<usize> {
        let matches = match (self.word, window.get(at..at.wrapping_add(16))) {
            (Some((word, mask)), Some(chunk)) => {
                let mut bytes = [0u8; 16];
                bytes.copy_from_slice(chunk);
                u128::from_le_bytes(bytes) & mask == word
            }
            _ => window.get(at..at + self.bytes.len()) == Some(self.bytes.as_slice()),
        };
        matches.then_some(self.bytes.len())
    }
}

/// Scalar checks compiled into the scan for plain primitive columns: a value that passes is
/// one the column's type takes as it is (the type's own range, YT's bounds). A value that
/// fails — including the other integer kind, which YT's leniency may still accept — goes
/// through [`ColumnCheck::read`](crate::table::values::ColumnCheck), which decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FastRule {
    Signed {
        lo: i64,
        hi: i64,
    },
    Unsigned {
        hi: u64,
    },
    Double,
    Float,
    Bool,
    Bytes,
    Utf8,
    /// Everything goes through `ColumnCheck::read`.
    Checked,
}

impl FastRule {
    /// The hot-path copy of `check`'s compiled rule: the same bounds (found once, by
    /// `ColumnCheck::new`), so the two agree by construction. Nulls are never taken here
    /// ([`FastRule::takes`] is for values), so optional columns share their item's rule.
    pub(super) fn of_check(check: &ColumnCheck) -> FastRule {
        if check.kind != ColumnKind::Scalar {
            return FastRule::Checked;
        }
        match check.rule() {
            ScalarRule::Signed { lo, hi } => FastRule::Signed { lo, hi },
            ScalarRule::Unsigned { hi } => FastRule::Unsigned { hi },
            ScalarRule::Double => FastRule::Double,
            ScalarRule::Float => FastRule::Float,
            ScalarRule::Bool => FastRule::Bool,
            ScalarRule::Bytes => FastRule::Bytes,
            ScalarRule::Utf8 => FastRule::Utf8,
            ScalarRule::Uuid | ScalarRule::General => FastRule::Checked,
        }
    }

    /// True when the column takes `value` as it is.
    #[inline(always)]
    fn takes(self, value: ValueRef<'_>) -> bool {
        match (self, value) {
            (FastRule::Signed { lo, hi }, ValueRef::Int64(v)) => lo <= v && v <= hi,
            (FastRule::Unsigned { hi }, ValueRef::Uint64(v)) => v <= hi,
            (FastRule::Double, ValueRef::Double(_))
            | (FastRule::Bool, ValueRef::Bool(_))
            | (FastRule::Bytes, ValueRef::String(_)) => true,
            (FastRule::Float, ValueRef::Double(v)) => {
                !(v.is_finite() && v.abs() > f64::from(f32::MAX))
            }
            (FastRule::Utf8, ValueRef::String(v)) => crate::utf8::text(v).is_ok(),
            _ => false,
        }
    }
}

impl ScanColumn {
    /// `name` is the column's name, `rule` [`FastRule::of_check`] of its check.
    pub(super) fn new(name: &[u8], rule: FastRule) -> ScanColumn {
        let mut binary = Vec::new();
        yson_binary::string(&mut binary, name);
        binary.push(b'=');
        let mut text = Vec::new();
        write_quoted(name, &mut text);
        text.push(b'=');
        ScanColumn {
            binary_key: PredictedKey::new(binary),
            text_key: PredictedKey::new(text),
            rule,
        }
    }

    /// The column's key with its `=` as the text writer spells it (`"name"=`).
    #[inline(always)]
    pub(super) fn text_key(&self) -> &[u8] {
        &self.text_key.bytes
    }

    /// True when the column takes the scalar `value` as it is (else: `ColumnCheck::read`).
    #[inline(always)]
    pub(super) fn takes(&self, value: ValueRef<'_>) -> bool {
        self.rule.takes(value)
    }
}

/// A column as the binary fast entry sees it ([`binary_entry`]): its key with its `=` as one
/// masked 16-byte word, and which binary scalars it takes as they are, with their bounds.
/// Compiled from [`ScanColumn`]'s rule, so it takes exactly what [`FastRule::takes`] takes;
/// everything else goes to the general entry.
#[derive(Clone, Copy, Debug)]
pub(super) struct BinaryEntry {
    key_word: u128,
    /// Zero for keys longer than 16 bytes: with `key_word` 1 nothing matches.
    key_mask: u128,
    key_length: usize,
    /// `TAKES_*` bits.
    takes: u8,
    int_lo: i64,
    int_hi: i64,
    uint_hi: u64,
    /// A double is taken unless finite and larger in magnitude (`f32::MAX` for `float`).
    double_max: f64,
}

const TAKES_INT64: u8 = 1;
const TAKES_UINT64: u8 = 2;
const TAKES_DOUBLE: u8 = 4;
const TAKES_BOOL: u8 = 8;
const TAKES_BYTES: u8 = 16;
const TAKES_UTF8: u8 = 32;
const TAKES_NULL: u8 = 64;

impl BinaryEntry {
    /// `name` is the column's name, `check` its compiled check.
    pub(super) fn new(name: &[u8], check: &ColumnCheck) -> BinaryEntry {
        let mut key = Vec::new();
        yson_binary::string(&mut key, name);
        key.push(b'=');
        let (key_word, key_mask) = PredictedKey::new(key.clone()).word.unwrap_or((1, 0));
        let mut entry = BinaryEntry {
            key_word,
            key_mask,
            key_length: key.len(),
            // A null is the column's when it is nullable, whatever its kind (as
            // `ColumnCheck::read` and `scan_value` decide).
            takes: if check.nullable { TAKES_NULL } else { 0 },
            int_lo: 0,
            int_hi: 0,
            uint_hi: 0,
            double_max: f64::INFINITY,
        };
        match FastRule::of_check(check) {
            FastRule::Signed { lo, hi } => {
                entry.takes |= TAKES_INT64;
                (entry.int_lo, entry.int_hi) = (lo, hi);
            }
            FastRule::Unsigned { hi } => {
                entry.takes |= TAKES_UINT64;
                entry.uint_hi = hi;
            }
            FastRule::Double => entry.takes |= TAKES_DOUBLE,
            FastRule::Float => {
                entry.takes |= TAKES_DOUBLE;
                entry.double_max = f64::from(f32::MAX);
            }
            FastRule::Bool => entry.takes |= TAKES_BOOL,
            FastRule::Bytes => entry.takes |= TAKES_BYTES,
            FastRule::Utf8 => entry.takes |= TAKES_UTF8,
            FastRule::Checked => {}
        }
        entry
    }
}

/// Bytes the fast entry reads at once: a key of up to 16 bytes, then a value's marker and
/// the longest varint.
const ENTRY_HEAD: usize = 32;

/// One `key=value` entry of a binary row at `at`, when it is the one `entry` predicts
/// and its value a scalar the column takes as it is: the value's cell and where the entry
/// ends (before its separator). `None` otherwise (nothing consumed: the general entry reads
/// it, and decides). With 32 bytes in the window it needs one length check, and one more for
/// a string's bytes.
#[inline(always)]
fn binary_entry<'w, S: Slot<'w>>(
    window: &'w [u8],
    at: usize,
    entry: &BinaryEntry,
) -> Option<(S, usize)> {
    let head: &[u8; ENTRY_HEAD] = window.get(at..)?.first_chunk()?;
    let mut key = [0u8; 16];
    key.copy_from_slice(&head[..16]);
    if u128::from_le_bytes(key) & entry.key_mask != entry.key_word {
        return None;
    }
    let value_at = at + entry.key_length;
    // `key_length` is at most 16 here.
    let value: &[u8; FAST_PATH_WINDOW] = head.get(entry.key_length..)?.first_chunk()?;
    let takes = entry.takes;
    Some(match value[0] {
        0x02 => {
            let (raw, length) = decode_varint_fast(value)?;
            let v = zigzag_decode(raw);
            if takes & TAKES_INT64 == 0 || v < entry.int_lo || v > entry.int_hi {
                return None;
            }
            (S::int64(v), value_at + 1 + length)
        }
        0x06 => {
            let (v, length) = decode_varint_fast(value)?;
            if takes & TAKES_UINT64 == 0 || v > entry.uint_hi {
                return None;
            }
            (S::uint64(v), value_at + 1 + length)
        }
        0x03 => {
            let mut bits = [0u8; 8];
            bits.copy_from_slice(&value[1..9]);
            let v = f64::from_le_bytes(bits);
            if takes & TAKES_DOUBLE == 0 || (v.is_finite() && v.abs() > entry.double_max) {
                return None;
            }
            (S::double(v), value_at + 9)
        }
        0x01 => {
            let (raw, length) = decode_varint_fast(value)?;
            let length_of_bytes = usize::try_from(zigzag_decode(raw)).ok()?;
            let start = value_at + 1 + length;
            let end = start.checked_add(length_of_bytes)?;
            let bytes = window.get(start..end)?;
            if takes & TAKES_BYTES == 0
                && (takes & TAKES_UTF8 == 0 || crate::utf8::text(bytes).is_err())
            {
                return None;
            }
            (S::string(window, start, end), end)
        }
        0x04 | 0x05 if takes & TAKES_BOOL != 0 => (S::bool(value[0] == 0x05), value_at + 1),
        b'#' if takes & TAKES_NULL != 0 => (S::null(), value_at + 1),
        _ => return None,
    })
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

/// What a scan writes for each column: a [`Cell`] (bytes as spans, in the window or the
/// scratch) or, for binary rows whose window stays put, the [`ValueRef`] itself (no second
/// pass turning cells into refs, with its second dispatch on the value's kind).
pub(super) trait Slot<'w>: Copy {
    fn null() -> Self;
    fn bool(v: bool) -> Self;
    fn int64(v: i64) -> Self;
    fn uint64(v: u64) -> Self;
    fn double(v: f64) -> Self;
    /// A string at `window[start..end]`.
    fn string(window: &'w [u8], start: usize, end: usize) -> Self;
    /// The general path's cell; `None` for a cell of the scratch when the slot cannot hold
    /// one (the row goes to the parser).
    fn of_cell(cell: Cell, window: &'w [u8]) -> Option<Self>;
}

impl Slot<'_> for Cell {
    #[inline(always)]
    fn null() -> Cell {
        Cell::Null
    }
    #[inline(always)]
    fn bool(v: bool) -> Cell {
        Cell::Bool(v)
    }
    #[inline(always)]
    fn int64(v: i64) -> Cell {
        Cell::Int64(v)
    }
    #[inline(always)]
    fn uint64(v: u64) -> Cell {
        Cell::Uint64(v)
    }
    #[inline(always)]
    fn double(v: f64) -> Cell {
        Cell::Double(v)
    }
    #[inline(always)]
    fn string(_: &[u8], start: usize, end: usize) -> Cell {
        Cell::String(Span::in_input(start, end))
    }
    #[inline(always)]
    fn of_cell(cell: Cell, _: &[u8]) -> Option<Cell> {
        Some(cell)
    }
}

impl<'w> Slot<'w> for ValueRef<'w> {
    #[inline(always)]
    fn null() -> Self {
        ValueRef::Null
    }
    #[inline(always)]
    fn bool(v: bool) -> Self {
        ValueRef::Bool(v)
    }
    #[inline(always)]
    fn int64(v: i64) -> Self {
        ValueRef::Int64(v)
    }
    #[inline(always)]
    fn uint64(v: u64) -> Self {
        ValueRef::Uint64(v)
    }
    #[inline(always)]
    fn double(v: f64) -> Self {
        ValueRef::Double(v)
    }
    #[inline(always)]
    fn string(window: &'w [u8], start: usize, end: usize) -> Self {
        ValueRef::String(&window[start..end])
    }
    #[inline(always)]
    fn of_cell(cell: Cell, window: &'w [u8]) -> Option<Self> {
        let in_window = |span: Span| (!span.in_scratch).then(|| &window[span.start..span.end]);
        Some(match cell {
            Cell::Null => ValueRef::Null,
            Cell::Bool(v) => ValueRef::Bool(v),
            Cell::Int64(v) => ValueRef::Int64(v),
            Cell::Uint64(v) => ValueRef::Uint64(v),
            Cell::Double(v) => ValueRef::Double(v),
            Cell::String(span) => ValueRef::String(in_window(span)?),
            Cell::Composite(span) => ValueRef::Composite(in_window(span)?),
            Cell::Any(span) => ValueRef::Any(in_window(span)?),
        })
    }
}

/// A slot of a vector's spare capacity, written by the scan before the vector's length
/// covers it ([`scan_row`] writes every slot of a row it accepts).
impl<'w> Slot<'w> for MaybeUninit<ValueRef<'w>> {
    #[inline(always)]
    fn null() -> Self {
        MaybeUninit::new(ValueRef::Null)
    }
    #[inline(always)]
    fn bool(v: bool) -> Self {
        MaybeUninit::new(ValueRef::Bool(v))
    }
    #[inline(always)]
    fn int64(v: i64) -> Self {
        MaybeUninit::new(ValueRef::Int64(v))
    }
    #[inline(always)]
    fn uint64(v: u64) -> Self {
        MaybeUninit::new(ValueRef::Uint64(v))
    }
    #[inline(always)]
    fn double(v: f64) -> Self {
        MaybeUninit::new(ValueRef::Double(v))
    }
    #[inline(always)]
    fn string(window: &'w [u8], start: usize, end: usize) -> Self {
        MaybeUninit::new(ValueRef::String(&window[start..end]))
    }
    #[inline(always)]
    fn of_cell(cell: Cell, window: &'w [u8]) -> Option<Self> {
        <ValueRef<'w> as Slot<'w>>::of_cell(cell, window).map(MaybeUninit::new)
    }
}

/// Scans the row map at the start of `window` (whose first byte is `{`) into `cells` (one per
/// column of `table`; spans relative to `window`); returns the length of the row with its
/// `;`. A row it accepts has had *every* one of its cells written: each column named (once:
/// a repeat is refused) and each missing one as null — callers rely on it to scan into
/// uninitialised slots.
/// `TEXT` selects the spelling (see the module docs).
#[inline]
pub(super) fn scan_row<'w, const TEXT: bool, S: Slot<'w>>(
    window: &'w [u8],
    table: &Table,
    cells: &mut [S],
    state: &mut ScanState,
    scratch: &mut Vec<u8>,
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
    // Every column so far was the predicted one (0, 1, 2, ...): no column can have been
    // named twice, so nothing is stamped in `state.seen` until a key comes out of order.
    let mut in_order = true;
    if byte(window, at)? != b'}' {
        loop {
            let fast = match (TEXT, in_order, table.binary_entries.get(expected)) {
                (false, true, Some(entry)) => binary_entry(window, at, entry),
                _ => None,
            };
            let column = if let Some((cell, end)) = fast {
                cells[expected] = cell;
                at = end;
                expected
            } else {
                let predicted = table.scan_columns.get(expected).and_then(|plan| {
                    let key = if TEXT {
                        &plan.text_key
                    } else {
                        &plan.binary_key
                    };
                    key.at(window, at)
                });
                let column = match predicted {
                    Some(length) => {
                        at += length;
                        expected
                    }
                    None => {
                        let (start, end) = if TEXT {
                            quoted_string(window, &mut at)?
                        } else {
                            if byte(window, at)? != 0x01 {
                                return Err(Bail::Fallback);
                            }
                            at += 1;
                            string_body(window, &mut at)?
                        };
                        if byte(window, at)? != b'=' {
                            return Err(Bail::Fallback);
                        }
                        at += 1;
                        *table.index.get(&window[start..end]).ok_or(Bail::Fallback)?
                    }
                };
                if in_order && column != expected {
                    // Out of order: from here on, columns are stamped as they come.
                    in_order = false;
                    for seen in &mut state.seen[..expected] {
                        *seen = stamp;
                    }
                }
                if !in_order {
                    // A repeated column is the parser's error to report.
                    let seen = &mut state.seen[column];
                    if *seen == stamp {
                        return Err(Bail::Fallback);
                    }
                    *seen = stamp;
                }
                let cell = if TEXT {
                    scan_text_value(window, &mut at, table, column, scratch, max_depth)?
                } else {
                    scan_value(window, &mut at, table, column, max_depth)?
                };
                cells[column] = S::of_cell(cell, window).ok_or(Bail::Fallback)?;
                column
            };
            found += 1;
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
        // In order, the columns named were exactly the first `found`.
        let first_missing = if in_order { found } else { 0 };
        for (column, cell) in cells.iter_mut().enumerate().skip(first_missing) {
            if in_order || state.seen[column] != stamp {
                if !table.checks[column].nullable {
                    return Err(Bail::Fallback);
                }
                *cell = S::null();
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
        return checked_cell(table, column, value, string);
    }
    if marker == b'#' && check.nullable {
        *at += 1;
        return Ok(Cell::Null);
    }
    let start = *at;
    // The row map is one level already.
    skip_value(window, at, max_depth.saturating_sub(1))?;
    let span = Span::in_input(start, *at);
    Ok(if check.kind == ColumnKind::Yson {
        Cell::Any(span)
    } else {
        Cell::Composite(span)
    })
}

/// A scalar of `column` as its cell, after the column's check; `string` is where a string
/// value lies in the window.
#[inline(always)]
fn checked_cell(
    table: &Table,
    column: usize,
    value: ValueRef<'_>,
    string: (usize, usize),
) -> Result<Cell, Bail> {
    let value = if table.scan_columns[column].takes(value) {
        value
    } else {
        table.checks[column]
            .read(value, &table.schema.columns[column].ty)
            .map_err(|_| Bail::Fallback)?
    };
    Ok(match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Bool(v) => Cell::Bool(v),
        ValueRef::Int64(v) => Cell::Int64(v),
        ValueRef::Uint64(v) => Cell::Uint64(v),
        ValueRef::Double(v) => Cell::Double(v),
        ValueRef::String(_) => Cell::String(Span::in_input(string.0, string.1)),
        ValueRef::Composite(_) | ValueRef::Any(_) => return Err(Bail::Fallback),
    })
}

/// A quoted text string without escapes at `*at` (its `"`): its bytes, `start..end`.
#[inline(always)]
fn quoted_string(window: &[u8], at: &mut usize) -> Result<(usize, usize), Bail> {
    if byte(window, *at)? != b'"' {
        return Err(Bail::Fallback);
    }
    let start = *at + 1;
    let rest = window.get(start..).unwrap_or_default();
    match rest.iter().position(|&b| b == b'"' || b == b'\\') {
        Some(length) if rest[length] == b'"' => {
            *at = start + length + 1;
            Ok((start, start + length))
        }
        // An escape: the parser unescapes it.
        Some(_) => Err(Bail::Fallback),
        None => Err(Bail::NeedMore),
    }
}

/// The longest numeric or `%` literal the parser accepts.
const MAX_LITERAL_LENGTH: usize = 1024;

/// The literal from `*at` of the bytes `allowed` takes, as the parser's lexer collects it
/// (it must end inside the window: the byte after it decides where it ends).
#[inline(always)]
fn literal<'w>(
    window: &'w [u8],
    at: &mut usize,
    allowed: fn(u8) -> bool,
) -> Result<&'w [u8], Bail> {
    let rest = window.get(*at..).unwrap_or_default();
    let length = rest
        .iter()
        .position(|&b| !allowed(b))
        .ok_or(Bail::NeedMore)?;
    if length > MAX_LITERAL_LENGTH {
        return Err(Bail::Fallback);
    }
    *at += length;
    Ok(&rest[..length])
}

/// A text number literal, classified exactly as the parser's `lex_number` does: `digits u`
/// is a uint64, anything with `.`, `e` or `E` a double, else an optionally signed int64.
/// Anything the parser would refuse is a fallback (the parser reports it).
#[inline(always)]
fn number(literal: &[u8]) -> Result<ValueRef<'static>, Bail> {
    // The literal's bytes are ASCII (the lexer's set), so valid UTF-8.
    let text = std::str::from_utf8(literal).map_err(|_| Bail::Fallback)?;
    if let Some(digits) = text.strip_suffix('u') {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Bail::Fallback);
        }
        return digits
            .parse::<u64>()
            .map(ValueRef::Uint64)
            .map_err(|_| Bail::Fallback);
    }
    if literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        if !literal
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return Err(Bail::Fallback);
        }
        return text
            .parse::<f64>()
            .map(ValueRef::Double)
            .map_err(|_| Bail::Fallback);
    }
    let digits = match literal {
        [b'+' | b'-', rest @ ..] => rest,
        rest => rest,
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(Bail::Fallback);
    }
    text.parse::<i64>()
        .map(ValueRef::Int64)
        .map_err(|_| Bail::Fallback)
}

/// One text column value at `*at`; composite and `yson` values are re-spelled as binary YSON
/// into `scratch`, as the parser path re-spells them.
#[inline(always)]
fn scan_text_value(
    window: &[u8],
    at: &mut usize,
    table: &Table,
    column: usize,
    scratch: &mut Vec<u8>,
    max_depth: usize,
) -> Result<Cell, Bail> {
    let check = &table.checks[column];
    let marker = byte(window, *at)?;
    if check.kind != ColumnKind::Scalar {
        if marker == b'#' && check.nullable {
            *at += 1;
            return Ok(Cell::Null);
        }
        let start = scratch.len();
        // The row map is one level already.
        transcode_text_value(window, at, scratch, max_depth.saturating_sub(1))?;
        let span = Span::in_scratch(start, scratch.len());
        return Ok(if check.kind == ColumnKind::Yson {
            Cell::Any(span)
        } else {
            Cell::Composite(span)
        });
    }
    let mut string = (0, 0);
    let value = match text_scalar(window, at, marker, &mut string)? {
        Some(value) => value,
        None => return Err(Bail::Fallback),
    };
    checked_cell(table, column, value, string)
}

/// A text scalar whose first byte `marker` is at `*at`; `None` when it is none (a container
/// or anything the scan leaves to the parser). A string's place is put in `string`.
#[inline(always)]
fn text_scalar<'w>(
    window: &'w [u8],
    at: &mut usize,
    marker: u8,
    string: &mut (usize, usize),
) -> Result<Option<ValueRef<'w>>, Bail> {
    Ok(Some(match marker {
        b'"' => {
            *string = quoted_string(window, at)?;
            ValueRef::String(&window[string.0..string.1])
        }
        b'#' => {
            *at += 1;
            ValueRef::Null
        }
        b'0'..=b'9' | b'-' | b'+' => number(literal(window, at, |b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-')
        })?)?,
        b'%' => {
            *at += 1;
            match literal(window, at, |b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-')
            })? {
                b"true" => ValueRef::Bool(true),
                b"false" => ValueRef::Bool(false),
                b"nan" => ValueRef::Double(f64::NAN),
                b"inf" | b"+inf" => ValueRef::Double(f64::INFINITY),
                b"-inf" => ValueRef::Double(f64::NEG_INFINITY),
                _ => return Err(Bail::Fallback),
            }
        }
        _ => return Ok(None),
    }))
}

/// Re-spells one text value from `*at` as binary YSON into `out`, byte for byte as the
/// parser path's transcoding does (every item inside a container followed by `;`), and
/// moves past it. Text without whitespace only; anything else is a fallback.
fn transcode_text_value(
    window: &[u8],
    at: &mut usize,
    out: &mut Vec<u8>,
    max_depth: usize,
) -> Result<(), Bail> {
    let mut closes = [0u8; MAX_SKIP_DEPTH];
    let mut depth = 0usize;
    let max_depth = max_depth.min(MAX_SKIP_DEPTH);
    let mut attributes_allowed = true;
    loop {
        // A value.
        let marker = byte(window, *at)?;
        match marker {
            b'[' | b'{' | b'<' => {
                if depth == max_depth || (marker == b'<' && !attributes_allowed) {
                    return Err(Bail::Fallback);
                }
                let close = match marker {
                    b'[' => b']',
                    b'{' => b'}',
                    _ => b'>',
                };
                closes[depth] = close;
                depth += 1;
                *at += 1;
                out.push(marker);
                if marker == b'[' {
                    if byte(window, *at)? != b']' {
                        attributes_allowed = true;
                        continue;
                    }
                    *at += 1;
                    depth -= 1;
                    out.push(b']');
                } else if text_key_or_close(window, at, close, out)? {
                    depth -= 1;
                    out.push(close);
                    if close == b'>' {
                        attributes_allowed = false;
                        continue;
                    }
                } else {
                    attributes_allowed = true;
                    continue;
                }
            }
            _ => {
                let mut string = (0, 0);
                match text_scalar(window, at, marker, &mut string)? {
                    Some(ValueRef::Null) => out.push(b'#'),
                    Some(ValueRef::Bool(v)) => yson_binary::boolean(out, v),
                    Some(ValueRef::Int64(v)) => yson_binary::int64(out, v),
                    Some(ValueRef::Uint64(v)) => yson_binary::uint64(out, v),
                    Some(ValueRef::Double(v)) => yson_binary::double(out, v),
                    Some(ValueRef::String(v)) => yson_binary::string(out, v),
                    _ => return Err(Bail::Fallback),
                }
            }
        }
        // A complete value: `;` after it inside a container, then separators and closes.
        loop {
            if depth == 0 {
                return Ok(());
            }
            out.push(b';');
            let close = closes[depth - 1];
            match byte(window, *at)? {
                b';' => {
                    *at += 1;
                    if close == b']' {
                        if byte(window, *at)? == b']' {
                            *at += 1;
                            depth -= 1;
                            out.push(b']');
                            continue;
                        }
                        attributes_allowed = true;
                        break;
                    }
                    if text_key_or_close(window, at, close, out)? {
                        depth -= 1;
                        out.push(close);
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
                    out.push(close);
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

/// In a text map or attribute map: either its `close` (`true`, consumed) or a quoted key and
/// its `=` (`false`, consumed, the key written as binary YSON with its `=`).
#[inline(always)]
fn text_key_or_close(
    window: &[u8],
    at: &mut usize,
    close: u8,
    out: &mut Vec<u8>,
) -> Result<bool, Bail> {
    if byte(window, *at)? == close {
        *at += 1;
        return Ok(true);
    }
    let (start, end) = quoted_string(window, at)?;
    if byte(window, *at)? != b'=' {
        return Err(Bail::Fallback);
    }
    *at += 1;
    yson_binary::string(out, &window[start..end]);
    out.push(b'=');
    Ok(false)
}
