//! [`BatchReader`]: Arrow IPC streams read batch by batch (the columnar fast path) or row by
//! row (the row interface; rows are views of the current batch).

use std::io::Read;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_schema::SchemaRef;
use shapeshift_types::TableSchema;

use crate::table::{FormatError, RowBlock, RowPosition, RowRef, RowSource};

use super::super::{
    error, FORMAT, MAX_METADATA_BYTES, PREALLOCATE_BODY_BYTES, ROW_AT_A_TIME_MAX_COLUMNS,
    TABLE_INDEX_KEY,
};
use super::views::{ChunkViews, ColumnView};
use super::Layout;
use crate::arrow::guarded;

/// Bytes of the input for the decoder.
struct Piece {
    bytes: Buffer,
    /// Where the message they belong to starts in the input.
    offset: u64,
    /// An end-of-stream marker: once decoded, the stream must be complete.
    ends_stream: bool,
}

/// Reads a sequence of Arrow IPC streams (one per run of a table).
pub struct BatchReader {
    input: Box<dyn Read>,
    schemas: Vec<TableSchema>,
    decoder: StreamDecoder,
    /// Input bytes read so far (messages are read whole).
    offset: u64,
    /// Bytes read and not yet decoded: a message's head and body, or an end-of-stream mark.
    pieces: std::collections::VecDeque<Piece>,
    input_ended: bool,
    layout: Option<Layout>,
    /// The schema the layout was made for (one per stream).
    layout_schema: Option<SchemaRef>,
    batch: Option<RecordBatch>,
    next_row: usize,
    rows: u64,
    /// Views of the current chunk of rows of `batch`.
    views: ChunkViews,
    /// The layout has system columns (positions are read per row).
    positioned: bool,
    /// The current row's position: set once per batch when the rows carry none. Kept here
    /// rather than built in `next_row` because returning a position just assembled on the
    /// stack stalled every row on store forwarding (perf: about half of `next_row`'s samples
    /// on BM3 sat on that load).
    position: RowPosition,
}

impl BatchReader {
    pub fn new(schemas: &[TableSchema], input: Box<dyn Read>) -> BatchReader {
        BatchReader {
            input,
            schemas: schemas.to_vec(),
            decoder: StreamDecoder::new(),
            offset: 0,
            pieces: std::collections::VecDeque::new(),
            input_ended: false,
            layout: None,
            layout_schema: None,
            batch: None,
            next_row: 0,
            rows: 0,
            views: ChunkViews::default(),
            positioned: false,
            position: RowPosition::default(),
        }
    }

    fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads into `buf` until it is full or the input ends; the bytes read.
    fn read_up_to(&mut self, buf: &mut [u8]) -> Result<usize, FormatError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.input.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.fail(format!("read: {e}"))),
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Appends `len` bytes of input to `into`, which grows only as the input delivers them.
    fn read_exactly(
        &mut self,
        len: u64,
        into: &mut Vec<u8>,
        what: &str,
    ) -> Result<(), FormatError> {
        let start = self.offset;
        let read = (&mut self.input)
            .take(len)
            .read_to_end(into)
            .map_err(|e| self.fail(format!("read: {e}")))?;
        self.offset += read as u64;
        if (read as u64) < len {
            return Err(error(
                Some(self.offset),
                Some(self.rows),
                format!("input ends inside a {what} of {len} bytes that starts at byte {start}"),
            ));
        }
        Ok(())
    }

    fn fail(&self, message: impl Into<String>) -> FormatError {
        error(Some(self.offset()), Some(self.rows), message)
    }

    /// The next record batch and its table index; `None` at the end of the input.
    ///
    /// # Errors
    /// A [`FormatError`] with the byte offset reached, for malformed or truncated streams
    /// and for schemas that do not match the table's.
    pub fn next_batch(&mut self) -> Result<Option<(usize, RecordBatch)>, FormatError> {
        loop {
            let Some(piece) = self.pieces.front_mut() else {
                if self.input_ended {
                    return Ok(None);
                }
                self.read_message()?;
                continue;
            };
            if !piece.bytes.is_empty() {
                let decoder = &mut self.decoder;
                let bytes = &mut piece.bytes;
                let start = piece.offset;
                match guarded(|| decoder.decode(bytes)) {
                    Ok(Some(batch)) => {
                        let table_index =
                            self.table_index_of(&batch.schema())
                                .map_err(|e| FormatError {
                                    offset: Some(start),
                                    ..e
                                })?;
                        return Ok(Some((table_index, batch)));
                    }
                    Ok(None) => {}
                    Err(e) => return Err(error(Some(start), Some(self.rows), e.to_string())),
                }
                continue;
            }
            let piece = self.pieces.pop_front().expect("the front piece");
            if piece.ends_stream {
                // A table switch follows, or the input ends.
                self.decoder.finish().map_err(|e| {
                    error(
                        Some(piece.offset),
                        Some(self.rows),
                        format!("end of stream: {e}"),
                    )
                })?;
                self.decoder = StreamDecoder::new();
            }
        }
    }

    /// Reads the next message whole into `pieces`: [continuation 0xFFFFFFFF], the metadata
    /// length (u32), the metadata flatbuffer (which holds the body's length), the body.
    /// Read whole, the body is taken by the decoder without a copy. At the end of the input
    /// an end-of-stream marker is queued instead, so the decoder finishes a last message
    /// without a body (the decoder only acts on bytes).
    fn read_message(&mut self) -> Result<(), FormatError> {
        const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        let message_start = self.offset;
        let mut head = Vec::with_capacity(8);
        let mut word = [0u8; 4];
        match self.read_up_to(&mut word)? {
            0 => {
                self.input_ended = true;
                self.pieces.push_back(Piece {
                    bytes: Buffer::from_vec(END_OF_STREAM.to_vec()),
                    offset: message_start,
                    ends_stream: false,
                });
                return Ok(());
            }
            4 => {}
            _ => return Err(self.fail("input ends inside a message length")),
        }
        head.extend_from_slice(&word);
        if word == [0xFF; 4] {
            if self.read_up_to(&mut word)? != 4 {
                return Err(self.fail("input ends inside a message length"));
            }
            head.extend_from_slice(&word);
        }
        let metadata_len = u32::from_le_bytes(word);
        if metadata_len == 0 {
            self.pieces.push_back(Piece {
                bytes: Buffer::from_vec(head),
                offset: message_start,
                ends_stream: true,
            });
            return Ok(());
        }
        let at_start = |message: String| error(Some(message_start), Some(self.rows), message);
        if metadata_len > MAX_METADATA_BYTES {
            return Err(at_start(format!(
                "message metadata of {metadata_len} bytes (at most {MAX_METADATA_BYTES})"
            )));
        }
        let metadata_start = head.len();
        self.read_exactly(u64::from(metadata_len), &mut head, "message header")?;
        let at_start = |message: String| error(Some(message_start), Some(self.rows), message);
        let body_len = arrow_ipc::root_as_message(&head[metadata_start..])
            .map(|m| m.bodyLength())
            .map_err(|e| at_start(format!("malformed message header: {e}")))?;
        let body_len = u64::try_from(body_len)
            .map_err(|_| at_start(format!("negative body length {body_len}")))?;
        let mut body = Vec::with_capacity(body_len.min(PREALLOCATE_BODY_BYTES) as usize);
        self.read_exactly(body_len, &mut body, "message body")?;
        self.pieces.push_back(Piece {
            bytes: Buffer::from_vec(head),
            offset: message_start,
            ends_stream: false,
        });
        if !body.is_empty() {
            self.pieces.push_back(Piece {
                bytes: Buffer::from_vec(body),
                offset: message_start,
                ends_stream: false,
            });
        }
        Ok(())
    }

    fn table_index_of(&mut self, schema: &SchemaRef) -> Result<usize, FormatError> {
        if let (Some(layout), Some(known)) = (&self.layout, &self.layout_schema) {
            if Arc::ptr_eq(known, schema) {
                return Ok(layout.table_index);
            }
        }
        let table_index = match schema.metadata().get(TABLE_INDEX_KEY) {
            None => 0,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| self.fail(format!("bad {TABLE_INDEX_KEY} {text:?}")))?,
        };
        let table = self.schemas.get(table_index).ok_or_else(|| {
            self.fail(format!(
                "table index {table_index} but the stream has {} tables",
                self.schemas.len()
            ))
        })?;
        let layout = Layout::new(table, schema, table_index).map_err(|e| self.fail(e.message))?;
        self.layout = Some(layout);
        self.layout_schema = Some(schema.clone());
        Ok(table_index)
    }
}

impl BatchReader {
    /// Makes `batch` (of the current layout) the one rows are read from: every column
    /// resolved once.
    fn start_batch(&mut self, batch: RecordBatch) {
        let Some(layout) = &self.layout else {
            unreachable!("a batch is read with its layout")
        };
        let table = &self.schemas[layout.table_index];
        let columns = table
            .columns
            .iter()
            .zip(&layout.columns)
            .map(|(column, index)| ColumnView::new(&column.ty, batch.column(*index)))
            .collect();
        self.views.reset(columns);
        self.positioned = layout.row_index.is_some()
            || layout.range_index.is_some()
            || layout.key_switch.is_some();
        self.position = RowPosition {
            table_index: layout.table_index,
            ..RowPosition::default()
        };
        self.batch = Some(batch);
        self.next_row = 0;
    }
}

