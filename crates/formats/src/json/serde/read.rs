//! The deserializer: a row's JSON read by the plan at each place, into whatever the visitor
//! builds. Scalars take the plan's reading (an integer column gives `i64` or `u64` in the YT
//! type's range, a double column `f64` from a number or `"nan"`/`"inf"`/`"-inf"`, a bytes
//! column its bytes as code points, borrowed from the input when the string has no escapes
//! and only printable ASCII); objects are read by key, in any order, keys in the writer's
//! order taking one comparison each.
//!
//! Nesting is bounded by the plan (the schema); a `yson` value or an ignored one is parsed by
//! the row reader's parser, bounded at its depth limit. No allocation is sized by the input.

use serde::de::value::{
    BorrowedStrDeserializer, StrDeserializer, U32Deserializer, U64Deserializer,
};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use shapeshift_types::check_decimal_binary;

use super::describe;
use super::plan::{BytesCheck, Kind, Member, Plan, Range};
use crate::byte_items::ByteItems;
use crate::json::parse::{number, starts_with, string_at, Number, Parser, StringAt, MAX_DEPTH};
use crate::json::{node_from_json, non_finite};
use crate::scalar_range::read_float;
use crate::serde_error::SerdeError;
use crate::table::yson_binary;

type Result<T> = std::result::Result<T, SerdeError>;

/// The input and where reading is.
pub(super) struct Reader<'de> {
    input: &'de [u8],
    pub pos: usize,
    /// Where the last token began, for errors raised by visitors.
    pub token: usize,
    /// Decoded strings (escapes, bytes above ASCII).
    scratch: Vec<u8>,
}

/// The text of a [`Text::Input`] string.
#[inline]
fn ascii(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: `string_at` borrows only runs of printable ASCII (its `plain_run`), and
    // ASCII is UTF-8.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[cold]
fn fail(at: usize, message: impl Into<String>) -> SerdeError {
    SerdeError::new("", Some(at), message.into())
}

/// A string token: borrowed from the input, or decoded into the scratch buffer.
enum Text<'de> {
    /// Printable ASCII only ([`string_at`]).
    Input(&'de [u8]),
    Scratch(usize, usize),
}

impl<'de> Reader<'de> {
    pub fn new(input: &'de [u8]) -> Reader<'de> {
        Reader {
            input,
            pos: 0,
            token: 0,
            scratch: Vec::new(),
        }
    }

    /// Skips whitespace; the byte after it (`None` at the end).
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.input.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.token = self.pos;
                return Some(b);
            }
            self.pos += 1;
        }
        self.token = self.pos;
        None
    }

    #[cold]
    fn unexpected(&self, expected: &str) -> SerdeError {
        match self.input.get(self.pos) {
            Some(&b) if b.is_ascii_graphic() => fail(
                self.pos,
                format!("expected {expected}, found '{}'", char::from(b)),
            ),
            Some(&b) => fail(
                self.pos,
                format!("expected {expected}, found byte 0x{b:02x}"),
            ),
            None => fail(self.pos, format!("expected {expected}, the input ended")),
        }
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Result<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{}'", char::from(byte))))
        }
    }

    /// Whether `null` comes next (consumed if so).
    #[inline]
    fn null(&mut self) -> bool {
        if self.peek() == Some(b'n') && self.input[self.pos..].starts_with(b"null") {
            self.pos += 4;
            return true;
        }
        false
    }

    /// After the first element: `,` (true) or `close` (false, consumed).
    #[inline]
    fn next_of(&mut self, first: bool, close: u8) -> Result<bool> {
        match self.peek() {
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                Ok(true)
            }
            _ if first => Ok(true),
            _ => Err(self.unexpected(&format!("',' or '{}'", char::from(close)))),
        }
    }

    #[inline]
    fn string(&mut self) -> Result<Text<'de>> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a string"));
        }
        let at = self.pos;
        self.scratch.clear();
        match string_at(self.input, &mut self.pos, &mut self.scratch) {
            Some(StringAt::Input(start, end)) => Ok(Text::Input(&self.input[start..end])),
            Some(StringAt::Scratch(start, end)) => Ok(Text::Scratch(start, end)),
            None => Err(self.bad_string(at)),
        }
    }

    /// Why the string at `at` did not read, by the row reader's parser.
    #[cold]
    fn bad_string(&self, at: usize) -> SerdeError {
        let mut parser = Parser::new(self.input, at);
        match parser.string() {
            Err(e) => fail(e.offset, e.message),
            Ok(text) => match crate::json::string_bytes(&text) {
                Err(message) => fail(at, message),
                Ok(_) => fail(at, "a string that does not read"),
            },
        }
    }

    #[inline]
    fn number(&mut self) -> Result<Number> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => {
                number(self.input, &mut self.pos).ok_or_else(|| self.unexpected("a number"))
            }
            _ => Err(self.unexpected("a number")),
        }
    }

    /// Any JSON value, skipped (bounded at the parser's depth).
    fn skip_value(&mut self) -> Result<crate::json::parse::Json> {
        self.peek();
        let mut parser = Parser::new(self.input, self.pos);
        let json = parser
            .value(MAX_DEPTH)
            .map_err(|e| fail(e.offset, e.message))?;
        self.pos = parser.pos;
        Ok(json)
    }

    /// The key at the start of an object entry and its `:`: the member it names, the next
    /// one `expected` first (keys as the writer writes them take one comparison).
    #[inline]
    fn key(&mut self, members: &[Member], expected: usize) -> Result<usize> {
        self.peek();
        if let Some(member) = members.get(expected) {
            if starts_with(&self.input[self.pos..], &member.key) {
                self.pos += member.key.len();
                return Ok(expected);
            }
        }
        self.key_slow(members)
    }

    #[cold]
    #[inline(never)]
    fn key_slow(&mut self, members: &[Member]) -> Result<usize> {
        let at = self.pos;
        if self.input.get(at) != Some(&b'"') {
            return Err(self.unexpected("a key"));
        }
        let mut parser = Parser::new(self.input, at);
        let key = parser.string().map_err(|e| fail(e.offset, e.message))?;
        self.pos = parser.pos;
        self.expect(b':')?;
        members
            .iter()
            .position(|m| m.json_key == key)
            .ok_or_else(|| {
                let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                fail(
                    at,
                    format!("the key \"{key}\" is not a member ({})", names.join(", ")),
                )
            })
    }
}

