//! Writing serde values as the schema's Thrift values (the mapping: the parent module's table).
//!
//! A value goes into a [`Slot`]: a struct's field (written with its header, or left out when
//! absent) or an element (a list item, a variant payload, the row itself). The schema, not
//! serde, decides each wire type, so a field's header is written before serde's call writes
//! the value; the wrapper structs of the mapping (`{1: T}` around a nullable `T`) are opened
//! on the way in and closed by counting their stop fields into the value written last.

use std::num::NonZeroU64;

use serde::ser::{self, Serialize};
use shapeshift_types::{check_decimal_binary, PrimitiveType, Type};

use super::plan::{fits_float, Kind, Node};
use super::{field_id, format_name};
use crate::byte_items::ByteSerializer;
use crate::serde_error::{error, SerdeError};
use crate::thrift::wire::{Encoder, Protocol, WireType};
use crate::yson::{self, YsonFormat};

/// Appends the struct of `row` (a struct type: the table's columns) holding `value` to `out`;
/// on error `out` holds what was written before it.
pub(in crate::thrift) fn to_vec_into<T: Serialize + ?Sized>(
    protocol: Protocol,
    row: &Node,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    // The protocol as a type parameter: each scalar's path holds only its own protocol's
    // code, small enough for the derived code to inline.
    let written = match protocol {
        Protocol::Binary => write::<false, T>(row, value, out),
        Protocol::Compact => write::<true, T>(row, value, out),
    };
    written.map_err(|e| e.located(format_name(protocol), None))
}

fn write<const COMPACT: bool, T: Serialize + ?Sized>(
    row: &Node,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let mut writer = Writer::<COMPACT> {
        out: std::mem::take(out),
        at: 0,
    };
    let slot = Slot::new(&mut writer, row, None, 0);
    let written = value.serialize(slot);
    *out = writer.out;
    written
}

/// Owns the buffer while it writes, in the compact protocol or the binary one.
struct Writer<const COMPACT: bool> {
    out: Vec<u8>,
    /// The open slot's field and closes ([`Slot::new`]).
    at: u64,
}

impl<const COMPACT: bool> Writer<COMPACT> {
    const PROTOCOL: Protocol = match COMPACT {
        true => Protocol::Compact,
        false => Protocol::Binary,
    };

    #[inline]
    fn enc(&mut self) -> Encoder<'_> {
        Encoder {
            protocol: Self::PROTOCOL,
            out: &mut self.out,
        }
    }

    #[inline]
    fn stops(&mut self, count: u32) {
        for _ in 0..count {
            self.out.push(0);
        }
    }
}

/// A struct's field: its id and the id of the field written before it in the same struct,
/// packed in one word with a marker bit, so `Option<Field>` is one word as well. Slots and
/// bodies pass through memory between serde's calls: two 16-bit halves stored apart and then
/// loaded as one word stalled store forwarding (perf: 40% of `serialize_str` on one load).
#[derive(Clone, Copy)]
struct Field(NonZeroU64);

impl Field {
    const MARKER: NonZeroU64 = NonZeroU64::new(1 << 32).unwrap();

    #[inline(always)]
    fn new(id: i16, prev: i16) -> Field {
        Field(Self::MARKER | u64::from(prev as u16) << 16 | u64::from(id as u16))
    }

    #[inline(always)]
    fn id(self) -> i16 {
        self.0.get() as u16 as i16
    }

    #[inline(always)]
    fn prev(self) -> i16 {
        (self.0.get() >> 16) as u16 as i16
    }
}

/// Where the next value goes (its type here; its field and how many stop fields close the
/// structs around it after it in the writer's `at`). Two words: serde passes a serializer by
/// value into every value's `serialize`, and a larger one went through memory, built by
/// word-sized stores and copied by one wide load that stalled store forwarding (as in the
/// protobuf writer). The slot holds the writer exclusively, so `at` is its own until it is
/// used.
struct Slot<'w, 't, const COMPACT: bool> {
    w: &'w mut Writer<COMPACT>,
    ty: &'t Node,
}

