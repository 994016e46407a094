//! YSON table streams through the common interface ([`crate::table`]).
//!
//! A stream is a list fragment of row maps with control entities between them
//! (`<table_index=1>#`, `<row_index=N>#`, `<range_index=N>#`, `<key_switch=%true>#`), which
//! map to [`RowPosition`] as `table::position` describes.
//!
//! Reading parses each row *in place* in the parser's read buffer and hands out slices of it:
//! strings (and, for binary input, composite and `yson` values, which already are the binary
//! YSON the interface's rows carry) borrow the buffer; nothing is copied per value.
//! - The fast path ([`row_scan`]) scans a whole row spelled as writers spell it (binary, or
//!   text with scalar values) straight from the buffer: the next key is compared with the
//!   predicted column's key bytes (the column after the last one matched) before any lookup,
//!   scalars are checked against their column types as they come, binary composite values
//!   are validated by skipping over them. It accepts only rows it is sure of and consumes
//!   nothing otherwise. In blocks, binary rows after the first are scanned straight into the
//!   block's refs, and their bytes consumed on the next call (see `next_rows`).
//! - Any other row (text composites, escapes, mixed spellings, whitespace inside a row,
//!   control entities, other columns, any error) goes through the pull parser's events. The row's first byte is *pinned* in the
//!   buffer (`ReadSource::pin`), so a refill in the middle of the row moves the row rather than
//!   dropping it and strings stay where they are; only strings that are not in the buffer
//!   (escaped text, a token across a refill) and composites of text input (re-spelled as
//!   binary YSON) go to a per-row scratch buffer.
//!
//! The buffer starts at [`READ_BUFFER_SIZE`] and grows (doubling) only for a row longer than
//! it, up to [`MAX_ROW_BYTES`]; a longer row is an error naming its first byte. Errors, the
//! other-columns path, control entities and positions are the pull parser path's, so they
//! read exactly as before: every error names its byte offset and row.
//!
//! Columns missing from a row are null (an error for a non-nullable column); a column named
//! twice is an error. A column the schema does not name is an error for a strict schema and
//! kept as one of the row's other columns for a non-strict one. Composite values are checked
//! for well-formed YSON here and against their types by whoever decodes them: a YSON to YSON
//! copy passes any well-formed YSON through.
//!
//! Writing checks every value against its column type; binary YSON is written straight into
//! a buffer, text YSON by [`text_sink`] (spelled byte for byte as the YSON module's writer and
//! `yt.yson.dumps` spell it).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::mem::MaybeUninit;
use std::sync::Arc;

use shapeshift_types::{TableSchema, Type, Value, ValueRef};

use crate::table::other_columns;
use crate::table::position::{Control, PositionReader, PositionWriter};
use crate::table::row_refs::RefsBuffer;
use crate::table::scanned_cell::{Cell, Span};
use crate::table::values::{scalar_ref, value_from_ref, ColumnCheck, ColumnKind};
use crate::table::yson_binary;
use crate::table::{FormatError, RowBlock, RowPosition, RowRef, RowSink, RowSource};
use crate::yson::{Event, PullParser, ReadSource, Source, YsonError, YsonType};

const FORMAT: &str = "yson";

fn yson_error(error: YsonError) -> FormatError {
    FormatError::new(FORMAT, error.message()).at(error.offset())
}

/// One input or output table: its schema and how its columns travel.
pub(crate) struct Table {
    schema: TableSchema,
    checks: Vec<ColumnCheck>,
    /// Each column's key as binary YSON, with its `=`: written once per row as is.
    keys: Vec<Vec<u8>>,
    /// Column index by name, for reading.
    index: HashMap<Vec<u8>, usize>,
    /// Key words and scalar rules of the in-place scan.
    scan_columns: Vec<row_scan::ScanColumn>,
    /// The same, compact, for the binary scan's fast entries.
    binary_entries: Vec<row_scan::BinaryEntry>,
}

impl Table {
    fn new(schema: &TableSchema) -> Table {
        // Compiling a column's check bisects its type's bounds (hundreds of checks); wide
        // tables repeat few types (BM1: 1000 columns, 10 types), so each is compiled once, and
        // the scan's rule is derived from the check rather than bisected again.
        let mut compiled: HashMap<&Type, ColumnCheck> = HashMap::new();
        let (checks, scan_columns) = schema
            .columns
            .iter()
            .map(|c| {
                let check = *compiled
                    .entry(&c.ty)
                    .or_insert_with(|| ColumnCheck::new(&c.ty));
                let rule = row_scan::FastRule::of_check(&check);
                (check, row_scan::ScanColumn::new(c.name.as_bytes(), rule))
            })
            .unzip();
        let binary_entries = schema
            .columns
            .iter()
            .zip(&checks)
            .map(|(c, check)| row_scan::BinaryEntry::new(c.name.as_bytes(), check))
            .collect();
        Table {
            checks,
            keys: schema
                .columns
                .iter()
                .map(|c| {
                    let mut key = Vec::new();
                    yson_binary::string(&mut key, c.name.as_bytes());
                    key.push(b'=');
                    key
                })
                .collect(),
            index: schema
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.as_bytes().to_vec(), i))
                .collect(),
            scan_columns,
            binary_entries,
            schema: schema.clone(),
        }
    }
}

