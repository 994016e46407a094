//! Thrift's binary and compact protocols at the level of field headers, scalars and
//! collection headers (the Apache Thrift protocol specifications), with no schema.
//!
//! Binary: a field header is the type byte and the field id as i16 big-endian; integers are
//! big-endian; a double is its bits as i64; binary is an i32 length then the bytes; a list is
//! the element type byte and an i32 count; a struct ends with the stop byte 0.
//!
//! Compact: integers are zigzag varints (`i8` a plain byte); a double is 8 bytes
//! little-endian; binary is a varint length then the bytes; a field header is one byte
//! `delta << 4 | type` when the id is 1..=15 above the previous field's of the same struct,
//! else the type byte then the id as a zigzag varint; a bool field's value is its type nibble
//! (1 true, 2 false), a bool element a byte 1 or 2; a list header is one byte
//! `count << 4 | type` for counts up to 14, else `0xF0 | type` then the count as a varint.
//!
//! The [`Decoder`] checks every length and count against the bytes that remain (every
//! element takes at least one byte), so hostile lengths allocate nothing, and skips unknown
//! fields to at most [`MAX_SKIP_DEPTH`] levels of nesting.

use crate::varint::{self, unzigzag, zigzag};

/// The protocol rows are spelled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `TBinaryProtocol`.
    Binary,
    /// `TCompactProtocol`.
    Compact,
}

/// Thrift's wire types (`TType`), by their binary-protocol codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Double,
    Binary,
    Struct,
    Map,
    Set,
    List,
}

impl WireType {
    #[inline]
    fn binary_code(self) -> u8 {
        match self {
            WireType::Bool => 2,
            WireType::I8 => 3,
            WireType::Double => 4,
            WireType::I16 => 6,
            WireType::I32 => 8,
            WireType::I64 => 10,
            WireType::Binary => 11,
            WireType::Struct => 12,
            WireType::Map => 13,
            WireType::Set => 14,
            WireType::List => 15,
        }
    }

    #[inline]
    fn from_binary_code(code: u8) -> Option<WireType> {
        Some(match code {
            2 => WireType::Bool,
            3 => WireType::I8,
            4 => WireType::Double,
            6 => WireType::I16,
            8 => WireType::I32,
            10 => WireType::I64,
            11 => WireType::Binary,
            12 => WireType::Struct,
            13 => WireType::Map,
            14 => WireType::Set,
            15 => WireType::List,
            _ => return None,
        })
    }

    /// The compact code (bool as "true", 1, as in collection headers).
    #[inline]
    fn compact_code(self) -> u8 {
        match self {
            WireType::Bool => 1,
            WireType::I8 => 3,
            WireType::I16 => 4,
            WireType::I32 => 5,
            WireType::I64 => 6,
            WireType::Double => 7,
            WireType::Binary => 8,
            WireType::List => 9,
            WireType::Set => 10,
            WireType::Map => 11,
            WireType::Struct => 12,
        }
    }

    #[inline]
    fn from_compact_code(code: u8) -> Option<WireType> {
        Some(match code {
            1 | 2 => WireType::Bool,
            3 => WireType::I8,
            4 => WireType::I16,
            5 => WireType::I32,
            6 => WireType::I64,
            7 => WireType::Double,
            8 => WireType::Binary,
            9 => WireType::List,
            10 => WireType::Set,
            11 => WireType::Map,
            12 => WireType::Struct,
            _ => return None,
        })
    }

    /// Thrift IDL's name of the type, for errors.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Bool => "bool",
            WireType::I8 => "i8",
            WireType::I16 => "i16",
            WireType::I32 => "i32",
            WireType::I64 => "i64",
            WireType::Double => "double",
            WireType::Binary => "binary",
            WireType::Struct => "struct",
            WireType::Map => "map",
            WireType::Set => "set",
            WireType::List => "list",
        }
    }
}

/// Appends Thrift values to a buffer. A struct is written as its fields then
/// [`Encoder::stop`]; the caller keeps each open struct's last field id (compact deltas).
pub struct Encoder<'a> {
    pub protocol: Protocol,
    pub out: &'a mut Vec<u8>,
}