/// A value at the reader's place, read by `plan`.
pub(super) struct Value<'r, 'p, 'de> {
    pub r: &'r mut Reader<'de>,
    pub plan: &'p Plan,
}

impl<'r, 'p, 'de> Value<'r, 'p, 'de> {
    /// The plan of a present value: `optional<T>`'s brackets opened (their count returned).
    /// `null` where the plan is nullable is `None`.
    #[inline]
    fn present(&mut self) -> Result<Option<(&'p Plan, u32)>> {
        let mut plan = self.plan;
        let mut closes = 0;
        loop {
            if plan.nullable && self.r.null() {
                return Ok(None);
            }
            match &plan.kind {
                Kind::Optional { item, wrapped } => {
                    if *wrapped {
                        self.r.expect(b'[')?;
                        closes += 1;
                    }
                    plan = item;
                }
                _ => return Ok(Some((plan, closes))),
            }
        }
    }

    #[inline]
    fn close(&mut self, closes: u32) -> Result<()> {
        for _ in 0..closes {
            self.r.expect(b']')?;
        }
        Ok(())
    }

    /// A present value read by `plan` as the plan reads it (no hint).
    fn any<V: Visitor<'de>>(&mut self, plan: &'p Plan, visitor: V) -> Result<V::Value> {
        match &plan.kind {
            Kind::Bool => {
                let value = match self.r.peek() {
                    Some(b't') if self.r.input[self.r.pos..].starts_with(b"true") => true,
                    Some(b'f') if self.r.input[self.r.pos..].starts_with(b"false") => false,
                    _ => return Err(self.r.unexpected("true or false")),
                };
                self.r.pos += if value { 4 } else { 5 };
                visitor.visit_bool(value)
            }
            Kind::Int(range) => {
                let at = self.r.pos;
                match self.r.number()? {
                    Number::Int(v) if range.holds_signed(v) => match range {
                        Range::Unsigned(_) => visitor.visit_u64(v as u64),
                        Range::Signed(..) => visitor.visit_i64(v),
                    },
                    Number::Uint(v) if range.holds_unsigned(v) => visitor.visit_u64(v),
                    Number::Float(v) => Err(fail(at, format!("{v} for {}", describe(plan)))),
                    Number::Int(v) => Err(fail(at, format!("{v} is outside {}", describe(plan)))),
                    Number::Uint(v) => Err(fail(at, format!("{v} is outside {}", describe(plan)))),
                }
            }
            Kind::Double { narrow } => {
                let at = self.r.pos;
                let v = match self.r.peek() {
                    Some(b'"') => match self.r.string()? {
                        Text::Input(text) => crate::utf8::text(text)
                            .ok()
                            .and_then(non_finite)
                            .ok_or_else(|| fail(at, format!("a string for {}", describe(plan))))?,
                        Text::Scratch(..) => {
                            return Err(fail(at, format!("a string for {}", describe(plan))));
                        }
                    },
                    _ => match self.r.number()? {
                        Number::Int(v) => v as f64,
                        Number::Uint(v) => v as f64,
                        Number::Float(v) => v,
                    },
                };
                if !*narrow {
                    return visitor.visit_f64(v);
                }
                // A `float` column's value is the f32 its number names.
                match read_float(v) {
                    Some(v) => visitor.visit_f32(v),
                    None => Err(fail(at, format!("{v} is outside {}", describe(plan)))),
                }
            }
            Kind::Bytes(check) => self.bytes(plan, *check, visitor, true),
            Kind::Yson => {
                let at = self.r.pos;
                let json = self.r.skip_value()?;
                let node = node_from_json(&json).map_err(|m| fail(at, m))?;
                let mut bytes = Vec::new();
                yson_binary::node(&mut bytes, &node);
                visitor.visit_byte_buf(bytes)
            }
            Kind::Null => {
                if self.r.null() {
                    visitor.visit_unit()
                } else {
                    Err(self.r.unexpected("null"))
                }
            }
            // `present` has opened it.
            Kind::Optional { .. } => Err(fail(self.r.pos, "an optional inside itself")),
            Kind::List(item) => self.items(b'[', Plans::Same(item), plan, visitor),
            Kind::Tuple(elements) => self.items(b'[', Plans::Each(elements), plan, visitor),
            Kind::Struct(members) => match self.r.peek() {
                Some(b'[') => self.items(b'[', Plans::Members(members), plan, visitor),
                _ => self.object(members, plan, visitor, KeyAs::Name),
            },
            Kind::Variant { .. } => self.variant(plan, visitor),
            Kind::Dict { key, value } => {
                self.r.expect(b'[')?;
                visitor.visit_map(Pairs {
                    r: &mut *self.r,
                    key,
                    value,
                    first: true,
                })
            }
        }
    }

    /// A bytes column's string: a str to the visitor when `as_str` and the bytes are UTF-8,
    /// else bytes.
    #[inline]
    fn bytes<V: Visitor<'de>>(
        &mut self,
        plan: &'p Plan,
        check: BytesCheck,
        visitor: V,
        as_str: bool,
    ) -> Result<V::Value> {
        let at = self.r.pos;
        let text = self.r.string()?;
        let bytes: &[u8] = match text {
            Text::Input(bytes) => bytes,
            Text::Scratch(start, end) => &self.r.scratch[start..end],
        };
        // Decoded text (escapes, bytes above ASCII) is checked for UTF-8 once, for the
        // column's check and the visitor's spelling both; printable ASCII in place is UTF-8.
        let utf8 = match text {
            Text::Input(_) => None,
            Text::Scratch(..) if as_str || check == BytesCheck::Utf8 => {
                Some(crate::utf8::text(bytes))
            }
            Text::Scratch(..) => None,
        };
        let checked = match check {
            BytesCheck::Any => Ok(()),
            BytesCheck::Utf8 => match utf8 {
                Some(Err(e)) => Err(format!("bytes that are not UTF-8 ({e})")),
                _ => Ok(()),
            },
            BytesCheck::Uuid if bytes.len() == 16 => Ok(()),
            BytesCheck::Uuid => Err(format!("{} bytes for a uuid of 16", bytes.len())),
            BytesCheck::Decimal { precision, scale } => {
                check_decimal_binary(bytes, precision, scale).map_err(|e| e.to_string())
            }
        };
        checked.map_err(|what| fail(at, format!("{what} in {}", describe(plan))))?;
        match (text, utf8) {
            // Printable ASCII: UTF-8.
            (Text::Input(bytes), _) if as_str => visitor.visit_borrowed_str(ascii(bytes)),
            (Text::Input(bytes), _) => visitor.visit_borrowed_bytes(bytes),
            (Text::Scratch(..), Some(Ok(text))) if as_str => visitor.visit_str(text),
            (Text::Scratch(..), _) => visitor.visit_bytes(bytes),
        }
    }

    /// A bytes column's string as a str (`as_str`, when UTF-8) or as bytes; any other
    /// column as the plan reads it.
    fn text<V: Visitor<'de>>(mut self, visitor: V, as_str: bool) -> Result<V::Value> {
        let Some((plan, closes)) = self.present()? else {
            return visitor.visit_unit();
        };
        let value = match &plan.kind {
            Kind::Bytes(check) => self.bytes(plan, *check, visitor, as_str)?,
            _ => self.any(plan, visitor)?,
        };
        self.close(closes)?;
        Ok(value)
    }

    /// A sequence opened by `open` (`[`, or `{` for an object read in member order), its
    /// items read by `plans`, closed and counted after the visitor.
    #[inline]
    fn items<V: Visitor<'de>>(
        &mut self,
        open: u8,
        plans: Plans<'p>,
        plan: &'p Plan,
        visitor: V,
    ) -> Result<V::Value> {
        self.r.expect(open)?;
        let mut items = Items {
            r: &mut *self.r,
            plans,
            count: 0,
            done: false,
        };
        let value = visitor.visit_seq(&mut items)?;
        items.finish(plan)?;
        Ok(value)
    }

    #[inline]
    fn object<V: Visitor<'de>>(
        &mut self,
        members: &'p [Member],
        plan: &'p Plan,
        visitor: V,
        key_as: KeyAs,
    ) -> Result<V::Value> {
        self.r.expect(b'{')?;
        let mut entries = Entries {
            r: &mut *self.r,
            members,
            key_as,
            next: 0,
            current: 0,
            first: true,
            done: false,
        };
        let value = visitor.visit_map(&mut entries)?;
        if !entries.done {
            return Err(fail(
                entries.r.pos,
                format!("entries of {} left unread", describe(plan)),
            ));
        }
        Ok(value)
    }

    /// `[name or index, value]` as an enum.
    fn variant<V: Visitor<'de>>(&mut self, plan: &'p Plan, visitor: V) -> Result<V::Value> {
        let Kind::Variant {
            alternatives,
            names,
        } = &plan.kind
        else {
            return Err(fail(self.r.pos, format!("an enum for {}", describe(plan))));
        };
        self.r.expect(b'[')?;
        let at = self.r.pos;
        let index = match (self.r.peek(), names) {
            (Some(b'"'), Some(names)) => {
                let text = self.r.string()?;
                let name: &[u8] = match text {
                    Text::Input(bytes) => bytes,
                    Text::Scratch(start, end) => &self.r.scratch[start..end],
                };
                names
                    .iter()
                    .position(|(_, n)| n.as_bytes() == name)
                    .ok_or_else(|| {
                        fail(
                            at,
                            format!("no alternative of that name in {}", describe(plan)),
                        )
                    })?
            }
            _ => match self.r.number()? {
                Number::Int(i) if (i as u64) < alternatives.len() as u64 && i >= 0 => i as usize,
                _ => {
                    return Err(fail(
                        at,
                        format!("no such alternative in {}", describe(plan)),
                    ))
                }
            },
        };
        self.r.expect(b',')?;
        let value = visitor.visit_enum(Alternative {
            r: &mut *self.r,
            index: index as u32,
            plan: &alternatives[index],
        })?;
        self.r.expect(b']')?;
        Ok(value)
    }
}