/// The read buffer's initial size: large, so that a row cut by the buffer's end (scanned
/// again after the refill) costs a small share of the bytes read.
const READ_BUFFER_SIZE: usize = 1 << 20;

/// The longest row the reader takes, in bytes (YT's own limit on a row's weight is 128 MiB).
const MAX_ROW_BYTES: usize = 256 << 20;

/// Every table's compiled checks, keys and scan rules, shared by the sources and sinks
/// opened over them.
pub(crate) type YsonTables = Arc<[Table]>;

/// Compiles the tables of `schemas`.
pub(crate) fn compile(schemas: &[TableSchema]) -> YsonTables {
    schemas.iter().map(Table::new).collect()
}

/// A YSON row reader (binary or text input) of `tables` over `input`.
pub(crate) fn source_over(tables: YsonTables, input: Box<dyn Read>) -> Box<dyn RowSource> {
    Box::new(YsonRowSource::over(
        tables,
        input,
        READ_BUFFER_SIZE,
        MAX_ROW_BYTES,
    ))
}

mod row_scan;
mod text_sink;

struct YsonRowSource {
    parser: Parser,
    tables: YsonTables,
    positions: PositionReader,
    /// The current row's values (one per column of its table).
    cells: Vec<Cell>,
    scan: row_scan::ScanState,
    seen: Vec<bool>,
    /// Input offset of the pinned first byte of the row the parser path reads.
    row_start: u64,
    /// Strings not in the buffer and composites re-spelled from text, of the current row.
    scratch: Vec<u8>,
    /// The row's columns outside a non-strict schema, as a binary YSON map (empty: none).
    others: Vec<u8>,
    refs: RefsBuffer,
    /// The cells of the rows of a block, row after row (the first `block_filled`; the rest is
    /// room kept from earlier blocks, so a row is scanned straight into its place without
    /// initialising it first), and each row's place in the buffer (index, length).
    block_cells: Vec<Cell>,
    block_filled: usize,
    block_rows: Vec<(usize, usize)>,
    rows: u64,
    /// Bytes of the last block's rows still to be consumed (see [`YsonRowSource::settle`]).
    unconsumed: usize,
    /// The fast path is tried (off only in tests, to compare it with the parser path).
    scan_rows: bool,
}

impl YsonRowSource {
    /// A source compiling its own tables (the tests' constructor, with their buffer sizes).
    #[cfg(test)]
    fn new(
        schemas: &[TableSchema],
        input: Box<dyn Read>,
        buffer_size: usize,
        max_row_bytes: usize,
    ) -> YsonRowSource {
        Self::over(compile(schemas), input, buffer_size, max_row_bytes)
    }

    fn over(
        tables: YsonTables,
        input: Box<dyn Read>,
        buffer_size: usize,
        max_row_bytes: usize,
    ) -> YsonRowSource {
        let max_columns = tables.iter().map(|t| t.checks.len()).max().unwrap_or(0);
        YsonRowSource {
            parser: PullParser::from_reader_with_sizes(
                input,
                YsonType::ListFragment,
                buffer_size,
                max_row_bytes,
            ),
            tables,
            positions: PositionReader::default(),
            cells: Vec::new(),
            scan: row_scan::ScanState::new(max_columns),
            seen: Vec::new(),
            row_start: 0,
            scratch: Vec::new(),
            others: Vec::new(),
            refs: RefsBuffer::default(),
            block_cells: Vec::new(),
            block_filled: 0,
            block_rows: Vec::new(),
            rows: 0,
            unconsumed: 0,
            scan_rows: true,
        }
    }
}

/// Writes one event as binary YSON; `true` when it completes a value at `depth` 0.
#[inline]
fn transcode_event(event: Event<'_>, out: &mut Vec<u8>, depth: &mut usize) -> bool {
    let completes = match event {
        Event::BeginList => {
            out.push(b'[');
            *depth += 1;
            false
        }
        Event::BeginMap => {
            out.push(b'{');
            *depth += 1;
            false
        }
        Event::BeginAttributes => {
            out.push(b'<');
            *depth += 1;
            false
        }
        Event::EndList => {
            out.push(b']');
            *depth -= 1;
            true
        }
        Event::EndMap => {
            out.push(b'}');
            *depth -= 1;
            true
        }
        Event::EndAttributes => {
            out.push(b'>');
            *depth -= 1;
            false
        }
        Event::Key(key) => {
            yson_binary::string(out, key);
            out.push(b'=');
            false
        }
        Event::Entity => {
            out.push(b'#');
            true
        }
        Event::Bool(v) => {
            yson_binary::boolean(out, v);
            true
        }
        Event::Int64(v) => {
            yson_binary::int64(out, v);
            true
        }
        Event::Uint64(v) => {
            yson_binary::uint64(out, v);
            true
        }
        Event::Double(v) => {
            yson_binary::double(out, v);
            true
        }
        Event::String(v) => {
            yson_binary::string(out, v);
            true
        }
    };
    if completes && *depth > 0 {
        out.push(b';');
        return false;
    }
    completes && *depth == 0
}

type Parser = PullParser<ReadSource<Box<dyn Read>>>;

