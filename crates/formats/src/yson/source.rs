//! Where the parser's bytes come from: a whole slice, or any `std::io::Read` through a
//! fixed-size buffer (constant memory whatever the input length).
//!
//! Invariant the parser relies on: bytes handed out by [`Source::buffered`] stay valid until the
//! next [`Source::refill`]; a refill may move or overwrite everything already consumed.
//!
//! [`ReadSource`] can also keep bytes *after* they are consumed: the row reader
//! (`crate::yson::rows`) parses each row in place and hands out slices of the buffer, so it
//! *pins* the row's first byte. A refill then moves the pinned bytes to the front instead of
//! dropping them, and when the buffer is full of bytes it must keep, the buffer grows
//! (doubling) up to the source's limit; past the limit the refill fails with an error naming
//! the pinned offset and the limit. Unpinned, a full buffer grows the same way (a single token
//! never needs that with the default limit, which is the initial size: constant memory).

use std::io::Read;

use super::error::YsonError;
use crate::read_buffer;

mod sealed {
    pub trait Sealed {}
}

/// A byte source of the [`PullParser`](super::PullParser); implemented for slices and readers only.
pub trait Source: sealed::Sealed {
    /// The buffered bytes not consumed yet (empty means: call `refill`).
    fn window(&self) -> &[u8];
    /// Marks the first `n` bytes of the window consumed.
    fn consume(&mut self, n: usize);
    /// Buffers more bytes; `Ok(false)` at end of input. Invalidates earlier `buffered` slices.
    fn refill(&mut self) -> Result<bool, YsonError>;
    /// Index in the buffer of the window's first byte (for `buffered`).
    fn window_index(&self) -> usize;
    /// `len` buffered bytes from buffer index `start`.
    fn buffered(&self, start: usize, len: usize) -> &[u8];
    /// Offset from the start of the input of the window's first byte.
    fn offset(&self) -> u64;
}

/// A whole input in memory: strings are handed out borrowed, nothing is copied.
pub struct SliceSource<'a> {
    data: &'a [u8],
    position: usize,
}

impl<'a> SliceSource<'a> {
    pub(crate) fn new(data: &'a [u8]) -> SliceSource<'a> {
        SliceSource { data, position: 0 }
    }

    /// The whole input (strings handed out by the parser borrow from it).
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }
}

impl sealed::Sealed for SliceSource<'_> {}

impl Source for SliceSource<'_> {
    #[inline(always)]
    fn window(&self) -> &[u8] {
        // `position` never exceeds `data.len()`: `consume` is only given counts within the window.
        unsafe { self.data.get_unchecked(self.position..) }
    }
    #[inline(always)]
    fn consume(&mut self, n: usize) {
        debug_assert!(self.position + n <= self.data.len());
        self.position += n;
    }
    #[inline(always)]
    fn refill(&mut self) -> Result<bool, YsonError> {
        Ok(false)
    }
    #[inline(always)]
    fn window_index(&self) -> usize {
        self.position
    }
    #[inline(always)]
    fn buffered(&self, start: usize, len: usize) -> &[u8] {
        &self.data[start..start + len]
    }
    #[inline(always)]
    fn offset(&self) -> u64 {
        self.position as u64
    }
}

/// Buffer size of [`ReadSource`]; the longest token that must be contiguous is far shorter.
const READ_BUFFER_SIZE: usize = 64 * 1024;

/// Any reader through a 64 KiB buffer (fixed unless bytes are pinned, see the module docs).
pub struct ReadSource<R> {
    reader: R,
    /// Its length is the buffer's size (all of it initialized).
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    /// Input offset of `buffer[0]`.
    base: u64,
    exhausted: bool,
    /// Buffer index of the first byte a refill must keep although consumed.
    pin: Option<usize>,
    /// The size the buffer may grow to.
    max_size: usize,
    /// The size asked for: the buffer starts small and doubles towards this once the input
    /// outlasts it (`crate::read_buffer`).
    preferred: usize,
}

impl<R: Read> ReadSource<R> {
    pub(crate) fn new(reader: R) -> ReadSource<R> {
        ReadSource::with_sizes(reader, READ_BUFFER_SIZE, READ_BUFFER_SIZE)
    }