/// How an object's keys reach the visitor: the member's index (derived structs take it, and
/// it keeps fields positional as the writer is) or its name (maps).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyAs {
    Index,
    Name,
}

macro_rules! forward_to_any {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.deserialize_any(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Value<'_, '_, 'de> {
    type Error = SerdeError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.present()? {
            None => visitor.visit_unit(),
            Some((plan, closes)) => {
                let value = self.any(plan, visitor)?;
                self.close(closes)?;
                Ok(value)
            }
        }
    }

    forward_to_any!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_unit,
        deserialize_identifier
    );

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.text(visitor, true)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.text(visitor, false)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match &self.plan.kind {
            Kind::Optional { item, wrapped } => {
                if self.r.null() {
                    return visitor.visit_none();
                }
                if *wrapped {
                    self.r.expect(b'[')?;
                }
                let value = visitor.visit_some(Value {
                    r: &mut *self.r,
                    plan: item,
                })?;
                if *wrapped {
                    self.r.expect(b']')?;
                }
                Ok(value)
            }
            Kind::Null if self.r.null() => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        let Some((plan, closes)) = self.present()? else {
            return visitor.visit_unit();
        };
        let value = match &plan.kind {
            Kind::Bytes(check) => {
                let at = self.r.pos;
                let text = self.r.string()?;
                let bytes: &[u8] = match text {
                    Text::Input(bytes) => bytes,
                    Text::Scratch(start, end) => &self.r.scratch[start..end],
                };
                if *check == BytesCheck::Utf8 && crate::utf8::text(bytes).is_err() {
                    return Err(fail(
                        at,
                        format!("bytes that are not UTF-8 in {}", describe(plan)),
                    ));
                }
                let mut items = ByteItems { bytes, index: 0 };
                let value = visitor.visit_seq(&mut items)?;
                if items.index != bytes.len() {
                    return Err(fail(at, "bytes of the string left unread"));
                }
                value
            }
            Kind::Struct(members) if self.r.peek() == Some(b'{') => {
                self.items(b'{', Plans::Keyed(members), plan, visitor)?
            }
            Kind::Struct(members) => self.items(b'[', Plans::Members(members), plan, visitor)?,
            Kind::List(item) => self.items(b'[', Plans::Same(item), plan, visitor)?,
            _ => self.any(plan, visitor)?,
        };
        self.close(closes)?;
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        let Some((plan, closes)) = self.present()? else {
            return visitor.visit_unit();
        };
        let value = match &plan.kind {
            Kind::Struct(members) if self.r.peek() == Some(b'{') => {
                self.object(members, plan, visitor, KeyAs::Name)?
            }
            _ => self.any(plan, visitor)?,
        };
        self.close(closes)?;
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let Some((plan, closes)) = self.present()? else {
            return visitor.visit_unit();
        };
        let value = match &plan.kind {
            Kind::Struct(members) if self.r.peek() == Some(b'{') => {
                self.object(members, plan, visitor, KeyAs::Index)?
            }
            _ => self.any(plan, visitor)?,
        };
        self.close(closes)?;
        Ok(value)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let Some((plan, closes)) = self.present()? else {
            return visitor.visit_unit();
        };
        let at = self.r.pos;
        let value = match &plan.kind {
            Kind::Int(_) => match self.r.number()? {
                Number::Int(i) if (0..=i64::from(u32::MAX)).contains(&i) => {
                    let index: U32Deserializer<SerdeError> = (i as u32).into_deserializer();
                    visitor.visit_enum(index)?
                }
                _ => {
                    return Err(fail(
                        at,
                        format!("a variant index expected in {}", describe(plan)),
                    ))
                }
            },
            Kind::Bytes(_) => match self.r.string()? {
                Text::Input(bytes) => {
                    let name = ascii(bytes);
                    let name: BorrowedStrDeserializer<SerdeError> =
                        BorrowedStrDeserializer::new(name);
                    visitor.visit_enum(name)?
                }
                Text::Scratch(start, end) => {
                    let name = crate::utf8::text(&self.r.scratch[start..end])
                        .map_err(|_| fail(at, "a variant name that is not UTF-8"))?
                        .to_owned();
                    let name: StrDeserializer<SerdeError> = name.as_str().into_deserializer();
                    visitor.visit_enum(name)?
                }
            },
            Kind::Variant { .. } => self.variant(plan, visitor)?,
            _ => return Err(fail(at, format!("an enum for {}", describe(plan)))),
        };
        self.close(closes)?;
        Ok(value)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.r.skip_value()?;
        visitor.visit_unit()
    }
}

