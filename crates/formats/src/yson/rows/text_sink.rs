//! The text YSON row writer: rows spelled byte for byte as the YSON module's [`Writer`] spells
//! them in [`YsonFormat::Text`] (and so as `yt.yson.dumps` does), written straight into one
//! output buffer.
//!
//! Why not the event writer itself: its per-event state machine (what may come next, which
//! frame is open, when to flush) and the quoting of every key on every row are the whole
//! difference between a row through the interface and the YSON module's own write. A table
//! row has a fixed shape — `{`, one `"key"=value;` per column in schema order, then any other
//! columns, `};` and a newline — so the shape is spelled here once: each column's quoted key
//! with its `=` is compiled when the table is opened ([`super::row_scan::ScanColumn`]), and
//! each value is checked and spelled in one pass over the row.
//!
//! Invariants:
//! - a row is all or nothing: its bytes go at the buffer's end and are cut off again when a
//!   value fails its check, and the control entities that put it in place (table, range, row
//!   index, key switch) are decided only once the row is good and inserted before it, so a
//!   failed row changes neither the output nor the position state;
//! - composite and `yson` values become nodes (`value_to_node`, named structs) spelled by
//!   [`text_node`], which follows `Writer::write_node` in text: every item inside a container
//!   ends with `;`, attributes are `<"key"=value;>` right before their value;
//! - the buffer goes to the output in writes of at least [`FLUSH_BYTES`].
//!
//! [`Writer`]: crate::yson::Writer
//! [`YsonFormat::Text`]: crate::yson::YsonFormat

use std::io::Write;

use shapeshift_types::{value_to_node, Node, NodeValue, StructForm, Value, ValueRef};

use super::{check_table, column_error, Table, YsonTables, FORMAT};
use crate::table::other_columns;
use crate::table::position::{Control, PositionWriter};
use crate::table::values::{check_ref, scalar_ref, value_from_ref, ColumnKind};
use crate::table::{FormatError, RowPosition, RowSink};
use crate::yson::{format_double, write_quoted};

/// The buffer is handed to the output once it holds this many bytes.
const FLUSH_BYTES: usize = 1 << 16;

pub(super) struct YsonTextSink {
    output: Box<dyn Write>,
    buffer: Vec<u8>,
    /// The control entities of the row just written, inserted before it.
    controls: Vec<u8>,
    tables: YsonTables,
    positions: PositionWriter,
    rows: u64,
    finished: bool,
    /// A write to the output failed: how much of the buffer went out is unknown, so the
    /// stream takes nothing more (writing the buffer again could repeat bytes).
    failed: bool,
}

impl YsonTextSink {
    pub(super) fn new(tables: YsonTables, output: Box<dyn Write>) -> YsonTextSink {
        YsonTextSink {
            output,
            // Grown as rows come (see the binary sink).
            buffer: Vec::new(),
            controls: Vec::new(),
            tables,
            positions: PositionWriter::default(),
            rows: 0,
            finished: false,
            failed: false,
        }
    }

    /// Writes one row with `write_values` (which spells the columns, checked, after the
    /// `{`), then `others` (checked entries); on any error nothing of the row stays.
    fn write_with(
        &mut self,
        position: &RowPosition,
        count: usize,
        others: &[(Vec<u8>, Node)],
        write_values: impl FnOnce(&Table, &mut Vec<u8>) -> Result<(), FormatError>,
    ) -> Result<(), FormatError> {
        let rows = self.rows;
        if self.finished {
            let why = if self.failed {
                "an earlier write to the output failed"
            } else {
                "the stream is finished"
            };
            return Err(FormatError::new(FORMAT, why).in_row(rows));
        }
        let table = check_table(&self.tables, position, count).map_err(|e| e.in_row(rows))?;
        let start = self.buffer.len();
        self.buffer.push(b'{');
        if let Err(e) = write_values(table, &mut self.buffer) {
            self.buffer.truncate(start);
            return Err(e.in_row(rows));
        }
        for (key, node) in others {
            write_quoted(key, &mut self.buffer);
            self.buffer.push(b'=');
            text_node(&mut self.buffer, node);
            self.buffer.push(b';');
        }
        self.buffer.extend_from_slice(b"};\n");
        // The row is good: now its controls (usually none) are decided and put before it.
        let controls = &mut self.controls;
        controls.clear();
        let _ = self.positions.controls(position, |c| {
            text_control(controls, c);
            Ok::<(), ()>(())
        });
        if !self.controls.is_empty() {
            self.buffer
                .splice(start..start, self.controls.iter().copied());
        }
        self.rows += 1;
        if self.buffer.len() >= FLUSH_BYTES {
            self.write_buffer()?;
        }
        Ok(())
    }