/// The parser's next event inside a row: `return`s the error (the end of the stream is one).
/// A macro rather than a function: a `Result<Event, FormatError>` is large, and building one
/// per event showed in the profile of text reads.
macro_rules! next_event_in_row {
    ($parser:expr) => {{
        let offset = $parser.offset();
        match $parser.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => return Err(end_of_stream(offset)),
            Err(e) => return Err(yson_error(e)),
        }
    }};
}

#[cold]
fn end_of_stream(offset: u64) -> FormatError {
    FormatError::new(FORMAT, "unexpected end of the stream").at(offset)
}

fn next_event_or_end(parser: &mut Parser) -> Result<Event<'_>, FormatError> {
    let offset = parser.offset();
    match parser.next_event() {
        Ok(Some(event)) => Ok(event),
        Ok(None) => Err(FormatError::new(FORMAT, "unexpected end of the stream").at(offset)),
        Err(e) => Err(yson_error(e)),
    }
}

impl YsonRowSource {
    /// Copies the rest of a value whose first event was written, up to its end.
    fn transcode_rest(&mut self, mut depth: usize) -> Result<(), FormatError> {
        loop {
            let offset = self.parser.offset();
            let event = match self.parser.next_event() {
                Ok(Some(event)) => event,
                Ok(None) => {
                    return Err(FormatError::new(FORMAT, "unexpected end inside a value").at(offset))
                }
                Err(e) => return Err(yson_error(e)),
            };
            if transcode_event(event, &mut self.scratch, &mut depth) {
                return Ok(());
            }
        }
    }

    /// Moves the value of column `name`, which a non-strict schema does not name, into the
    /// row's other columns.
    fn keep_other(&mut self, name_at: (usize, usize)) -> Result<(), FormatError> {
        let mut depth = 0usize;
        let start = self.scratch.len();
        let event = next_event_or_end(&mut self.parser)?;
        let done = transcode_event(event, &mut self.scratch, &mut depth);
        if !done {
            self.transcode_rest(depth)?;
        }
        if self.others.is_empty() {
            self.others.push(b'{');
        }
        yson_binary::string(&mut self.others, &self.scratch[name_at.0..name_at.1]);
        self.others.push(b'=');
        self.others.extend_from_slice(&self.scratch[start..]);
        self.others.push(b';');
        self.scratch.truncate(name_at.0);
        Ok(())
    }

    /// Reads `<...>#` after its `<`.
    fn read_controls(&mut self) -> Result<(), FormatError> {
        loop {
            let offset = self.parser.offset();
            let which = match next_event_or_end(&mut self.parser)? {
                Event::EndAttributes => break,
                Event::Key(b"table_index") => 0,
                Event::Key(b"row_index") => 1,
                Event::Key(b"range_index") => 2,
                Event::Key(b"key_switch") => 3,
                Event::Key(other) => {
                    let name = String::from_utf8_lossy(other).into_owned();
                    return Err(FormatError::new(
                        FORMAT,
                        format!("unknown control attribute \"{name}\" (expected table_index, row_index, range_index or key_switch)"),
                    )
                    .at(offset));
                }
                _ => unreachable_event(offset)?,
            };
            let offset = self.parser.offset();
            let control = match (which, next_event_or_end(&mut self.parser)?) {
                (0, Event::Int64(i)) if i >= 0 => {
                    let index = usize::try_from(i).unwrap_or(usize::MAX);
                    if index >= self.tables.len() {
                        return Err(FormatError::new(
                            FORMAT,
                            format!("table index {i} is out of range: {} table schemas", self.tables.len()),
                        )
                        .at(offset));
                    }
                    Control::TableIndex(index)
                }
                (1, Event::Int64(i)) => Control::RowIndex(i),
                (2, Event::Int64(i)) => Control::RangeIndex(i),
                (3, Event::Bool(true)) => Control::KeySwitch,
                (3, Event::Bool(false)) => continue,
                _ => {
                    return Err(FormatError::new(
                        FORMAT,
                        "a control attribute has a value of the wrong kind (table_index, row_index, range_index: non-negative int64; key_switch: boolean)",
                    )
                    .at(offset))
                }
            };
            self.positions.control(control);
        }
        let offset = self.parser.offset();
        match next_event_or_end(&mut self.parser)? {
            Event::Entity => Ok(()),
            _ => Err(FormatError::new(
                FORMAT,
                "expected # after control attributes (rows cannot carry attributes)",
            )
            .at(offset)),
        }
    }