/// The plans of a sequence's items.
enum Plans<'p> {
    /// A list: every item.
    Same(&'p Plan),
    /// A tuple: one per element.
    Each(&'p [Plan]),
    /// A struct as an array: one per member.
    Members(&'p [Member]),
    /// A struct's object read in member order (for positional Rust types): each key must
    /// be the next member's.
    Keyed(&'p [Member]),
}

struct Items<'r, 'p, 'de> {
    r: &'r mut Reader<'de>,
    plans: Plans<'p>,
    count: usize,
    /// The closing bracket was read.
    done: bool,
}

impl Items<'_, '_, '_> {
    /// After the visitor: the sequence must be closed, every element read.
    #[inline]
    fn finish(&mut self, plan: &Plan) -> Result<()> {
        if !self.done {
            let close = if matches!(self.plans, Plans::Keyed(_)) {
                b'}'
            } else {
                b']'
            };
            if self.r.peek() != Some(close) {
                return Err(fail(
                    self.r.pos,
                    format!("values of {} left unread", describe(plan)),
                ));
            }
            self.r.pos += 1;
        }
        let expected = match self.plans {
            Plans::Same(_) => return Ok(()),
            Plans::Each(plans) => plans.len(),
            Plans::Members(members) | Plans::Keyed(members) => members.len(),
        };
        if self.count != expected {
            return Err(fail(
                self.r.token,
                format!("{} values for {}", self.count, describe(plan)),
            ));
        }
        Ok(())
    }
}

impl<'de> de::SeqAccess<'de> for Items<'_, '_, 'de> {
    type Error = SerdeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.done {
            return Ok(None);
        }
        let close = if matches!(self.plans, Plans::Keyed(_)) {
            b'}'
        } else {
            b']'
        };
        if !self.r.next_of(self.count == 0, close)? {
            self.done = true;
            return Ok(None);
        }
        let index = self.count;
        self.count += 1;
        let plan = match self.plans {
            Plans::Same(plan) => plan,
            Plans::Each(plans) => plans.get(index).ok_or_else(|| {
                fail(
                    self.r.pos,
                    format!("more than {} values for a tuple", plans.len()),
                )
            })?,
            Plans::Members(members) => {
                &members
                    .get(index)
                    .ok_or_else(|| {
                        fail(
                            self.r.pos,
                            format!("more than {} values for a struct", members.len()),
                        )
                    })?
                    .plan
            }
            Plans::Keyed(members) => {
                let at = self.r.pos;
                let found = self.r.key(members, index)?;
                if found != index {
                    return Err(fail(at, format!(
                        "the key of member {} ({}) where member {index} was expected: a tuple reads an object's keys in schema order",
                        found, members[found].name
                    )));
                }
                let member = &members[index];
                return seed
                    .deserialize(Value {
                        r: &mut *self.r,
                        plan: &member.plan,
                    })
                    .map(Some)
                    .map_err(|e| e.in_member(&member.name));
            }
        };
        seed.deserialize(Value {
            r: &mut *self.r,
            plan,
        })
        .map(Some)
    }
}

