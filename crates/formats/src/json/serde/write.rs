//! The serializer: serde's calls written as the row's JSON, guided by the plan at each place.
//! Each call must fit the plan it meets (the error names both); the bytes are those
//! [`encode_row`](crate::json::encode_row) writes for the same data as a row.

use serde::ser::{self, Serialize};
use shapeshift_types::check_decimal_binary;

use super::describe;
use super::plan::{fits_float, BytesCheck, Kind, Member, Plan};
use crate::byte_items::ByteSerializer;
use crate::json::{
    write_bytes, write_double, write_escaped, write_float, write_i64, write_node, write_u64, PLAIN,
};
use crate::serde_error::{error, SerdeError};
use crate::yson;

type Result<T> = std::result::Result<T, SerdeError>;

/// One place of the row being written: the buffer and the plan of the value that goes there.
pub(super) struct Slot<'o, 'p> {
    pub out: &'o mut Vec<u8>,
    pub plan: &'p Plan,
}

#[cold]
fn mismatch(what: &str, plan: &Plan) -> SerdeError {
    error(format!("{what} does not fit {}", describe(plan)))
}

impl<'o, 'p> Slot<'o, 'p> {
    /// The plan a present value is written by: an `optional<T>` takes a plain value of `T`
    /// (in `[..]` when `T` is nullable; the count of brackets to close is returned).
    #[inline]
    fn present(self) -> (Slot<'o, 'p>, u32) {
        let mut slot = self;
        let mut closes = 0;
        while let Kind::Optional { item, wrapped } = &slot.plan.kind {
            if *wrapped {
                slot.out.push(b'[');
                closes += 1;
            }
            slot.plan = item;
        }
        (slot, closes)
    }

