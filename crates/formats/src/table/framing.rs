//! YT's length-prefixed row stream framing (its protobuf format's), for any format that frames one message per row.
//!
//! A stream is a sequence of frames. A frame is a u32 little-endian length followed by that
//! many bytes of one row message, or a control marker in place of the length:
//!
//! | marker     | payload  | meaning                                    |
//! |------------|----------|--------------------------------------------|
//! | `FFFFFFFF` | u32 LE   | the following rows belong to this table    |
//! | `FFFFFFFE` | —        | the next row starts a new key group        |
//! | `FFFFFFFD` | u32 LE   | the following rows come from this range    |
//! | `FFFFFFFC` | u64 LE   | the next row has this row index            |
//! | `FFFFFFFB` | —        | end of stream                              |
//!
//! Invariants of the reader: a row index set by a marker advances by one per row of the
//! same table; a table switch forgets the row and range index; a key switch applies to
//! the next row only. End of input at a frame boundary ends the stream like `FFFFFFFB`;
//! anywhere else it is an error naming the offset.
//!
//! Both ends buffer: the reader reads the input in chunks of 64 KiB and hands out each
//! message as a slice of its buffer (valid until the next call), so decoding borrows the
//! bytes with no copy per row; the buffer grows only as input actually arrives (at most
//! doubling what it already holds), so a hostile length allocates no more than about twice
//! the input really holds. The writer builds frames in one pending buffer — the message is
//! encoded in place after a length placeholder that is patched afterwards — and hands it to
//! the output in chunks of 64 KiB; a row whose encoding fails leaves no trace in it.

use std::io::{self, Read, Write};
use std::ops::Range;

use crate::read_buffer;
use crate::table::{FormatError, RowPosition, SourceInput};

const TABLE_INDEX: u32 = 0xFFFF_FFFF;
const KEY_SWITCH: u32 = 0xFFFF_FFFE;
const RANGE_INDEX: u32 = 0xFFFF_FFFD;
const ROW_INDEX: u32 = 0xFFFF_FFFC;
const END_OF_STREAM: u32 = 0xFFFF_FFFB;

/// The largest row message accepted (YT's own limit on a row is 128 MiB).
pub(crate) const MAX_MESSAGE_LEN: u32 = 128 << 20;

/// Input is read, and output written, in chunks of this size (the input buffer starts smaller
/// and grows by `crate::read_buffer`'s rule).
const CHUNK: usize = 64 << 10;

/// Reads frames: the next row message and its position.
pub(crate) struct FrameReader {
    input: Box<dyn Read>,
    format: &'static str,
    /// Input bytes `buf[start..end]` are read and not yet consumed; `buf[end..]` is spare.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The input offset of `buf[0]`.
    base: u64,
    input_done: bool,
    rows: u64,
    table_count: usize,
    position: RowPosition,
    ended: bool,
    /// The current message, in `buf`.
    message: Range<usize>,
    /// The input offset of the current message's first byte.
    pub(crate) message_offset: u64,
}

impl FrameReader {
    pub(crate) fn new(
        input: impl Into<SourceInput>,
        format: &'static str,
        table_count: usize,
    ) -> Self {
        // Bytes in memory are the buffer, all read; a stream fills one as frames need.
        let (input, buf, input_done): (Box<dyn Read>, Vec<u8>, bool) = match input.into() {
            SourceInput::Stream(reader) => (reader, Vec::new(), false),
            SourceInput::Bytes(bytes) => (Box::new(io::empty()), bytes, true),
        };
        FrameReader {
            input,
            format,
            end: buf.len(),
            buf,
            start: 0,
            base: 0,
            input_done,
            rows: 0,
            table_count,
            position: RowPosition::default(),
            ended: false,
            message: 0..0,
            message_offset: 0,
        }
    }

    pub(crate) fn error(&self, offset: u64, message: impl Into<String>) -> FormatError {
        FormatError {
            format: self.format,
            offset: Some(offset),
            row: Some(self.rows),
            message: message.into(),
        }
    }

    /// The input offset of the next unconsumed byte.
    fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// Makes `n` bytes available at `buf[start..]`; `false` when the input ends first.
    #[inline]
    fn fill(&mut self, n: usize) -> Result<bool, FormatError> {
        if self.end - self.start >= n {
            return Ok(true);
        }
        self.fill_slow(n)
    }

