//! Skiff table streams through the common interface ([`crate::table`]).
//!
//! The Skiff schema of each table is the one YT uses for its table schema
//! ([`skiff_schema_for_table`](crate::skiff::skiff_schema_for_table)); with system columns the
//! rows carry `$key_switch`, `$row_index` and `$range_index`, which are the row's
//! [`RowPosition`] (the table index is every Skiff row's first field). Without them a sink
//! refuses a position it cannot write (a row or range index, a key switch) rather than drop it.
//! A non-strict table's `$other_columns` field carries the row's other columns (see
//! `table::other_columns`): an empty map when it has none; a strict table has no such field,
//! so its sink refuses other columns, naming the first.
//!
//! Reading borrows scalars and strings from the reader's buffer; composite fields (and wide
//! integers, decimals) are re-spelled as binary YSON into one scratch buffer (one pass over
//! the Skiff bytes, `binary_yson.rs`). [`RowSource::next_rows`] hands out the rows
//! complete in the reader's buffer as one block, cut at every position change: scanned and
//! read in one pass (a block scan compiled once per table, `block_scan.rs`, run over the
//! reader's buffer by `StreamReader::scan_block`), or, for tables with a yson payload inside a composite, a decimal
//! or a wide integer, scanned as a run (`StreamReader::extend_run`) and then read. A row whose
//! composite cannot be decoded ends its block and is reported by the next call.

use std::io::{Read, Write};

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::skiff::{
    Codec, FieldRef, MappingOptions, RowView, RowWriter, SkiffError, StreamReader, SystemFields,
};
use crate::table::other_columns;
use crate::table::row_refs::RefsBuffer;
use crate::table::values::{owned_row, ColumnKind};
use crate::table::{FormatError, RowBlock, RowPosition, RowRef, RowSink, RowSource};

mod arrow_scan;
mod binary_yson;
mod block_scan;

pub use arrow_scan::ArrowScan;
mod borrowed;

use binary_yson::lazy_to_binary_yson;
use block_scan::{BlockScan, CompositeOut};

const FORMAT: &str = "skiff";

#[cold]
fn skiff_error(error: SkiffError) -> FormatError {
    let message = match &error.column {
        Some(column) => format!("column \"{column}\": {}", error.message),
        None => error.message.clone(),
    };
    FormatError {
        format: FORMAT,
        offset: error.offset,
        row: error.row,
        message,
    }
}

fn codec(schemas: &[TableSchema], system_columns: bool) -> Result<Codec, FormatError> {
    let options = MappingOptions {
        key_switch: system_columns,
        row_index: system_columns,
        range_index: system_columns,
        ..MappingOptions::default()
    };
    Codec::for_table_schemas(schemas, &options).map_err(skiff_error)
}

/// A Skiff row reader over `input`.
///
/// # Errors
/// A mapping error when a table schema cannot be expressed in Skiff.
pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    system_columns: bool,
) -> Result<Box<dyn RowSource>, FormatError> {
    let codec = codec(schemas, system_columns)?;
    let all_borrowed: Vec<bool> = (0..schemas.len())
        .map(|t| {
            codec.table(t).is_some_and(|plan| {
                (0..plan.column_count()).all(|c| plan.column_plan(c).borrowable)
            })
        })
        .collect();
    let widest = schemas.iter().map(|s| s.columns.len()).max().unwrap_or(0);
    let block_scans = schemas
        .iter()
        .enumerate()
        .map(|(t, schema)| {
            codec
                .table(t)
                .and_then(|plan| BlockScan::compile(plan, Some(schema)))
        })
        .collect();
    Ok(Box::new(SkiffRowSource {
        block_scans,
        max_block_rows: (BLOCK_VALUES / widest.max(1)).max(1),
        every_table_borrowed: all_borrowed.iter().all(|&b| b),
        all_borrowed,
        reader: codec.stream_reader(input),
        schemas: schemas.to_vec(),
        kinds: schemas
            .iter()
            .map(crate::table::values::column_kinds)
            .collect(),
        scratch: Vec::new(),
        spans: Vec::new(),
        composite_spans: Vec::new(),
        others: Vec::new(),
        refs: RefsBuffer::default(),
        pending: None,
    }))
}