/// A present value's place once optionals and wrappers are resolved: `ty` is untagged and not
/// nullable, its field header is written (but for a bool field, whose compact header holds
/// the value).
struct Body<'w, 't, const COMPACT: bool> {
    w: &'w mut Writer<COMPACT>,
    ty: &'t Node,
    bool_field: Option<Field>,
    closes: u32,
}

#[cold]
fn describe(ty: &Type) -> String {
    String::from_utf8_lossy(&yson::to_vec(&ty.to_node(), YsonFormat::Text)).into_owned()
}

#[cold]
fn mismatch(what: &str, node: &Node) -> SerdeError {
    error(format!("{what} does not fit type {}", describe(&node.ty)))
}

impl<'w, 't, const COMPACT: bool> Slot<'w, 't, COMPACT> {
    /// The bits of `Writer::at` holding the field (`Field`'s word; 0 for none).
    const FIELD_BITS: u64 = (1 << 33) - 1;

    #[inline(always)]
    fn new(
        w: &'w mut Writer<COMPACT>,
        ty: &'t Node,
        field: Option<Field>,
        closes: u32,
    ) -> Slot<'w, 't, COMPACT> {
        w.at = field.map_or(0, |f| f.0.get()) | u64::from(closes) << 40;
        Slot { w, ty }
    }

    #[inline(always)]
    fn field(&self) -> Option<Field> {
        NonZeroU64::new(self.w.at & Self::FIELD_BITS).map(Field)
    }

    #[inline(always)]
    fn closes(&self) -> u32 {
        (self.w.at >> 40) as u32
    }

    /// A signed integer, checked against the column's range by the present value's `int`.
    #[inline(always)]
    fn signed(self, v: i64) -> Result<(), SerdeError> {
        self.present()?.int(v)
    }

    /// An unsigned integer, as [`Slot::signed`].
    #[inline(always)]
    fn unsigned(self, v: u64) -> Result<(), SerdeError> {
        self.present()?.uint(v)
    }

    /// The place of a present value: its field header written, optionals and wrappers
    /// resolved.
    #[inline(always)]
    fn present(self) -> Result<Body<'w, 't, COMPACT>, SerdeError> {
        // A plain type (the common case): at most its header.
        if !self.ty.nullable {
            let mut bool_field = None;
            let closes = self.closes();
            if let Some(f) = self.field() {
                match self.ty.field_wire {
                    Some(WireType::Bool) => bool_field = Some(f),
                    Some(wire) => self.w.enc().field(wire, f.id(), &mut f.prev()),
                    None => return Err(mismatch("a value", self.ty)),
                }
            }
            return Ok(Body {
                w: self.w,
                ty: self.ty,
                bool_field,
                closes,
            });
        }
        self.present_nullable()
    }

    fn present_nullable(self) -> Result<Body<'w, 't, COMPACT>, SerdeError> {
        let mut field = self.field();
        let mut closes = self.closes();
        let Slot { w, mut ty } = self;
        loop {
            match field {
                Some(f) => match &ty.kind {
                    Kind::Optional(item) if item.nullable => {
                        w.enc().field(WireType::Struct, f.id(), &mut f.prev());
                        closes += 1;
                        field = Some(Field::new(1, 0));
                        ty = item;
                    }
                    Kind::Optional(item) => ty = item,
                    Kind::Bool => {
                        return Ok(Body {
                            w,
                            ty,
                            bool_field: Some(f),
                            closes,
                        })
                    }
                    _ => {
                        let wire = ty.field_wire.ok_or_else(|| mismatch("a value", ty))?;
                        w.enc().field(wire, f.id(), &mut f.prev());
                        return Ok(Body {
                            w,
                            ty,
                            bool_field: None,
                            closes,
                        });
                    }
                },
                // A nullable element is the wrapper `{1: T}`.
                None if ty.nullable => {
                    closes += 1;
                    field = Some(Field::new(1, 0));
                }
                None => {
                    return Ok(Body {
                        w,
                        ty,
                        bool_field: None,
                        closes,
                    })
                }
            }
        }
    }