impl Encoder<'_> {
    /// A field header of a non-bool field `id` of type `ty`; `last` is the previous field
    /// id of the same struct (0 at its start) and becomes `id`.
    #[inline]
    pub fn field(&mut self, ty: WireType, id: i16, last: &mut i16) {
        match self.protocol {
            Protocol::Binary => {
                self.out.push(ty.binary_code());
                self.out.extend_from_slice(&id.to_be_bytes());
            }
            Protocol::Compact => self.compact_field(ty.compact_code(), id, last),
        }
        *last = id;
    }

    /// A bool field: in the compact protocol the value is the header's type nibble.
    #[inline]
    pub fn bool_field(&mut self, id: i16, value: bool, last: &mut i16) {
        match self.protocol {
            Protocol::Binary => {
                self.field(WireType::Bool, id, last);
                self.out.push(u8::from(value));
            }
            Protocol::Compact => {
                self.compact_field(if value { 1 } else { 2 }, id, last);
                *last = id;
            }
        }
    }

    #[inline]
    fn compact_field(&mut self, code: u8, id: i16, last: &i16) {
        let delta = i32::from(id) - i32::from(*last);
        if (1..=15).contains(&delta) {
            self.out.push((delta as u8) << 4 | code);
        } else {
            self.out.push(code);
            varint::put(self.out, zigzag(i64::from(id)));
        }
    }

    /// The stop field that ends a struct.
    #[inline]
    pub fn stop(&mut self) {
        self.out.push(0);
    }

    /// A bool outside a field header (a list element).
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.out.push(match (self.protocol, v) {
            (Protocol::Binary, v) => u8::from(v),
            (Protocol::Compact, true) => 1,
            (Protocol::Compact, false) => 2,
        });
    }

    #[inline]
    pub fn i8(&mut self, v: i8) {
        self.out.push(v as u8);
    }

    #[inline]
    pub fn i16(&mut self, v: i16) {
        match self.protocol {
            Protocol::Binary => self.out.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => varint::put(self.out, zigzag(i64::from(v))),
        }
    }

    #[inline]
    pub fn i32(&mut self, v: i32) {
        match self.protocol {
            Protocol::Binary => self.out.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => varint::put(self.out, zigzag(i64::from(v))),
        }
    }

    #[inline]
    pub fn i64(&mut self, v: i64) {
        match self.protocol {
            Protocol::Binary => self.out.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => varint::put(self.out, zigzag(v)),
        }
    }

    #[inline]
    pub fn double(&mut self, v: f64) {
        match self.protocol {
            Protocol::Binary => self.out.extend_from_slice(&v.to_bits().to_be_bytes()),
            Protocol::Compact => self.out.extend_from_slice(&v.to_bits().to_le_bytes()),
        }
    }

    /// Binary (and string) values.
    ///
    /// # Errors
    /// When `v` is longer than Thrift's i32 length allows.
    #[inline]
    pub fn binary(&mut self, v: &[u8]) -> Result<(), String> {
        self.binary_length(v.len())?;
        self.out.extend_from_slice(v);
        Ok(())
    }

    /// The length in front of a binary value of `len` bytes (its bytes follow).
    ///
    /// # Errors
    /// When `len` is more than Thrift's i32 length allows.
    #[inline]
    pub fn binary_length(&mut self, len: usize) -> Result<(), String> {
        let len = self.length(len, "binary value")?;
        match self.protocol {
            Protocol::Binary => self.out.extend_from_slice(&len.to_be_bytes()),
            Protocol::Compact => varint::put(self.out, len as u64),
        }
        Ok(())
    }

    /// A list header of `count` elements of type `element`.
    ///
    /// # Errors
    /// When `count` is more than Thrift's i32 count allows.
    #[inline]
    pub fn list(&mut self, element: WireType, count: usize) -> Result<(), String> {
        let count = self.length(count, "list")?;
        match self.protocol {
            Protocol::Binary => {
                self.out.push(element.binary_code());
                self.out.extend_from_slice(&count.to_be_bytes());
            }
            Protocol::Compact if count <= 14 => {
                self.out.push((count as u8) << 4 | element.compact_code());
            }
            Protocol::Compact => {
                self.out.push(0xF0 | element.compact_code());
                varint::put(self.out, count as u64);
            }
        }
        Ok(())
    }

    #[inline]
    fn length(&self, len: usize, what: &str) -> Result<i32, String> {
        i32::try_from(len)
            .map_err(|_| format!("{what} of {len} items or bytes is too long for Thrift"))
    }
}