    /// The kind a present value meets (through optionals), without writing.
    #[inline]
    fn present_kind(&self) -> &'p Kind {
        let mut plan = self.plan;
        while let Kind::Optional { item, .. } = &plan.kind {
            plan = item;
        }
        &plan.kind
    }

    #[inline]
    fn close(out: &mut Vec<u8>, closes: u32) {
        for _ in 0..closes {
            out.push(b']');
        }
    }

    #[inline]
    fn null(self, what: &str) -> Result<()> {
        if !self.plan.nullable {
            return Err(mismatch(what, self.plan));
        }
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    /// Writes a present scalar with `write`, which says whether the plan it meets takes it.
    #[inline]
    fn scalar(self, write: impl FnOnce(&mut Vec<u8>, &Kind) -> Fit) -> Result<()> {
        let (slot, closes) = self.present();
        match write(slot.out, &slot.plan.kind) {
            Fit::Written => {}
            Fit::Outside(v) => {
                return Err(error(format!("{v} is outside {}", describe(slot.plan))));
            }
            Fit::Mismatch(what) => return Err(mismatch(&what, slot.plan)),
        }
        Self::close(slot.out, closes);
        Ok(())
    }

    /// The common case of each scalar (the plan's own kind, no optional around it, the value
    /// in range) inline in the program's derived code; the rest out of line. Both write
    /// through the scalar's one `put_*` rule.
    #[inline]
    fn int(self, v: i64) -> Result<()> {
        if put_int(self.out, &self.plan.kind, v) {
            return Ok(());
        }
        self.int_in_general(v)
    }

    #[inline(never)]
    fn int_in_general(self, v: i64) -> Result<()> {
        self.scalar(|out, kind| match kind {
            _ if put_int(out, kind, v) => Fit::Written,
            Kind::Int(_) => Fit::Outside(v.to_string()),
            _ => Fit::Mismatch(format!("the integer {v}")),
        })
    }

    #[inline]
    fn uint(self, v: u64) -> Result<()> {
        if put_uint(self.out, &self.plan.kind, v) {
            return Ok(());
        }
        self.uint_in_general(v)
    }

    #[inline(never)]
    fn uint_in_general(self, v: u64) -> Result<()> {
        self.scalar(|out, kind| match kind {
            _ if put_uint(out, kind, v) => Fit::Written,
            Kind::Int(_) => Fit::Outside(v.to_string()),
            _ => Fit::Mismatch(format!("the integer {v}")),
        })
    }

    #[inline]
    fn float(self, v: f64) -> Result<()> {
        if put_float(self.out, &self.plan.kind, v) {
            return Ok(());
        }
        self.float_in_general(v)
    }

    #[inline(never)]
    fn float_in_general(self, v: f64) -> Result<()> {
        self.scalar(|out, kind| match kind {
            _ if put_float(out, kind, v) => Fit::Written,
            Kind::Double { .. } => Fit::Outside(v.to_string()),
            _ => Fit::Mismatch(format!("the number {v}")),
        })
    }

    #[inline]
    fn bool(self, v: bool) -> Result<()> {
        if put_bool(self.out, &self.plan.kind, v) {
            return Ok(());
        }
        self.bool_in_general(v)
    }

    #[inline(never)]
    fn bool_in_general(self, v: bool) -> Result<()> {
        self.scalar(|out, kind| {
            if put_bool(out, kind, v) {
                Fit::Written
            } else {
                Fit::Mismatch(format!("the bool {v}"))
            }
        })
    }

    #[inline]
    fn str(self, v: &str) -> Result<()> {
        let (slot, closes) = self.present();
        match slot.plan.kind {
            // A str is UTF-8 already.
            Kind::Bytes(BytesCheck::Any | BytesCheck::Utf8) => write_bytes(slot.out, v.as_bytes()),
            _ => return slot.bytes_present(v.as_bytes(), closes),
        }
        Self::close(slot.out, closes);
        Ok(())
    }

    #[inline]
    fn bytes(self, v: &[u8]) -> Result<()> {
        let (slot, closes) = self.present();
        slot.bytes_present(v, closes)
    }

    #[inline]
    fn bytes_present(self, v: &[u8], closes: u32) -> Result<()> {
        let checked = match self.plan.kind {
            Kind::Bytes(BytesCheck::Any) => Ok(()),
            Kind::Bytes(BytesCheck::Utf8) => crate::utf8::text(v)
                .map(drop)
                .map_err(|e| format!("bytes that are not UTF-8 ({e})")),
            Kind::Bytes(BytesCheck::Uuid) if v.len() == 16 => Ok(()),
            Kind::Bytes(BytesCheck::Uuid) => Err(format!("{} bytes for a uuid of 16", v.len())),
            Kind::Bytes(BytesCheck::Decimal { precision, scale }) => {
                check_decimal_binary(v, precision, scale).map_err(|e| e.to_string())
            }
            Kind::Yson => {
                // A YSON node (binary or text), written as JSON as `encode_row` writes it.
                let node = yson::from_slice(v).map_err(|e| {
                    error(format!("bytes that are not YSON ({e}) for a yson column"))
                })?;
                write_node(self.out, &node);
                Self::close(self.out, closes);
                return Ok(());
            }
            _ => return Err(mismatch(&format!("{} bytes", v.len()), self.plan)),
        };
        checked.map_err(|what| error(format!("{what} for {}", describe(self.plan))))?;
        write_bytes(self.out, v);
        Self::close(self.out, closes);
        Ok(())
    }

    /// A unit variant: its index into an integer column, its name into a string one, the
    /// alternative holding `null` in a variant.
    #[inline]
    fn unit_variant(self, index: u32, name: &str) -> Result<()> {
        if let Kind::Variant { .. } = self.present_kind() {
            let (slot, closes) = self.variant(index, name)?;
            Slot {
                out: &mut *slot.out,
                plan: slot.plan,
            }
            .null(name)?;
            Self::close(slot.out, closes);
            return Ok(());
        }
        let (slot, closes) = self.present();
        match slot.plan.kind {
            Kind::Int(range) if range.holds_unsigned(index.into()) => {
                write_u64(slot.out, index.into());
            }
            Kind::Bytes(BytesCheck::Any | BytesCheck::Utf8) => {
                write_bytes(slot.out, name.as_bytes());
            }
            _ => {
                return Err(mismatch(
                    &format!("the unit variant {name} ({index})"),
                    slot.plan,
                ))
            }
        }
        Self::close(slot.out, closes);
        Ok(())
    }

    /// `[name or index,` of variant `index`, and the slot of its value.
    #[inline]
    fn variant(self, index: u32, what: &str) -> Result<(Slot<'o, 'p>, u32)> {
        let (slot, closes) = self.present();
        let Kind::Variant {
            alternatives,
            names,
        } = &slot.plan.kind
        else {
            return Err(mismatch(what, slot.plan));
        };
        let Some(plan) = alternatives.get(index as usize) else {
            return Err(error(format!(
                "variant {index} of an enum for {} (alternatives 0..{})",
                describe(slot.plan),
                alternatives.len()
            )));
        };
        slot.out.push(b'[');
        match names {
            Some(names) => slot.out.extend_from_slice(&names[index as usize].0),
            None => write_u64(slot.out, u64::from(index)),
        }
        slot.out.push(b',');
        Ok((
            Slot {
                out: slot.out,
                plan,
            },
            closes + 1,
        ))
    }

    /// A struct or list opens inline (as `compound_closing` opens them); the rest out of line.
    #[inline]
    fn compound(self, len: Option<usize>, what: &'static str) -> Result<Compound<'o, 'p>> {
        let (compose, open) = match &self.plan.kind {
            Kind::Struct(members) => (Compose::Struct(members), b'{'),
            Kind::List(item) => (Compose::List(item), b'['),
            _ => return self.compound_closing(len, what, 0),
        };
        self.out.push(open);
        Ok(Compound {
            out: self.out,
            plan: self.plan,
            compose,
            count: 0,
            closes: 0,
        })
    }

    #[inline(never)]
    fn compound_closing(
        self,
        len: Option<usize>,
        what: &'static str,
        closes: u32,
    ) -> Result<Compound<'o, 'p>> {
        let (slot, more) = self.present();
        let closes = closes + more;
        let (compose, open) = match &slot.plan.kind {
            Kind::List(item) => (Compose::List(item), b'['),
            Kind::Tuple(elements) => (Compose::Tuple(elements), b'['),
            Kind::Struct(members) => (Compose::Struct(members), b'{'),
            Kind::Dict { key, value } if what == "a map" => (Compose::Dict { key, value }, b'['),
            Kind::Bytes(BytesCheck::Any) if what != "a map" => {
                // Any bytes fit: each item is written as it comes.
                slot.out.push(b'"');
                (Compose::Escaped, b'"')
            }
            Kind::Bytes(_) | Kind::Yson if what != "a map" => {
                let start = slot.out.len();
                return Ok(Compound {
                    out: slot.out,
                    plan: slot.plan,
                    compose: Compose::Bytes { start },
                    count: 0,
                    closes,
                });
            }
            _ => return Err(mismatch(what, slot.plan)),
        };
        if let (Some(len), Compose::Tuple(elements)) = (len, &compose) {
            if len != elements.len() {
                return Err(error(format!(
                    "{what} of {len} values for {}",
                    describe(slot.plan)
                )));
            }
        }
        // A struct's announced length leaves out its skipped fields: its count is checked
        // at the end, where skipped fields count.
        if open != b'"' {
            slot.out.push(open);
        }
        Ok(Compound {
            out: slot.out,
            plan: slot.plan,
            compose,
            count: 0,
            closes,
        })
    }
}

