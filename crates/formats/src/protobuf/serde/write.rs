//! Writing serde values as the schema's protobuf message (the mapping: the parent module's
//! table).
//!
//! A value goes into a [`Slot`]: the row message itself, a field of a message (tag, then the
//! value; a proto3 default left out unless `always`), or an item of a packed run (the value
//! alone). The schema, not serde, decides each wire type. Length-delimited bodies get a
//! one-byte length placeholder that `end_len` fills in (moving the body once when it reaches
//! 128 bytes), as the dynamic writer does, so the bytes are its bytes. Wrappers opened for a
//! value that serde writes through a compound (a `SerializeSeq` returned to the caller) are
//! kept on the writer's stack of open bodies and closed by the value's `end`.

use serde::ser::{self, Serialize};
use shapeshift_types::{check_decimal_binary, PrimitiveType, Type};

use super::format_name;
use super::plan::{fits_float, Kind, Node};
use crate::byte_items::ByteSerializer;
use crate::protobuf::wire::{
    begin_len, end_len, put_array, put_tag, put_varint, FIXED32, FIXED64, LEN, VARINT,
};
use crate::serde_error::{error, SerdeError};
use crate::yson::{self, YsonFormat};

/// Appends the message of `row` (a struct type: the table's columns) holding `value` to
/// `out`; on error `out` holds what was written before it.
pub(in crate::protobuf) fn to_vec_into<T: Serialize + ?Sized>(
    row: &Node,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let mut writer = Writer {
        out: std::mem::take(out),
        opens: Vec::new(),
        at: 0,
    };
    let slot = Slot::new(&mut writer, row, Place::ROW, 0);
    let written = value.serialize(slot);
    *out = writer.out;
    written.map_err(|e| e.located(format_name(), None))
}

/// Owns the buffer while it writes.
struct Writer {
    out: Vec<u8>,
    /// Bodies of wrappers and variants still open (where each body starts), innermost last.
    opens: Vec<usize>,
    /// The open slot's place and closes ([`Slot::new`]): kept here so that a slot is two
    /// words, passed in registers.
    at: u64,
}

impl Writer {
    #[inline]
    fn open(&mut self, field: u32) {
        let start = begin_len(&mut self.out, field);
        self.opens.push(start);
    }

    #[inline]
    fn close(&mut self, count: u32) {
        for _ in 0..count {
            if let Some(start) = self.opens.pop() {
                end_len(&mut self.out, start);
            }
        }
    }
}

/// Where a value is written: the row message (members only, no tag or length), an item of
/// a packed run (the value alone), or a field `number` of a message, where a scalar holding
/// proto3's default is left out unless `always` (presence matters: an optional's item, a
/// list element, a variant alternative). One word (`number << 2 | always << 1`; a field's
/// number is at least 1): slots pass through memory between serde's calls, and a place
/// stored as parts and loaded whole would stall store forwarding.
#[derive(Clone, Copy, PartialEq)]
struct Place(u64);

impl Place {
    const ROW: Place = Place(0);
    const PACKED: Place = Place(1);

    #[inline(always)]
    fn of_field(number: u32, always: bool) -> Place {
        Place(u64::from(number) << 2 | u64::from(always) << 1)
    }

    /// The field's number and `always`; `None` for the row and a packed item.
    #[inline(always)]
    fn field(self) -> Option<(u32, bool)> {
        (self.0 >= 4).then_some(((self.0 >> 2) as u32, self.0 & 2 != 0))
    }
}

/// Where the next value goes (its type here, its place and how many open bodies close after
/// it in the writer's `at`). Two words: serde passes a serializer by value into every value's
/// `serialize`, and a larger one went through memory, built by word-sized stores and copied
/// by one wide load that stalled store forwarding (perf: a quarter of a Python object walk).
/// The slot holds the writer exclusively, so `at` is its own until it is used.
struct Slot<'w, 't> {
    w: &'w mut Writer,
    ty: &'t Node,
}