/// Where and what went wrong in a Thrift value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the decoded slice.
    pub offset: usize,
    pub message: String,
}

/// How deep [`Decoder::skip`] follows nested values of unknown fields.
pub const MAX_SKIP_DEPTH: usize = 64;

/// A field header as read: its type, id, and for a compact bool field its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldHeader {
    pub ty: WireType,
    pub id: i16,
    /// The value of a compact-protocol bool field (carried in the header).
    pub bool_value: Option<bool>,
}

/// Reads Thrift values from a slice.
pub struct Decoder<'a> {
    pub protocol: Protocol,
    bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(protocol: Protocol, bytes: &'a [u8]) -> Decoder<'a> {
        Decoder {
            protocol,
            bytes,
            pos: 0,
        }
    }

    /// An error at byte `offset`.
    #[cold]
    pub fn error_at(&self, offset: usize, message: impl Into<String>) -> DecodeError {
        DecodeError {
            offset,
            message: message.into(),
        }
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        match self.bytes.get(self.pos..self.pos.saturating_add(n)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.short(n, what)),
        }
    }

    /// The error of a value of `n` bytes cut short (out of line: the readers' fast paths stay
    /// small enough to inline).
    #[cold]
    #[inline(never)]
    fn short(&self, n: usize, what: &str) -> DecodeError {
        self.error_at(
            self.pos,
            format!("{what} of {n} bytes but {} remain", self.remaining()),
        )
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    #[inline]
    fn byte(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    #[inline]
    fn uvarint(&mut self, what: &str) -> Result<u64, DecodeError> {
        let start = self.pos;
        match varint::get(&self.bytes[self.pos..]) {
            Some((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            None => Err(self.error_at(start, format!("malformed or truncated varint ({what})"))),
        }
    }

    #[inline]
    fn signed(&mut self, bits: u32, what: &str) -> Result<i64, DecodeError> {
        let start = self.pos;
        let v = unzigzag(self.uvarint(what)?);
        if bits < 64 && (v < -(1i64 << (bits - 1)) || v >= 1i64 << (bits - 1)) {
            return Err(self.error_at(start, format!("{what} {v} out of range")));
        }
        Ok(v)
    }

    /// The next field header of the struct being read, `None` at its stop field; `last` is
    /// the previous field id of that struct (0 at its start) and becomes the id read.
    #[inline]
    pub fn field(&mut self, last: &mut i16) -> Result<Option<FieldHeader>, DecodeError> {
        match self.short_field(last) {
            Some(header) => Ok(header),
            None => self.long_field(last),
        }
    }

    /// The common headers, read inline: a stop, a binary header, a compact header with a
    /// delta; `None` for anything else, with nothing read (left to [`Decoder::long_field`]).
    #[inline(always)]
    pub(crate) fn short_field(&mut self, last: &mut i16) -> Option<Option<FieldHeader>> {
        let rest = &self.bytes[self.pos..];
        let head = *rest.first()?;
        if head == 0 {
            self.pos += 1;
            return Some(None);
        }
        let header = match self.protocol {
            Protocol::Binary => {
                let id = i16::from_be_bytes([*rest.get(1)?, *rest.get(2)?]);
                let ty = WireType::from_binary_code(head)?;
                self.pos += 3;
                FieldHeader {
                    ty,
                    id,
                    bool_value: None,
                }
            }
            Protocol::Compact => {
                let delta = head >> 4;
                if delta == 0 {
                    return None;
                }
                let code = head & 0x0F;
                let ty = WireType::from_compact_code(code)?;
                let id = last.checked_add(i16::from(delta))?;
                self.pos += 1;
                FieldHeader {
                    ty,
                    id,
                    bool_value: (ty == WireType::Bool).then_some(code == 1),
                }
            }
        };
        *last = header.id;
        Some(Some(header))
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn long_field(
        &mut self,
        last: &mut i16,
    ) -> Result<Option<FieldHeader>, DecodeError> {
        let start = self.pos;
        let head = self.byte("field header")?;
        if head == 0 {
            return Ok(None);
        }
        let header = match self.protocol {
            Protocol::Binary => {
                let ty = WireType::from_binary_code(head)
                    .ok_or_else(|| self.error_at(start, format!("unknown field type {head}")))?;
                let id = i16::from_be_bytes(self.array::<2>("field id")?);
                FieldHeader {
                    ty,
                    id,
                    bool_value: None,
                }
            }
            Protocol::Compact => {
                let code = head & 0x0F;
                let ty = WireType::from_compact_code(code)
                    .ok_or_else(|| self.error_at(start, format!("unknown field type {code}")))?;
                let id = match head >> 4 {
                    0 => self.signed(16, "field id")? as i16,
                    delta => last.checked_add(i16::from(delta)).ok_or_else(|| {
                        self.error_at(start, "field id delta past the largest id")
                    })?,
                };
                let bool_value = (ty == WireType::Bool).then_some(code == 1);
                FieldHeader { ty, id, bool_value }
            }
        };
        *last = header.id;
        Ok(Some(header))
    }

    /// A bool outside a field header (a list element).
    #[inline]
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        let start = self.pos;
        match (self.protocol, self.byte("bool")?) {
            (Protocol::Binary, 1) | (Protocol::Compact, 1) => Ok(true),
            (Protocol::Binary, 0) | (Protocol::Compact, 2) => Ok(false),
            (_, b) => Err(self.error_at(start, format!("bool byte {b} is neither true nor false"))),
        }
    }

    #[inline]
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.byte("i8")? as i8)
    }

    #[inline]
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i16::from_be_bytes(self.array::<2>("i16")?)),
            Protocol::Compact => Ok(self.signed(16, "i16")? as i16),
        }
    }

    #[inline]
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i32::from_be_bytes(self.array::<4>("i32")?)),
            Protocol::Compact => Ok(self.signed(32, "i32")? as i32),
        }
    }

    #[inline]
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i64::from_be_bytes(self.array::<8>("i64")?)),
            Protocol::Compact => self.signed(64, "i64"),
        }
    }

    #[inline]
    pub fn double(&mut self) -> Result<f64, DecodeError> {
        let bytes = self.array::<8>("double")?;
        Ok(f64::from_bits(match self.protocol {
            Protocol::Binary => u64::from_be_bytes(bytes),
            Protocol::Compact => u64::from_le_bytes(bytes),
        }))
    }

    /// A length or count, checked to be non-negative and at most the bytes that remain
    /// (each unit takes at least `unit` bytes).
    #[inline]
    fn count(&mut self, what: &str, unit: usize) -> Result<usize, DecodeError> {
        let start = self.pos;
        let count = match self.protocol {
            Protocol::Binary => i64::from(i32::from_be_bytes(self.array::<4>(what)?)),
            Protocol::Compact => {
                let v = self.uvarint(what)?;
                i64::try_from(v).unwrap_or(i64::MAX)
            }
        };
        if count < 0
            || count > i64::from(i32::MAX)
            || (count as usize).saturating_mul(unit) > self.remaining()
        {
            return Err(self.bad_count(start, what, count));
        }
        Ok(count as usize)
    }

    #[cold]
    #[inline(never)]
    fn bad_count(&self, start: usize, what: &str, count: i64) -> DecodeError {
        if count < 0 || count > i64::from(i32::MAX) {
            return self.error_at(start, format!("{what} {count} out of range"));
        }
        let message = format!("{what} {count} but only {} bytes remain", self.remaining());
        self.error_at(start, message)
    }

    /// A binary (or string) value, borrowed.
    #[inline]
    pub fn binary(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.count("binary length", 1)?;
        self.take(len, "binary value")
    }

    /// A list (or set) header: element type and count.
    #[inline]
    pub fn list(&mut self) -> Result<(WireType, usize), DecodeError> {
        let start = self.pos;
        let element = match self.protocol {
            Protocol::Binary => {
                let code = self.byte("list header")?;
                let ty = WireType::from_binary_code(code);
                let ty =
                    ty.ok_or_else(|| self.error_at(start, format!("unknown element type {code}")))?;
                let count = self.count("list count", 1)?;
                return Ok((ty, count));
            }
            Protocol::Compact => {
                let head = self.byte("list header")?;
                let code = head & 0x0F;
                let ty = WireType::from_compact_code(code);
                let ty =
                    ty.ok_or_else(|| self.error_at(start, format!("unknown element type {code}")))?;
                (ty, head >> 4)
            }
        };
        let count = match element.1 {
            15 => self.count("list count", 1)?,
            short => short as usize,
        };
        if count > self.remaining() {
            return Err(self.error_at(
                start,
                format!(
                    "list count {count} but only {} bytes remain",
                    self.remaining()
                ),
            ));
        }
        Ok((element.0, count))
    }

    /// A map header: key type, value type and count (types absent for an empty compact map).
    fn map(&mut self) -> Result<(Option<(WireType, WireType)>, usize), DecodeError> {
        let start = self.pos;
        let types = |d: &Self, k: u8, v: u8, binary: bool| {
            let convert = if binary {
                WireType::from_binary_code
            } else {
                WireType::from_compact_code
            };
            match (convert(k), convert(v)) {
                (Some(k), Some(v)) => Ok((k, v)),
                _ => Err(d.error_at(start, format!("unknown map key or value type {k}, {v}"))),
            }
        };
        match self.protocol {
            Protocol::Binary => {
                let [k, v] = self.array::<2>("map header")?;
                let kv = types(self, k, v, true)?;
                Ok((Some(kv), self.count("map count", 2)?))
            }
            Protocol::Compact => {
                let count = self.count("map count", 2)?;
                if count == 0 {
                    return Ok((None, 0));
                }
                let head = self.byte("map types")?;
                Ok((Some(types(self, head >> 4, head & 0x0F, false)?), count))
            }
        }
    }

    /// Skips a value of type `ty` (an unknown field's), nested at most [`MAX_SKIP_DEPTH`].
    pub fn skip(&mut self, header: &FieldHeader) -> Result<(), DecodeError> {
        if header.bool_value.is_some() {
            return Ok(());
        }
        self.skip_value(header.ty, 0)
    }

    fn skip_value(&mut self, ty: WireType, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_SKIP_DEPTH {
            return Err(self.error_at(
                self.pos,
                format!("values nested deeper than {MAX_SKIP_DEPTH}"),
            ));
        }
        match ty {
            WireType::Bool => self.bool().map(drop),
            WireType::I8 => self.i8().map(drop),
            WireType::I16 => self.i16().map(drop),
            WireType::I32 => self.i32().map(drop),
            WireType::I64 => self.i64().map(drop),
            WireType::Double => self.double().map(drop),
            WireType::Binary => self.binary().map(drop),
            WireType::Struct => {
                let mut last = 0;
                while let Some(field) = self.field(&mut last)? {
                    if field.bool_value.is_none() {
                        self.skip_value(field.ty, depth + 1)?;
                    }
                }
                Ok(())
            }
            WireType::List | WireType::Set => {
                let (element, count) = self.list()?;
                (0..count).try_for_each(|_| self.skip_value(element, depth + 1))
            }
            WireType::Map => {
                let (types, count) = self.map()?;
                let Some((key, value)) = types else {
                    return Ok(());
                };
                (0..count).try_for_each(|_| {
                    self.skip_value(key, depth + 1)?;
                    self.skip_value(value, depth + 1)
                })
            }
        }
    }
}