/// Writes `v` when `kind` takes it (in range); false, with nothing written, otherwise.
#[inline(always)]
fn put_int(out: &mut Vec<u8>, kind: &Kind, v: i64) -> bool {
    let fits = matches!(kind, Kind::Int(range) if range.holds_signed(v));
    if fits {
        write_i64(out, v);
    }
    fits
}

/// As [`put_int`], for an unsigned value.
#[inline(always)]
fn put_uint(out: &mut Vec<u8>, kind: &Kind, v: u64) -> bool {
    let fits = matches!(kind, Kind::Int(range) if range.holds_unsigned(v));
    if fits {
        write_u64(out, v);
    }
    fits
}

/// As [`put_int`]: a `float` column takes finite values in f32's range, written as the f32
/// nearest them; a `double` column takes any.
#[inline(always)]
fn put_float(out: &mut Vec<u8>, kind: &Kind, v: f64) -> bool {
    match *kind {
        Kind::Double { narrow: true } if fits_float(v, true) => write_float(out, v as f32),
        Kind::Double { narrow: false } => write_double(out, v),
        _ => return false,
    }
    true
}

/// As [`put_int`], for a bool.
#[inline(always)]
fn put_bool(out: &mut Vec<u8>, kind: &Kind, v: bool) -> bool {
    let fits = matches!(kind, Kind::Bool);
    if fits {
        out.extend_from_slice(if v { b"true" } else { b"false" });
    }
    fits
}

/// Whether a scalar fit the plan it met.
enum Fit {
    Written,
    /// The kind fits, the value is outside the type (the value as text).
    Outside(String),
    /// The kind does not fit (what was given).
    Mismatch(String),
}

