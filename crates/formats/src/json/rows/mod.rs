//! JSON rows through the common interface.
//!
//! Rows spelled as the writer spells them are scanned in place ([`row_scan`]); any other
//! spelling, control records and every error go through the codec's general reader
//! ([`JsonRows`]), so both paths give the same rows and errors.

use std::io::{Read, Write};
use std::sync::Arc;

use shapeshift_types::{Node, TableSchema, Value, ValueRef};

use crate::table::other_columns;
use crate::table::position::PositionWriter;
use crate::table::row_refs::RefsBuffer;
use crate::table::values::owned_row;
use crate::table::{FormatError, OwnedRefs, RowBlock, RowPosition, RowRef, RowSink, RowSource};

use super::{
    compile_tables, encode_row, write_control, write_key, write_node, JsonRows, Table, FORMAT,
};

mod composite_scan;
mod row_scan;
mod scalar_scan;

/// The interface's reader: rows spelled as the writer spells them are scanned in place
/// ([`row_scan`]), the others (and control records, and every error) go through [`JsonRows`].
struct JsonSource {
    input: Vec<u8>,
    rows: JsonRows,
    /// Per table: its columns compiled for the in-place scan.
    scan: Arc<[Vec<row_scan::ScanColumn>]>,
    /// The scanned rows' cells, row after row.
    cells: Vec<crate::table::scanned_cell::Cell>,
    /// Bytes of the scanned rows' values that are not in the input as they are.
    scratch: Vec<u8>,
    refs: RefsBuffer,
    /// The row reader's values and their refs, for rows the scan leaves to it.
    values: Vec<Value>,
    owned_refs: OwnedRefs,
    /// The scan is tried (off only in tests, to compare it with the row reader).
    scan_rows: bool,
}

/// A block of scanned rows ends after this many values (or at the first row the scan leaves
/// to the row reader).
const BLOCK_VALUES: usize = 4096;

/// A stream's table schemas compiled once for every reader and writer opened over them (a
/// caller sending one small message per stream pays the compile once: it took half of a
/// one-row read).
#[derive(Clone)]
pub(crate) struct JsonTables {
    schemas: Arc<[TableSchema]>,
    tables: Arc<[Table]>,
    scan: Arc<[Vec<row_scan::ScanColumn>]>,
}

impl JsonTables {
    pub(crate) fn compile(schemas: &[TableSchema]) -> JsonTables {
        JsonTables {
            schemas: schemas.into(),
            tables: compile_tables(schemas),
            scan: schemas.iter().map(row_scan::scan_columns).collect(),
        }
    }

    /// A reader of the whole of `input` (read into memory first).
    ///
    /// # Errors
    /// A [`FormatError`] when reading `input` fails.
    pub(crate) fn source(
        &self,
        mut input: Box<dyn Read>,
    ) -> Result<Box<dyn RowSource>, FormatError> {
        let mut bytes = Vec::new();
        input
            .read_to_end(&mut bytes)
            .map_err(|e| FormatError::io(FORMAT, &e))?;
        Ok(Box::new(JsonSource::new(self, bytes)))
    }

    /// A writer into `output`.
    pub(crate) fn sink(&self, output: Box<dyn Write>) -> Box<dyn RowSink> {
        Box::new(JsonSink {
            schemas: self.schemas.clone(),
            output,
            // Grown as rows come (see the tree formats' sink).
            buffer: Vec::new(),
            positions: PositionWriter::default(),
            rows: 0,
        })
    }
}

impl JsonSource {
    fn new(tables: &JsonTables, input: Vec<u8>) -> JsonSource {
        JsonSource {
            input,
            rows: JsonRows::new(tables.tables.clone()),
            scan: tables.scan.clone(),
            cells: Vec::new(),
            scratch: Vec::new(),
            refs: RefsBuffer::default(),
            values: Vec::new(),
            owned_refs: OwnedRefs::new(),
            scan_rows: true,
        }
    }

    /// Scans the next row in place, appending its cells; its position, or `None` when the row
    /// reader must read it (nothing consumed, the cells appended are dropped).
    #[inline]
    fn scan_next(&mut self) -> Option<RowPosition> {
        if !self.scan_rows {
            return None;
        }
        let input = &self.input;
        let mut pos = self.rows.pos;
        while input
            .get(pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            pos += 1;
        }
        if input.get(pos) != Some(&b'{') {
            return None;
        }
        let table = self.rows.positions.table();
        let base = self.cells.len();
        match row_scan::scan_row(
            input,
            pos,
            &self.rows.tables[table].schema,
            &self.scan[table],
            &mut self.cells,
            &mut self.scratch,
        ) {
            Some(end) => {
                self.rows.pos = end;
                self.rows.rows += 1;
                self.rows.others.clear();
                Some(self.rows.positions.next_row())
            }
            None => {
                self.cells.truncate(base);
                None
            }
        }
    }
}

