//! Row readers: [`SliceReader`] over bytes in memory (zero-copy) and [`StreamReader`] over any
//! `Read` (buffered; rows borrow the buffer until the next call).
//!
//! Both find a row's end by scanning it once (validating every byte, see `scan.rs`) and record
//! the offsets of the children after the table's fixed prefix; tables with no variable-size
//! child skip even that and only check their boolean bytes.

use std::io::Read;

use super::error::{SkiffError, SkiffErrorKind};
use super::owned_row::OwnedRow;
use super::plan::{Codec, TablePlan};
use super::row::RowView;
use super::scan::{need, read_u16, read_u64, skip, Fail};

/// A failed scan: what, and in which child of which table (when known).
struct RowFail {
    fail: Fail,
    child: Option<(usize, usize)>,
}

impl From<Fail> for RowFail {
    fn from(fail: Fail) -> RowFail {
        RowFail { fail, child: None }
    }
}

/// Scans the row at `data[start..]`; returns its table index and end, and appends to
/// `variable_offsets` the row-relative offsets of the children after the fixed prefix and the
/// row end (nothing for a table of fixed-size rows; on failure, possibly some of them).
#[inline]
fn scan_row(
    tables: &[TablePlan],
    data: &[u8],
    start: usize,
    variable_offsets: &mut Vec<u32>,
) -> Result<(u16, usize), RowFail> {
    need(data, start, 2, "table index")?;
    let table_index = read_u16(data, start);
    let Some(table) = tables.get(table_index as usize) else {
        return Err(Fail::BadTableIndex {
            at: start,
            index: table_index,
            tables: tables.len(),
        }
        .into());
    };
    let prefix_end = *table.prefix_offsets.last().unwrap_or(&2) as usize;
    if data.len() - start < prefix_end {
        return Err(truncated_in_prefix(table, table_index, data, start));
    }
    for &offset in &table.prefix_booleans {
        let at = start + offset as usize;
        let byte = data[at];
        if byte > 1 {
            let child = table
                .prefix_offsets
                .partition_point(|&o| o <= offset)
                .saturating_sub(1);
            return Err(RowFail {
                fail: Fail::BadBoolean { at, byte },
                child: Some((table_index as usize, child)),
            });
        }
    }
    if table.fixed_row_size.is_some() {
        return Ok((table_index, start + prefix_end));
    }
    let mut pos = start + prefix_end;
    for (child, field) in table.fields.iter().enumerate().skip(table.fixed_prefix) {
        variable_offsets.push(relative(pos, start)?);
        pos = skip(field, data, pos).map_err(|fail| RowFail {
            fail,
            child: Some((table_index as usize, child)),
        })?;
    }
    variable_offsets.push(relative(pos, start)?);
    Ok((table_index, pos))
}

#[inline(always)]
fn relative(pos: usize, start: usize) -> Result<u32, RowFail> {
    u32::try_from(pos - start).map_err(|_| Fail::RowTooLong { at: start }.into())
}

#[cold]
fn truncated_in_prefix(table: &TablePlan, table_index: u16, data: &[u8], start: usize) -> RowFail {
    let available = data.len() - start;
    let child = table
        .prefix_offsets
        .windows(2)
        .position(|w| w[1] as usize > available)
        .unwrap_or(0);
    let field = &table.fields[child];
    let at = start + table.prefix_offsets[child] as usize;
    RowFail {
        fail: Fail::Truncated {
            at,
            needed: field.fixed_size.unwrap_or(0) as u64,
            available: data.len() - at,
            what: super::scan::wire_what(field.wire),
        },
        child: Some((table_index as usize, child)),
    }
}

fn to_error(tables: &[TablePlan], fail: RowFail, base_offset: u64, row: u64) -> SkiffError {
    let kind = if fail.fail.is_truncation() {
        SkiffErrorKind::Truncated
    } else {
        SkiffErrorKind::Corrupt
    };
    let mut error = SkiffError::new(kind, fail.fail.message())
        .at(base_offset + fail.fail.at() as u64)
        .in_row(row);
    if let Some((table, child)) = fail.child {
        let name = &tables[table].fields[child].name;
        if name.is_empty() {
            error = error.in_column(&format!("#{child}"));
        } else {
            error = error.in_column(name);
        }
    }
    error
}