    fn fill_slow(&mut self, n: usize) -> Result<bool, FormatError> {
        while self.end - self.start < n {
            if self.input_done {
                return Ok(false);
            }
            if self.start == self.end || self.buf.len() - self.start < n {
                // Move the unconsumed bytes to the front (nothing borrows them now).
                self.buf.copy_within(self.start..self.end, 0);
                self.base += self.start as u64;
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.is_empty() {
                self.buf.resize(read_buffer::start_len(CHUNK), 0);
            }
            // No limit of its own when the held bytes fill it: they are input that arrived,
            // so the buffer stays within about twice the real input.
            let grown = read_buffer::grown_len(
                self.buf.len(),
                self.end == self.buf.len(),
                self.base > 0,
                CHUNK,
                usize::MAX,
            );
            if grown > self.buf.len() {
                self.buf.resize(grown, 0);
            }
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => self.input_done = true,
                Ok(read) => self.end += read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(self.base + self.end as u64, format!("read: {e}"))),
            }
        }
        Ok(true)
    }

    /// The error for input that ends inside a field of `len` bytes.
    fn cut(&self, what: &str, len: usize) -> FormatError {
        self.error(
            self.base + self.end as u64,
            format!(
                "input ends inside {what} of {len} bytes ({} read)",
                self.end - self.start
            ),
        )
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        if !self.fill(N)? {
            return Err(self.cut("a frame field", N));
        }
        let mut bytes = [0u8; N];
        bytes.copy_from_slice(&self.buf[self.start..self.start + N]);
        self.start += N;
        Ok(bytes)
    }

    /// Reads frames up to the next row message (see [`FrameReader::message`]); `None` at
    /// the end.
    pub(crate) fn next_message(&mut self) -> Result<Option<RowPosition>, FormatError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            let frame_offset = self.offset();
            if !self.fill(4)? {
                if self.start == self.end {
                    self.ended = true;
                    return Ok(None);
                }
                return Err(self.cut("a frame field", 4));
            }
            let head = u32::from_le_bytes(self.take::<4>()?);
            match head {
                TABLE_INDEX => {
                    let index = u32::from_le_bytes(self.take::<4>()?) as usize;
                    if index >= self.table_count {
                        return Err(self.error(
                            frame_offset,
                            format!(
                                "table index {index} but the stream has {} tables",
                                self.table_count
                            ),
                        ));
                    }
                    self.position = RowPosition {
                        table_index: index,
                        ..RowPosition::default()
                    };
                }
                KEY_SWITCH => self.position.key_switch = true,
                RANGE_INDEX => {
                    let range = u32::from_le_bytes(self.take::<4>()?);
                    self.position.range_index = Some(i64::from(range));
                }
                ROW_INDEX => {
                    let index = u64::from_le_bytes(self.take::<8>()?);
                    let index = i64::try_from(index).map_err(|_| {
                        self.error(frame_offset, format!("row index {index} out of range"))
                    })?;
                    self.position.row_index = Some(index);
                }
                END_OF_STREAM => {
                    self.ended = true;
                    return Ok(None);
                }
                len if len > MAX_MESSAGE_LEN => {
                    return Err(self.error(
                        frame_offset,
                        format!("unknown control marker or row message too long ({len:#x})"),
                    ));
                }
                len => {
                    let len = len as usize;
                    if !self.fill(len)? {
                        return Err(self.cut("a row message", len));
                    }
                    self.message_offset = self.offset();
                    self.message = self.start..self.start + len;
                    self.start += len;
                    return Ok(Some(self.row_read()));
                }
            }
        }
    }

    /// The bytes of the message [`FrameReader::next_message`] found last.
    #[inline]
    pub(crate) fn message(&self) -> &[u8] {
        &self.buf[self.message.clone()]
    }

    /// The position of the row just read; advances the row index and clears the key switch.
    fn row_read(&mut self) -> RowPosition {
        let position = self.position;
        self.position.key_switch = false;
        if let Some(index) = self.position.row_index.as_mut() {
            *index += 1;
        }
        self.rows += 1;
        position
    }

    /// Rows read so far (the current one included).
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }
}

/// Writes frames: control markers for position changes, then the length-prefixed message.
pub(crate) struct FrameWriter {
    output: Box<dyn Write>,
    format: &'static str,
    table_count: usize,
    table_index: usize,
    range_index: Option<i64>,
    next_row_index: Option<i64>,
    rows: u64,
    /// Whole frames not yet handed to the output.
    pending: Vec<u8>,
}