    /// Reads a row after its `{`.
    fn read_row(&mut self, table: usize) -> Result<(), FormatError> {
        let columns = self.tables[table].schema.columns.len();
        self.cells.clear();
        self.cells.resize(columns, Cell::Null);
        self.seen.clear();
        self.seen.resize(columns, false);
        self.scratch.clear();
        self.others.clear();
        // Rows usually list their columns in schema order: try the next one before hashing.
        let mut expected = 0usize;
        loop {
            let offset = self.parser.offset();
            let column = match next_event_in_row!(self.parser) {
                Event::EndMap => break,
                Event::Key(name) => {
                    let table_columns = &self.tables[table];
                    match table_columns
                        .schema
                        .columns
                        .get(expected)
                        .filter(|c| c.name.as_bytes() == name)
                        .map(|_| expected)
                        .or_else(|| table_columns.index.get(name).copied())
                    {
                        Some(column) => column,
                        None if self.tables[table].schema.strict => {
                            let name = String::from_utf8_lossy(name).into_owned();
                            return Err(FormatError::new(
                            FORMAT,
                            format!("column \"{name}\" is not in the strict schema of table {table}"),
                        )
                        .at(offset));
                        }
                        None => {
                            let at = self.scratch.len();
                            self.scratch.extend_from_slice(name);
                            let end = self.scratch.len();
                            self.keep_other((at, end))?;
                            continue;
                        }
                    }
                }
                _ => unreachable_event(offset)?,
            };
            expected = column + 1;
            if std::mem::replace(&mut self.seen[column], true) {
                return Err(FormatError::new(
                    FORMAT,
                    format!(
                        "column \"{}\" appears twice in the row",
                        self.tables[table].schema.columns[column].name
                    ),
                )
                .at(offset));
            }
            let offset = self.parser.offset();
            self.cells[column] = self
                .read_value(table, column)
                .map_err(|e| e.at_least(offset, &self.tables[table].schema.columns[column].name))?;
        }
        for (column, seen) in self.seen.iter().enumerate() {
            let spec = &self.tables[table].schema.columns[column];
            if !seen && !spec.ty.is_nullable() {
                return Err(FormatError::new(
                    FORMAT,
                    format!("required column \"{}\" is missing from the row", spec.name),
                )
                .at(self.parser.offset()));
            }
        }
        Ok(())
    }

    fn read_value(&mut self, table: usize, column: usize) -> Result<Cell, FormatError> {
        let ColumnCheck { kind, nullable, .. } = self.tables[table].checks[column];
        let start = self.scratch.len();
        let event = next_event_in_row!(self.parser);
        match kind {
            ColumnKind::Scalar => {
                let value = match event {
                    Event::Entity => ValueRef::Null,
                    Event::Bool(v) => ValueRef::Bool(v),
                    Event::Int64(v) => ValueRef::Int64(v),
                    Event::Uint64(v) => ValueRef::Uint64(v),
                    Event::Double(v) => ValueRef::Double(v),
                    Event::String(v) => ValueRef::String(v),
                    other => {
                        return Err(FormatError::new(
                            FORMAT,
                            format!("expected a scalar, found {}", event_name(&other)),
                        ))
                    }
                };
                let spec = &self.tables[table];
                let value = if spec.scan_columns[column].takes(value) {
                    value
                } else {
                    spec.checks[column]
                        .read(value, &spec.schema.columns[column].ty)
                        .map_err(|e| FormatError::new(FORMAT, e.to_string()))?
                };
                Ok(match value {
                    ValueRef::Bool(v) => Cell::Bool(v),
                    ValueRef::Int64(v) => Cell::Int64(v),
                    ValueRef::Uint64(v) => Cell::Uint64(v),
                    ValueRef::Double(v) => Cell::Double(v),
                    ValueRef::String(v) => {
                        // The string borrows the parser: keep its address, then find it.
                        let (address, len) = (v.as_ptr() as usize, v.len());
                        Cell::String(self.string_span(address, len)?)
                    }
                    _ => Cell::Null,
                })
            }
            ColumnKind::Yson | ColumnKind::Composite => {
                if matches!(event, Event::Entity) && nullable {
                    return Ok(Cell::Null);
                }
                let mut depth = 0usize;
                if !transcode_event(event, &mut self.scratch, &mut depth) {
                    self.transcode_rest(depth)?;
                }
                let span = Span::in_scratch(start, self.scratch.len());
                Ok(if kind == ColumnKind::Yson {
                    Cell::Any(span)
                } else {
                    Cell::Composite(span)
                })
            }
        }
    }

    /// Where the string event just read (at `address`, `len` bytes) lives for the row: in
    /// the pinned row when the parser lent it from the buffer, else copied from the parser's
    /// scratch (the only other place a string event borrows) into the row's scratch.
    fn string_span(&mut self, address: usize, len: usize) -> Result<Span, FormatError> {
        if let Some(offset) = self.parser.source().offset_of_address(address, len) {
            let start = (offset - self.row_start) as usize;
            return Ok(Span::in_input(start, start + len));
        }
        let lent = self.parser.scratch();
        if lent.as_ptr() as usize != address || lent.len() != len {
            return Err(FormatError::new(
                FORMAT,
                "internal: a string event outside the read buffer and the parser's scratch",
            ));
        }
        let start = self.scratch.len();
        self.scratch.extend_from_slice(lent);
        Ok(Span::in_scratch(start, self.scratch.len()))
    }
}