    /// `None` or unit: a left-out field, or an empty wrapper.
    fn absent(self) -> Result<(), SerdeError> {
        if !self.ty.nullable {
            return Err(mismatch("no value (None or unit)", self.ty));
        }
        if self.field().is_none() {
            self.w.out.push(0);
        }
        self.w.stops(self.closes());
        Ok(())
    }

    fn some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), SerdeError> {
        let ty = self.ty;
        let closes = self.closes();
        match (self.field(), &ty.kind) {
            (Some(f), Kind::Optional(item)) if item.nullable => {
                self.w.enc().field(WireType::Struct, f.id(), &mut f.prev());
                value.serialize(Slot::new(self.w, item, Some(Field::new(1, 0)), closes + 1))
            }
            // The item in the same field, closing as much: the writer's `at` stays as it is.
            (Some(_), Kind::Optional(item)) => value.serialize(Slot {
                w: self.w,
                ty: item,
            }),
            (None, _) if ty.nullable => {
                Slot::new(self.w, ty, Some(Field::new(1, 0)), closes + 1).some(value)
            }
            // `Some` of a value where one is required: the value.
            _ => value.serialize(self),
        }
    }
}

impl<'w, 't, const COMPACT: bool> Body<'w, 't, COMPACT> {
    #[inline(always)]
    fn done(self) -> Result<(), SerdeError> {
        self.w.stops(self.closes);
        Ok(())
    }