/// A present value's place once optionals are resolved: `ty` is untagged, not optional.
struct Body<'w, 't> {
    w: &'w mut Writer,
    ty: &'t Node,
    place: Place,
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

impl<'w, 't> Slot<'w, 't> {
    #[inline(always)]
    fn new(w: &'w mut Writer, ty: &'t Node, place: Place, closes: u32) -> Slot<'w, 't> {
        // A field's number fits 29 bits: the place takes the low half.
        w.at = place.0 | u64::from(closes) << 32;
        Slot { w, ty }
    }

    #[inline(always)]
    fn place(&self) -> Place {
        Place(self.w.at & 0xffff_ffff)
    }

    #[inline(always)]
    fn closes(&self) -> u32 {
        (self.w.at >> 32) as u32
    }

    /// The one-byte tag of a field numbered below 16 with nothing to close after it (the
    /// common case, written inline by the caller); `None` sends the value the general way.
    #[inline(always)]
    fn short_tag(&self, wire: u8) -> Option<u8> {
        match self.place().field() {
            Some((number, _)) if number < 16 && self.closes() == 0 => {
                Some((number as u8) << 3 | wire)
            }
            _ => None,
        }
    }

    /// A signed integer: inline when it is a field numbered below 16 or a packed item, in
    /// its type's range.
    #[inline(always)]
    fn signed(mut self, v: i64) -> Result<(), SerdeError> {
        if let Kind::Int { range, .. } = self.ty.kind {
            if range.holds_signed(v) && self.short_varint(v as u64) {
                return Ok(());
            }
        }
        self.signed_in_general(v)
    }

    /// An unsigned integer, as [`Slot::signed`].
    #[inline(always)]
    fn unsigned(mut self, v: u64) -> Result<(), SerdeError> {
        if let Kind::Int { range, .. } = self.ty.kind {
            if range.holds_unsigned(v) && self.short_varint(v) {
                return Ok(());
            }
        }
        self.unsigned_in_general(v)
    }

    /// Writes varint `v` when the slot is a field numbered below 16 (after its one-byte
    /// tag; proto3's default, 0 or false, left out unless `always`) or a packed item (the
    /// value alone); `false`, with nothing written, for any other slot.
    #[inline(always)]
    fn short_varint(&mut self, v: u64) -> bool {
        let Some(tag) = self.short_tag(VARINT) else {
            if self.place() == Place::PACKED {
                put_varint(&mut self.w.out, v);
                return true;
            }
            return false;
        };
        let always = matches!(self.place().field(), Some((_, true)));
        if v != 0 || always {
            let out = &mut self.w.out;
            if v < 0x80 {
                put_array(out, [tag, v as u8]);
            } else {
                out.push(tag);
                put_varint(out, v);
            }
        }
        true
    }

    #[inline(never)]
    fn bool_in_general(self, v: bool) -> Result<(), SerdeError> {
        self.present()?.bool(v)
    }

    #[inline(never)]
    fn signed_in_general(self, v: i64) -> Result<(), SerdeError> {
        self.present()?.int(v)
    }

    #[inline(never)]
    fn unsigned_in_general(self, v: u64) -> Result<(), SerdeError> {
        self.present()?.uint(v)
    }

    #[inline(never)]
    fn f32_in_general(self, v: f32) -> Result<(), SerdeError> {
        self.present()?.float(v.into())
    }

    #[inline(never)]
    fn f64_in_general(self, v: f64) -> Result<(), SerdeError> {
        self.present()?.float(v)
    }

    #[inline(never)]
    fn str_in_general(self, v: &str) -> Result<(), SerdeError> {
        self.present()?.str(v)
    }

    #[inline(never)]
    fn struct_in_general(self) -> Result<Fields<'w, 't>, SerdeError> {
        self.present()?.fields()
    }

    /// The place of a present value: the optionals around it resolved (their wrappers
    /// opened).
    #[inline(always)]
    fn present(self) -> Result<Body<'w, 't>, SerdeError> {
        let mut place = self.place();
        let mut closes = self.closes();
        let Slot { w, mut ty } = self;
        while let Kind::Optional(item) = &ty.kind {
            let Some((number, _)) = place.field() else {
                return Err(mismatch("a value", ty));
            };
            place = if item.may_be_empty {
                w.open(number);
                closes += 1;
                Place::of_field(1, false)
            } else {
                Place::of_field(number, true)
            };
            ty = item;
        }
        Ok(Body {
            w,
            ty,
            place,
            closes,
        })
    }

