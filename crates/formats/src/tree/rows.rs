//! The row adapter shared by MessagePack and CBOR: [`TreeSource`] reads a stream through a
//! window, decoding rows in place; [`TreeSink`] writes rows checked against their columns.

use std::marker::PhantomData;

use shapeshift_types::{Type, Value, ValueRef};

use super::decode::{type_name, Record, TreeDecoder};
use super::encode::{encode_control, encode_value};
pub(crate) use super::stream::{compile_tables, TreeTables};
use super::stream::{ScalarPlan, TreeStream, TreeTable};
use super::{Dialect, Item, TreeError};
use crate::read_buffer;
use crate::table::other_columns;
use crate::table::position::PositionWriter;
use crate::table::row_refs::RefsBuffer;
use crate::table::values::{value_from_ref, ColumnCheck, ColumnKind};
use crate::table::yson_binary;
use crate::table::{FormatError, RowBlock, RowPosition, RowRef, RowSink, RowSource, SourceInput};

/// The most bytes one record (a row, or a control record) of a streaming tree-format source
/// may take: the read buffer grows to hold a record larger than itself, up to this.
pub(crate) const MAX_RECORD_BYTES: usize = 1 << 30;

/// The read buffer a streaming tree-format source prefers (it starts smaller and grows by
/// `crate::read_buffer`'s rule).
const READ_BUFFER_BYTES: usize = 256 << 10;

/// The input of a streaming source: a window of the stream in a buffer that rows are decoded
/// from in place (their strings borrow it).
///
/// `buffer[consumed..filled]` is the part not decoded yet; `buffer[0]` is byte `base` of the
/// stream. Refilling moves the undecoded tail to the front, doubles the buffer when that
/// tail fills it (a record larger than the buffer, up to [`MAX_RECORD_BYTES`]) or while
/// the input outlasts it (a stream, up to `READ_BUFFER_BYTES`; `crate::read_buffer`), and reads
/// until the tail has at least doubled: a record that needs `k` refills is decoded `k + 1`
/// times over a geometric series of lengths, so decoding stays linear in the input even for
/// a reader that returns a few bytes at a time.
struct InputWindow {
    reader: Box<dyn std::io::Read>,
    buffer: Vec<u8>,
    consumed: usize,
    filled: usize,
    base: u64,
    eof: bool,
}

impl InputWindow {
    fn new(input: SourceInput) -> InputWindow {
        // Bytes in memory are the window, all read; a stream fills one as records need.
        let (reader, buffer, eof): (Box<dyn std::io::Read>, Vec<u8>, bool) = match input {
            SourceInput::Stream(reader) => (reader, Vec::new(), false),
            SourceInput::Bytes(bytes) => (Box::new(std::io::empty()), bytes, true),
        };
        InputWindow {
            reader,
            filled: buffer.len(),
            buffer,
            consumed: 0,
            base: 0,
            eof,
        }
    }

    /// Reads more of the stream after a record at `consumed` ran past `filled`.
    ///
    /// # Errors
    /// On I/O failure, or when the record would outgrow [`MAX_RECORD_BYTES`].
    #[cold]
    fn refill(&mut self, format: &'static str) -> Result<(), FormatError> {
        if self.consumed > 0 {
            self.buffer.copy_within(self.consumed..self.filled, 0);
            self.filled -= self.consumed;
            self.base += self.consumed as u64;
            self.consumed = 0;
        }
        let pending = self.filled;
        if self.buffer.is_empty() {
            self.buffer
                .resize(read_buffer::start_len(READ_BUFFER_BYTES), 0);
        }
        let full = pending == self.buffer.len();
        if full && self.buffer.len() >= MAX_RECORD_BYTES {
            return Err(FormatError::new(
                format,
                format!("a record is larger than {MAX_RECORD_BYTES} bytes (the reader's limit)"),
            )
            .at(self.base));
        }
        let grown = read_buffer::grown_len(
            self.buffer.len(),
            full,
            self.base > 0,
            READ_BUFFER_BYTES,
            MAX_RECORD_BYTES,
        );
        if grown > self.buffer.len() {
            self.buffer.resize(grown, 0);
        }
        let target = (pending * 2).clamp(pending + 1, self.buffer.len());
        while self.filled < target {
            match self.reader.read(&mut self.buffer[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(FormatError::io(format, &e).at(self.base + self.filled as u64))
                }
            }
        }
        Ok(())
    }
}