/// An object's entries by key.
struct Entries<'r, 'p, 'de> {
    r: &'r mut Reader<'de>,
    members: &'p [Member],
    key_as: KeyAs,
    /// The member expected next (the one after the last read).
    next: usize,
    current: usize,
    first: bool,
    done: bool,
}

impl<'de> de::MapAccess<'de> for Entries<'_, '_, 'de> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.done {
            return Ok(None);
        }
        let first = std::mem::replace(&mut self.first, false);
        if !self.r.next_of(first, b'}')? {
            self.done = true;
            return Ok(None);
        }
        let index = self.r.key(self.members, self.next)?;
        self.current = index;
        self.next = index + 1;
        match self.key_as {
            KeyAs::Index => {
                let key: U64Deserializer<SerdeError> = (index as u64).into_deserializer();
                seed.deserialize(key).map(Some)
            }
            KeyAs::Name => {
                let key: StrDeserializer<SerdeError> =
                    self.members[index].name.as_str().into_deserializer();
                seed.deserialize(key).map(Some)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let member = &self.members[self.current];
        seed.deserialize(Value {
            r: &mut *self.r,
            plan: &member.plan,
        })
        .map_err(|e| e.in_member(&member.name))
    }
}

/// A dict's `[[key, value], ...]`.
struct Pairs<'r, 'p, 'de> {
    r: &'r mut Reader<'de>,
    key: &'p Plan,
    value: &'p Plan,
    first: bool,
}