    #[inline(always)]
    fn int(self, v: i64) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Int { wire, range, .. } if range.holds_signed(v) => self.write_int(wire, v),
            _ => Err(mismatch(&format!("integer {v}"), self.ty)),
        }
    }

    #[inline(always)]
    fn uint(self, v: u64) -> Result<(), SerdeError> {
        match self.ty.kind {
            // uint64 travels as the bit pattern of an i64.
            Kind::Int { wire, range, .. } if range.holds_unsigned(v) => {
                self.write_int(wire, v as i64)
            }
            _ => Err(mismatch(&format!("integer {v}"), self.ty)),
        }
    }

    /// Writes an integer already checked against its type's range.
    #[inline(always)]
    fn write_int(self, wire: WireType, v: i64) -> Result<(), SerdeError> {
        let mut e = self.w.enc();
        match wire {
            WireType::I8 => e.i8(v as i8),
            WireType::I16 => e.i16(v as i16),
            WireType::I32 => e.i32(v as i32),
            _ => e.i64(v),
        }
        self.done()
    }

    #[inline(always)]
    fn float(self, v: f64) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Double { narrow } if fits_float(v, narrow) => {
                self.w.enc().double(v);
                self.done()
            }
            _ => Err(mismatch(&format!("float {v}"), self.ty)),
        }
    }

    #[inline(always)]
    fn bool(self, v: bool) -> Result<(), SerdeError> {
        match (&self.ty.kind, self.bool_field) {
            (Kind::Bool, Some(f)) => {
                self.w.enc().bool_field(f.id(), v, &mut f.prev());
            }
            (Kind::Bool, None) => self.w.enc().bool(v),
            _ => return Err(mismatch(&format!("bool {v}"), self.ty)),
        }
        self.done()
    }

    #[inline(always)]
    fn str(self, v: &str) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Binary(PrimitiveType::String | PrimitiveType::Utf8 | PrimitiveType::Json) => {}
            _ => return self.bytes(v.as_bytes()),
        }
        self.w.enc().binary(v.as_bytes()).map_err(error)?;
        self.done()
    }

    fn bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        let checked = match self.ty.kind {
            Kind::Binary(PrimitiveType::String) => Ok(()),
            Kind::Binary(PrimitiveType::Utf8 | PrimitiveType::Json) => crate::utf8::text(v)
                .map(drop)
                .map_err(|e| format!("bytes that are not UTF-8 ({e})")),
            Kind::Binary(PrimitiveType::Uuid) if v.len() == 16 => Ok(()),
            Kind::Binary(PrimitiveType::Uuid) => Err(format!("{} bytes for a uuid of 16", v.len())),
            Kind::Binary(_) => {
                // Written as binary YSON, as `encode` writes a yson value.
                let node = yson::from_slice(v).map_err(|e| {
                    error(format!(
                        "bytes that are not YSON ({e}) for type {}",
                        describe(&self.ty.ty)
                    ))
                })?;
                self.w
                    .enc()
                    .binary(&yson::to_vec(&node, YsonFormat::Binary))
                    .map_err(error)?;
                return self.done();
            }
            Kind::Decimal { precision, scale } => {
                check_decimal_binary(v, precision, scale).map_err(|e| e.to_string())
            }
            _ => return Err(mismatch(&format!("{} bytes", v.len()), self.ty)),
        };
        checked.map_err(|what| error(format!("{what} for type {}", describe(&self.ty.ty))))?;
        self.w.enc().binary(v).map_err(error)?;
        self.done()
    }

    /// The payload slot of variant `index` of a variant type: the union's field
    /// `index + 1` (a nullable alternative in its wrapper), closed by the union's stop.
    fn variant(self, index: u32) -> Result<Slot<'w, 't, COMPACT>, SerdeError> {
        let Kind::Variant { alternatives } = &self.ty.kind else {
            return Err(mismatch(&format!("variant {index} of an enum"), self.ty));
        };
        let Some(alt) = alternatives.get(index as usize) else {
            return Err(error(format!(
                "variant {index} of an enum, but type {} has {} alternatives",
                describe(&self.ty.ty),
                alternatives.len()
            )));
        };
        let id = field_id(index as usize)?;
        let closes = self.closes + 1;
        if alt.nullable {
            self.w.enc().field(WireType::Struct, id, &mut 0);
            return Ok(Slot::new(self.w, alt, None, closes));
        }
        Ok(Slot::new(self.w, alt, Some(Field::new(id, 0)), closes))
    }

    /// A list, a byte string spelled as a sequence, a struct, or a dict, for serde's `shape`.
    /// A struct (the common case) is opened inline, so that the derived code keeps the
    /// `Compound` in registers: returned through memory, its reload stalled on store
    /// forwarding (perf: half of mesh's `Vector3::serialize`); the rest out of line.
    #[inline(always)]
    fn compound(
        self,
        len: Option<usize>,
        shape: Shape,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        match (shape, &self.ty.kind) {
            (Shape::Seq | Shape::Struct, Kind::Struct { members, names }) => Ok(Compound {
                w: self.w,
                kind: Compose::Struct {
                    members,
                    names,
                    next: 0,
                    last: 0,
                },
                closes: self.closes,
            }),
            _ => self.compound_in_general(len, shape),
        }
    }

    #[inline(never)]
    fn compound_in_general(
        self,
        len: Option<usize>,
        shape: Shape,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        let kind = match (shape, &self.ty.kind) {
            (Shape::Seq, Kind::List(item)) => match len {
                Some(n) => {
                    self.w.enc().list(item.element_wire, n).map_err(error)?;
                    Compose::List {
                        item,
                        header: Header::Written(n),
                        count: 0,
                    }
                }
                None => Compose::List {
                    item,
                    header: Header::Pending(self.w.out.len()),
                    count: 0,
                },
            },
            (Shape::Seq, Kind::Binary(PrimitiveType::String)) => match len {
                Some(n) => {
                    self.w.enc().binary_length(n).map_err(error)?;
                    Compose::Bytes {
                        header: Header::Written(n),
                        count: 0,
                    }
                }
                None => Compose::Bytes {
                    header: Header::Pending(self.w.out.len()),
                    count: 0,
                },
            },
            (Shape::Map, Kind::Dict { key, value }) => match len {
                Some(n) => {
                    self.w.enc().list(WireType::Struct, n).map_err(error)?;
                    Compose::Dict {
                        key,
                        value,
                        header: Header::Written(n),
                        count: 0,
                        key_written: false,
                    }
                }
                None => Compose::Dict {
                    key,
                    value,
                    header: Header::Pending(self.w.out.len()),
                    count: 0,
                    key_written: false,
                },
            },
            (shape, _) => return Err(mismatch(shape.name(), self.ty)),
        };
        Ok(Compound {
            w: self.w,
            kind,
            closes: self.closes,
        })
    }
}