/// A [`RowSource`](super::RowSource) over a tree-format stream, read through a window.
///
/// Rows are decoded in one pass in place in the input window, straight into the row's refs:
/// scalars are checked by their column's plan (or compiled check), strings borrow the
/// window, composite and `yson` values are decoded, checked and written as binary YSON into a
/// per-row scratch buffer, whose refs are filled in once it stops growing (`spans`). A record
/// that runs past the bytes read so far is decoded again after a refill (control records
/// are consumed one by one, so a retry never applies one twice).
pub(crate) struct TreeSource<D> {
    window: InputWindow,
    stream: TreeStream,
    scratch: Vec<u8>,
    /// The row's values held in `scratch`: column, span, `yson` (else composite).
    spans: Vec<(usize, usize, usize, bool)>,
    others: Vec<u8>,
    refs: RefsBuffer,
    dialect: PhantomData<D>,
}

/// A decoded row and the columns it carries outside its schema.
type RowWithOthers<'a> = (RowRef<'a>, Option<&'a [u8]>);

/// Calls `$step` (a method of the source that decodes from the window) until it yields a
/// result or the stream ends, refilling the window whenever a record runs past its end: the
/// one driver of `read` and `read_block`.
macro_rules! refilling {
    ($source:ident, $step:ident) => {
        loop {
            if $source.window.consumed == $source.window.filled {
                if $source.window.eof {
                    return Ok(None);
                }
                $source.window.refill(D::NAME)?;
                continue;
            }
            let this: *mut Self = $source;
            // SAFETY: the borrow of `*this` leaves the loop only in the returned value; on
            // every other path its result is dropped (the error owns nothing borrowed) before
            // the source is used again. This is NLL's "problem case #3" (a conditional return
            // of a borrow in a loop), which the borrow checker refuses and Polonius accepts.
            match unsafe { &mut *this }.$step() {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => {}
                Err(e) if e.end_of_input && !$source.window.eof => {
                    $source.window.refill(D::NAME)?
                }
                Err(e) => return Err($source.stream.fail_at($source.window.base, e)),
            }
        }
    };
}

impl<D: Dialect> TreeSource<D> {
    /// A source over `input` whose rows belong to `tables` (compiled by
    /// [`compile_tables`]).
    pub(crate) fn open(tables: TreeTables, input: SourceInput) -> Result<Self, FormatError> {
        Ok(TreeSource {
            window: InputWindow::new(input),
            stream: TreeStream::new(D::NAME, tables),
            scratch: Vec::new(),
            spans: Vec::new(),
            others: Vec::new(),
            refs: RefsBuffer::default(),
            dialect: PhantomData,
        })
    }