/// What a compound value is being written as.
enum Compose<'p> {
    List(&'p Plan),
    Tuple(&'p [Plan]),
    /// Positional: field `i` is member `i`, written under the member's key.
    Struct(&'p [Member]),
    Dict {
        key: &'p Plan,
        value: &'p Plan,
    },
    /// A seq of `u8` into a checked bytes column, gathered raw at the end of the buffer
    /// from `start`, then checked and written as bytes. (Gathered there, not in a `Vec` of
    /// its own, so a `Compound` owns nothing to drop: its hot paths stay in registers.)
    Bytes {
        start: usize,
    },
    /// A seq of `u8` into a `string` column, each byte written as it comes.
    Escaped,
}

pub(super) struct Compound<'o, 'p> {
    out: &'o mut Vec<u8>,
    plan: &'p Plan,
    compose: Compose<'p>,
    count: usize,
    closes: u32,
}

impl Compound<'_, '_> {
    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let index = self.count;
        self.count += 1;
        let plan = match &mut self.compose {
            Compose::List(item) => *item,
            Compose::Tuple(elements) => elements.get(index).ok_or_else(|| {
                error(format!(
                    "more than {} values for {}",
                    elements.len(),
                    describe(self.plan)
                ))
            })?,
            Compose::Struct(members) => {
                let member = members.get(index).ok_or_else(|| {
                    error(format!(
                        "more than {} fields for {}",
                        members.len(),
                        describe(self.plan)
                    ))
                })?;
                if index > 0 {
                    self.out.push(b',');
                }
                member.write_key(self.out);
                return value
                    .serialize(Slot {
                        out: self.out,
                        plan: &member.plan,
                    })
                    .map_err(|e| e.in_member(&member.name));
            }
            Compose::Bytes { .. } => {
                let b = value.serialize(ByteSerializer)?;
                self.out.push(b);
                return Ok(());
            }
            Compose::Escaped => {
                let b = value.serialize(ByteSerializer)?;
                if PLAIN[usize::from(b)] {
                    self.out.push(b);
                } else {
                    write_escaped(self.out, b);
                }
                return Ok(());
            }
            Compose::Dict { .. } => return Err(mismatch("a sequence", self.plan)),
        };
        if index > 0 {
            self.out.push(b',');
        }
        value.serialize(Slot {
            out: self.out,
            plan,
        })
    }

    /// A field left out by `skip_serializing_if`: `null` when its member is nullable (what
    /// the field's absence reads as), refused otherwise.
    #[inline]
    fn skip(&mut self, key: &'static str) -> Result<()> {
        let index = self.count;
        match &self.compose {
            Compose::Struct(members) if members.get(index).is_some_and(|m| m.plan.nullable) => {
                self.element(&())
            }
            _ => Err(error(format!(
                "the field {key} was skipped, but {} needs a value there",
                describe(self.plan)
            ))),
        }
    }

    #[inline]
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        let Compose::Dict { key: plan, .. } = self.compose else {
            return Err(mismatch("a map", self.plan));
        };
        if self.count > 0 {
            self.out.push(b',');
        }
        self.count += 1;
        self.out.push(b'[');
        key.serialize(Slot {
            out: self.out,
            plan,
        })?;
        self.out.push(b',');
        Ok(())
    }

    #[inline]
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let Compose::Dict { value: plan, .. } = self.compose else {
            return Err(mismatch("a map", self.plan));
        };
        value.serialize(Slot {
            out: self.out,
            plan,
        })?;
        self.out.push(b']');
        Ok(())
    }

    /// The common ends (a struct or tuple with all its fields, a list, bytes written as they
    /// came; no optional brackets to close) inline in the caller, the rest out of line.
    #[inline]
    fn end(self) -> Result<()> {
        if self.closes == 0 {
            match self.compose {
                Compose::Struct(members) if self.count == members.len() => {
                    self.out.push(b'}');
                    return Ok(());
                }
                Compose::Tuple(elements) if self.count == elements.len() => {
                    self.out.push(b']');
                    return Ok(());
                }
                Compose::List(_) => {
                    self.out.push(b']');
                    return Ok(());
                }
                Compose::Escaped => {
                    self.out.push(b'"');
                    return Ok(());
                }
                _ => {}
            }
        }
        self.end_in_general()
    }

    #[inline(never)]
    fn end_in_general(self) -> Result<()> {
        let Compound {
            out,
            plan,
            compose,
            count,
            closes,
        } = self;
        let close = match compose {
            Compose::Bytes { start } => {
                let gathered = out[start..].to_vec();
                out.truncate(start);
                return Slot { out, plan }.bytes_present(&gathered, closes);
            }
            Compose::List(_) | Compose::Dict { .. } => b']',
            Compose::Escaped => b'"',
            Compose::Tuple(elements) if count == elements.len() => b']',
            Compose::Struct(members) if count == members.len() => b'}',
            Compose::Tuple(_) | Compose::Struct(_) => {
                return Err(error(format!("{count} values for {}", describe(plan))));
            }
        };
        out.push(close);
        Slot::close(out, closes);
        Ok(())
    }
}