struct SkiffRowSource {
    /// Per table, its one-pass block scan, when every data column can be read in that pass.
    block_scans: Vec<Option<BlockScan>>,
    /// Rows per block: about [`BLOCK_VALUES`] values of the widest table, at least one.
    max_block_rows: usize,
    /// Every table's columns read as borrowed values: rows take [`SkiffRowSource::next_borrowed_row`].
    every_table_borrowed: bool,
    /// Per table: every column reads as a borrowed value (no composites, decimals or wide
    /// integers), so a row needs no scratch.
    all_borrowed: Vec<bool>,
    reader: StreamReader<Box<dyn Read>>,
    schemas: Vec<TableSchema>,
    kinds: Vec<Vec<ColumnKind>>,
    scratch: Vec<u8>,
    /// The scratch spans of the row's lazy fields, in column order.
    spans: Vec<(usize, usize, LazyKind)>,
    /// Per composite value of a block scan: its index in the block's values, its span of
    /// `scratch`, and whether it is a yson column's (`Any`) rather than `Composite`.
    composite_spans: Vec<(usize, usize, usize, bool)>,
    /// The row's `$other_columns`, checked, as a binary YSON map (empty: none).
    others: Vec<u8>,
    refs: RefsBuffer,
    /// The error of a row a block stopped before (its good rows went out first): the next
    /// call reports it.
    pending: Option<FormatError>,
}

/// About how many values a block holds: enough to amortize the call per block, few enough
/// that the values written are still in L1 when the caller reads them.
const BLOCK_VALUES: usize = 1024;

#[derive(Clone, Copy)]
enum LazyKind {
    Null,
    Int64(i64),
    Uint64(u64),
    String,
    Any,
    Composite,
}

impl RowSource for SkiffRowSource {
    #[inline]
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        if self.every_table_borrowed {
            return self.next_borrowed_row();
        }
        Ok(self.read::<false>()?.map(|(row, _)| row))
    }

    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        self.read::<true>()
    }

    /// The rows complete in the reader's buffer at once ([`StreamReader::scan_block`]
    /// or [`StreamReader::extend_run`]): one call, one values buffer and one position per
    /// block instead of per row.
    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        let max_rows = self.max_block_rows;
        if !self.reader.advance().map_err(boxed_skiff_error)? {
            return Ok(None);
        }
        let (table_index, columns) = self.reader.current_table();
        if let Some(scan) = &self.block_scans[usize::from(table_index)] {
            // Scanned and read in one pass.
            let first = self.reader.current_row();
            let (offset, position) = (
                first.offset(),
                RowPosition {
                    table_index: usize::from(table_index),
                    row_index: first.row_index(),
                    range_index: first.range_index(),
                    key_switch: first.key_switch(),
                },
            );
            let row_number = self.reader.rows_read() - 1;
            self.scratch.clear();
            self.composite_spans.clear();
            let refs = self.refs.loan();
            refs.reserve(max_rows * columns);
            let mut composites = CompositeOut {
                bytes: &mut self.scratch,
                spans: &mut self.composite_spans,
            };
            let rows = self
                .reader
                .scan_block(|start| scan.scan_block(start, max_rows, refs, &mut composites));
            if rows == 0 {
                return Err(refused_row(offset, row_number));
            }
            for &(index, start, end, yson) in &self.composite_spans {
                let bytes = &self.scratch[start..end];
                refs[index] = if yson {
                    ValueRef::Any(bytes)
                } else {
                    ValueRef::Composite(bytes)
                };
            }
            return Ok(Some(RowBlock {
                first: position,
                rows,
                columns,
                values: refs,
            }));
        }
        let rows = self.reader.extend_run(max_rows);
        let first = self.reader.run_row(0);
        let table = usize::from(first.table_index());
        let position = RowPosition {
            table_index: table,
            row_index: first.row_index(),
            range_index: first.range_index(),
            key_switch: first.key_switch(),
        };
        let columns = first.len();
        let mut good = rows;
        if !self.all_borrowed[table] {
            // First pass: every row's lazy fields into the one scratch. A row that fails
            // ends the block before it; its error is reported by the next call.
            self.scratch.clear();
            self.spans.clear();
            let first_number = self.reader.rows_read() - rows as u64;
            for i in 0..rows {
                let view = self.reader.run_row(i);
                let decoded = lazy_fields(
                    &view,
                    &self.schemas[table],
                    &self.kinds[table],
                    first_number + i as u64,
                    &mut self.scratch,
                    &mut self.spans,
                );
                if let Err(error) = decoded {
                    if i == 0 {
                        self.reader.unread_run_from(1);
                        return Err(error);
                    }
                    self.reader.unread_run_from(i + 1);
                    self.pending = Some(error);
                    good = i;
                    break;
                }
            }
        }
        let refs = self.refs.loan();
        refs.reserve(good * columns);
        if self.all_borrowed[table] {
            for i in 0..good {
                refs.extend(self.reader.run_row(i).borrowed_values());
            }
        } else {
            let mut spans = self.spans.as_slice();
            for i in 0..good {
                let taken = push_values(&self.reader.run_row(i), &self.scratch, spans, refs);
                spans = &spans[taken..];
            }
        }
        Ok(Some(RowBlock {
            first: position,
            rows: good,
            columns,
            values: refs,
        }))
    }
}