/// Resolves `$row_index` of a scanned row against the previous row's.
#[inline]
fn resolve_row_index(
    table: &TablePlan,
    row: &[u8],
    variable_offsets: &[u32],
    previous: Option<i64>,
) -> Option<i64> {
    let child = table.system.row_index?;
    let at = if child < table.fixed_prefix {
        table.prefix_offsets[child] as usize
    } else {
        variable_offsets[child - table.fixed_prefix] as usize
    };
    match row[at] {
        0 => previous.and_then(|p| p.checked_add(1)),
        1 => Some(read_u64(row, at + 1) as i64),
        _ => None,
    }
}

/// Reads rows from bytes in memory. Views borrow the bytes and the reader.
pub struct SliceReader<'a> {
    codec: Codec,
    data: &'a [u8],
    pos: usize,
    rows: u64,
    variable_offsets: Vec<u32>,
    previous_row_index: Option<i64>,
}

impl Codec {
    /// A zero-copy reader of the rows in `data`.
    pub fn reader<'a>(&self, data: &'a [u8]) -> SliceReader<'a> {
        SliceReader {
            codec: self.clone(),
            data,
            pos: 0,
            rows: 0,
            variable_offsets: Vec::new(),
            previous_row_index: None,
        }
    }

    /// A buffered reader of the rows of `source`.
    pub fn stream_reader<R: Read>(&self, source: R) -> StreamReader<R> {
        StreamReader {
            codec: self.clone(),
            source,
            buffer: Vec::new(),
            start: 0,
            end: 0,
            buffer_offset: 0,
            eof: false,
            rows: 0,
            variable_offsets: Vec::new(),
            previous_row_index: None,
            current: (0, 0, 0),
            run: Vec::new(),
            run_offsets: Vec::new(),
            run_table: 0,
        }
    }

    /// Decodes every row of `data`.
    ///
    /// # Errors
    /// The first malformed row (with byte offset, row number, column) or bad yson32 payload.
    pub fn decode_rows(&self, data: &[u8]) -> Result<Vec<OwnedRow>, SkiffError> {
        let mut reader = self.reader(data);
        let mut rows = Vec::new();
        while let Some(row) = reader.next_row()? {
            rows.push(row.to_owned_row()?);
        }
        Ok(rows)
    }
}

impl<'a> SliceReader<'a> {
    /// The next row, or `None` at the end of the input.
    ///
    /// # Errors
    /// A truncated or corrupt row: the error names the byte offset, row number and column.
    /// The reader stays at the bad row (calling again gives the same error).
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next_row(&mut self) -> Result<Option<RowView<'_>>, SkiffError> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let start = self.pos;
        let tables: &[TablePlan] = &self.codec.tables;
        self.variable_offsets.clear();
        let (table_index, end) = scan_row(tables, self.data, start, &mut self.variable_offsets)
            .map_err(|fail| to_error(tables, fail, 0, self.rows))?;
        let table = &tables[table_index as usize];
        let row = &self.data[start..end];
        let row_index =
            resolve_row_index(table, row, &self.variable_offsets, self.previous_row_index);
        self.previous_row_index = row_index;
        self.pos = end;
        self.rows += 1;
        Ok(Some(RowView {
            row,
            table,
            table_index,
            variable_offsets: &self.variable_offsets,
            row_index,
            stream_offset: start as u64,
        }))
    }

    /// Byte offset of the next row.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.rows
    }
}

/// What [`StreamReader::scan_block`] hands a block scanner: the buffered bytes, the current
/// row's table and where it starts, and the row itself as scanned.
pub(crate) struct BlockStart<'s> {
    /// The buffer up to its last valid byte; rows are read from `first_start` on.
    pub data: &'s [u8],
    pub table: &'s TablePlan,
    pub table_index: u16,
    pub first_start: usize,
    pub first: RowView<'s>,
}

/// What a block scanner tells [`StreamReader::scan_block`]: rows read, where the last one
/// ends in the buffer, and its resolved `$row_index`.
pub(crate) struct BlockEnd {
    pub rows: usize,
    pub end: usize,
    pub last_row_index: Option<i64>,
}