/// serde's compound shapes.
#[derive(Clone, Copy)]
enum Shape {
    /// seq, tuple, tuple struct (a struct when the type is one).
    Seq,
    Struct,
    Map,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Seq => "a sequence",
            Shape::Struct => "a struct",
            Shape::Map => "a map",
        }
    }
}

/// A list's or byte string's header: written with its count, or to be put in front of the
/// items at the end (serde did not give the count).
#[derive(Clone, Copy)]
#[repr(u64)]
enum Header {
    Written(usize),
    Pending(usize),
}

/// Word-sized tags and fields (`repr(u64)`, `last` an `i64`): a compound is copied through
/// memory between serde's calls, and a byte tag or an `i16` next to it was copied by loads
/// straddling the stores that wrote them, which stalled store forwarding (perf: a sixth of
/// mk48's `Guidance::serialize` on one such load).
#[repr(u64)]
enum Compose<'t> {
    List {
        item: &'t Node,
        header: Header,
        count: usize,
    },
    Bytes {
        header: Header,
        count: usize,
    },
    Struct {
        members: &'t [Node],
        names: &'t [String],
        next: usize,
        last: i64,
    },
    Dict {
        key: &'t Node,
        value: &'t Node,
        header: Header,
        count: usize,
        key_written: bool,
    },
}

/// A compound value being written.
struct Compound<'w, 't, const COMPACT: bool> {
    w: &'w mut Writer<COMPACT>,
    kind: Compose<'t>,
    closes: u32,
}