    /// Decodes the record at the window's `consumed` offset: the row, or `None` for a
    /// control record (applied). Nothing but the scratch buffers changes unless the record
    /// is complete, so a record cut by the window's end can be decoded again after a refill.
    #[inline(always)]
    fn step(&mut self) -> Result<Option<RowWithOthers<'_>>, TreeError> {
        let TreeSource {
            window,
            stream,
            scratch,
            spans,
            others,
            refs,
            ..
        } = self;
        let input: &[u8] = &window.buffer[..window.filled];
        let mut decoder = TreeDecoder::<D>::new(input, window.consumed);
        let Some(has_others) = stream.row_head(&mut decoder, &mut window.consumed)? else {
            return Ok(None);
        };
        let table = stream.positions.table();
        scratch.clear();
        spans.clear();
        let refs = refs.loan();
        decode_columns(&mut decoder, &stream.tables[table], refs, scratch, spans)?;
        others.clear();
        if has_others {
            stream.other_columns(&mut decoder, table, others)?;
        }
        window.consumed = decoder.pos;
        stream.rows += 1;
        let position = stream.positions.next_row();
        place_spans(refs, scratch, spans);
        let others = (!others.is_empty()).then_some(others.as_slice());
        Ok(Some((
            RowRef {
                position,
                values: refs,
            },
            others,
        )))
    }

    /// Decodes a run of rows from the window's `consumed` offset into one block: `None` for
    /// a control record before the first row (applied). The run ends before a control record
    /// (the next block starts with it, so every row after a block's first counts on from it:
    /// same table and range, no key switch, the row index plus one), at the window's end, at
    /// [`BLOCK_VALUES`] values, and before a record that fails to decode: the rows before it
    /// are returned, and the next call decodes the bad record again, first, and fails on it.
    /// The window moves past each complete row only, so an error reads as it does row by row.
    fn step_block(&mut self) -> Result<Option<RowBlock<'_>>, TreeError> {
        let TreeSource {
            window,
            stream,
            scratch,
            spans,
            others,
            refs,
            ..
        } = self;
        let input: &[u8] = &window.buffer[..window.filled];
        let mut decoder = TreeDecoder::<D>::new(input, window.consumed);
        let Some(has_others) = stream.row_head(&mut decoder, &mut window.consumed)? else {
            return Ok(None);
        };
        let table = stream.positions.table();
        let spec = &stream.tables[table];
        let columns = spec.schema.columns.len();
        let max_rows = (BLOCK_VALUES / columns.max(1)).max(1);
        scratch.clear();
        spans.clear();
        let refs = refs.loan();
        // The first row: its errors are the block's.
        decode_columns(&mut decoder, spec, refs, scratch, spans)?;
        if has_others {
            others.clear();
            stream.other_columns(&mut decoder, table, others)?;
        }
        window.consumed = decoder.pos;
        stream.rows += 1;
        let first = stream.positions.next_row();
        let mut rows = 1;
        // The rows after it, while they are whole rows of the same table.
        while rows < max_rows && decoder.pos < input.len() {
            let (values_before, scratch_before, spans_before) =
                (refs.len(), scratch.len(), spans.len());
            let row = match stream.record(&mut decoder) {
                Ok(Record::Row { other_columns }) => {
                    decode_columns(&mut decoder, spec, refs, scratch, spans).and_then(|()| {
                        if other_columns {
                            others.clear();
                            stream.other_columns(&mut decoder, table, others)
                        } else {
                            Ok(())
                        }
                    })
                }
                // A control record, the end or an error: the next block starts there.
                _ => Err(TreeError::new(decoder.pos, "")),
            };
            if row.is_err() {
                refs.truncate(values_before);
                scratch.truncate(scratch_before);
                spans.truncate(spans_before);
                break;
            }
            window.consumed = decoder.pos;
            stream.rows += 1;
            stream.positions.next_row();
            rows += 1;
        }
        place_spans(refs, scratch, spans);
        Ok(Some(RowBlock {
            first,
            rows,
            columns,
            values: refs,
        }))
    }

    /// The next row, refilling the window as records need; `None` at the end of the stream.
    #[inline(always)]
    fn read(&mut self) -> Result<Option<RowWithOthers<'_>>, FormatError> {
        refilling!(self, step)
    }

    /// The next block of rows, refilling the window as records need; `None` at the end.
    fn read_block(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        refilling!(self, step_block)
    }
}

/// The most values a block of [`TreeSource::next_rows`] holds (but at least one row): enough
/// to spread the call over many rows, few enough for the refs to stay in the L1/L2 caches.
const BLOCK_VALUES: usize = 2048;

/// Decodes the column values of one row of `spec` (its array header read) and appends them
/// to `refs`: scalars checked by their column's plan (or compiled check), strings borrowed
/// from the input, composite and `yson` values transcoded into `scratch` (their refs are
/// placeholders until [`place_spans`], recorded in `spans` as value index, span, `yson`).
///
/// # Errors
/// The first value that does not decode or fit its column, named; the buffers may then hold
/// part of the row (the caller truncates or clears them).
#[inline(always)]
fn decode_columns<'a, D: Dialect>(
    decoder: &mut TreeDecoder<'a, D>,
    spec: &TreeTable,
    refs: &mut Vec<ValueRef<'a>>,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize, usize, bool)>,
) -> Result<(), TreeError> {
    let columns = spec
        .schema
        .columns
        .iter()
        .zip(&spec.checks)
        .zip(&spec.plans);
    refs.reserve(spec.schema.columns.len());
    for ((def, check), plan) in columns {
        let start = decoder.pos;
        let item = decoder.item().map_err(|e| e.in_column(&def.name))?;
        // The common scalars by the column's plan; anything else (and every value the plan
        // refuses, for its error) by the general path below.
        let value = match (*plan, item) {
            (ScalarPlan::Signed { lo, hi }, Item::Int(v)) if lo <= v && v <= hi => {
                ValueRef::Int64(v)
            }
            (ScalarPlan::Signed { lo: _, hi }, Item::Uint(v)) if hi >= 0 && v <= hi as u64 => {
                ValueRef::Int64(v as i64)
            }
            (ScalarPlan::Unsigned { hi }, Item::Uint(v)) if v <= hi => ValueRef::Uint64(v),
            (ScalarPlan::Unsigned { hi }, Item::Int(v)) if v >= 0 && v as u64 <= hi => {
                ValueRef::Uint64(v as u64)
            }
            (ScalarPlan::Double, Item::Double(v)) => ValueRef::Double(v),
            (ScalarPlan::Bool, Item::Bool(v)) => ValueRef::Bool(v),
            (ScalarPlan::Bytes, Item::Bytes(v) | Item::Text(v)) => ValueRef::String(v),
            (ScalarPlan::Utf8, Item::Bytes(v) | Item::Text(v)) if crate::utf8::text(v).is_ok() => {
                ValueRef::String(v)
            }
            // What the general path makes of nil in a nullable column of any kind.
            (_, Item::Nil) if check.nullable => ValueRef::Null,
            _ => general_value(decoder, item, start, def, check, refs.len(), scratch, spans)?,
        };
        refs.push(value);
    }
    Ok(())
}

