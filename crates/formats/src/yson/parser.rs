//! The event pull parser: YSON text and binary (mixed freely, as YT's lexer allows) to a stream
//! of [`Event`]s, without building nodes.
//!
//! Invariants:
//! - `frames` holds one bottom frame saying what the whole input is (a node, a list fragment or
//!   a map fragment) and one frame per open `[`, `{` or `<`; its length minus one is the depth,
//!   checked against `max_depth` before every push, so nesting is bounded.
//! - `state` says what may come next at the current position; every byte the parser consumes is
//!   checked against it, so an error can always name what was expected and the offset.
//! - String events borrow either the source's buffer or `scratch`; both stay untouched until the
//!   next call of [`PullParser::next_event`] (the source only moves bytes on refill, which never
//!   happens between producing a string and returning it). A key is returned before its `=` is
//!   checked for the same reason.
//! - No allocation is sized by a length read from the input: binary strings longer than the
//!   buffered input are copied chunk by chunk as their bytes actually arrive.

use std::io::Read;

use super::error::{describe_byte, YsonError};
use super::source::{ReadSource, SliceSource, Source};
use super::YsonType;

/// The nesting limit used unless [`PullParser::with_max_depth`] says otherwise.
pub const DEFAULT_MAX_DEPTH: usize = 256;

/// Bytes that must be buffered for [`PullParser::next_event`]'s fast path: a marker byte and
/// the longest varint (10 bytes) fit, so it needs no further length checks.
pub(crate) const FAST_PATH_WINDOW: usize = 16;

/// Longest numeric or `%` literal accepted, in bytes.
const MAX_LITERAL_LENGTH: usize = 1024;

/// One step of a YSON document.
///
/// Attributes come before the value they belong to: `BeginAttributes`, keys and values,
/// `EndAttributes`, then the value. Strings borrow the parser and live until the next event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    BeginList,
    EndList,
    BeginMap,
    EndMap,
    BeginAttributes,
    EndAttributes,
    /// A key in a map or attribute map (or at the top level of a map fragment).
    Key(&'a [u8]),
    Entity,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(&'a [u8]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    TopNode,
    TopList,
    TopMap,
    List,
    Map,
    Attributes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value; `can_close` allows the enclosing list's `]` (or the end of a list fragment),
    /// `can_have_attributes` is false right after an attribute map.
    Value {
        can_close: bool,
        can_have_attributes: bool,
    },
    /// A key; `can_close` allows the map's `}`, the attributes' `>` or a map fragment's end.
    Key {
        can_close: bool,
    },
    /// The `=` after a key just returned.
    Equals,
    /// After a complete item: a separator or a close.
    AfterItem,
    Finished,
}

/// Where a lexed string's bytes are.
#[derive(Clone, Copy)]
enum Loc {
    Buffer(usize, usize),
    Scratch,
}

enum Token {
    Entity,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Loc),
}

/// The low-level YSON reader: pulls [`Event`]s one by one; scalars cost no allocation.
///
/// This is the fast path; [`from_slice`](super::from_slice), the fragment and table readers are
/// built on it.
pub struct PullParser<S> {
    source: S,
    frames: Vec<Frame>,
    /// Always `frames.last()`, kept apart so the hot path reads no heap memory for it.
    top: Frame,
    state: State,
    scratch: Vec<u8>,
    max_depth: usize,
}

impl<'a> PullParser<SliceSource<'a>> {
    /// A parser of `bytes` holding a document of kind `yson_type`.
    pub fn from_slice(bytes: &'a [u8], yson_type: YsonType) -> Self {
        PullParser::with_source(SliceSource::new(bytes), yson_type)
    }

    /// The whole input this parser reads.
    pub fn input(&self) -> &'a [u8] {
        self.source.data()
    }
}

impl<R: Read> PullParser<ReadSource<R>> {
    /// A parser of the bytes of `reader`, in constant memory (a 64 KiB buffer plus the longest
    /// string met).
    pub fn from_reader(reader: R, yson_type: YsonType) -> Self {
        PullParser::with_source(ReadSource::new(reader), yson_type)
    }

    /// The reader back (bytes it gave beyond what was parsed are lost).
    pub fn into_reader(self) -> R {
        self.source.into_inner()
    }