impl FrameWriter {
    pub(crate) fn new(output: Box<dyn Write>, format: &'static str, table_count: usize) -> Self {
        FrameWriter {
            output,
            format,
            table_count,
            table_index: 0,
            range_index: None,
            next_row_index: None,
            rows: 0,
            pending: Vec::new(),
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError {
            format: self.format,
            offset: None,
            row: Some(self.rows),
            message: message.into(),
        }
    }

    /// Writes the markers for `position`, then the message `encode` appends to the buffer
    /// it is given, as one frame. When `encode` fails nothing is written.
    ///
    /// # Errors
    /// `encode`'s message, a position the stream cannot carry, or an I/O error.
    #[inline]
    pub(crate) fn write_row(
        &mut self,
        position: &RowPosition,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), String>,
    ) -> Result<(), FormatError> {
        let row_start = self.pending.len();
        let result = self.frame(position, encode);
        if result.is_err() {
            self.pending.truncate(row_start);
            return result;
        }
        self.rows += 1;
        if self.pending.len() >= CHUNK {
            self.flush_pending()?;
        }
        Ok(())
    }

    #[inline]
    fn frame(
        &mut self,
        position: &RowPosition,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), String>,
    ) -> Result<(), FormatError> {
        if position.table_index >= self.table_count {
            return Err(self.error(format!(
                "table index {} but the stream has {} tables",
                position.table_index, self.table_count
            )));
        }
        let mut range_index = self.range_index;
        let mut next_row_index = self.next_row_index;
        if position.table_index != self.table_index {
            let index = u32::try_from(position.table_index)
                .map_err(|_| self.error("table index does not fit u32"))?;
            self.pending.extend_from_slice(&TABLE_INDEX.to_le_bytes());
            self.pending.extend_from_slice(&index.to_le_bytes());
            range_index = None;
            next_row_index = None;
        }
        if position.range_index != range_index {
            if let Some(range) = position.range_index {
                let range = u32::try_from(range)
                    .map_err(|_| self.error(format!("range index {range} does not fit u32")))?;
                self.pending.extend_from_slice(&RANGE_INDEX.to_le_bytes());
                self.pending.extend_from_slice(&range.to_le_bytes());
            }
        }
        if let Some(index) = position.row_index {
            if Some(index) != next_row_index {
                let index = u64::try_from(index)
                    .map_err(|_| self.error(format!("row index {index} is negative")))?;
                self.pending.extend_from_slice(&ROW_INDEX.to_le_bytes());
                self.pending.extend_from_slice(&index.to_le_bytes());
            }
        }
        if position.key_switch {
            self.pending.extend_from_slice(&KEY_SWITCH.to_le_bytes());
        }
        let length_at = self.pending.len();
        self.pending.extend_from_slice(&[0; 4]);
        encode(&mut self.pending).map_err(|e| self.error(e))?;
        let len = self.pending.len() - length_at - 4;
        let len = u32::try_from(len)
            .ok()
            .filter(|len| *len <= MAX_MESSAGE_LEN)
            .ok_or_else(|| self.error(format!("row message of {len} bytes is too long")))?;
        self.pending[length_at..length_at + 4].copy_from_slice(&len.to_le_bytes());
        self.table_index = position.table_index;
        self.range_index = position.range_index;
        self.next_row_index = position.row_index.map(|i| i + 1);
        Ok(())
    }

    fn flush_pending(&mut self) -> Result<(), FormatError> {
        let result = self.output.write_all(&self.pending);
        self.pending.clear();
        result.map_err(|e| self.error(format!("write: {e}")))
    }

    /// Writes the end-of-stream marker and flushes.
    pub(crate) fn finish(&mut self) -> Result<(), FormatError> {
        self.pending.extend_from_slice(&END_OF_STREAM.to_le_bytes());
        self.flush_pending()?;
        self.output
            .flush()
            .map_err(|e| self.error(format!("write: {e}")))
    }
}

impl Drop for FrameWriter {
    /// Rows written without `finish` still reach the output (a stream without its end
    /// marker ends at a frame boundary, which readers accept).
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let _ = self.output.write_all(&self.pending);
            let _ = self.output.flush();
        }
    }
}