impl<'de> de::MapAccess<'de> for Pairs<'_, '_, 'de> {
    type Error = SerdeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let first = std::mem::replace(&mut self.first, false);
        if !self.r.next_of(first, b']')? {
            return Ok(None);
        }
        self.r.expect(b'[')?;
        let key = seed.deserialize(Value {
            r: &mut *self.r,
            plan: self.key,
        })?;
        self.r.expect(b',')?;
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = seed.deserialize(Value {
            r: &mut *self.r,
            plan: self.value,
        })?;
        self.r.expect(b']')?;
        Ok(value)
    }
}

/// A variant's alternative and its value.
struct Alternative<'r, 'p, 'de> {
    r: &'r mut Reader<'de>,
    index: u32,
    plan: &'p Plan,
}

impl<'r, 'p, 'de> de::EnumAccess<'de> for Alternative<'r, 'p, 'de> {
    type Error = SerdeError;
    type Variant = Value<'r, 'p, 'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Value<'r, 'p, 'de>)> {
        let index: U32Deserializer<SerdeError> = self.index.into_deserializer();
        let variant = seed.deserialize(index)?;
        Ok((
            variant,
            Value {
                r: self.r,
                plan: self.plan,
            },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for Value<'_, '_, 'de> {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<()> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self, "", &[], visitor)
    }
}