/// Reads rows from a `Read`, refilling a buffer that grows only as far as the longest row.
pub struct StreamReader<R: Read> {
    codec: Codec,
    source: R,
    buffer: Vec<u8>,
    /// Unconsumed bytes are `buffer[start..end]`.
    start: usize,
    end: usize,
    /// Stream offset of `buffer[0]`.
    buffer_offset: u64,
    eof: bool,
    rows: u64,
    variable_offsets: Vec<u32>,
    previous_row_index: Option<i64>,
    /// The last row scanned by [`StreamReader::advance`] or [`StreamReader::extend_run`]: table
    /// index, and its bytes `buffer[start..end]` (valid until the next scan moves or refills
    /// the buffer).
    current: (u16, usize, usize),
    /// The rows of the last [`StreamReader::extend_run`], all of table `run_table`, with their
    /// variable offsets one row after another in `run_offsets`.
    run: Vec<RunRow>,
    run_offsets: Vec<u32>,
    run_table: u16,
}

/// One row of a run: its bytes `buffer[start..end]`, the end of its offsets in
/// `run_offsets` (they start where the previous row's end), its resolved row index.
#[derive(Clone, Copy, Debug)]
struct RunRow {
    start: usize,
    end: usize,
    offsets_end: usize,
    row_index: Option<i64>,
}

const READ_CHUNK: usize = 1 << 16;