/// The error for a row the block scan refused after the scanner accepted it: a broken
/// invariant of `skiff/block_scan.rs` (never seen; reported rather than looped on).
#[cold]
#[inline(never)]
fn refused_row(offset: u64, row: u64) -> FormatError {
    FormatError::new(
        FORMAT,
        "internal error: the block scan refused a row the scanner accepted",
    )
    .at(offset)
    .in_row(row)
}

/// A boxed Skiff error as the interface's error (cold: the hot path only moves the box).
#[cold]
#[inline(never)]
fn boxed_skiff_error(error: Box<SkiffError>) -> FormatError {
    skiff_error(*error)
}

impl SkiffRowSource {
    /// The next row when every table is borrowable: [`SkiffRowSource::read`] without the
    /// scratch pass and without the `(row, others)` pair, whose reshuffling into the
    /// returned `Option<RowRef>` cost a store-forwarding stall per row (perf annotate).
    #[inline(always)]
    fn next_borrowed_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.reader.advance().map_err(boxed_skiff_error)? {
            return Ok(None);
        }
        let view = self.reader.current_row();
        let refs = self.refs.loan();
        refs.reserve(view.len());
        refs.extend(view.borrowed_values());
        Ok(Some(RowRef {
            position: RowPosition {
                table_index: usize::from(view.table_index()),
                row_index: view.row_index(),
                range_index: view.range_index(),
                key_switch: view.key_switch(),
            },
            values: refs,
        }))
    }

    /// The next row, and its other columns when `WITH_OTHERS` (else they are not looked at).
    ///
    /// The row is scanned in place in the stream reader's buffer ([`StreamReader::advance`]
    /// answers in registers).
    fn read<const WITH_OTHERS: bool>(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        let rows = self.reader.rows_read();
        if !self.reader.advance().map_err(boxed_skiff_error)? {
            return Ok(None);
        }
        let view = self.reader.current_row();
        let table = usize::from(view.table_index());
        let position = RowPosition {
            table_index: table,
            row_index: view.row_index(),
            range_index: view.range_index(),
            key_switch: view.key_switch(),
        };
        self.others.clear();
        if WITH_OTHERS {
            if let Some(bytes) = view.other_columns().filter(|b| *b != b"{}") {
                other_columns::normalize(bytes, &self.schemas[table], table, &mut self.others)
                    .map_err(|m| FormatError::new(FORMAT, m).at(view.offset()).in_row(rows))?;
            }
        }
        let others = (!self.others.is_empty()).then_some(self.others.as_slice());
        if self.all_borrowed[table] {
            let refs = self.refs.loan();
            refs.reserve(view.len());
            refs.extend(view.borrowed_values());
            return Ok(Some((
                RowRef {
                    position,
                    values: refs,
                },
                others,
            )));
        }
        self.scratch.clear();
        self.spans.clear();
        lazy_fields(
            &view,
            &self.schemas[table],
            &self.kinds[table],
            rows,
            &mut self.scratch,
            &mut self.spans,
        )?;
        let refs = self.refs.loan();
        push_values(&view, &self.scratch, &self.spans, refs);
        Ok(Some((
            RowRef {
                position,
                values: refs,
            },
            others,
        )))
    }
}