    /// `None` or unit: nothing written.
    fn absent(self) -> Result<(), SerdeError> {
        if !self.ty.nullable {
            return Err(mismatch("no value (None or unit)", self.ty));
        }
        self.w.close(self.closes());
        Ok(())
    }

    /// `Some` the general way (`serialize_some` writes an optional of a non-empty item
    /// inline): an item that may be empty goes in its wrapper; anything else is written as
    /// the value itself, whose `present` resolves an optional where there is one.
    #[inline(never)]
    fn some_in_general<T: Serialize + ?Sized>(self, value: &T) -> Result<(), SerdeError> {
        match (&self.ty.kind, self.place().field()) {
            (Kind::Optional(item), Some((number, _))) if item.may_be_empty => {
                self.w.open(number);
                let closes = self.closes() + 1;
                value.serialize(Slot::new(self.w, item, Place::of_field(1, false), closes))
            }
            _ => value.serialize(self),
        }
    }
}

impl<'w, 't> Body<'w, 't> {
    #[inline(always)]
    fn done(self) -> Result<(), SerdeError> {
        if self.closes > 0 {
            self.w.close(self.closes);
        }
        Ok(())
    }

    /// The tag of a scalar field, `false` when the default is left out (or the place is no
    /// field: a packed item).
    #[inline(always)]
    fn tag(&mut self, wire: u8, default: bool) -> Result<bool, SerdeError> {
        match self.place.field() {
            Some((number, always)) => {
                if default && !always {
                    return Ok(false);
                }
                put_tag(&mut self.w.out, number, wire);
                Ok(true)
            }
            None if self.place == Place::PACKED => Ok(true),
            None => Err(mismatch("a scalar as the row", self.ty)),
        }
    }