impl RowSource for JsonSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        Ok(self.next_row_with_other_columns()?.map(|(row, _)| row))
    }

    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        self.cells.clear();
        self.scratch.clear();
        let columns = self.rows.tables[self.rows.positions.table()]
            .schema
            .columns
            .len();
        let Some(first) = self.scan_next() else {
            return Ok(self.next_row()?.map(RowBlock::of_row));
        };
        let mut rows = 1;
        // Scanned rows follow on one another: no control record between them (one is never
        // scanned), so each is in the first one's table and range, counting on.
        while self.cells.len() < BLOCK_VALUES && self.scan_next().is_some() {
            rows += 1;
        }
        let refs = self.refs.loan();
        let (input, scratch) = (&self.input, &self.scratch);
        refs.extend(self.cells.iter().map(|cell| cell.to_ref(input, scratch)));
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
        self.cells.clear();
        self.scratch.clear();
        if let Some(position) = self.scan_next() {
            let refs = self.refs.loan();
            let (input, scratch) = (&self.input, &self.scratch);
            refs.extend(self.cells.iter().map(|cell| cell.to_ref(input, scratch)));
            return Ok(Some((
                RowRef {
                    position,
                    values: refs,
                },
                None,
            )));
        }
        let Some((position, table)) = self.rows.next_row(&self.input, &mut self.values)? else {
            return Ok(None);
        };
        let values = self
            .owned_refs
            .refs(&self.values, &self.rows.tables[table].schema)
            .map_err(|e| FormatError::new(FORMAT, e.to_string()))?;
        let others = &self.rows.others;
        Ok(Some((
            RowRef { position, values },
            (!others.is_empty()).then_some(others.as_slice()),
        )))
    }
}

struct JsonSink {
    schemas: Arc<[TableSchema]>,
    output: Box<dyn Write>,
    buffer: Vec<u8>,
    positions: PositionWriter,
    rows: u64,
}

impl JsonSink {
    /// Writes a row (and its other columns, checked by the caller) into the buffer.
    fn write_unflushed(
        &mut self,
        position: &RowPosition,
        values: &[Value],
        others: &[(Vec<u8>, Node)],
    ) -> Result<(), FormatError> {
        self.schema(position)?;
        let schema = &self.schemas[position.table_index];
        let start = self.buffer.len();
        let buffer = &mut self.buffer;
        let _ = self.positions.controls(position, |c| {
            write_control(buffer, c);
            Ok::<(), ()>(())
        });
        if let Err(e) = encode_row(schema, values, buffer) {
            self.buffer.truncate(start);
            return Err(e.in_row(self.rows));
        }
        if !others.is_empty() {
            // The row ends with "}\n": its other columns go before that.
            self.buffer.truncate(self.buffer.len() - 2);
            for (key, node) in others {
                if self.buffer.last() != Some(&b'{') {
                    self.buffer.push(b',');
                }
                write_key(&mut self.buffer, key);
                write_node(&mut self.buffer, node);
            }
            self.buffer.extend_from_slice(b"}\n");
        }
        Ok(())
    }

    /// The owned values of a row of refs, checked.
    fn owned_values(
        &self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<Vec<Value>, FormatError> {
        owned_row(FORMAT, self.schema(position)?, values, self.rows)
    }

    fn flush_if_full(&mut self) -> Result<(), FormatError> {
        self.rows += 1;
        if self.buffer.len() >= 1 << 16 {
            self.output
                .write_all(&self.buffer)
                .map_err(|e| FormatError::io(FORMAT, &e))?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn schema(&self, position: &RowPosition) -> Result<&TableSchema, FormatError> {
        self.schemas.get(position.table_index).ok_or_else(|| {
            FormatError::new(
                FORMAT,
                format!(
                    "table index {} is out of range: {} table schemas",
                    position.table_index,
                    self.schemas.len()
                ),
            )
            .in_row(self.rows)
        })
    }
}

impl RowSink for JsonSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let owned = self.owned_values(position, values)?;
        self.write_owned_row(position, &owned)
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
        let schema = self.schema(position)?;
        let fail = |m: String| FormatError::new(FORMAT, m).in_row(rows);
        let entries =
            other_columns::checked_entries(bytes, schema, position.table_index).map_err(fail)?;
        let owned = self.owned_values(position, values)?;
        self.write_unflushed(position, &owned, &entries)?;
        self.flush_if_full()
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        self.write_unflushed(position, values, &[])?;
        self.flush_if_full()
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        self.output
            .write_all(&self.buffer)
            .and_then(|()| self.output.flush())
            .map_err(|e| FormatError::io(FORMAT, &e))?;
        self.buffer.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