fn event_name(event: &Event<'_>) -> &'static str {
    match event {
        Event::BeginList => "a list",
        Event::BeginMap => "a map",
        Event::BeginAttributes => "attributes",
        _ => "an unexpected token",
    }
}

#[cold]
fn unreachable_event<T>(offset: u64) -> Result<T, FormatError> {
    // The parser only returns keys or a map end where a key is expected.
    Err(FormatError::new(FORMAT, "expected a key").at(offset))
}

impl FormatError {
    /// Adds `offset` when the error has none, and names the column.
    fn at_least(mut self, offset: u64, column: &str) -> FormatError {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        if !self.message.starts_with("column") {
            self.message = format!("column \"{column}\": {}", self.message);
        }
        self
    }
}

impl YsonRowSource {
    /// Scans a binary row in place at the parser's position when it can; the row's length
    /// (with its `;`) in the window, its cells in `self.cells`, or with `into_block` in
    /// `self.block_cells` after the block's `self.block_filled` cells (the caller counts them
    /// in). `None`: the parser reads it.
    /// With `may_fill` false it never refills (a row past the buffered bytes is `None`), so
    /// rows scanned before stay where they are in the buffer. Text composites are appended to
    /// `self.scratch` (the caller clears it per row or per block).
    #[inline]
    fn scan_in_place(
        &mut self,
        table: usize,
        may_fill: bool,
        into_block: bool,
    ) -> Result<Option<usize>, FormatError> {
        if !self.scan_rows || !self.parser.at_list_fragment_item() {
            return Ok(None);
        }
        let scratch_base = self.scratch.len();
        let max_depth = self.parser.max_depth();
        let columns = self.tables[table].checks.len();
        // Every cell of the row's slice is written by a successful scan (a missing column
        // as null), so the slice needs no initialising per row: only growth fills it.
        let cells_start = self.block_filled;
        if into_block {
            if self.block_cells.len() < cells_start + columns {
                self.block_cells.resize(cells_start + columns, Cell::Null);
            }
        } else if self.cells.len() != columns {
            self.cells.clear();
            self.cells.resize(columns, Cell::Null);
        }
        loop {
            let source = self.parser.source();
            let window = source.window();
            // Whitespace between items (text streams put a newline after each `;`) is
            // consumed as the parser would.
            let blanks = window
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(window.len());
            if blanks > 0 {
                self.parser.source_mut().consume(blanks);
                continue;
            }
            match window.first() {
                Some(b'{') => {}
                Some(_) => return Ok(None),
                None if source.is_exhausted() || !may_fill => return Ok(None),
                None => {
                    self.parser.source_mut().fill().map_err(yson_error)?;
                    continue;
                }
            }
            // The spelling of the row's first key (or its `}`) picks the scan; a scan cut
            // short by the buffer's end may have left part of a text composite.
            self.scratch.truncate(scratch_base);
            let table = &self.tables[table];
            let cells = if into_block {
                &mut self.block_cells[cells_start..cells_start + columns]
            } else {
                &mut self.cells[..]
            };
            let scanned = if window.get(1) == Some(&b'"') {
                row_scan::scan_row::<true, Cell>(
                    window,
                    table,
                    cells,
                    &mut self.scan,
                    &mut self.scratch,
                    max_depth,
                )
            } else {
                row_scan::scan_row::<false, Cell>(
                    window,
                    table,
                    cells,
                    &mut self.scan,
                    &mut self.scratch,
                    max_depth,
                )
            };
            match scanned {
                Ok(length) => return Ok(Some(length)),
                Err(row_scan::Bail::Fallback) => {
                    self.scratch.truncate(scratch_base);
                    return Ok(None);
                }
                Err(row_scan::Bail::NeedMore) => {
                    if source.is_exhausted() || !may_fill {
                        self.scratch.truncate(scratch_base);
                        return Ok(None);
                    }
                    // Nothing is consumed yet: the refill keeps the row, growing the buffer
                    // when the row fills it.
                    self.parser.source_mut().fill().map_err(yson_error)?;
                }
            }
        }
    }

    fn read(&mut self) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        // The previous row is gone: its bytes may be dropped.
        self.parser.source_mut().unpin();
        let table = self.positions.table();
        self.scratch.clear();
        if let Some(length) = self
            .scan_in_place(table, true, false)
            .map_err(|e| e.in_row(self.rows))?
        {
            let source = self.parser.source_mut();
            let index = source.window_index();
            source.consume(length);
            self.rows += 1;
            let position = self.positions.next_row();
            let row = self.parser.source().buffered(index, length);
            let refs = self.refs.loan();
            refs.extend(
                self.cells
                    .iter()
                    .map(|cell| cell.to_ref(row, &self.scratch)),
            );
            return Ok(Some((
                RowRef {
                    position,
                    values: refs,
                },
                None,
            )));
        }
        loop {
            // Pinned: the strings of a row are handed out where they are in the buffer.
            self.row_start = self.parser.source_mut().pin();
            let offset = self.parser.offset();
            let event = match self.parser.next_event() {
                Ok(None) => return Ok(None),
                Ok(Some(event)) => event,
                Err(e) => return Err(yson_error(e).in_row(self.rows)),
            };
            match event {
                Event::BeginAttributes => self.read_controls().map_err(|e| e.in_row(self.rows))?,
                Event::BeginMap => {
                    let table = self.positions.table();
                    self.read_row(table).map_err(|e| e.in_row(self.rows))?;
                    self.rows += 1;
                    let position = self.positions.next_row();
                    let length = (self.parser.offset() - self.row_start) as usize;
                    let Some(row) = self.parser.source().bytes_at(self.row_start, length) else {
                        // The pin keeps the row buffered: this cannot happen.
                        return Err(FormatError::new(
                            FORMAT,
                            "internal: the pinned row is no longer buffered",
                        )
                        .at(self.row_start));
                    };
                    let refs = self.refs.loan();
                    refs.extend(
                        self.cells
                            .iter()
                            .map(|cell| cell.to_ref(row, &self.scratch)),
                    );
                    let others = if self.others.is_empty() {
                        None
                    } else {
                        self.others.push(b'}');
                        Some(self.others.as_slice())
                    };
                    return Ok(Some((
                        RowRef {
                            position,
                            values: refs,
                        },
                        others,
                    )));
                }
                other => {
                    return Err(FormatError::new(
                        FORMAT,
                        format!(
                            "expected a row (map) or a control entity, found {}",
                            event_name(&other)
                        ),
                    )
                    .at(offset)
                    .in_row(self.rows))
                }
            }
        }
    }
}