/// The row's lazy fields (composites, decimals, wide integers) decoded into `scratch`, one
/// span per lazy field in column order, appended to `spans`. Composites are walked in place
/// and written as binary YSON (no value tree).
///
/// # Errors
/// A value that does not fit its column type, or a bad yson32 payload inside; the error
/// names the column, the row's byte offset and its number `row`.
fn lazy_fields(
    view: &RowView<'_>,
    schema: &TableSchema,
    kinds: &[ColumnKind],
    row: u64,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize, LazyKind)>,
) -> Result<(), FormatError> {
    for (column, field) in view.fields().enumerate() {
        let FieldRef::Lazy(lazy) = field else {
            continue;
        };
        let spec = &schema.columns[column];
        let kind = kinds[column];
        let fail = |m: String| {
            FormatError::new(FORMAT, format!("column \"{}\": {m}", spec.name))
                .at(view.offset())
                .in_row(row)
        };
        let start = scratch.len();
        let lazy_kind = if kind == ColumnKind::Scalar {
            match lazy
                .to_value()
                .map_err(|e| skiff_error(e).at(view.offset()).in_row(row))?
            {
                Value::Null => LazyKind::Null,
                Value::Int64(v) => LazyKind::Int64(v),
                Value::Uint64(v) => LazyKind::Uint64(v),
                Value::String(bytes) => {
                    scratch.extend_from_slice(&bytes);
                    LazyKind::String
                }
                other => {
                    return Err(fail(format!(
                        "unexpected value {other:?} of a scalar column"
                    )))
                }
            }
        } else if matches!(lazy.variant(), Some((0, _))) && spec.ty.is_nullable() {
            // An absent optional: the common row's null.
            LazyKind::Null
        } else {
            lazy_to_binary_yson(&lazy, &spec.ty, scratch).map_err(fail)?;
            if kind == ColumnKind::Yson {
                LazyKind::Any
            } else {
                LazyKind::Composite
            }
        };
        spans.push((start, scratch.len(), lazy_kind));
    }
    Ok(())
}

/// Appends the row's values to `refs`: borrowed from the row, or (lazy fields, in column
/// order) from the spans of `scratch` that [`lazy_fields`] wrote, taken from the front of
/// `spans`; returns how many spans the row took.
fn push_values<'a>(
    view: &RowView<'a>,
    scratch: &'a [u8],
    spans: &[(usize, usize, LazyKind)],
    refs: &mut Vec<ValueRef<'a>>,
) -> usize {
    let mut lazy = spans.iter();
    refs.extend(view.fields().map(|field| match field {
        FieldRef::Value(value) => value,
        FieldRef::Lazy(_) => match lazy.next() {
            Some(&(_, _, LazyKind::Null)) | None => ValueRef::Null,
            Some(&(_, _, LazyKind::Int64(v))) => ValueRef::Int64(v),
            Some(&(_, _, LazyKind::Uint64(v))) => ValueRef::Uint64(v),
            Some(&(start, end, LazyKind::String)) => ValueRef::String(&scratch[start..end]),
            Some(&(start, end, LazyKind::Any)) => ValueRef::Any(&scratch[start..end]),
            Some(&(start, end, LazyKind::Composite)) => ValueRef::Composite(&scratch[start..end]),
        },
    }));
    spans.len() - lazy.len()
}

/// A Skiff row writer into `output`.
///
/// # Errors
/// A mapping error when a table schema cannot be expressed in Skiff.
pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    system_columns: bool,
) -> Result<Box<dyn RowSink>, FormatError> {
    let codec = codec(schemas, system_columns)?;
    let other_columns = (0..schemas.len())
        .map(|t| codec.table(t).is_some_and(|plan| plan.has_other_columns()))
        .collect();
    Ok(Box::new(SkiffRowSink {
        other_columns,
        writer: Some(codec.writer(output)),
        schemas: schemas.to_vec(),
        system_columns,
        rows: 0,
        system: SystemFields::default(),
    }))
}

struct SkiffRowSink {
    /// Per table: its Skiff schema has `$other_columns`.
    other_columns: Vec<bool>,
    writer: Option<RowWriter<Box<dyn Write>>>,
    schemas: Vec<TableSchema>,
    system_columns: bool,
    rows: u64,
    /// The system fields of the row being written, kept from row to row (only the position's
    /// three change; building and dropping the struct per row showed in profiles).
    system: SystemFields,
}