    /// Writes the buffer out; on failure the stream is closed for good (see `failed`).
    fn write_buffer(&mut self) -> Result<(), FormatError> {
        super::write_out(&mut *self.output, &mut self.buffer, &mut self.failed).inspect_err(|_| {
            self.finished = true;
        })
    }
}

/// Spells the columns of a row of borrowed values (scalars checked, composites decoded and
/// checked) after its `{`.
fn write_ref_values(
    table: &Table,
    values: &[ValueRef<'_>],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    for ((value, column), plan) in values
        .iter()
        .zip(&table.schema.columns)
        .zip(&table.scan_columns)
    {
        out.extend_from_slice(plan.text_key());
        match *value {
            ValueRef::Composite(_) | ValueRef::Any(_) => {
                let owned = value_from_ref(*value, &column.ty)
                    .map_err(|e| column_error(&column.name, e))?;
                composite(out, &owned, column)?;
            }
            scalar => {
                if !plan.takes(scalar) {
                    check_ref(scalar, &column.ty).map_err(|e| column_error(&column.name, e))?;
                }
                text_scalar(out, scalar);
            }
        }
        out.push(b';');
    }
    Ok(())
}

/// Spells the columns of a row of owned values, each checked, after its `{`.
fn write_owned_values(
    table: &Table,
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    for (((value, column), check), plan) in values
        .iter()
        .zip(&table.schema.columns)
        .zip(&table.checks)
        .zip(&table.scan_columns)
    {
        out.extend_from_slice(plan.text_key());
        match scalar_ref(value) {
            Some(scalar) if check.kind == ColumnKind::Scalar => {
                // The compiled rule takes only what the full check takes.
                if !plan.takes(scalar) {
                    check
                        .write(scalar, &column.ty)
                        .map_err(|e| column_error(&column.name, e))?;
                }
                text_scalar(out, scalar);
            }
            _ => {
                check
                    .write_owned(value, &column.ty)
                    .map_err(|e| column_error(&column.name, e))?;
                match value {
                    Value::Null => out.push(b'#'),
                    _ => composite(out, value, column)?,
                }
            }
        }
        out.push(b';');
    }
    Ok(())
}

/// A checked value of a non-scalar column (or a scalar of a composite one) as text YSON.
fn composite(
    out: &mut Vec<u8>,
    value: &Value,
    column: &shapeshift_types::ColumnSchema,
) -> Result<(), FormatError> {
    if let Some(scalar) = scalar_ref(value) {
        text_scalar(out, scalar);
        return Ok(());
    }
    let node = value_to_node(value, &column.ty, StructForm::Named)
        .map_err(|e| column_error(&column.name, e))?;
    text_node(out, &node);
    Ok(())
}

/// A scalar (or null) as text YSON.
#[inline(always)]
fn text_scalar(out: &mut Vec<u8>, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => out.push(b'#'),
        ValueRef::Bool(true) => out.extend_from_slice(b"%true"),
        ValueRef::Bool(false) => out.extend_from_slice(b"%false"),
        ValueRef::Int64(v) => decimal_i64(out, v),
        ValueRef::Uint64(v) => {
            decimal_u64(out, v);
            out.push(b'u');
        }
        ValueRef::Double(v) => format_double(v, out),
        ValueRef::String(v) => write_quoted(v, out),
        // Not scalars: the callers spell these through nodes.
        ValueRef::Composite(_) | ValueRef::Any(_) => out.push(b'#'),
    }
}