impl<R: Read> StreamReader<R> {
    /// The next row, or `None` at the end of the stream.
    ///
    /// # Errors
    /// An I/O error, or a truncated or corrupt row naming its byte offset, row and column.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next_row(&mut self) -> Result<Option<RowView<'_>>, SkiffError> {
        if !self.advance().map_err(|error| *error)? {
            return Ok(None);
        }
        Ok(Some(self.current_row()))
    }

    /// Scans the next row and makes it the current one ([`StreamReader::current_row`]);
    /// `false` at the end of the stream.
    ///
    /// The row sources' hot path: the result fits in two registers (the error is boxed, and
    /// cold), where `Result<Option<RowView>, SkiffError>` is moved through memory on every
    /// row, twice more when a caller maps it into its own error type.
    ///
    /// # Errors
    /// As [`StreamReader::next_row`].
    #[inline]
    pub(crate) fn advance(&mut self) -> Result<bool, Box<SkiffError>> {
        loop {
            if self.start == self.end {
                if self.eof {
                    return Ok(false);
                }
                self.fill(false).map_err(Box::new)?;
                continue;
            }
            self.variable_offsets.clear();
            let scanned = scan_row(
                &self.codec.tables,
                &self.buffer[..self.end],
                self.start,
                &mut self.variable_offsets,
            );
            match scanned {
                Ok((table_index, end)) => {
                    let table = &self.codec.tables[table_index as usize];
                    let row = &self.buffer[self.start..end];
                    self.previous_row_index = resolve_row_index(
                        table,
                        row,
                        &self.variable_offsets,
                        self.previous_row_index,
                    );
                    self.current = (table_index, self.start, end);
                    self.start = end;
                    self.rows += 1;
                    return Ok(true);
                }
                Err(fail) if fail.fail.is_truncation() && !self.eof => {
                    self.fill(true).map_err(Box::new)?
                }
                Err(fail) => return Err(self.scan_error(fail)),
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn scan_error(&self, fail: RowFail) -> Box<SkiffError> {
        Box::new(to_error(
            &self.codec.tables,
            fail,
            self.buffer_offset,
            self.rows,
        ))
    }

    /// The row the last successful [`StreamReader::advance`] scanned. Only meaningful after
    /// one returned `true` (before, it is an empty row of table 0, never handed out).
    #[inline]
    pub(crate) fn current_row(&self) -> RowView<'_> {
        let (table_index, start, end) = self.current;
        RowView {
            row: &self.buffer[start..end],
            table: &self.codec.tables[table_index as usize],
            table_index,
            variable_offsets: &self.variable_offsets,
            row_index: self.previous_row_index,
            stream_offset: self.buffer_offset + start as u64,
        }
    }

    /// Moves the unconsumed bytes to the front and reads more: one read, or (`to_capacity`,
    /// when a row did not fit) until the buffer is full, so a long row is rescanned only a
    /// logarithmic number of times as the buffer doubles.
    fn fill(&mut self, to_capacity: bool) -> Result<(), SkiffError> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.buffer_offset += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.buffer.len() - self.end < READ_CHUNK {
            let wanted = (self.end + READ_CHUNK).max(self.buffer.len() * 2);
            self.buffer.resize(wanted, 0);
        }
        loop {
            match self.source.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    if !to_capacity || self.end == self.buffer.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let at = self.buffer_offset + self.end as u64;
                    return Err(SkiffError::from(e).at(at).in_row(self.rows));
                }
            }
        }
    }

    /// Rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.rows
    }

    /// A run of up to `max_rows` rows (at least one) for a block read, from the current row
    /// (the one the last successful [`StreamReader::advance`] scanned): that row, then the
    /// rows after it that are complete in the buffer already and continue its position (same
    /// table and range, no key switch, each row index the previous plus one, or none when the
    /// first has none). Returns the number of rows in the run; read them with
    /// [`StreamReader::run_row`].
    ///
    /// The run stops before a row that is cut off by the end of the buffer or malformed
    /// without reporting it: the next [`StreamReader::advance`] scans that row again,
    /// refilling or failing then. The buffer is neither moved nor refilled, so the views of
    /// all rows of the run stay valid together until the next call on the reader.
    pub(crate) fn extend_run(&mut self, max_rows: usize) -> usize {
        self.run.clear();
        let (table_index, start, end) = self.current;
        let table = &self.codec.tables[usize::from(table_index)];
        self.run.push(RunRow {
            start,
            end,
            offsets_end: 0,
            row_index: self.previous_row_index,
        });
        self.run_offsets.clear();
        self.run_offsets.extend_from_slice(&self.variable_offsets);
        self.run[0].offsets_end = self.run_offsets.len();
        self.run_table = table_index;
        let first_range = self.current_row().range_index();
        // Rows of a table without system fields always continue the position.
        let plain = table.system.key_switch.is_none()
            && table.system.row_index.is_none()
            && table.system.range_index.is_none();
        let buffered = &self.buffer[..self.end];
        let tables: &[TablePlan] = &self.codec.tables;
        while self.run.len() < max_rows && self.start < self.end {
            // The row's offsets go straight after the previous row's (no copy per row).
            let mark = self.run_offsets.len();
            let scanned = scan_row(tables, buffered, self.start, &mut self.run_offsets);
            let end = match scanned {
                Ok((next_table, end)) if next_table == table_index => end,
                _ => {
                    self.run_offsets.truncate(mark);
                    break;
                }
            };
            let row = &buffered[self.start..end];
            let row_index = if plain {
                None
            } else {
                let offsets = &self.run_offsets[mark..];
                let view = RowView {
                    row,
                    table,
                    table_index,
                    variable_offsets: offsets,
                    row_index: None,
                    stream_offset: 0,
                };
                let row_index = resolve_row_index(table, row, offsets, self.previous_row_index);
                let continues = !view.key_switch()
                    && view.range_index() == first_range
                    && row_index
                        == self
                            .previous_row_index
                            .and_then(|previous| previous.checked_add(1));
                if !continues {
                    self.run_offsets.truncate(mark);
                    break;
                }
                row_index
            };
            self.run.push(RunRow {
                start: self.start,
                end,
                offsets_end: self.run_offsets.len(),
                row_index,
            });
            self.previous_row_index = row_index;
            self.current = (table_index, self.start, end);
            self.start = end;
            self.rows += 1;
        }
        if self.run.len() > 1 {
            // `current_row` reads the offsets of the last row scanned.
            let from = self.run[self.run.len() - 2].offsets_end;
            self.variable_offsets.clear();
            self.variable_offsets
                .extend_from_slice(&self.run_offsets[from..]);
        }
        self.run.len()
    }

    /// The current row's (see [`StreamReader::current_row`]) table index and its number of
    /// data columns.
    #[inline]
    pub(crate) fn current_table(&self) -> (u16, usize) {
        let table_index = self.current.0;
        (
            table_index,
            self.codec.tables[usize::from(table_index)].columns.len(),
        )
    }

    /// Hands the bytes from the current row on (the row the last successful
    /// [`StreamReader::advance`] scanned) to `scan`, a one-pass scanner outside the codec (the
    /// row adapter's block scan), and moves the reader past the rows it accepted: `scan`
    /// returns how many rows it read, where the last one ends, and the last one's resolved row
    /// index (`None` or zero rows: nothing is moved). Like [`StreamReader::extend_run`], a
    /// scanner stops before a row cut off by the end of the buffer, malformed or of another
    /// table, without reporting it: the next [`StreamReader::advance`] scans it again,
    /// refilling or failing with its offset. The buffer is not moved, so values borrowed from
    /// it stay valid until the next call on the reader; [`StreamReader::current_row`] stays
    /// at the block's first row.
    pub(crate) fn scan_block<'s>(
        &'s mut self,
        scan: impl FnOnce(BlockStart<'s>) -> Option<BlockEnd>,
    ) -> usize {
        self.run.clear();
        let StreamReader {
            codec,
            buffer,
            start,
            end,
            rows,
            current,
            previous_row_index,
            variable_offsets,
            ..
        } = self;
        let (table_index, first_start, first_end) = *current;
        let data: &'s [u8] = &buffer[..*end];
        let table = &codec.tables[usize::from(table_index)];
        let first = RowView {
            row: &data[first_start..first_end],
            table,
            table_index,
            variable_offsets,
            row_index: *previous_row_index,
            stream_offset: 0,
        };
        let Some(block) = scan(BlockStart {
            data,
            table,
            table_index,
            first_start,
            first,
        }) else {
            return 0;
        };
        if block.rows == 0 {
            return 0;
        }
        debug_assert!(block.end >= first_end);
        *start = block.end;
        *rows += block.rows as u64 - 1;
        // The next row's `$row_index` tag 0 resolves against the block's last row.
        *previous_row_index = block.last_row_index;
        block.rows
    }

    /// Row `i` of the run the last [`StreamReader::extend_run`] scanned.
    ///
    /// # Panics
    /// When `i` is not below the number it returned.
    #[inline]
    pub(crate) fn run_row(&self, i: usize) -> RowView<'_> {
        let row = &self.run[i];
        let offsets_start = if i == 0 {
            0
        } else {
            self.run[i - 1].offsets_end
        };
        RowView {
            row: &self.buffer[row.start..row.end],
            table: &self.codec.tables[usize::from(self.run_table)],
            table_index: self.run_table,
            variable_offsets: &self.run_offsets[offsets_start..row.offsets_end],
            row_index: row.row_index,
            stream_offset: self.buffer_offset + row.start as u64,
        }
    }

    /// Gives back the rows of the last run from row `keep` on, as if they had not been read:
    /// the next call scans row `keep` again (a caller that cannot use a row of a run stops
    /// there and lets the row-by-row path report it).
    ///
    /// # Panics
    /// When `keep` is 0 or past the run.
    pub(crate) fn unread_run_from(&mut self, keep: usize) {
        let given_back = self.run.len() - keep;
        if given_back == 0 {
            return;
        }
        let last_kept = &self.run[keep - 1];
        self.start = self.run[keep].start;
        self.rows -= given_back as u64;
        self.previous_row_index = last_kept.row_index;
        self.current = (self.run_table, last_kept.start, last_kept.end);
        let from = if keep == 1 {
            0
        } else {
            self.run[keep - 2].offsets_end
        };
        let offsets: Vec<u32> = self.run_offsets[from..last_kept.offsets_end].to_vec();
        self.variable_offsets.clear();
        self.variable_offsets.extend_from_slice(&offsets);
        self.run.truncate(keep);
    }

    /// Reads every remaining row, owned.
    ///
    /// # Errors
    /// As [`StreamReader::next_row`], or a bad yson32 payload.
    pub fn read_all(&mut self) -> Result<Vec<OwnedRow>, SkiffError> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            rows.push(row.to_owned_row()?);
        }
        Ok(rows)
    }
}