/// A column value the plan did not take: other scalars through the compiled check (with
/// its error), composite and `yson` values into `scratch` (a `Null` placeholder ref and a
/// span for value `index`).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn general_value<'a, D: Dialect>(
    decoder: &mut TreeDecoder<'a, D>,
    item: Item<'a>,
    start: usize,
    def: &shapeshift_types::ColumnSchema,
    check: &ColumnCheck,
    index: usize,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize, usize, bool)>,
) -> Result<ValueRef<'a>, TreeError> {
    Ok(match check.kind {
        ColumnKind::Scalar => {
            let value = match item {
                Item::Nil => ValueRef::Null,
                Item::Bool(v) => ValueRef::Bool(v),
                Item::Int(v) => ValueRef::Int64(v),
                Item::Uint(v) => ValueRef::Uint64(v),
                Item::Double(v) => ValueRef::Double(v),
                Item::Bytes(v) | Item::Text(v) => ValueRef::String(v),
                other => return Err(wrong_item(start, &def.ty, other).in_column(&def.name)),
            };
            check
                .read(value, &def.ty)
                .map_err(|e| TreeError::new(start, e.to_string()).in_column(&def.name))?
        }
        _ if matches!(item, Item::Nil) && check.nullable => ValueRef::Null,
        ColumnKind::Composite => {
            let at = scratch.len();
            decoder
                .transcode_from(item, start, &def.ty, scratch)
                .map_err(|e| e.in_column(&def.name))?;
            spans.push((index, at, scratch.len(), false));
            ValueRef::Null
        }
        ColumnKind::Yson => {
            decoder.pos = start;
            let value = decoder
                .column(&def.ty)
                .map_err(|e| e.in_column(&def.name))?;
            if !matches!(value, Value::Null) {
                let at = scratch.len();
                yson_binary::value(scratch, &value, &def.ty)
                    .map_err(|m| TreeError::new(start, m).in_column(&def.name))?;
                spans.push((index, at, scratch.len(), true));
            }
            ValueRef::Null
        }
    })
}

/// Points the placeholder refs of the values held in `scratch` at their bytes.
#[inline]
fn place_spans<'a>(
    refs: &mut [ValueRef<'a>],
    scratch: &'a [u8],
    spans: &[(usize, usize, usize, bool)],
) {
    for &(index, start, end, yson) in spans {
        let bytes = &scratch[start..end];
        refs[index] = if yson {
            ValueRef::Any(bytes)
        } else {
            ValueRef::Composite(bytes)
        };
    }
}

/// The error of an item that cannot start a value of `ty`.
#[cold]
fn wrong_item(start: usize, ty: &Type, item: Item<'_>) -> TreeError {
    TreeError::new(
        start,
        format!(
            "expected a value of type {}, found {}",
            type_name(ty),
            item.name()
        ),
    )
}

impl<D: Dialect> RowSource for TreeSource<D> {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        Ok(self.read()?.map(|(row, _)| row))
    }

    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        self.read_block()
    }

    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        self.read()
    }
}

/// A [`RowSink`](super::RowSink) of a tree format.
pub(crate) struct TreeSink<D> {
    tables: TreeTables,
    output: Box<dyn std::io::Write>,
    buffer: Vec<u8>,
    others: Vec<u8>,
    positions: PositionWriter,
    rows: u64,
    dialect: PhantomData<D>,
}

impl<D: Dialect> TreeSink<D> {
    /// A sink into `output` of rows of `tables` (compiled by [`compile_tables`]).
    pub(crate) fn new(tables: TreeTables, output: Box<dyn std::io::Write>) -> Self {
        TreeSink {
            tables,
            output,
            // Grown as rows come: a one-row stream (a Python `dumps`) should not allocate and
            // free 64 KiB, a free that makes glibc consolidate its fast bins.
            buffer: Vec::new(),
            others: Vec::new(),
            positions: PositionWriter::default(),
            rows: 0,
            dialect: PhantomData,
        }
    }