/// A block of scanned rows ends after this many values, or at the first row not wholly in the
/// buffer or not for the in-place scan.
const BLOCK_VALUES: usize = 4096;

impl YsonRowSource {
    /// Consumes the bytes of the rows the last block scanned straight into its refs.
    #[inline]
    fn settle(&mut self) {
        let unconsumed = std::mem::take(&mut self.unconsumed);
        if unconsumed > 0 {
            self.parser.source_mut().consume(unconsumed);
        }
    }

    /// The rest of a block of text rows after its first, `first_row` (its place in the
    /// buffer and length, its cells the block's first): rows scanned into cells, turned into
    /// refs once the block is complete (text composites live in the scratch, which grows).
    fn text_block(
        &mut self,
        table: usize,
        columns: usize,
        first: RowPosition,
        first_row: (usize, usize),
    ) -> Result<RowBlock<'_>, FormatError> {
        self.block_rows.push(first_row);
        // Rows are capped too, for tables of no columns.
        while self.block_filled < BLOCK_VALUES && self.block_rows.len() < BLOCK_VALUES {
            let scanned = self
                .scan_in_place(table, false, true)
                .map_err(|e| e.in_row(self.rows))?;
            let Some(length) = scanned else { break };
            let source = self.parser.source_mut();
            self.block_rows.push((source.window_index(), length));
            source.consume(length);
            self.block_filled += columns;
            self.rows += 1;
            let position = self.positions.next_row();
            // No control entity is scanned, so the rows after the first count on in its
            // table and range.
            debug_assert!(!position.key_switch);
        }
        let refs = self.refs.loan();
        let source = self.parser.source();
        for (&(index, length), cells) in self
            .block_rows
            .iter()
            .zip(self.block_cells[..self.block_filled].chunks_exact(columns.max(1)))
        {
            let row = source.buffered(index, length);
            refs.extend(cells.iter().map(|cell| cell.to_ref(row, &self.scratch)));
        }
        Ok(RowBlock {
            first,
            rows: self.block_rows.len(),
            columns,
            values: refs,
        })
    }
}

impl RowSource for YsonRowSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        self.settle();
        Ok(self.read()?.map(|(row, _)| row))
    }

    /// The rows scanned in place from the buffered bytes, at once: the buffer is refilled
    /// only before the first, so every row of the block stays where it was scanned. A row the
    /// scan leaves to the parser (control entities, other columns, a fault) ends the block;
    /// when it is the first, the block is that one row as [`RowSource::next_row`] reads it.
    ///
    /// Binary rows after the first are scanned straight into the block's refs (they borrow
    /// the window, which stays put until the next call): their bytes are consumed at the
    /// start of the next call ([`YsonRowSource::settle`]).
    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        self.settle();
        self.parser.source_mut().unpin();
        let table = self.positions.table();
        let columns = self.tables[table].checks.len();
        self.scratch.clear();
        self.block_filled = 0;
        self.block_rows.clear();
        let Some(length) = self
            .scan_in_place(table, true, true)
            .map_err(|e| e.in_row(self.rows))?
        else {
            return Ok(self.read()?.map(|(row, _)| RowBlock::of_row(row)));
        };
        let source = self.parser.source_mut();
        let first_row = (source.window_index(), length);
        source.consume(length);
        self.block_filled = columns;
        self.rows += 1;
        let first = self.positions.next_row();
        // The first key's spelling says the stream's (`{` then `}` reads as binary).
        let binary = self.parser.source().buffered(first_row.0, length).get(1) != Some(&b'"');
        if !binary {
            return Ok(Some(self.text_block(table, columns, first, first_row)?));
        }
        let max_depth = self.parser.max_depth();
        let source = self.parser.source();
        let window = source.window();
        let row = source.buffered(first_row.0, first_row.1);
        let refs = self.refs.loan();
        refs.extend(
            self.block_cells[..columns]
                .iter()
                .map(|cell| cell.to_ref(row, &self.scratch)),
        );
        let table = &self.tables[table];
        let mut rows = 1;
        let mut at = 0;
        // Rows are capped too, for tables of no columns.
        while refs.len() < BLOCK_VALUES && rows < BLOCK_VALUES {
            // Whitespace between items is skipped as the parser skips it; anything but a row
            // is the parser's.
            let blanks = window
                .get(at..)
                .unwrap_or_default()
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            let Some(rest) = window
                .get(at + blanks..)
                .filter(|rest| rest.first() == Some(&b'{'))
            else {
                break;
            };
            let start = refs.len();
            // Straight into the spare capacity: filling the slots first (a null per column)
            // cost a store per value for nothing.
            refs.reserve(columns);
            match row_scan::scan_row::<false, MaybeUninit<ValueRef<'_>>>(
                rest,
                table,
                &mut refs.spare_capacity_mut()[..columns],
                &mut self.scan,
                // Binary scans write no scratch (the first row's refs may borrow it).
                &mut Vec::new(),
                max_depth,
            ) {
                Ok(length) => {
                    // SAFETY: the `columns` slots after `start` are initialised: a row the
                    // scan accepts has every one of its cells written (`scan_row`'s contract).
                    unsafe { refs.set_len(start + columns) };
                    at += blanks + length;
                    rows += 1;
                    // No control entity is scanned, so the rows after the first count on in
                    // its table and range.
                    let position = self.positions.next_row();
                    debug_assert!(!position.key_switch);
                }
                Err(_) => break,
            }
        }
        self.rows += rows as u64 - 1;
        self.unconsumed = at;
        Ok(Some(RowBlock {
            first,
            rows,
            columns,
            values: refs,
        }))
    }

    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        self.settle();
        self.read()
    }
}

