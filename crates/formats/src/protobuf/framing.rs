//! YT's protobuf stream framing, shared by the static and the dynamic codec.
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
//! anywhere else it is an error naming the offset. A message is read through
//! `Read::take`, so a hostile length allocates no more than the input really holds.

use std::io::{self, Read, Write};

use crate::table::{FormatError, RowPosition};

const TABLE_INDEX: u32 = 0xFFFF_FFFF;
const KEY_SWITCH: u32 = 0xFFFF_FFFE;
const RANGE_INDEX: u32 = 0xFFFF_FFFD;
const ROW_INDEX: u32 = 0xFFFF_FFFC;
const END_OF_STREAM: u32 = 0xFFFF_FFFB;

/// The largest row message accepted (YT's own limit on a row is 128 MiB).
pub(crate) const MAX_MESSAGE_LEN: u32 = 128 << 20;

/// Messages up to this length are read with one exact read into a buffer sized up front
/// (bounded, so no hostile allocation); longer ones grow with the input.
const SMALL_MESSAGE_LEN: u32 = 64 << 10;

/// Reads frames: the next row message and its position.
pub(crate) struct FrameReader {
    input: Box<dyn Read>,
    format: &'static str,
    offset: u64,
    rows: u64,
    table_count: usize,
    position: RowPosition,
    ended: bool,
    /// The current message's bytes.
    pub(crate) message: Vec<u8>,
    /// The input offset of the current message's first byte.
    pub(crate) message_offset: u64,
}

impl FrameReader {
    pub(crate) fn new(input: Box<dyn Read>, format: &'static str, table_count: usize) -> Self {
        FrameReader {
            input,
            format,
            offset: 0,
            rows: 0,
            table_count,
            position: RowPosition::default(),
            ended: false,
            message: Vec::new(),
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

    /// Fills `buf` completely; `Ok(false)` when the input ends before its first byte (and
    /// `at_boundary`), an error when it ends inside.
    fn read_exact_or_end(
        &mut self,
        buf: &mut [u8],
        at_boundary: bool,
    ) -> Result<bool, FormatError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.input.read(&mut buf[filled..]) {
                Ok(0) => {
                    if filled == 0 && at_boundary {
                        return Ok(false);
                    }
                    return Err(self.error(
                        self.offset + filled as u64,
                        format!("input ends inside a {}-byte frame field", buf.len()),
                    ));
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(self.offset + filled as u64, format!("read: {e}"))),
            }
        }
        self.offset += buf.len() as u64;
        Ok(true)
    }

    fn read_u32(&mut self) -> Result<u32, FormatError> {
        let mut bytes = [0u8; 4];
        self.read_exact_or_end(&mut bytes, false)?;
        Ok(u32::from_le_bytes(bytes))
    }

    /// Reads frames up to the next row message (into `self.message`); `None` at the end.
    pub(crate) fn next_message(&mut self) -> Result<Option<RowPosition>, FormatError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            let frame_offset = self.offset;
            let mut head = [0u8; 4];
            if !self.read_exact_or_end(&mut head, true)? {
                self.ended = true;
                return Ok(None);
            }
            match u32::from_le_bytes(head) {
                TABLE_INDEX => {
                    let index = self.read_u32()? as usize;
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
                RANGE_INDEX => self.position.range_index = Some(i64::from(self.read_u32()?)),
                ROW_INDEX => {
                    let mut bytes = [0u8; 8];
                    self.read_exact_or_end(&mut bytes, false)?;
                    let index = u64::from_le_bytes(bytes);
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
                len if len <= SMALL_MESSAGE_LEN => {
                    // Small messages: one exact read into the reused buffer.
                    self.message.resize(len as usize, 0);
                    self.message_offset = self.offset;
                    let mut message = std::mem::take(&mut self.message);
                    let complete = self.read_exact_or_end(&mut message, false);
                    self.message = message;
                    complete?;
                    return Ok(Some(self.row_read()));
                }
                len => {
                    self.message.clear();
                    self.message_offset = self.offset;
                    let read = (&mut self.input)
                        .take(u64::from(len))
                        .read_to_end(&mut self.message)
                        .map_err(|e| self.error(self.offset, format!("read: {e}")))?;
                    self.offset += read as u64;
                    if read < len as usize {
                        return Err(self.error(
                            self.offset,
                            format!("input ends inside a row message of {len} bytes ({read} read)"),
                        ));
                    }
                    return Ok(Some(self.row_read()));
                }
            }
        }
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
    /// The row message being built; written out by [`FrameWriter::write_message`].
    pub(crate) message: Vec<u8>,
    frame: Vec<u8>,
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
            message: Vec::new(),
            frame: Vec::new(),
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

    /// Checks the position's table index (before the message is built).
    pub(crate) fn check_table(&self, position: &RowPosition) -> Result<(), FormatError> {
        if position.table_index >= self.table_count {
            return Err(self.error(format!(
                "table index {} but the stream has {} tables",
                position.table_index, self.table_count
            )));
        }
        Ok(())
    }

    /// Writes the markers for `position`, then `self.message` as one frame.
    pub(crate) fn write_message(&mut self, position: &RowPosition) -> Result<(), FormatError> {
        self.frame.clear();
        if position.table_index != self.table_index {
            let index = u32::try_from(position.table_index)
                .map_err(|_| self.error("table index does not fit u32"))?;
            self.frame.extend_from_slice(&TABLE_INDEX.to_le_bytes());
            self.frame.extend_from_slice(&index.to_le_bytes());
            self.table_index = position.table_index;
            self.range_index = None;
            self.next_row_index = None;
        }
        if position.range_index != self.range_index {
            if let Some(range) = position.range_index {
                let range = u32::try_from(range)
                    .map_err(|_| self.error(format!("range index {range} does not fit u32")))?;
                self.frame.extend_from_slice(&RANGE_INDEX.to_le_bytes());
                self.frame.extend_from_slice(&range.to_le_bytes());
            }
            self.range_index = position.range_index;
        }
        if position.row_index.is_some() && position.row_index != self.next_row_index {
            let index = position.row_index.unwrap_or_default();
            let index = u64::try_from(index)
                .map_err(|_| self.error(format!("row index {index} is negative")))?;
            self.frame.extend_from_slice(&ROW_INDEX.to_le_bytes());
            self.frame.extend_from_slice(&index.to_le_bytes());
        }
        self.next_row_index = position.row_index.map(|i| i + 1);
        if position.key_switch {
            self.frame.extend_from_slice(&KEY_SWITCH.to_le_bytes());
        }
        let len = u32::try_from(self.message.len())
            .ok()
            .filter(|len| *len <= MAX_MESSAGE_LEN)
            .ok_or_else(|| {
                self.error(format!(
                    "row message of {} bytes is too long",
                    self.message.len()
                ))
            })?;
        self.frame.extend_from_slice(&len.to_le_bytes());
        let result = self
            .output
            .write_all(&self.frame)
            .and_then(|()| self.output.write_all(&self.message));
        result.map_err(|e| self.error(format!("write: {e}")))?;
        self.rows += 1;
        Ok(())
    }

    /// Writes the end-of-stream marker and flushes.
    pub(crate) fn finish(&mut self) -> Result<(), FormatError> {
        let result = self
            .output
            .write_all(&END_OF_STREAM.to_le_bytes())
            .and_then(|()| self.output.flush());
        result.map_err(|e| self.error(format!("write: {e}")))
    }
}