impl<const COMPACT: bool> Compound<'_, '_, COMPACT> {
    /// A struct's next member (the common case) inline in the caller; the rest out of line.
    #[inline(always)]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        if let Compose::Struct {
            members,
            names,
            next,
            last,
        } = &mut self.kind
        {
            if let Some(member) = members.get(*next) {
                let id = field_id(*next)?;
                // The id written last matters to compact's delta headers only; binary's
                // headers hold the id itself, so its path does not track it.
                let before = self.w.out.len();
                value
                    .serialize(Slot::new(
                        self.w,
                        member,
                        Some(Field::new(id, if COMPACT { *last as i16 } else { 0 })),
                        0,
                    ))
                    .map_err(|e| e.in_member(&names[*next]))?;
                if COMPACT && self.w.out.len() != before {
                    *last = i64::from(id);
                }
                *next += 1;
                return Ok(());
            }
        }
        self.element_in_general(value)
    }

    #[inline(never)]
    fn element_in_general<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        match &mut self.kind {
            Compose::List { item, count, .. } => {
                *count += 1;
                value.serialize(Slot::new(self.w, item, None, 0))
            }
            Compose::Bytes { count, .. } => {
                *count += 1;
                let byte = value.serialize(ByteSerializer)?;
                self.w.out.push(byte);
                Ok(())
            }
            // Past the last member (a member in place is written by `element`).
            Compose::Struct { members, .. } => Err(error(format!(
                "more than the {} members of the struct",
                members.len()
            ))),
            Compose::Dict { .. } => Err(error("a sequence's element in a dict")),
        }
    }

    fn skip(&mut self, key: &'static str) -> Result<(), SerdeError> {
        let Compose::Struct { members, next, .. } = &mut self.kind else {
            return Err(error(format!("field {key} skipped outside a struct")));
        };
        match members.get(*next) {
            Some(m) if m.nullable => {
                *next += 1;
                Ok(())
            }
            _ => Err(error(format!(
                "field {key} skipped, but member {} is required",
                *next + 1
            ))),
        }
    }

    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        let Compose::Dict {
            key: key_ty,
            key_written,
            count,
            ..
        } = &mut self.kind
        else {
            return Err(error("a map's key outside a dict"));
        };
        *count += 1;
        let before = self.w.out.len();
        key.serialize(Slot::new(self.w, key_ty, Some(Field::new(1, 0)), 0))
            .map_err(|e| e.in_member("key"))?;
        *key_written = self.w.out.len() != before;
        Ok(())
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let Compose::Dict {
            value: value_ty,
            key_written,
            ..
        } = &mut self.kind
        else {
            return Err(error("a map's value outside a dict"));
        };
        let prev = i16::from(*key_written);
        value
            .serialize(Slot::new(self.w, value_ty, Some(Field::new(2, prev)), 0))
            .map_err(|e| e.in_member("value"))?;
        self.w.out.push(0);
        Ok(())
    }

    /// The common ends (a struct with all its members, a list whose count was written; no
    /// wrappers to close) inline in the caller, so its `Compound` stays in registers; the
    /// rest out of line.
    #[inline(always)]
    fn end(self) -> Result<(), SerdeError> {
        if self.closes == 0 {
            match self.kind {
                Compose::Struct { members, next, .. } if next == members.len() => {
                    self.w.out.push(0);
                    return Ok(());
                }
                Compose::List {
                    header: Header::Written(n),
                    count,
                    ..
                } if n == count => return Ok(()),
                _ => {}
            }
        }
        self.end_in_general()
    }

    #[inline(never)]
    fn end_in_general(self) -> Result<(), SerdeError> {
        let w = self.w;
        match self.kind {
            Compose::List {
                item,
                header,
                count,
            } => {
                let wire = item.element_wire;
                end_header(w, header, count, |e, n| e.list(wire, n))?;
            }
            Compose::Bytes { header, count } => {
                end_header(w, header, count, |e, n| e.binary_length(n))?;
            }
            Compose::Dict { header, count, .. } => {
                end_header(w, header, count, |e, n| e.list(WireType::Struct, n))?;
            }
            Compose::Struct { members, next, .. } => {
                if next != members.len() {
                    return Err(error(format!(
                        "{next} members for a struct of {}",
                        members.len()
                    )));
                }
                w.out.push(0);
            }
        }
        w.stops(self.closes);
        Ok(())
    }
}