    /// A source whose buffer starts at `initial` bytes and may grow to `max_size` bytes
    /// (both at least 1) for pinned bytes.
    pub(crate) fn with_sizes(reader: R, initial: usize, max_size: usize) -> ReadSource<R> {
        let initial = initial.max(1);
        ReadSource {
            reader,
            buffer: vec![0; read_buffer::start_len(initial)],
            start: 0,
            end: 0,
            base: 0,
            exhausted: false,
            pin: None,
            max_size: max_size.max(initial),
            preferred: initial,
        }
    }

    /// Keeps every byte from the window's first one on buffered, even once consumed, until
    /// [`ReadSource::unpin`]; returns the pinned byte's input offset.
    #[inline]
    pub(crate) fn pin(&mut self) -> u64 {
        self.pin = Some(self.start);
        self.offset()
    }

    #[inline]
    pub(crate) fn unpin(&mut self) {
        self.pin = None;
    }

    /// `len` bytes from input offset `offset`, which must lie in the pinned (or unconsumed)
    /// part of the buffer; `None` otherwise.
    #[inline]
    pub(crate) fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let index = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        self.buffer[..self.end].get(index..index.checked_add(len)?)
    }

    /// The input offset of the `len` bytes at memory address `address` when they lie in the
    /// buffer (they were handed out borrowed from it), `None` when they are elsewhere (the
    /// parser's scratch). Addresses, not slices: the caller's slice borrows the parser.
    #[inline]
    pub(crate) fn offset_of_address(&self, address: usize, len: usize) -> Option<u64> {
        let index = address.checked_sub(self.buffer.as_ptr() as usize)?;
        (index.checked_add(len)? <= self.end).then_some(self.base + index as u64)
    }

    /// Buffers more bytes, as many as fit: like [`Source::refill`] (compacts, grows a full
    /// buffer up to the limit) but reads until the buffer is full or the input ends, so a
    /// reader that rescans a long row after each call does so once per doubling, not once
    /// per `read`. `Ok(false)` when no byte could be added.
    ///
    /// # Errors
    /// As [`Source::refill`].
    pub(crate) fn fill(&mut self) -> Result<bool, YsonError> {
        if !self.refill()? {
            return Ok(false);
        }
        while self.end < self.buffer.len() && !self.exhausted {
            self.read_more()?;
        }
        Ok(true)
    }

    /// One `read` into the free tail of the buffer; `Ok(false)` at end of input.
    fn read_more(&mut self) -> Result<bool, YsonError> {
        loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    self.exhausted = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(YsonError::new(
                        self.base + self.end as u64,
                        format!("reading the input failed: {e}"),
                    ))
                }
            }
        }
    }

    /// True once the reader has reported its end.
    #[inline]
    pub(crate) fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    pub(crate) fn into_inner(self) -> R {
        self.reader
    }
}

impl<R> sealed::Sealed for ReadSource<R> {}

impl<R: Read> Source for ReadSource<R> {
    #[inline(always)]
    fn window(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }
    #[inline(always)]
    fn consume(&mut self, n: usize) {
        debug_assert!(self.start + n <= self.end);
        self.start += n;
    }
    fn refill(&mut self) -> Result<bool, YsonError> {
        if self.exhausted {
            return Ok(false);
        }
        let keep_from = self.pin.map_or(self.start, |pin| pin.min(self.start));
        if keep_from > 0 {
            self.buffer.copy_within(keep_from..self.end, 0);
            self.base += keep_from as u64;
            self.end -= keep_from;
            self.start -= keep_from;
            self.pin = self.pin.map(|pin| pin - keep_from);
        }
        let full = self.end == self.buffer.len();
        if full && self.buffer.len() >= self.max_size {
            // Report rather than spin: the bytes to keep fill the largest buffer allowed.
            let from = self.base + self.pin.unwrap_or(self.start) as u64;
            return Err(YsonError::new(
                from,
                format!(
                    "a row (or token) from byte {from} is longer than the read buffer's limit of {} bytes",
                    self.max_size
                ),
            ));
        }
        let grown = read_buffer::grown_len(
            self.buffer.len(),
            full,
            self.base > 0,
            self.preferred,
            self.max_size,
        );
        if grown > self.buffer.len() {
            self.buffer.resize(grown, 0);
        }
        self.read_more()
    }
    #[inline(always)]
    fn window_index(&self) -> usize {
        self.start
    }
    #[inline(always)]
    fn buffered(&self, start: usize, len: usize) -> &[u8] {
        &self.buffer[start..start + len]
    }
    #[inline(always)]
    fn offset(&self) -> u64 {
        self.base + self.start as u64
    }
}