    #[inline(always)]
    fn int(self, v: i64) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Int { range, .. } if range.holds_signed(v) => self.varint(v as u64),
            _ => Err(mismatch(&format!("integer {v}"), self.ty)),
        }
    }

    #[inline(always)]
    fn uint(self, v: u64) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Int { range, .. } if range.holds_unsigned(v) => self.varint(v),
            _ => Err(mismatch(&format!("integer {v}"), self.ty)),
        }
    }

    #[inline(always)]
    fn varint(mut self, v: u64) -> Result<(), SerdeError> {
        if self.tag(VARINT, v == 0)? {
            put_varint(&mut self.w.out, v);
        }
        self.done()
    }

    #[inline(always)]
    fn float(mut self, v: f64) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Float { narrow: true } if fits_float(v, true) => {
                // Floats are written even when zero (so -0.0 survives), as the dynamic writer does.
                self.tag(FIXED32, false)?;
                self.w.out.extend_from_slice(&(v as f32).to_le_bytes());
            }
            Kind::Float { narrow: false } => {
                self.tag(FIXED64, false)?;
                self.w.out.extend_from_slice(&v.to_le_bytes());
            }
            _ => return Err(mismatch(&format!("float {v}"), self.ty)),
        }
        self.done()
    }

    #[inline(always)]
    fn bool(mut self, v: bool) -> Result<(), SerdeError> {
        if !matches!(self.ty.kind, Kind::Bool) {
            return Err(mismatch(&format!("bool {v}"), self.ty));
        }
        if self.tag(VARINT, !v)? {
            self.w.out.push(u8::from(v));
        }
        self.done()
    }

    /// A `bytes` field of `v`, left out when empty unless `always`.
    #[inline(always)]
    fn put_bytes(mut self, v: &[u8]) -> Result<(), SerdeError> {
        if self.tag(LEN, v.is_empty())? {
            put_varint(&mut self.w.out, v.len() as u64);
            self.w.out.extend_from_slice(v);
        }
        self.done()
    }

    #[inline(always)]
    fn str(self, v: &str) -> Result<(), SerdeError> {
        match self.ty.kind {
            Kind::Bytes(PrimitiveType::String | PrimitiveType::Utf8 | PrimitiveType::Json) => {
                self.put_bytes(v.as_bytes())
            }
            _ => self.bytes(v.as_bytes()),
        }
    }

    fn bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        let checked = match self.ty.kind {
            Kind::Bytes(PrimitiveType::String) => Ok(()),
            Kind::Bytes(PrimitiveType::Utf8 | PrimitiveType::Json) => crate::utf8::text(v)
                .map(drop)
                .map_err(|e| format!("bytes that are not UTF-8 ({e})")),
            Kind::Bytes(PrimitiveType::Uuid) if v.len() == 16 => Ok(()),
            Kind::Bytes(_) => Err(format!("{} bytes for a uuid of 16", v.len())),
            Kind::Yson => {
                // Written as binary YSON (always: a yson field has no default to leave out).
                let node = yson::from_slice(v).map_err(|e| {
                    error(format!(
                        "bytes that are not YSON ({e}) for type {}",
                        describe(&self.ty.ty)
                    ))
                })?;
                let Some((number, _)) = self.place.field() else {
                    return Err(mismatch("a yson value here", self.ty));
                };
                let start = begin_len(&mut self.w.out, number);
                // Writing into a Vec cannot fail.
                let _ = yson::write_node(&mut self.w.out, &node, YsonFormat::Binary);
                end_len(&mut self.w.out, start);
                return self.done();
            }
            Kind::Decimal { precision, scale } => {
                check_decimal_binary(v, precision, scale).map_err(|e| e.to_string())
            }
            _ => return Err(mismatch(&format!("{} bytes", v.len()), self.ty)),
        };
        checked.map_err(|what| error(format!("{what} for type {}", describe(&self.ty.ty))))?;
        self.put_bytes(v)
    }

    /// The payload slot of variant `index`: the variant's message (open until the payload
    /// ends), in it the alternative's field `index + 1` (in its wrapper when it may be empty).
    fn variant(self, index: u32) -> Result<Slot<'w, 't>, SerdeError> {
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
        let Some((number, _)) = self.place.field() else {
            return Err(mismatch("a variant here", self.ty));
        };
        self.w.open(number);
        let mut closes = self.closes + 1;
        let place = if alt.may_be_empty {
            self.w.open(index + 1);
            closes += 1;
            Place::of_field(1, false)
        } else {
            Place::of_field(index + 1, true)
        };
        Ok(Slot::new(self.w, alt, place, closes))
    }

    /// A struct's fields: a nested message (the row's members when it is the row).
    #[inline(always)]
    fn fields(self) -> Result<Fields<'w, 't>, SerdeError> {
        if !matches!(self.ty.kind, Kind::Message { .. }) {
            return Err(mismatch("a struct", self.ty));
        }
        let body = match self.place.field() {
            Some((number, _)) => begin_len(&mut self.w.out, number),
            None if self.place == Place::ROW => Fields::ROW,
            None => return Err(mismatch("a struct in a packed run", self.ty)),
        };
        Ok(Fields {
            w: self.w,
            message: self.ty,
            next: 0,
            body,
            closes: self.closes,
        })
    }

    /// A list, a byte string spelled as a sequence, a tuple, or a dict, for serde's `shape`.
    /// A tuple in a field numbered below 16 and a list of repeated fields (the common cases)
    /// are opened inline, so that the derived code keeps the `Compound` in registers; the
    /// rest out of line.
    #[inline(always)]
    fn compound(self, len: Option<usize>, shape: Shape) -> Result<Compound<'w, 't>, SerdeError> {
        let kind = match (shape, &self.ty.kind, self.place.field()) {
            (Shape::Seq, Kind::Message { members, names }, Some((number, _))) if number < 16 => {
                // The tag and a one-byte length placeholder (`Compound::end`).
                put_array(&mut self.w.out, [(number as u8) << 3 | LEN, 0]);
                Compose::Message {
                    members,
                    names,
                    next: 0,
                    body: Some(self.w.out.len()),
                }
            }
            (Shape::Seq, Kind::List { item, packed: None }, Some((number, _))) => Compose::List {
                item,
                number,
                run: None,
                count: 0,
            },
            _ => return self.compound_in_general(len, shape),
        };
        Ok(Compound {
            w: self.w,
            kind,
            closes: self.closes,
        })
    }

    #[inline(never)]
    fn compound_in_general(
        self,
        len: Option<usize>,
        shape: Shape,
    ) -> Result<Compound<'w, 't>, SerdeError> {
        let field = self.place.field();
        let out = &mut self.w.out;
        let kind = match (shape, &self.ty.kind, field) {
            (Shape::Seq, Kind::List { item, packed }, Some((number, _))) => {
                let run = match (*packed, len) {
                    (None, _) => None,
                    (Some(_), Some(0)) => Some(Run::Written(0)),
                    // Fixed-width items: the run's length is known up front.
                    (Some(width @ 1..), Some(n)) => {
                        put_tag(out, number, LEN);
                        put_varint(out, (n * width) as u64);
                        out.reserve(n * width);
                        Some(Run::Written(n))
                    }
                    (Some(_), _) => {
                        let tag_at = out.len();
                        Some(Run::Pending {
                            tag_at,
                            body: begin_len(out, number),
                        })
                    }
                };
                Compose::List {
                    item,
                    number,
                    run,
                    count: 0,
                }
            }
            (Shape::Seq, Kind::Bytes(PrimitiveType::String), Some((number, always))) => {
                let tag_at = out.len();
                Compose::Bytes {
                    tag_at,
                    body: begin_len(out, number),
                    always,
                }
            }
            (Shape::Seq, Kind::Message { members, names }, field) => Compose::Message {
                members,
                names,
                next: 0,
                body: field.map(|(number, _)| begin_len(out, number)),
            },
            (Shape::Map, Kind::Dict { key, value }, Some((number, _))) => Compose::Dict {
                key,
                value,
                number,
                entry: 0,
            },
            (shape, _, _) => return Err(mismatch(shape.name(), self.ty)),
        };
        Ok(Compound {
            w: self.w,
            kind,
            closes: self.closes,
        })
    }
}