impl BatchReader {
    /// Makes the current batch one with a row left to read (reading batches as needed);
    /// `false` at the end of the input.
    fn have_row(&mut self) -> Result<bool, FormatError> {
        loop {
            if let Some(batch) = &self.batch {
                if self.next_row < batch.num_rows() {
                    return Ok(true);
                }
            }
            match self.next_batch()? {
                Some((_, batch)) => self.start_batch(batch),
                None => return Ok(false),
            }
        }
    }

    /// Fills the chunk with up to `len` rows of the batch from row `first`. When a value
    /// is bad, the chunk is cut before its row, so the good rows come out first and the bad
    /// one starts the next chunk (whose fill then fails at its first row: the error).
    fn fill_chunk(&mut self, first: usize, len: usize) -> Result<(), FormatError> {
        let mut len = len;
        loop {
            match self.views.fill(first, len) {
                Ok(()) => return Ok(()),
                Err(e) if e.row > first && e.row < first + len => len = e.row - first,
                Err(e) => return Err(self.view_error(e, first)),
            }
        }
    }

    /// A [`ViewError`](super::views::ViewError) of the current batch, whose row `first` is the
    /// stream's row `self.rows`.
    #[cold]
    fn view_error(&self, e: super::views::ViewError, first: usize) -> FormatError {
        let table_index = self.layout.as_ref().map_or(0, |l| l.table_index);
        let name = self.schemas[table_index]
            .columns
            .get(e.column)
            .map_or("?", |c| c.name.as_str());
        FormatError {
            format: FORMAT,
            offset: None,
            row: Some(self.rows + e.row.saturating_sub(first) as u64),
            message: format!("column {name:?}: {}", e.message),
        }
    }

    /// The rows `first..end` of the batch cut where the rows' positions stop counting on
    /// (a range switch, a key switch, a row index that is not the previous one's plus one):
    /// the first row's position and the block's end.
    fn positioned_block(&self, first: usize, end: usize) -> (RowPosition, usize) {
        let (Some(batch), Some(layout)) = (&self.batch, &self.layout) else {
            unreachable!("a batch is read with its layout")
        };
        let head = layout.position(batch, first);
        let mut previous = head.row_index;
        for i in first + 1..end {
            let p = layout.position(batch, i);
            let next = previous.and_then(|index| index.checked_add(1));
            if p.key_switch || p.range_index != head.range_index || p.row_index != next {
                return (head, i);
            }
            previous = p.row_index;
        }
        (head, end)
    }
}

impl RowSource for BatchReader {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.have_row()? {
            return Ok(None);
        }
        let i = self.next_row;
        if self.views.width() <= ROW_AT_A_TIME_MAX_COLUMNS {
            if let Err(e) = self.views.fill_row(i) {
                return Err(self.view_error(e, i));
            }
        } else if !self.views.holds(i) {
            let rows = self.batch.as_ref().map_or(0, RecordBatch::num_rows);
            self.fill_chunk(i, self.views.chunk_rows().min(rows - i))?;
        }
        if self.positioned {
            let (Some(batch), Some(layout)) = (&self.batch, &self.layout) else {
                unreachable!("a batch is read with its layout")
            };
            self.position = layout.position(batch, i);
        }
        self.next_row += 1;
        self.rows += 1;
        Ok(Some(RowRef {
            position: self.position,
            values: self.views.row(i),
        }))
    }

    /// The rows of one transposed chunk at once (cut at position changes when the stream
    /// carries positions): the chunk's views are already a block, row after row.
    fn next_rows(&mut self) -> Result<Option<RowBlock<'_>>, FormatError> {
        if !self.have_row()? {
            return Ok(None);
        }
        let i = self.next_row;
        if !self.views.holds(i) {
            let rows = self.batch.as_ref().map_or(0, RecordBatch::num_rows);
            self.fill_chunk(i, self.views.chunk_rows().min(rows - i))?;
        }
        let (first, end) = if self.positioned {
            self.positioned_block(i, self.views.end())
        } else {
            (self.position, self.views.end())
        };
        let rows = end - i;
        self.next_row = end;
        self.rows += rows as u64;
        Ok(Some(RowBlock {
            first,
            rows,
            columns: self.views.width(),
            values: self.views.rows(i, rows),
        }))
    }
}
