//! Where the parser's bytes come from: a whole slice, or any `std::io::Read` through a
//! fixed-size buffer (constant memory whatever the input length).
//!
//! Invariant the parser relies on: bytes handed out by [`Source::buffered`] stay valid until the
//! next [`Source::refill`]; a refill may move or overwrite everything already consumed.

use std::io::Read;

use super::error::YsonError;

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

/// Any reader through a fixed 64 KiB buffer.
pub struct ReadSource<R> {
    reader: R,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
    /// Input offset of `buffer[0]`.
    base: u64,
    exhausted: bool,
}

impl<R: Read> ReadSource<R> {
    pub(crate) fn new(reader: R) -> ReadSource<R> {
        ReadSource {
            reader,
            buffer: vec![0; READ_BUFFER_SIZE].into_boxed_slice(),
            start: 0,
            end: 0,
            base: 0,
            exhausted: false,
        }
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
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.base += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            // The parser never needs a full buffer of unconsumed bytes; report rather than spin.
            return Err(YsonError::new(
                self.offset(),
                "internal: read buffer full of unconsumed bytes",
            ));
        }
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