/// Serializer methods that widen their value losslessly to the one the plan is written from.
macro_rules! widen {
    ($($method:ident($ty:ty) => $to:ident),* $(,)?) => {$(
        #[inline]
        fn $method(self, v: $ty) -> Result<()> {
            self.$to(v.into())
        }
    )*};
}

impl<'o, 'p> ser::Serializer for Slot<'o, 'p> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'o, 'p>;
    type SerializeTuple = Compound<'o, 'p>;
    type SerializeTupleStruct = Compound<'o, 'p>;
    type SerializeTupleVariant = Compound<'o, 'p>;
    type SerializeMap = Compound<'o, 'p>;
    type SerializeStruct = Compound<'o, 'p>;
    type SerializeStructVariant = Compound<'o, 'p>;

    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        self.bool(v)
    }

    widen!(
        serialize_i8(i8) => int,
        serialize_i16(i16) => int,
        serialize_i32(i32) => int,
        serialize_u8(u8) => uint,
        serialize_u16(u16) => uint,
        serialize_u32(u32) => uint,
        serialize_f32(f32) => float
    );

    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.int(v)
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.int(v),
            (_, Ok(v)) => self.uint(v),
            _ => Err(mismatch(&format!("the integer {v}"), self.plan)),
        }
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.uint(v)
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(v) => self.uint(v),
            Err(_) => Err(mismatch(&format!("the integer {v}"), self.plan)),
        }
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        self.float(v)
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        self.str(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.bytes(v)
    }

    fn serialize_none(self) -> Result<()> {
        self.null("None")
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        match &self.plan.kind {
            Kind::Optional { item, wrapped } => {
                if *wrapped {
                    self.out.push(b'[');
                }
                value.serialize(Slot {
                    out: self.out,
                    plan: item,
                })?;
                if *wrapped {
                    self.out.push(b']');
                }
                Ok(())
            }
            _ => value.serialize(self),
        }
    }

    fn serialize_unit(self) -> Result<()> {
        self.null("()")
    }

    fn serialize_unit_struct(self, name: &'static str) -> Result<()> {
        self.null(name)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.unit_variant(index, variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        let (slot, closes) = self.variant(index, variant)?;
        value.serialize(Slot {
            out: &mut *slot.out,
            plan: slot.plan,
        })?;
        Slot::close(slot.out, closes);
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'o, 'p>> {
        self.compound(len, "a sequence")
    }

    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'o, 'p>> {
        self.compound(Some(len), "a tuple")
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'o, 'p>> {
        self.compound(Some(len), "a tuple struct")
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'o, 'p>> {
        let (slot, closes) = self.variant(index, variant)?;
        slot.compound_closing(Some(len), "a tuple variant", closes)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'o, 'p>> {
        self.compound(len, "a map")
    }

    #[inline]
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'o, 'p>> {
        self.compound(Some(len), "a struct")
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'o, 'p>> {
        let (slot, closes) = self.variant(index, variant)?;
        slot.compound_closing(Some(len), "a struct variant", closes)
    }
}

macro_rules! seq_impl {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = SerdeError;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }

            #[inline]
            fn end(self) -> Result<()> {
                Compound::end(self)
            }
        }
    )*};
}

seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = SerdeError;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> Result<()> {
                self.element(value)
            }

            fn skip_field(&mut self, key: &'static str) -> Result<()> {
                self.skip(key)
            }

            #[inline]
            fn end(self) -> Result<()> {
                Compound::end(self)
            }
        }
    )*};
}

struct_impl!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = SerdeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.value(value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}