/// serde's compound shapes but structs (which have their own writer, [`Fields`]).
#[derive(Clone, Copy)]
enum Shape {
    /// seq, tuple, tuple struct (a struct when the type is one).
    Seq,
    Map,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Seq => "a sequence",
            Shape::Map => "a map",
        }
    }
}

/// A packed run's header: written with its item count, or a length placeholder after the
/// tag (removed again when no item comes).
#[derive(Clone, Copy)]
enum Run {
    Written(usize),
    Pending { tag_at: usize, body: usize },
}

enum Compose<'t> {
    /// `run` for packed items; repeated fields `number` otherwise.
    List {
        item: &'t Node,
        number: u32,
        run: Option<Run>,
        count: usize,
    },
    Bytes {
        tag_at: usize,
        body: usize,
        always: bool,
    },
    /// `body`: where a nested message's body starts (`None` for the row).
    Message {
        members: &'t [Node],
        names: &'t [String],
        next: usize,
        body: Option<usize>,
    },
    /// `entry`: where the open entry's body starts.
    Dict {
        key: &'t Node,
        value: &'t Node,
        number: u32,
        entry: usize,
    },
}

/// A compound value being written.
struct Compound<'w, 't> {
    w: &'w mut Writer,
    kind: Compose<'t>,
    closes: u32,
}