impl SkiffRowSink {
    /// Checks `position` and puts it into `self.system`; returns the table index.
    #[inline]
    fn set_position(&mut self, position: &RowPosition) -> Result<u16, FormatError> {
        let table = u16::try_from(position.table_index)
            .ok()
            .filter(|&t| usize::from(t) < self.schemas.len());
        let carried = self.system_columns
            || (position.row_index.is_none()
                && position.range_index.is_none()
                && !position.key_switch);
        match table {
            Some(table) if carried => {
                self.system.key_switch = position.key_switch;
                self.system.row_index = position.row_index;
                self.system.range_index = position.range_index;
                Ok(table)
            }
            _ => Err(self
                .system(position)
                .err()
                .unwrap_or_else(|| FormatError::new(FORMAT, "bad row position").in_row(self.rows))),
        }
    }

    /// Writes a row of owned values at the position [`SkiffRowSink::set_position`] set.
    #[inline]
    fn write_owned_at(&mut self, table: u16, values: &[Value]) -> Result<(), FormatError> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| FormatError::new(FORMAT, "the stream is finished"))?;
        writer
            .write_row(table, values, &self.system)
            .map_err(skiff_error)?;
        self.rows += 1;
        Ok(())
    }

    #[cold]
    fn system(&self, position: &RowPosition) -> Result<(u16, SystemFields), FormatError> {
        let table = u16::try_from(position.table_index)
            .ok()
            .filter(|&t| usize::from(t) < self.schemas.len())
            .ok_or_else(|| {
                FormatError::new(
                    FORMAT,
                    format!(
                        "table index {} is out of range: {} table schemas",
                        position.table_index,
                        self.schemas.len()
                    ),
                )
                .in_row(self.rows)
            })?;
        if !self.system_columns
            && (position.row_index.is_some()
                || position.range_index.is_some()
                || position.key_switch)
        {
            return Err(FormatError::new(
                FORMAT,
                "the row has a row index, range index or key switch, which skiff carries only in \
                 system columns (--system-columns)",
            )
            .in_row(self.rows));
        }
        Ok((
            table,
            SystemFields {
                key_switch: position.key_switch,
                row_index: position.row_index,
                range_index: position.range_index,
                ..SystemFields::default()
            },
        ))
    }

    /// The owned values of a row of refs (composite values decoded), checked.
    fn owned_values(
        &self,
        table: usize,
        values: &[ValueRef<'_>],
    ) -> Result<Vec<Value>, FormatError> {
        owned_row(FORMAT, &self.schemas[table], values, self.rows)
    }

    fn writer(&mut self) -> Result<&mut RowWriter<Box<dyn Write>>, FormatError> {
        self.writer
            .as_mut()
            .ok_or_else(|| FormatError::new(FORMAT, "the stream is finished"))
    }
}

impl RowSink for SkiffRowSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = self.set_position(position)?;
        if values.iter().any(|v| matches!(v, ValueRef::Composite(_))) {
            let owned = self.owned_values(usize::from(table), values)?;
            return self.write_owned_at(table, &owned);
        }
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| FormatError::new(FORMAT, "the stream is finished"))?;
        writer
            .write_row_refs(table, values, &self.system)
            .map_err(skiff_error)?;
        self.rows += 1;
        Ok(())
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
        let (table, mut system) = self.system(position)?;
        let rows = self.rows;
        if !self.other_columns[usize::from(table)] {
            return other_columns::refuse(FORMAT, bytes)
                .map_err(|e| e.in_row(rows))
                .and_then(|()| self.write_row(position, values));
        }
        let mut others = Vec::new();
        other_columns::normalize(
            bytes,
            &self.schemas[usize::from(table)],
            usize::from(table),
            &mut others,
        )
        .map_err(|m| FormatError::new(FORMAT, m).in_row(rows))?;
        if others.is_empty() {
            return self.write_row(position, values);
        }
        system.other_columns = Some(others);
        if values.iter().any(|v| matches!(v, ValueRef::Composite(_))) {
            let owned = self.owned_values(usize::from(table), values)?;
            self.writer()?
                .write_row(table, &owned, &system)
                .map_err(skiff_error)?;
        } else {
            self.writer()?
                .write_row_refs(table, values, &system)
                .map_err(skiff_error)?;
        }
        self.rows += 1;
        Ok(())
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let table = self.set_position(position)?;
        self.write_owned_at(table, values)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        if let Some(writer) = self.writer.take() {
            let mut output = writer.finish().map_err(skiff_error)?;
            output.flush().map_err(|e| FormatError::io(FORMAT, &e))?;
        }
        Ok(())
    }
}