    #[inline]
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
            self.output
                .write_all(&self.buffer)
                .map_err(|e| FormatError::io(D::NAME, &e))?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Writes the control records and the array header of a row of `count` values (plus its
    /// other columns when `others`); the row's table.
    #[inline]
    fn begin(
        &mut self,
        position: &RowPosition,
        count: usize,
        others: bool,
    ) -> Result<usize, FormatError> {
        let table = self.tables.get(position.table_index).ok_or_else(|| {
            FormatError::new(
                D::NAME,
                format!(
                    "table index {} is out of range: {} table schemas",
                    position.table_index,
                    self.tables.len()
                ),
            )
        })?;
        if count != table.schema.columns.len() {
            return Err(FormatError::new(
                D::NAME,
                format!(
                    "table {} has {} columns, the row has {count} values",
                    position.table_index,
                    table.schema.columns.len()
                ),
            ));
        }
        let out = &mut self.buffer;
        let _ = self.positions.controls(position, |c| {
            encode_control::<D>(out, c);
            Ok::<(), ()>(())
        });
        D::array(out, count + usize::from(others));
        Ok(position.table_index)
    }

    fn write_refs(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        others: bool,
    ) -> Result<(), FormatError> {
        let table = self.begin(position, values.len(), others)?;
        let out = &mut self.buffer;
        let spec = &self.tables[table];
        for ((value, column), check) in values.iter().zip(&spec.schema.columns).zip(&spec.checks) {
            let fail = |e: &dyn std::fmt::Display| {
                FormatError::new(D::NAME, format!("column \"{}\": {e}", column.name))
            };
            match *value {
                ValueRef::Composite(_) | ValueRef::Any(_) => {
                    let owned = value_from_ref(*value, &column.ty).map_err(|e| fail(&e))?;
                    encode_value::<D>(out, &owned, &column.ty).map_err(|e| fail(&e))?;
                }
                scalar => {
                    check.write(scalar, &column.ty).map_err(|e| fail(&e))?;
                    encode_scalar::<D>(out, scalar, check);
                }
            }
        }
        if others {
            D::yson(out, &self.others);
        }
        Ok(())
    }
}

/// Writes a scalar (or null) of a column, checked by `check` (which has verified the UTF-8
/// of text columns).
#[inline]
fn encode_scalar<D: Dialect>(out: &mut Vec<u8>, value: ValueRef<'_>, check: &ColumnCheck) {
    match value {
        ValueRef::Bool(v) => D::boolean(out, v),
        ValueRef::Int64(v) => D::int(out, v),
        ValueRef::Uint64(v) => D::uint(out, v),
        ValueRef::Double(v) => D::double(out, v),
        ValueRef::String(v) if check.is_text() => D::text(out, v),
        ValueRef::String(v) => D::bytes(out, v),
        _ => D::nil(out),
    }
}

impl<D: Dialect> RowSink for TreeSink<D> {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let start = self.buffer.len();
        let result = self.write_refs(position, values, false);
        self.row_done(start, result)
    }

    fn write_row_with_other_columns(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        other_columns: Option<&[u8]>,
    ) -> Result<(), FormatError> {
        let Some(bytes) = other_columns else {
            return self.write_row(position, values);
        };
        let start = self.buffer.len();
        let mut others = std::mem::take(&mut self.others);
        others.clear();
        let result = match self.tables.get(position.table_index) {
            Some(table) => {
                other_columns::normalize(bytes, &table.schema, position.table_index, &mut others)
                    .map_err(|m| FormatError::new(D::NAME, m))
            }
            None => Ok(()),
        };
        let has_others = !others.is_empty();
        self.others = others;
        let result = result.and_then(|()| self.write_refs(position, values, has_others));
        self.row_done(start, result)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let start = self.buffer.len();
        let result = (|| {
            let table = self.begin(position, values.len(), false)?;
            let out = &mut self.buffer;
            let spec = &self.tables[table];
            for ((value, column), check) in
                values.iter().zip(&spec.schema.columns).zip(&spec.checks)
            {
                let fail = |e: &dyn std::fmt::Display| {
                    FormatError::new(D::NAME, format!("column \"{}\": {e}", column.name))
                };
                check.write_owned(value, &column.ty).map_err(|e| fail(&e))?;
                match crate::table::values::scalar_ref(value) {
                    Some(scalar) if check.kind == ColumnKind::Scalar => {
                        encode_scalar::<D>(out, scalar, check)
                    }
                    _ => encode_value::<D>(out, value, &column.ty).map_err(|e| fail(&e))?,
                }
            }
            Ok(())
        })();
        self.row_done(start, result)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.output
            .write_all(&self.buffer)
            .and_then(|()| self.output.flush())
            .map_err(|e| FormatError::io(D::NAME, &e))?;
        self.buffer.clear();
        Ok(())
    }
}