impl Compound<'_, '_> {
    /// A packed item or a tuple's next member (the common cases) inline in the caller; the
    /// rest out of line.
    #[inline(always)]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        match &mut self.kind {
            Compose::List {
                item,
                run: Some(_),
                count,
                ..
            } => {
                *count += 1;
                value.serialize(Slot::new(self.w, item, Place::PACKED, 0))
            }
            Compose::List {
                item,
                number,
                run: None,
                count,
            } if !item.may_be_empty => {
                // A repeated field's item: a field of its own each, written even when default.
                *count += 1;
                value.serialize(Slot::new(self.w, item, Place::of_field(*number, true), 0))
            }
            Compose::Message {
                members,
                names,
                next,
                ..
            } if *next < members.len() => {
                *next += 1;
                value
                    .serialize(Slot::new(
                        self.w,
                        &members[*next - 1],
                        Place::of_field(*next as u32, false),
                        0,
                    ))
                    .map_err(|e| e.in_member(&names[*next - 1]))
            }
            _ => self.element_in_general(value),
        }
    }

    #[inline(never)]
    fn element_in_general<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        match &mut self.kind {
            Compose::List {
                item,
                number,
                run,
                count,
            } => {
                *count += 1;
                if run.is_some() {
                    return value.serialize(Slot::new(self.w, item, Place::PACKED, 0));
                }
                if !item.may_be_empty {
                    return value.serialize(Slot::new(
                        self.w,
                        item,
                        Place::of_field(*number, true),
                        0,
                    ));
                }
                self.w.open(*number);
                value.serialize(Slot::new(self.w, item, Place::of_field(1, false), 1))
            }
            Compose::Bytes { .. } => {
                let byte = value.serialize(ByteSerializer)?;
                self.w.out.push(byte);
                Ok(())
            }
            Compose::Message {
                members,
                names,
                next,
                ..
            } => {
                let Some(member) = members.get(*next) else {
                    return Err(error(format!(
                        "more than the {} members of the struct",
                        members.len()
                    )));
                };
                *next += 1;
                value
                    .serialize(Slot::new(
                        self.w,
                        member,
                        Place::of_field(*next as u32, false),
                        0,
                    ))
                    .map_err(|e| e.in_member(&names[*next - 1]))
            }
            Compose::Dict { .. } => Err(error("a sequence's element in a dict")),
        }
    }

    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        let Compose::Dict {
            key: key_ty,
            number,
            entry,
            ..
        } = &mut self.kind
        else {
            return Err(error("a map's key outside a dict"));
        };
        *entry = begin_len(&mut self.w.out, *number);
        key.serialize(Slot::new(self.w, key_ty, Place::of_field(1, false), 0))
            .map_err(|e| e.in_member("key"))
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let Compose::Dict {
            value: value_ty,
            entry,
            ..
        } = &mut self.kind
        else {
            return Err(error("a map's value outside a dict"));
        };
        let entry = *entry;
        value
            .serialize(Slot::new(self.w, value_ty, Place::of_field(2, false), 0))
            .map_err(|e| e.in_member("value"))?;
        end_len(&mut self.w.out, entry);
        Ok(())
    }

    /// The common ends (a packed run or a list whose count is known, a tuple of fewer than
    /// 128 bytes; nothing else to close) inline in the caller, so its `Compound` stays in
    /// registers; the rest out of line.
    #[inline(always)]
    fn end(self) -> Result<(), SerdeError> {
        if self.closes == 0 {
            match self.kind {
                Compose::List {
                    run: Some(Run::Written(n)),
                    count,
                    ..
                } if n == count => return Ok(()),
                Compose::List { run: None, .. } => return Ok(()),
                Compose::Message {
                    members,
                    next,
                    body: Some(body),
                    ..
                } if next == members.len() => {
                    let len = self.w.out.len() - body;
                    if len < 0x80 {
                        self.w.out[body - 1] = len as u8;
                        return Ok(());
                    }
                }
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
                run: Some(Run::Written(n)),
                count,
                ..
            } if n != count => {
                return Err(error(format!("{count} items after a length of {n}")));
            }
            Compose::List {
                run: Some(Run::Pending { tag_at, body }),
                count,
                ..
            } => match count {
                0 => w.out.truncate(tag_at),
                _ => end_len(&mut w.out, body),
            },
            Compose::List { .. } => {}
            Compose::Bytes {
                tag_at,
                body,
                always,
            } => match (w.out.len() == body, always) {
                (true, false) => w.out.truncate(tag_at),
                _ => end_len(&mut w.out, body),
            },
            Compose::Message {
                members,
                next,
                body,
                ..
            } => {
                if next != members.len() {
                    return Err(error(format!(
                        "{next} members for a struct of {}",
                        members.len()
                    )));
                }
                if let Some(body) = body {
                    end_len(&mut w.out, body);
                }
            }
            Compose::Dict { .. } => {}
        }
        w.close(self.closes);
        Ok(())
    }
}