/// Checks a written header's count, or puts the pending header in front of the items.
fn end_header<const COMPACT: bool>(
    w: &mut Writer<COMPACT>,
    header: Header,
    count: usize,
    write: impl Fn(&mut Encoder<'_>, usize) -> Result<(), String>,
) -> Result<(), SerdeError> {
    match header {
        Header::Written(n) if n == count => Ok(()),
        Header::Written(n) => Err(error(format!("{count} items after a length of {n}"))),
        Header::Pending(at) => {
            let mut head = Vec::new();
            write(
                &mut Encoder {
                    protocol: Writer::<COMPACT>::PROTOCOL,
                    out: &mut head,
                },
                count,
            )
            .map_err(error)?;
            w.out.splice(at..at, head);
            Ok(())
        }
    }
}

impl<'w, 't, const COMPACT: bool> ser::Serializer for Slot<'w, 't, COMPACT> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'w, 't, COMPACT>;
    type SerializeTuple = Compound<'w, 't, COMPACT>;
    type SerializeTupleStruct = Compound<'w, 't, COMPACT>;
    type SerializeTupleVariant = Compound<'w, 't, COMPACT>;
    type SerializeMap = Compound<'w, 't, COMPACT>;
    type SerializeStruct = Compound<'w, 't, COMPACT>;
    type SerializeStructVariant = Compound<'w, 't, COMPACT>;

    fn is_human_readable(&self) -> bool {
        false
    }

    // The scalars' and compounds' methods are `#[inline]`: without it a non-generic trait
    // method stays a call from the program's derived code in another crate.
    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), SerdeError> {
        self.present()?.bool(v)
    }

    crate::scalar_range::integers_through!(signed, unsigned, #[inline]);

    #[inline]
    fn serialize_f32(self, v: f32) -> Result<(), SerdeError> {
        self.present()?.float(v.into())
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result<(), SerdeError> {
        self.present()?.float(v)
    }

    fn serialize_char(self, v: char) -> Result<(), SerdeError> {
        self.present()?.str(v.encode_utf8(&mut [0; 4]))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), SerdeError> {
        self.present()?.str(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        self.present()?.bytes(v)
    }

    #[inline]
    fn serialize_none(self) -> Result<(), SerdeError> {
        self.absent()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), SerdeError> {
        self.some(value)
    }

    fn serialize_unit(self) -> Result<(), SerdeError> {
        self.absent()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), SerdeError> {
        self.absent()
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
    ) -> Result<(), SerdeError> {
        let body = self.present()?;
        match body.ty.kind {
            Kind::Int { .. } => body.uint(index.into()),
            _ => body.variant(index)?.absent(),
        }
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), SerdeError> {
        value.serialize(self.present()?.variant(index)?)
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        self.present()?.compound(len, Shape::Seq)
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        self.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        self.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        let payload = self.present()?.variant(index)?;
        payload.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        self.present()?.compound(len, Shape::Map)
    }

    #[inline(always)]
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        self.present()?.compound(Some(len), Shape::Struct)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't, COMPACT>, SerdeError> {
        let payload = self.present()?.variant(index)?;
        payload.present()?.compound(Some(len), Shape::Struct)
    }
}

macro_rules! compound_impl {
    ($trait:ident, $method:ident $(, $key:ident)?) => {
        impl<const COMPACT: bool> ser::$trait for Compound<'_, '_, COMPACT> {
            type Ok = ();
            type Error = SerdeError;

            #[inline(always)]
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($key: &'static str,)?
                value: &T,
            ) -> Result<(), SerdeError> {
                self.element(value)
            }

            #[inline(always)]
            fn end(self) -> Result<(), SerdeError> {
                Compound::end(self)
            }
        }
    };
}

compound_impl!(SerializeSeq, serialize_element);
compound_impl!(SerializeTuple, serialize_element);
compound_impl!(SerializeTupleStruct, serialize_field);
compound_impl!(SerializeTupleVariant, serialize_field);

/// Struct fields: positional, and a skipped one is left out (when it may be).
macro_rules! struct_impl {
    ($trait:ident) => {
        impl<const COMPACT: bool> ser::$trait for Compound<'_, '_, COMPACT> {
            type Ok = ();
            type Error = SerdeError;

            #[inline]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> Result<(), SerdeError> {
                self.element(value)
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), SerdeError> {
                self.skip(key)
            }

            #[inline]
            fn end(self) -> Result<(), SerdeError> {
                Compound::end(self)
            }
        }
    };
}

struct_impl!(SerializeStruct);
struct_impl!(SerializeStructVariant);

impl<const COMPACT: bool> ser::SerializeMap for Compound<'_, '_, COMPACT> {
    type Ok = ();
    type Error = SerdeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.value(value)
    }

    #[inline]
    fn end(self) -> Result<(), SerdeError> {
        Compound::end(self)
    }
}