/// The decimal digits of `value`, two at a time.
#[inline(always)]
fn decimal_u64(out: &mut Vec<u8>, mut value: u64) {
    const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while value >= 100 {
        let pair = (value % 100) as usize * 2;
        value /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if value >= 10 {
        let pair = value as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + value as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

#[inline(always)]
fn decimal_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    decimal_u64(out, value.unsigned_abs());
}

/// A node as the text writer spells it (`Writer::write_node`, text, no indent).
pub(super) fn text_node(out: &mut Vec<u8>, node: &Node) {
    if !node.attributes.is_empty() {
        out.push(b'<');
        for (key, value) in &node.attributes {
            write_quoted(key, out);
            out.push(b'=');
            text_node(out, value);
            out.push(b';');
        }
        out.push(b'>');
    }
    match &node.value {
        NodeValue::Entity => out.push(b'#'),
        NodeValue::Bool(v) => text_scalar(out, ValueRef::Bool(*v)),
        NodeValue::Int64(v) => decimal_i64(out, *v),
        NodeValue::Uint64(v) => {
            decimal_u64(out, *v);
            out.push(b'u');
        }
        NodeValue::Double(v) => format_double(*v, out),
        NodeValue::String(v) => write_quoted(v, out),
        NodeValue::List(items) => {
            out.push(b'[');
            for item in items {
                text_node(out, item);
                out.push(b';');
            }
            out.push(b']');
        }
        NodeValue::Map(entries) => {
            out.push(b'{');
            for (key, value) in entries {
                write_quoted(key, out);
                out.push(b'=');
                text_node(out, value);
                out.push(b';');
            }
            out.push(b'}');
        }
    }
}

/// A control entity as its own list-fragment item: `<"table_index"=1;>#;`.
fn text_control(out: &mut Vec<u8>, control: Control) {
    out.push(b'<');
    match control {
        Control::TableIndex(i) => {
            out.extend_from_slice(b"\"table_index\"=");
            decimal_u64(out, i as u64);
        }
        Control::RowIndex(i) => {
            out.extend_from_slice(b"\"row_index\"=");
            decimal_i64(out, i);
        }
        Control::RangeIndex(i) => {
            out.extend_from_slice(b"\"range_index\"=");
            decimal_i64(out, i);
        }
        Control::KeySwitch => out.extend_from_slice(b"\"key_switch\"=%true"),
    }
    out.extend_from_slice(b";>#;\n");
}

impl RowSink for YsonTextSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        self.write_with(position, values.len(), &[], |table, out| {
            write_ref_values(table, values, out)
        })
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
        let rows = self.rows;
        let table =
            check_table(&self.tables, position, values.len()).map_err(|e| e.in_row(rows))?;
        // Checked as the binary sink checks them; spelled here as nodes.
        let entries = other_columns::checked_entries(bytes, &table.schema, position.table_index)
            .map_err(|m| FormatError::new(FORMAT, m).in_row(rows))?;
        self.write_with(position, values.len(), &entries, |table, out| {
            write_ref_values(table, values, out)
        })
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.write_with(position, values.len(), &[], |table, out| {
            write_owned_values(table, values, out)
        })
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        if self.failed {
            return Err(FormatError::new(
                FORMAT,
                "an earlier write to the output failed",
            ));
        }
        if !self.finished {
            self.write_buffer()?;
            self.finished = true;
            self.output
                .flush()
                .map_err(|e| FormatError::io(FORMAT, &e))?;
        }
        Ok(())
    }
}