impl<'w, 't> ser::Serializer for Slot<'w, 't> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'w, 't>;
    type SerializeTuple = Compound<'w, 't>;
    type SerializeTupleStruct = Compound<'w, 't>;
    type SerializeTupleVariant = Compound<'w, 't>;
    type SerializeMap = Compound<'w, 't>;
    type SerializeStruct = Fields<'w, 't>;
    type SerializeStructVariant = Fields<'w, 't>;

    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline(always)]
    fn serialize_bool(mut self, v: bool) -> Result<(), SerdeError> {
        if let Kind::Bool = self.ty.kind {
            if self.short_varint(u64::from(v)) {
                return Ok(());
            }
        }
        self.bool_in_general(v)
    }

    crate::scalar_range::integers_through!(signed, unsigned, #[inline(always)]);

    #[inline(always)]
    fn serialize_f32(self, v: f32) -> Result<(), SerdeError> {
        if let Kind::Float { narrow: true } = self.ty.kind {
            if let Some(tag) = self.short_tag(FIXED32) {
                // Every f32 is a `float` value: no range to check.
                let [a, b, c, d] = v.to_le_bytes();
                put_array(&mut self.w.out, [tag, a, b, c, d]);
                return Ok(());
            }
        }
        self.f32_in_general(v)
    }

    #[inline(always)]
    fn serialize_f64(self, v: f64) -> Result<(), SerdeError> {
        if let Kind::Float { narrow: false } = self.ty.kind {
            if let Some(tag) = self.short_tag(FIXED64) {
                let [a, b, c, d, e, f, g, h] = v.to_le_bytes();
                put_array(&mut self.w.out, [tag, a, b, c, d, e, f, g, h]);
                return Ok(());
            }
        }
        self.f64_in_general(v)
    }

    fn serialize_char(self, v: char) -> Result<(), SerdeError> {
        self.present()?.str(v.encode_utf8(&mut [0; 4]))
    }

    /// A text field numbered below 16 of fewer than 128 bytes (the common case) inline; the
    /// rest out of line.
    #[inline(always)]
    fn serialize_str(self, v: &str) -> Result<(), SerdeError> {
        if let Kind::Bytes(PrimitiveType::String | PrimitiveType::Utf8 | PrimitiveType::Json) =
            self.ty.kind
        {
            if let (Some(tag), true) = (self.short_tag(LEN), v.len() < 0x80) {
                // proto3's default, the empty string, is left out unless `always`.
                if !v.is_empty() || matches!(self.place().field(), Some((_, true))) {
                    put_array(&mut self.w.out, [tag, v.len() as u8]);
                    self.w.out.extend_from_slice(v.as_bytes());
                }
                return Ok(());
            }
        }
        self.str_in_general(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerdeError> {
        self.present()?.bytes(v)
    }

    fn serialize_none(self) -> Result<(), SerdeError> {
        self.absent()
    }

    /// An optional field whose item cannot be empty (the common case) inline: the item in the
    /// field itself, written even when it is the default.
    #[inline(always)]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), SerdeError> {
        if let (Kind::Optional(item), Some((number, _))) = (&self.ty.kind, self.place().field()) {
            if !item.may_be_empty {
                let closes = self.closes();
                return value.serialize(Slot::new(
                    self.w,
                    item,
                    Place::of_field(number, true),
                    closes,
                ));
            }
        }
        self.some_in_general(value)
    }

    fn serialize_unit(self) -> Result<(), SerdeError> {
        self.absent()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), SerdeError> {
        self.absent()
    }

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

    #[inline(always)]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 't>, SerdeError> {
        self.present()?.compound(len, Shape::Seq)
    }

    #[inline(always)]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 't>, SerdeError> {
        self.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't>, SerdeError> {
        self.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 't>, SerdeError> {
        let payload = self.present()?.variant(index)?;
        payload.present()?.compound(Some(len), Shape::Seq)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'w, 't>, SerdeError> {
        self.present()?.compound(len, Shape::Map)
    }

    // Inlined, as the fields' writer it returns: a writer returned through memory and
    // copied whole stalled store forwarding (perf: a quarter of a nested struct's write).
    #[inline(always)]
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Fields<'w, 't>, SerdeError> {
        let _ = len;
        if let Kind::Message { .. } = self.ty.kind {
            if let Some(tag) = self.short_tag(LEN) {
                // The nested message's tag and a one-byte length placeholder (`Fields::end`).
                put_array(&mut self.w.out, [tag, 0]);
                return Ok(Fields {
                    body: self.w.out.len(),
                    w: self.w,
                    message: self.ty,
                    next: 0,
                    closes: 0,
                });
            }
        }
        self.struct_in_general()
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Fields<'w, 't>, SerdeError> {
        let _ = len;
        let payload = self.present()?.variant(index)?;
        payload.present()?.fields()
    }
}

macro_rules! compound_impl {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = SerdeError;

            #[inline(always)]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
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

/// A struct's fields being written: member `i` is field `i + 1` (a type of its own, not a
/// [`Compound`]: a derived struct's fields are the hot path, with no shape to match).
/// A struct's fields as they are written. Four words: the fields pass through memory between
/// serde's calls, and a larger value was copied whole before every `end`.
struct Fields<'w, 't> {
    w: &'w mut Writer,
    /// The struct's node (`Kind::Message`).
    message: &'t Node,
    /// Where the nested message's body starts; `Fields::ROW` for the row itself.
    body: usize,
    /// Members written so far.
    next: u32,
    closes: u32,
}

impl<'t> Fields<'_, 't> {
    /// The row's `body`: a nested message's body follows its tag and length, so never at 0.
    const ROW: usize = 0;

    #[inline(always)]
    fn members(&self) -> &'t [Node] {
        match &self.message.kind {
            Kind::Message { members, .. } => members,
            _ => &[],
        }
    }

    #[cold]
    fn name(&self, index: usize) -> &'t str {
        match &self.message.kind {
            Kind::Message { names, .. } => &names[index],
            _ => "",
        }
    }

    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let Some(member) = self.members().get(self.next as usize) else {
            return Err(error(format!(
                "more than the {} members of the struct",
                self.members().len()
            )));
        };
        self.next += 1;
        let written = value.serialize(Slot::new(
            self.w,
            member,
            Place::of_field(self.next, false),
            0,
        ));
        written.map_err(|e| e.in_member(self.name(self.next as usize - 1)))
    }

    /// A skipped field is left out, when its member may be.
    fn skip(&mut self, key: &'static str) -> Result<(), SerdeError> {
        match self.members().get(self.next as usize) {
            Some(m) if m.nullable => {
                self.next += 1;
                Ok(())
            }
            _ => Err(error(format!(
                "field {key} skipped, but member {} is required",
                self.next + 1
            ))),
        }
    }

    /// Closes the message: its length filled in (inline when it is a nested message of
    /// fewer than 128 bytes with nothing else to close).
    #[inline(always)]
    fn end(self) -> Result<(), SerdeError> {
        let members = self.members().len();
        if self.body != Fields::ROW && self.closes == 0 && self.next as usize == members {
            let len = self.w.out.len() - self.body;
            if len < 0x80 {
                self.w.out[self.body - 1] = len as u8;
                return Ok(());
            }
        }
        end_fields(self.w, self.next as usize, members, self.body, self.closes)
    }
}

/// `Fields::end` the general way. Its parts arrive as values: a call taking the fields
/// themselves kept them in memory on the inline path too, copied whole before every end.
#[inline(never)]
fn end_fields(
    w: &mut Writer,
    written: usize,
    members: usize,
    body: usize,
    closes: u32,
) -> Result<(), SerdeError> {
    if written != members {
        return Err(error(format!(
            "{written} members for a struct of {members}"
        )));
    }
    if body != Fields::ROW {
        end_len(&mut w.out, body);
    }
    w.close(closes);
    Ok(())
}

macro_rules! struct_impl {
    ($trait:ident) => {
        impl ser::$trait for Fields<'_, '_> {
            type Ok = ();
            type Error = SerdeError;

            #[inline(always)]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> Result<(), SerdeError> {
                self.field(value)
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), SerdeError> {
                self.skip(key)
            }

            #[inline(always)]
            fn end(self) -> Result<(), SerdeError> {
                Fields::end(self)
            }
        }
    };
}

struct_impl!(SerializeStruct);
struct_impl!(SerializeStructVariant);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = SerdeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.value(value)
    }

    fn end(self) -> Result<(), SerdeError> {
        Compound::end(self)
    }
}