    /// [`PullParser::from_reader`] with a buffer of `initial` bytes that may grow to
    /// `max_size` bytes while bytes are pinned (see [`ReadSource`]).
    pub(crate) fn from_reader_with_sizes(
        reader: R,
        yson_type: YsonType,
        initial: usize,
        max_size: usize,
    ) -> Self {
        PullParser::with_source(ReadSource::with_sizes(reader, initial, max_size), yson_type)
    }

    /// The buffered source, for readers that parse whole items in place.
    #[inline(always)]
    pub(crate) fn source(&self) -> &ReadSource<R> {
        &self.source
    }

    /// The bytes of the last string event when they were not borrowed from the buffer
    /// (escaped text strings, strings that crossed a refill): the parser's scratch.
    #[inline]
    pub(crate) fn scratch(&self) -> &[u8] {
        &self.scratch
    }

    /// The buffered source, mutably. Consuming bytes through it is only sound for whole items
    /// of a list fragment with their `;`, where [`PullParser::at_list_fragment_item`] holds: the
    /// parser's state is the same before and after such an item.
    #[inline(always)]
    pub(crate) fn source_mut(&mut self) -> &mut ReadSource<R> {
        &mut self.source
    }
}

impl<S: Source> PullParser<S> {
    fn with_source(source: S, yson_type: YsonType) -> Self {
        let (bottom, state) = match yson_type {
            YsonType::Node => (
                Frame::TopNode,
                State::Value {
                    can_close: false,
                    can_have_attributes: true,
                },
            ),
            YsonType::ListFragment => (
                Frame::TopList,
                State::Value {
                    can_close: true,
                    can_have_attributes: true,
                },
            ),
            YsonType::MapFragment => (Frame::TopMap, State::Key { can_close: true }),
        };
        let mut frames = Vec::with_capacity(16);
        frames.push(bottom);
        PullParser {
            source,
            frames,
            top: bottom,
            state,
            scratch: Vec::new(),
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Sets the nesting limit (lists, maps and attribute maps each count one level).
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The offset of the next unread byte from the start of the input.
    pub fn offset(&self) -> u64 {
        self.source.offset()
    }

    /// True where the next item of a top-level list fragment (with attributes) may start and
    /// nothing is pending: the state right after a `;` between items or at the start.
    #[inline(always)]
    pub(crate) fn at_list_fragment_item(&self) -> bool {
        self.top == Frame::TopList
            && self.state
                == State::Value {
                    can_close: true,
                    can_have_attributes: true,
                }
    }

    /// The nesting limit.
    #[inline(always)]
    pub(crate) fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// How many lists, maps and attribute maps are open.
    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    /// The next event, or `None` once the document (or fragment) is complete.
    ///
    /// # Errors
    /// A [`YsonError`] naming the offset and what was expected when the input is truncated,
    /// malformed or nested deeper than the limit, or the reader fails. After an error the
    /// parser's position is unspecified; stop reading.
    #[inline]
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, YsonError> {
        // Fast path: binary keys and scalars, with at least 16 bytes buffered (enough for any
        // marker plus a 10-byte varint, so no length checks inside). Everything it does not recognise, including every malformed input,
        // falls through to the general state machine untouched, which names the error.
        // (Brackets and closes stay out of it on purpose: adding them made the code of this
        // function larger and BM1's binary read measurably slower.)
        let window = self.source.window();
        if let Some(head) = window.first_chunk::<FAST_PATH_WINDOW>() {
            let first = head[0];
            match self.state {
                State::Key { .. } if first == 0x01 && head[1] < 0x80 && head[1] & 1 == 0 => {
                    let length = (head[1] >> 1) as usize;
                    if window.get(length + 2) == Some(&b'=') {
                        let start = self.source.window_index() + 2;
                        self.source.consume(length + 3);
                        self.state = State::Value {
                            can_close: false,
                            can_have_attributes: true,
                        };
                        return Ok(Some(Event::Key(self.source.buffered(start, length))));
                    }
                }
                State::Value { .. } => match first {
                    0x01 if head[1] < 0x80 && head[1] & 1 == 0 => {
                        let length = (head[1] >> 1) as usize;
                        if length + 2 <= window.len() {
                            let start = self.source.window_index() + 2;
                            self.source.consume(length + 2);
                            self.item_done();
                            return Ok(Some(Event::String(self.source.buffered(start, length))));
                        }
                    }
                    0x02 => {
                        if let Some((value, length)) = decode_varint_fast(head) {
                            self.source.consume(1 + length);
                            self.item_done();
                            return Ok(Some(Event::Int64(zigzag_decode(value))));
                        }
                    }
                    0x03 => {
                        let mut bytes = [0u8; 8];
                        bytes.copy_from_slice(&head[1..9]);
                        self.source.consume(9);
                        self.item_done();
                        return Ok(Some(Event::Double(f64::from_le_bytes(bytes))));
                    }
                    0x04 | 0x05 => {
                        self.source.consume(1);
                        self.item_done();
                        return Ok(Some(Event::Bool(first == 0x05)));
                    }
                    0x06 => {
                        if let Some((value, length)) = decode_varint_fast(head) {
                            self.source.consume(1 + length);
                            self.item_done();
                            return Ok(Some(Event::Uint64(value)));
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        self.next_event_general()
    }

    fn next_event_general(&mut self) -> Result<Option<Event<'_>>, YsonError> {
        loop {
            match self.state {
                State::Value {
                    can_close,
                    can_have_attributes,
                } => {
                    let byte = self.peek_significant()?;
                    match byte {
                        Some(b'[') => {
                            self.source.consume(1);
                            self.push(Frame::List)?;
                            self.state = State::Value {
                                can_close: true,
                                can_have_attributes: true,
                            };
                            return Ok(Some(Event::BeginList));
                        }
                        Some(b'{') => {
                            self.source.consume(1);
                            self.push(Frame::Map)?;
                            self.state = State::Key { can_close: true };
                            return Ok(Some(Event::BeginMap));
                        }
                        Some(b']') if can_close && self.top() == Frame::List => {
                            self.source.consume(1);
                            self.pop();
                            self.item_done();
                            return Ok(Some(Event::EndList));
                        }
                        None if can_close && self.top() == Frame::TopList => {
                            self.state = State::Finished;
                            return Ok(None);
                        }
                        Some(b'<') => {
                            if !can_have_attributes {
                                return Err(self.error(
                                    "a value (a value cannot have several attribute maps)",
                                    byte,
                                ));
                            }
                            self.source.consume(1);
                            self.push(Frame::Attributes)?;
                            self.state = State::Key { can_close: true };
                            return Ok(Some(Event::BeginAttributes));
                        }
                        Some(first) => {
                            let token = self.lex_scalar(first, "a value")?;
                            self.item_done();
                            return Ok(Some(self.event_of(token)));
                        }
                        None => return Err(self.error("a value", None)),
                    }
                }
                State::Key { can_close } => {
                    let byte = self.peek_significant()?;
                    let top = self.top();
                    match byte {
                        Some(b'"' | 0x01 | b'A'..=b'Z' | b'a'..=b'z' | b'_') => {
                            let token = self.lex_scalar(byte.unwrap_or_default(), "a map key")?;
                            let Token::String(loc) = token else {
                                unreachable!("these first bytes only start strings")
                            };
                            // The `=` right after the key (binary, compact text) is taken now;
                            // anything else waits for the next call (a refill may be needed).
                            if self.source.window().first() == Some(&b'=') {
                                self.source.consume(1);
                                self.state = State::Value {
                                    can_close: false,
                                    can_have_attributes: true,
                                };
                            } else {
                                self.state = State::Equals;
                            }
                            return Ok(Some(Event::Key(self.resolve(loc))));
                        }
                        Some(b'}') if can_close && top == Frame::Map => {
                            self.source.consume(1);
                            self.pop();
                            self.item_done();
                            return Ok(Some(Event::EndMap));
                        }
                        Some(b'>') if can_close && top == Frame::Attributes => {
                            self.source.consume(1);
                            self.pop();
                            self.state = State::Value {
                                can_close: false,
                                can_have_attributes: false,
                            };
                            return Ok(Some(Event::EndAttributes));
                        }
                        None if can_close && top == Frame::TopMap => {
                            self.state = State::Finished;
                            return Ok(None);
                        }
                        _ => {
                            let expected = match (can_close, top) {
                                (true, Frame::Map) => "a map key (string) or '}'",
                                (true, Frame::Attributes) => "an attribute key (string) or '>'",
                                (true, Frame::TopMap) => "a map key (string) or end of input",
                                _ => "a map key (string)",
                            };
                            return Err(self.error(expected, byte));
                        }
                    }
                }
                State::Equals => {
                    let byte = self.peek_significant()?;
                    if byte != Some(b'=') {
                        return Err(self.error("'=' after a map key", byte));
                    }
                    self.source.consume(1);
                    self.state = State::Value {
                        can_close: false,
                        can_have_attributes: true,
                    };
                }
                State::AfterItem => {
                    let byte = self.peek_significant()?;
                    match (self.top(), byte) {
                        (Frame::List, Some(b';')) => {
                            self.source.consume(1);
                            self.state = State::Value {
                                can_close: true,
                                can_have_attributes: true,
                            };
                        }
                        (Frame::List, Some(b']')) => {
                            self.source.consume(1);
                            self.pop();
                            self.item_done();
                            return Ok(Some(Event::EndList));
                        }
                        (Frame::Map | Frame::Attributes | Frame::TopMap, Some(b';')) => {
                            self.source.consume(1);
                            self.state = State::Key { can_close: true };
                        }
                        (Frame::Map, Some(b'}')) => {
                            self.source.consume(1);
                            self.pop();
                            self.item_done();
                            return Ok(Some(Event::EndMap));
                        }
                        (Frame::Attributes, Some(b'>')) => {
                            self.source.consume(1);
                            self.pop();
                            self.state = State::Value {
                                can_close: false,
                                can_have_attributes: false,
                            };
                            return Ok(Some(Event::EndAttributes));
                        }
                        (Frame::TopList, Some(b';')) => {
                            self.source.consume(1);
                            self.state = State::Value {
                                can_close: true,
                                can_have_attributes: true,
                            };
                        }
                        (Frame::TopNode | Frame::TopList | Frame::TopMap, None) => {
                            self.state = State::Finished;
                            return Ok(None);
                        }
                        (top, _) => {
                            let expected = match top {
                                Frame::List => "';' or ']' after a list item",
                                Frame::Map => "';' or '}' after a map item",
                                Frame::Attributes => "';' or '>' after an attribute",
                                Frame::TopList | Frame::TopMap => {
                                    "';' or end of input after a fragment item"
                                }
                                Frame::TopNode => "end of input after the node (a list fragment has items separated by ';')",
                            };
                            return Err(self.error(expected, byte));
                        }
                    }
                }
                State::Finished => return Ok(None),
            }
        }
    }

    /// After a complete item: takes a `;` that follows at once (the common case), so the next
    /// call starts directly at the next item; otherwise leaves the separator to `AfterItem`.
    /// Consuming never invalidates the bytes the returned event borrows.
    #[inline(always)]
    fn item_done(&mut self) {
        if self.source.window().first() == Some(&b';') {
            match self.top() {
                Frame::List | Frame::TopList => {
                    self.source.consume(1);
                    self.state = State::Value {
                        can_close: true,
                        can_have_attributes: true,
                    };
                    return;
                }
                Frame::Map | Frame::Attributes | Frame::TopMap => {
                    self.source.consume(1);
                    self.state = State::Key { can_close: true };
                    return;
                }
                Frame::TopNode => {}
            }
        }
        self.state = State::AfterItem;
    }

    #[inline(always)]
    fn top(&self) -> Frame {
        self.top
    }

    /// Closes the innermost list, map or attribute map. The bottom frame is never popped:
    /// closes only match List, Map and Attributes frames.
    #[inline(always)]
    fn pop(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
        }
        self.top = *self.frames.last().unwrap_or(&Frame::TopNode);
    }

    /// Opens a frame; the caller has checked the depth limit.
    #[inline(always)]
    fn push_unchecked(&mut self, frame: Frame) {
        self.frames.push(frame);
        self.top = frame;
    }

    #[inline]
    fn push(&mut self, frame: Frame) -> Result<(), YsonError> {
        if self.frames.len() > self.max_depth {
            return Err(YsonError::new(
                self.source.offset().saturating_sub(1),
                format!("nesting deeper than the limit of {} levels", self.max_depth),
            ));
        }
        self.push_unchecked(frame);
        Ok(())
    }

    #[cold]
    fn error(&self, expected: &str, found: Option<u8>) -> YsonError {
        YsonError::new(
            self.source.offset(),
            format!("expected {expected}, found {}", describe_byte(found)),
        )
    }

    #[inline(always)]
    fn resolve(&self, loc: Loc) -> &[u8] {
        match loc {
            Loc::Buffer(start, len) => self.source.buffered(start, len),
            Loc::Scratch => &self.scratch,
        }
    }

    #[inline(always)]
    fn event_of(&self, token: Token) -> Event<'_> {
        match token {
            Token::Entity => Event::Entity,
            Token::Bool(v) => Event::Bool(v),
            Token::Int64(v) => Event::Int64(v),
            Token::Uint64(v) => Event::Uint64(v),
            Token::Double(v) => Event::Double(v),
            Token::String(loc) => Event::String(self.resolve(loc)),
        }
    }

    /// The next byte that is not whitespace, not consumed.
    #[inline(always)]
    fn peek_significant(&mut self) -> Result<Option<u8>, YsonError> {
        loop {
            let window = self.source.window();
            let mut index = 0;
            while index < window.len() {
                let byte = window[index];
                if !matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                    self.source.consume(index);
                    return Ok(Some(byte));
                }
                index += 1;
            }
            self.source.consume(index);
            if !self.source.refill()? {
                return Ok(None);
            }
        }
    }

    /// The next byte, consumed.
    #[inline]
    fn next_byte(&mut self) -> Result<Option<u8>, YsonError> {
        if let Some(&byte) = self.source.window().first() {
            self.source.consume(1);
            return Ok(Some(byte));
        }
        if !self.source.refill()? {
            return Ok(None);
        }
        self.next_byte()
    }

    #[inline]
    fn peek_byte(&mut self) -> Result<Option<u8>, YsonError> {
        if let Some(&byte) = self.source.window().first() {
            return Ok(Some(byte));
        }
        if !self.source.refill()? {
            return Ok(None);
        }
        Ok(self.source.window().first().copied())
    }

    /// A scalar starting with `first` (peeked, not consumed).
    #[inline(always)]
    fn lex_scalar(&mut self, first: u8, expected: &str) -> Result<Token, YsonError> {
        match first {
            0x01 => {
                let start = self.source.offset();
                self.source.consume(1);
                let length = zigzag_decode(self.read_varint()?);
                if length < 0 {
                    return Err(YsonError::new(
                        start + 1,
                        format!("expected a string length, found negative {length}"),
                    ));
                }
                Ok(Token::String(self.take_bytes(length as u64)?))
            }
            0x02 => {
                self.source.consume(1);
                Ok(Token::Int64(zigzag_decode(self.read_varint()?)))
            }
            0x06 => {
                self.source.consume(1);
                Ok(Token::Uint64(self.read_varint()?))
            }
            0x03 => {
                self.source.consume(1);
                let window = self.source.window();
                let bits = if window.len() >= 8 {
                    let bytes: [u8; 8] = window[..8].try_into().unwrap_or_default();
                    self.source.consume(8);
                    u64::from_le_bytes(bytes)
                } else {
                    let loc = self.take_bytes(8)?;
                    let bytes: [u8; 8] = self.resolve(loc).try_into().unwrap_or_default();
                    u64::from_le_bytes(bytes)
                };
                Ok(Token::Double(f64::from_bits(bits)))
            }
            0x04 => {
                self.source.consume(1);
                Ok(Token::Bool(false))
            }
            0x05 => {
                self.source.consume(1);
                Ok(Token::Bool(true))
            }
            b'#' => {
                self.source.consume(1);
                Ok(Token::Entity)
            }
            b'"' => self.lex_quoted(),
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => self.lex_unquoted(),
            b'0'..=b'9' | b'-' | b'+' => self.lex_number(),
            b'%' => self.lex_percent(),
            _ => Err(self.error(expected, Some(first))),
        }
    }

    #[inline(always)]
    fn read_varint(&mut self) -> Result<u64, YsonError> {
        let window = self.source.window();
        // One byte: most lengths and small integers.
        if let Some(&byte) = window.first() {
            if byte < 0x80 {
                self.source.consume(1);
                return Ok(byte as u64);
            }
        }
        if window.len() >= 10 {
            let mut value = 0u64;
            for (index, &byte) in window[..10].iter().enumerate() {
                value |= ((byte & 0x7f) as u64) << (7 * index);
                if byte < 0x80 {
                    self.source.consume(index + 1);
                    return Ok(value);
                }
            }
            return Err(YsonError::new(
                self.source.offset(),
                "expected a varint of at most 10 bytes, found a longer one",
            ));
        }
        let start = self.source.offset();
        let mut value = 0u64;
        for index in 0..10 {
            match self.next_byte()? {
                Some(byte) => {
                    value |= ((byte & 0x7f) as u64) << (7 * index);
                    if byte < 0x80 {
                        return Ok(value);
                    }
                }
                None => {
                    return Err(YsonError::new(
                        self.source.offset(),
                        format!("expected the rest of the varint that starts at byte {start}, found end of input"),
                    ))
                }
            }
        }
        Err(YsonError::new(
            start,
            "expected a varint of at most 10 bytes, found a longer one",
        ))
    }

    /// `length` raw bytes: borrowed from the buffer when all there, else copied as they arrive.
    #[inline(always)]
    fn take_bytes(&mut self, length: u64) -> Result<Loc, YsonError> {
        let window = self.source.window();
        if window.len() as u64 >= length {
            let start = self.source.window_index();
            self.source.consume(length as usize);
            return Ok(Loc::Buffer(start, length as usize));
        }
        self.take_bytes_slow(length)
    }

    #[inline(never)]
    fn take_bytes_slow(&mut self, length: u64) -> Result<Loc, YsonError> {
        let start = self.source.offset();
        self.scratch.clear();
        let mut remaining = length;
        loop {
            let window = self.source.window();
            let chunk = (window.len() as u64).min(remaining) as usize;
            self.scratch.extend_from_slice(&window[..chunk]);
            self.source.consume(chunk);
            remaining -= chunk as u64;
            if remaining == 0 {
                return Ok(Loc::Scratch);
            }
            if !self.source.refill()? {
                return Err(YsonError::new(
                    self.source.offset(),
                    format!(
                        "expected {length} bytes of binary data from byte {start}, found end of input after {}",
                        length - remaining
                    ),
                ));
            }
        }
    }

    fn lex_quoted(&mut self) -> Result<Token, YsonError> {
        let start = self.source.offset();
        self.source.consume(1);
        let window = self.source.window();
        // Fast path: no escapes and the closing quote is buffered.
        if let Some(index) = window.iter().position(|&b| b == b'"' || b == b'\\') {
            if window[index] == b'"' {
                let buffer_start = self.source.window_index();
                self.source.consume(index + 1);
                return Ok(Token::String(Loc::Buffer(buffer_start, index)));
            }
        }
        self.scratch.clear();
        loop {
            let Some(byte) = self.next_byte()? else {
                return Err(YsonError::new(
                    self.source.offset(),
                    format!("expected the closing '\"' of the string that starts at byte {start}, found end of input"),
                ));
            };
            match byte {
                b'"' => return Ok(Token::String(Loc::Scratch)),
                b'\\' => self.lex_escape(start)?,
                other => self.scratch.push(other),
            }
        }
    }

    /// One C escape after its backslash, appended to `scratch` (YT's unescaping rules: unknown
    /// escapes stand for the character itself; octal takes up to 3 digits, `\x` up to 2).
    fn lex_escape(&mut self, string_start: u64) -> Result<(), YsonError> {
        let Some(byte) = self.next_byte()? else {
            return Err(YsonError::new(
                self.source.offset(),
                format!("expected an escape and the closing '\"' of the string that starts at byte {string_start}, found end of input"),
            ));
        };
        let decoded = match byte {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'0'..=b'7' => {
                let mut value = (byte - b'0') as u32;
                for _ in 0..2 {
                    match self.peek_byte()? {
                        Some(digit @ b'0'..=b'7') => {
                            self.source.consume(1);
                            value = value * 8 + (digit - b'0') as u32;
                        }
                        _ => break,
                    }
                }
                value as u8
            }
            b'x' => {
                let mut value = 0u32;
                let mut digits = 0;
                while digits < 2 {
                    match self.peek_byte()?.and_then(hex_value) {
                        Some(digit) => {
                            self.source.consume(1);
                            value = value * 16 + digit;
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    b'x'
                } else {
                    value as u8
                }
            }
            b'u' | b'U' => {
                let wanted = if byte == b'u' { 4 } else { 8 };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < wanted {
                    match self.peek_byte()?.and_then(hex_value) {
                        Some(digit) => {
                            self.source.consume(1);
                            value = value.wrapping_mul(16) + digit;
                            digits += 1;
                        }
                        None => break,
                    }
                }
                match char::from_u32(value).filter(|_| digits == wanted) {
                    Some(c) => {
                        let mut utf8 = [0u8; 4];
                        self.scratch
                            .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                        return Ok(());
                    }
                    None => {
                        return Err(YsonError::new(
                            self.source.offset(),
                            format!(
                            "expected {wanted} hex digits of a Unicode code point in a \\{} escape",
                            byte as char
                        ),
                        ))
                    }
                }
            }
            other => other,
        };
        self.scratch.push(decoded);
        Ok(())
    }

    fn lex_unquoted(&mut self) -> Result<Token, YsonError> {
        let window = self.source.window();
        let length = window
            .iter()
            .position(|&b| !is_unquoted_continuation(b))
            .unwrap_or(window.len());
        if length < window.len() {
            let start = self.source.window_index();
            self.source.consume(length);
            return Ok(Token::String(Loc::Buffer(start, length)));
        }
        // The string may go on past the buffer.
        self.scratch.clear();
        loop {
            let window = self.source.window();
            let length = window
                .iter()
                .position(|&b| !is_unquoted_continuation(b))
                .unwrap_or(window.len());
            let stopped = length < window.len();
            self.scratch.extend_from_slice(&window[..length]);
            self.source.consume(length);
            if stopped || !self.source.refill()? {
                return Ok(Token::String(Loc::Scratch));
            }
        }
    }

    /// The bytes of a literal made of `allowed` bytes, into `scratch` (bounded length).
    fn collect_literal(&mut self, allowed: fn(u8) -> bool) -> Result<(), YsonError> {
        let start = self.source.offset();
        self.scratch.clear();
        loop {
            let window = self.source.window();
            let length = window
                .iter()
                .position(|&b| !allowed(b))
                .unwrap_or(window.len());
            self.scratch.extend_from_slice(&window[..length]);
            self.source.consume(length);
            if self.scratch.len() > MAX_LITERAL_LENGTH {
                return Err(YsonError::new(
                    start,
                    format!("expected a literal of at most {MAX_LITERAL_LENGTH} bytes"),
                ));
            }
            if !self.source.window().is_empty() || !self.source.refill()? {
                return Ok(());
            }
        }
    }

    fn lex_number(&mut self) -> Result<Token, YsonError> {
        let start = self.source.offset();
        self.collect_literal(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))?;
        let literal = &self.scratch[..];
        let invalid = |what: &str| {
            YsonError::new(
                start,
                format!(
                    "expected {what}, found \"{}\"",
                    String::from_utf8_lossy(literal)
                ),
            )
        };
        if let Some(digits) = literal.strip_suffix(b"u") {
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(invalid("an unsigned integer literal (digits then 'u')"));
            }
            // Digits only, so valid UTF-8.
            let text = std::str::from_utf8(digits).map_err(|_| invalid("digits"))?;
            return text
                .parse::<u64>()
                .map(Token::Uint64)
                .map_err(|_| invalid("an unsigned integer literal within 0..2^64"));
        }
        if literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
            if !literal
                .iter()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
            {
                return Err(invalid("a double literal"));
            }
            let text = std::str::from_utf8(literal).map_err(|_| invalid("a double literal"))?;
            return text
                .parse::<f64>()
                .map(Token::Double)
                .map_err(|_| invalid("a double literal"));
        }
        let digits = match literal {
            [b'+' | b'-', rest @ ..] => rest,
            rest => rest,
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(invalid("an integer literal"));
        }
        let text = std::str::from_utf8(literal).map_err(|_| invalid("an integer literal"))?;
        text.parse::<i64>()
            .map(Token::Int64)
            .map_err(|_| invalid("an integer literal within -2^63..2^63"))
    }

    fn lex_percent(&mut self) -> Result<Token, YsonError> {
        let start = self.source.offset();
        self.source.consume(1);
        self.collect_literal(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-'))?;
        Ok(match &self.scratch[..] {
            b"true" => Token::Bool(true),
            b"false" => Token::Bool(false),
            b"nan" => Token::Double(f64::NAN),
            b"inf" | b"+inf" => Token::Double(f64::INFINITY),
            b"-inf" => Token::Double(f64::NEG_INFINITY),
            other => {
                return Err(YsonError::new(
                    start,
                    format!(
                        "expected %true, %false, %nan, %inf or %-inf, found \"%{}\"",
                        String::from_utf8_lossy(other)
                    ),
                ))
            }
        })
    }
}

#[inline(always)]
fn is_unquoted_continuation(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-')
}

fn hex_value(byte: u8) -> Option<u32> {
    (byte as char).to_digit(16)
}

/// The varint that starts at `head[1]` (after a marker byte) and its length in bytes, or `None`
/// when it is longer than 10 bytes (an error the general path reports).
///
/// Branch-light: the first 8 bytes are read as one little-endian word, the end of the varint
/// is the first byte without its high bit, and the 7-bit groups are packed together with three
/// shift-and-mask steps. Bits past 64 are dropped exactly as the byte-by-byte decoder
/// (`read_varint`) drops them, so both decoders agree on every input.
#[inline(always)]
pub(crate) fn decode_varint_fast(head: &[u8; FAST_PATH_WINDOW]) -> Option<(u64, usize)> {
    let mut word_bytes = [0u8; 8];
    word_bytes.copy_from_slice(&head[1..9]);
    let word = u64::from_le_bytes(word_bytes);
    if word & 0x80 == 0 {
        // One byte: small integers and zeros.
        return Some((word & 0x7f, 1));
    }
    let stops = !word & 0x8080_8080_8080_8080;
    if stops != 0 {
        let length = (stops.trailing_zeros() as usize + 1) / 8;
        // `length` is 2..=8 here; keep its bytes only.
        let kept = word & (u64::MAX >> (64 - 8 * length));
        return Some((pack_varint_groups(kept), length));
    }
    let mut value = pack_varint_groups(word);
    let ninth = head[9];
    value |= ((ninth & 0x7f) as u64) << 56;
    if ninth < 0x80 {
        return Some((value, 9));
    }
    let tenth = head[10];
    value |= ((tenth & 0x7f) as u64) << 63;
    if tenth < 0x80 {
        return Some((value, 10));
    }
    None
}

/// The low 7 bits of each byte of `word` (a varint's first bytes, least significant first)
/// packed into one 56-bit number.
#[inline(always)]
fn pack_varint_groups(word: u64) -> u64 {
    let groups = word & 0x7f7f_7f7f_7f7f_7f7f;
    let groups = (groups & 0x007f_007f_007f_007f) | ((groups & 0x7f00_7f00_7f00_7f00) >> 1);
    let groups = (groups & 0x0000_3fff_0000_3fff) | ((groups & 0x3fff_0000_3fff_0000) >> 2);
    (groups & 0x0000_0000_0fff_ffff) | ((groups & 0x0fff_ffff_0000_0000) >> 4)
}

#[inline(always)]
pub(crate) fn zigzag_decode(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-by-byte definition: 7-bit groups, least significant first, bits past 64
    /// dropped; `None` past 10 bytes.
    fn decode_varint_reference(bytes: &[u8]) -> Option<(u64, usize)> {
        let mut value = 0u64;
        for (index, &byte) in bytes.iter().take(10).enumerate() {
            value |= ((byte & 0x7f) as u64).wrapping_shl(7 * index as u32);
            if byte < 0x80 {
                return Some((value, index + 1));
            }
        }
        None
    }

    fn encode_varint(mut value: u64, out: &mut Vec<u8>) {
        while value >= 0x80 {
            out.push(value as u8 | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }

    fn head_of(varint: &[u8]) -> [u8; FAST_PATH_WINDOW] {
        let mut head = [0xaa; FAST_PATH_WINDOW];
        head[0] = 0x02;
        head[1..1 + varint.len()].copy_from_slice(varint);
        head
    }

    #[test]
    fn fast_varint_decoder_agrees_with_the_byte_by_byte_one_on_every_length() {
        let mut values = vec![0, 1, 0x7f, 0x80, u64::MAX, u64::MAX - 1, 1 << 63];
        for shift in 0..64 {
            values.extend([1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1]);
        }
        for value in values {
            let mut varint = Vec::new();
            encode_varint(value, &mut varint);
            let head = head_of(&varint);
            assert_eq!(
                decode_varint_fast(&head),
                Some((value, varint.len())),
                "{value}"
            );
            assert_eq!(
                decode_varint_fast(&head),
                decode_varint_reference(&head[1..])
            );
        }
    }

    #[test]
    fn fast_varint_decoder_drops_overflow_bits_and_rejects_eleven_bytes_like_the_slow_one() {
        // Tenth bytes with more than the one bit that fits, and padded (non-minimal) varints.
        for tenth in [0x01u8, 0x02, 0x03, 0x7f] {
            let mut varint = vec![0xff; 9];
            varint.push(tenth);
            let head = head_of(&varint);
            assert_eq!(
                decode_varint_fast(&head),
                decode_varint_reference(&head[1..])
            );
        }
        let padded = head_of(&[0x80, 0x80, 0x80, 0x00]);
        assert_eq!(decode_varint_fast(&padded), Some((0, 4)));
        let too_long = head_of(&[0x80; 11]);
        assert_eq!(decode_varint_fast(&too_long), None);
        assert_eq!(decode_varint_reference(&too_long[1..]), None);
    }
}