/// A YSON row writer (binary, or text when `text`) into `output`.
///
/// # Errors
/// Never for valid schemas; the signature matches the other formats'.
#[cfg(test)]
pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    text: bool,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(sink_over(compile(schemas), output, text))
}

/// A YSON row writer of `tables` into `output` (text YSON when `text`).
pub(crate) fn sink_over(
    tables: YsonTables,
    output: Box<dyn Write>,
    text: bool,
) -> Box<dyn RowSink> {
    if text {
        Box::new(text_sink::YsonTextSink::new(tables, output))
    } else {
        Box::new(YsonBinarySink {
            output,
            // Grown as rows come (see the tree formats' sink).
            buffer: Vec::new(),
            others: Vec::new(),
            tables,
            positions: PositionWriter::default(),
            rows: 0,
            failed: false,
        })
    }
}

/// Writes a sink's buffer to its output and empties it. When the write fails, how much of
/// the buffer went out is unknown, so `failed` is set and the sink takes nothing more:
/// writing the buffer again could repeat bytes.
///
/// # Errors
/// The output's I/O error.
fn write_out(
    output: &mut dyn Write,
    buffer: &mut Vec<u8>,
    failed: &mut bool,
) -> Result<(), FormatError> {
    let written = output.write_all(buffer);
    buffer.clear();
    written.map_err(|e| {
        *failed = true;
        FormatError::io(FORMAT, &e)
    })
}

/// The error of a sink whose output failed before (see [`write_out`]).
fn refuse_after_failure(failed: bool) -> Result<(), FormatError> {
    if failed {
        return Err(FormatError::new(
            FORMAT,
            "an earlier write to the output failed",
        ));
    }
    Ok(())
}

fn check_table<'t>(
    tables: &'t [Table],
    position: &RowPosition,
    count: usize,
) -> Result<&'t Table, FormatError> {
    let table = tables.get(position.table_index).ok_or_else(|| {
        FormatError::new(
            FORMAT,
            format!(
                "table index {} is out of range: {} table schemas",
                position.table_index,
                tables.len()
            ),
        )
    })?;
    if count != table.schema.columns.len() {
        return Err(FormatError::new(
            FORMAT,
            format!(
                "table {} has {} columns, the row has {count} values",
                position.table_index,
                table.schema.columns.len()
            ),
        ));
    }
    Ok(table)
}

fn column_error(column: &str, error: impl std::fmt::Display) -> FormatError {
    FormatError::new(FORMAT, format!("column \"{column}\": {error}"))
}

fn binary_control(out: &mut Vec<u8>, control: Control) {
    out.push(b'<');
    match control {
        Control::TableIndex(i) => {
            yson_binary::string(out, b"table_index");
            out.push(b'=');
            yson_binary::int64(out, i as i64);
        }
        Control::RowIndex(i) => {
            yson_binary::string(out, b"row_index");
            out.push(b'=');
            yson_binary::int64(out, i);
        }
        Control::RangeIndex(i) => {
            yson_binary::string(out, b"range_index");
            out.push(b'=');
            yson_binary::int64(out, i);
        }
        Control::KeySwitch => {
            yson_binary::string(out, b"key_switch");
            out.push(b'=');
            yson_binary::boolean(out, true);
        }
    }
    out.extend_from_slice(b";>#;");
}

struct YsonBinarySink {
    output: Box<dyn Write>,
    buffer: Vec<u8>,
    /// The current row's other columns, checked, as a binary YSON map.
    others: Vec<u8>,
    tables: YsonTables,
    positions: PositionWriter,
    rows: u64,
    /// A write to the output failed (see [`write_out`]).
    failed: bool,
}

impl YsonBinarySink {
    fn row_done(
        &mut self,
        start: usize,
        result: Result<(), FormatError>,
    ) -> Result<(), FormatError> {
        if let Err(e) = result {
            self.buffer.truncate(start);
            return Err(e.in_row(self.rows));
        }
        self.rows += 1;
        if self.buffer.len() >= 1 << 16 {
            write_out(&mut *self.output, &mut self.buffer, &mut self.failed)?;
        }
        Ok(())
    }
}

impl YsonBinarySink {
    /// Writes a row of refs, then `others` (a checked binary YSON map, or empty) inside it.
    fn write_refs(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = open_row(
            &self.tables,
            &mut self.positions,
            &mut self.buffer,
            position,
            values.len(),
        )?;
        let out = &mut self.buffer;
        for (index, (((value, column), check), key)) in values
            .iter()
            .zip(&table.schema.columns)
            .zip(&table.checks)
            .zip(&table.keys)
            .enumerate()
        {
            out.extend_from_slice(key);
            match *value {
                ValueRef::Composite(_) | ValueRef::Any(_) => {
                    let owned = value_from_ref(*value, &column.ty)
                        .map_err(|e| column_error(&column.name, e))?;
                    yson_binary::value(out, &owned, &column.ty)
                        .map_err(|e| column_error(&column.name, e))?;
                }
                scalar => {
                    if !table.scan_columns[index].takes(scalar) {
                        check
                            .write(scalar, &column.ty)
                            .map_err(|e| column_error(&column.name, e))?;
                    }
                    binary_scalar(out, scalar);
                }
            }
            out.push(b';');
        }
        // Checked maps are `{key=value;...}`: their entries go into the row as they are.
        if let [b'{', entries @ .., b'}'] = self.others.as_slice() {
            out.extend_from_slice(entries);
        }
        out.extend_from_slice(b"};");
        Ok(())
    }
}

/// Starts a binary row of `count` values at `position`: its control entities, then `{`.
/// Returns the row's table.
fn open_row<'t>(
    tables: &'t [Table],
    positions: &mut PositionWriter,
    out: &mut Vec<u8>,
    position: &RowPosition,
    count: usize,
) -> Result<&'t Table, FormatError> {
    let table = check_table(tables, position, count)?;
    positions.controls(position, |c| {
        binary_control(out, c);
        Ok::<(), FormatError>(())
    })?;
    out.push(b'{');
    Ok(table)
}

/// Writes a scalar (or null) as binary YSON.
#[inline(always)]
fn binary_scalar(out: &mut Vec<u8>, value: ValueRef<'_>) {
    match value {
        ValueRef::Bool(v) => yson_binary::boolean(out, v),
        ValueRef::Int64(v) => yson_binary::int64(out, v),
        ValueRef::Uint64(v) => yson_binary::uint64(out, v),
        ValueRef::Double(v) => yson_binary::double(out, v),
        ValueRef::String(v) => yson_binary::string(out, v),
        _ => out.push(b'#'),
    }
}

impl RowSink for YsonBinarySink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        refuse_after_failure(self.failed).map_err(|e| e.in_row(self.rows))?;
        let start = self.buffer.len();
        self.others.clear();
        let result = self.write_refs(position, values);
        self.row_done(start, result)
    }

    fn write_row_with_other_columns(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        other_columns: Option<&[u8]>,
    ) -> Result<(), FormatError> {
        refuse_after_failure(self.failed).map_err(|e| e.in_row(self.rows))?;
        let start = self.buffer.len();
        self.others.clear();
        let result = match (other_columns, self.tables.get(position.table_index)) {
            (Some(bytes), Some(table)) => other_columns::normalize(
                bytes,
                &table.schema,
                position.table_index,
                &mut self.others,
            )
            .map_err(|m| FormatError::new(FORMAT, m)),
            _ => Ok(()),
        };
        let result = result.and_then(|()| self.write_refs(position, values));
        self.others.clear();
        self.row_done(start, result)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        refuse_after_failure(self.failed).map_err(|e| e.in_row(self.rows))?;
        let start = self.buffer.len();
        let result = (|| {
            let table = open_row(
                &self.tables,
                &mut self.positions,
                &mut self.buffer,
                position,
                values.len(),
            )?;
            let out = &mut self.buffer;
            for ((((value, column), check), key), plan) in values
                .iter()
                .zip(&table.schema.columns)
                .zip(&table.checks)
                .zip(&table.keys)
                .zip(&table.scan_columns)
            {
                out.extend_from_slice(key);
                match scalar_ref(value) {
                    Some(scalar) if check.kind == ColumnKind::Scalar => {
                        // The compiled rule takes only what the full check takes.
                        if !plan.takes(scalar) {
                            check
                                .write(scalar, &column.ty)
                                .map_err(|e| column_error(&column.name, e))?;
                        }
                        binary_scalar(out, scalar);
                    }
                    _ => {
                        check
                            .write_owned(value, &column.ty)
                            .map_err(|e| column_error(&column.name, e))?;
                        yson_binary::value(out, value, &column.ty)
                            .map_err(|e| column_error(&column.name, e))?;
                    }
                }
                out.push(b';');
            }
            out.extend_from_slice(b"};");
            Ok(())
        })();
        self.row_done(start, result)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        refuse_after_failure(self.failed)?;
        write_out(&mut *self.output, &mut self.buffer, &mut self.failed)?;
        self.output.flush().map_err(|e| FormatError::io(FORMAT, &e))
    }
}

#[cfg(test)]
mod tests;
