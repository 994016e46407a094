//! Writing serde values by the plan (the mapping: the parent module's table). Nothing is
//! allocated but the output: counts serde does not announce are put in front of the items
//! once known (a rotation of the bytes written since).

use ::serde::ser::{self, Serialize};

use super::bytes::{finish_bytes, insert_long, prefixed};
use super::{in_field, mismatch, STRING};
use crate::avro::codec::{put_bytes, put_long, IntRange, Plan};
use crate::byte_items::ByteSerializer;
use crate::serde_error::{error, SerdeError};

type Result<T> = std::result::Result<T, SerdeError>;

/// Writes one value with `plan`.
pub(super) struct Serializer<'a> {
    plan: &'a Plan,
    out: &'a mut Vec<u8>,
}

/// A seq, tuple, map or struct being written.
pub(super) struct Compound<'a> {
    out: &'a mut Vec<u8>,
    kind: Kind<'a>,
    /// Items (fields, entries, bytes) written so far.
    count: usize,
    /// Where the items start (after the count, when it was written first).
    start: usize,
    /// The count serde announced and that was written in front, if any.
    announced: Option<usize>,
}

enum Kind<'a> {
    Record(&'a [Plan]),
    Array(&'a Plan),
    /// `bytes`/`string`/`fixed`/`decimal`/`yson` from a seq of `u8`.
    Bytes(&'a Plan),
    Map {
        key: &'a Plan,
        value: &'a Plan,
    },
    /// A struct into a `map`: its field names are the keys.
    NamedMap(&'a Plan),
}

#[cold]
fn out_of_range(v: impl std::fmt::Display, range: &IntRange) -> SerdeError {
    error(format!(
        "{v} is out of range for {} ({}..={})",
        range.ty.name(),
        range.min,
        range.max
    ))
}

impl<'a> Serializer<'a> {
    pub(super) fn new(plan: &'a Plan, out: &'a mut Vec<u8>) -> Serializer<'a> {
        Serializer { plan, out }
    }

    /// A plain value meets an optional column as present: branch 1 of each optional layer.
    #[inline]
    fn present(mut self) -> Self {
        while let Plan::Optional { item, .. } = self.plan {
            self.out.push(2);
            self.plan = &**item;
        }
        self
    }

    #[inline]
    fn signed(self, v: i64) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Int { range, .. } | Plan::Long { range, .. } => {
                if v < range.min || (v > 0 && v as u64 > range.max) {
                    return Err(out_of_range(v, range));
                }
                put_long(s.out, v);
                Ok(())
            }
            plan => Err(mismatch("an integer", plan)),
        }
    }

    #[inline]
    fn unsigned(self, v: u64) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Int { range, .. } | Plan::Long { range, .. } => {
                if v > range.max {
                    return Err(out_of_range(v, range));
                }
                // `uint64` as its bit pattern; every other range is within `i64`.
                put_long(s.out, v as i64);
                Ok(())
            }
            plan => Err(mismatch("an integer", plan)),
        }
    }

    #[inline]
    fn compound(self, kind: Kind<'a>, announced: Option<usize>) -> Compound<'a> {
        let start = self.out.len();
        Compound {
            out: self.out,
            kind,
            count: 0,
            start,
            announced,
        }
    }

    /// A seq, tuple or array of `len` items (when known) into the plan.
    fn sequence(self, len: Option<usize>) -> Result<Compound<'a>> {
        let s = self.present();
        match s.plan {
            Plan::Array(item) => {
                if let Some(n) = len.filter(|&n| n > 0) {
                    put_long(s.out, n as i64);
                }
                Ok(s.compound(Kind::Array(item), len))
            }
            Plan::Record(fields) => match len {
                Some(n) if n != fields.len() => Err(error(format!(
                    "{n} items into a record of {} fields",
                    fields.len()
                ))),
                _ => Ok(s.compound(Kind::Record(fields), None)),
            },
            plan @ (Plan::Bytes
            | Plan::String
            | Plan::Yson
            | Plan::Fixed(_)
            | Plan::Decimal { .. }) => {
                let announced = len.filter(|_| prefixed(plan));
                if let Some(n) = announced {
                    put_long(s.out, n as i64);
                }
                Ok(s.compound(Kind::Bytes(plan), announced))
            }
            plan => Err(mismatch("a sequence", plan)),
        }
    }

    /// Writes the union branch of variant `index` and returns the alternative's writer.
    fn alternative(self, index: u32, variant: &str) -> Result<Serializer<'a>> {
        let s = self.present();
        match s.plan {
            Plan::Variant(alternatives) => match alternatives.get(index as usize) {
                Some(plan) => {
                    put_long(s.out, i64::from(index));
                    Ok(Serializer { plan, out: s.out })
                }
                None => Err(error(format!(
                    "variant {variant} (index {index}) into a variant of {} alternatives",
                    alternatives.len()
                ))),
            },
            plan => Err(mismatch(&format!("variant {variant}"), plan)),
        }
    }
}

impl<'a> ser::Serializer for Serializer<'a> {
    type Ok = ();
    type Error = SerdeError;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn is_human_readable(&self) -> bool {
        false
    }

    // Every method is `#[inline]`: without it a non-generic trait method stays a call from
    // the program's derived code in another crate (Avro writing of rust_serialization_
    // benchmark's mesh: five calls per `Vector3`).

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Bool => {
                s.out.push(u8::from(v));
                Ok(())
            }
            plan => Err(mismatch("a bool", plan)),
        }
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.signed(v.into())
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.signed(v.into())
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.signed(v.into())
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.signed(v)
    }
    #[inline]
    fn serialize_i128(self, v: i128) -> Result<()> {
        match i64::try_from(v) {
            Ok(v) => self.signed(v),
            Err(_) => match u64::try_from(v) {
                Ok(v) => self.unsigned(v),
                Err(_) => Err(error(format!("{v} is out of range for 64 bits"))),
            },
        }
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.unsigned(v.into())
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.unsigned(v.into())
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.unsigned(v.into())
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.unsigned(v)
    }
    #[inline]
    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(v) => self.unsigned(v),
            Err(_) => Err(error(format!("{v} is out of range for 64 bits"))),
        }
    }

    #[inline]
    fn serialize_f32(self, v: f32) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Float => s.out.extend_from_slice(&v.to_le_bytes()),
            Plan::Double => s.out.extend_from_slice(&f64::from(v).to_le_bytes()),
            plan => return Err(mismatch("an f32", plan)),
        }
        Ok(())
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Double => s.out.extend_from_slice(&v.to_le_bytes()),
            // Rounded to nearest, as `encode_row` writes a double into a float column.
            Plan::Float if !v.is_finite() || v.abs() <= f64::from(f32::MAX) => {
                s.out.extend_from_slice(&(v as f32).to_le_bytes())
            }
            Plan::Float => return Err(error(format!("{v} is out of range for float"))),
            plan => return Err(mismatch("an f64", plan)),
        }
        Ok(())
    }

    #[inline]
    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::String | Plan::Bytes => {
                put_bytes(s.out, v.as_bytes());
                Ok(())
            }
            plan => Err(mismatch("a string", plan)),
        }
    }

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        let s = self.present();
        if prefixed(s.plan) {
            put_long(s.out, v.len() as i64);
        }
        let start = s.out.len();
        s.out.extend_from_slice(v);
        finish_bytes(s.plan, s.out, start, true)
    }

    #[inline]
    fn serialize_none(self) -> Result<()> {
        match self.plan {
            Plan::Optional { .. } => self.out.push(0),
            Plan::Null => {}
            plan => return Err(mismatch("None", plan)),
        }
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        match self.plan {
            Plan::Optional { item, .. } => {
                self.out.push(2);
                value.serialize(Serializer {
                    plan: item,
                    out: self.out,
                })
            }
            _ => value.serialize(self),
        }
    }

    #[inline]
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }

    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_none()
    }

    #[inline]
    fn serialize_unit_variant(self, _: &'static str, index: u32, variant: &str) -> Result<()> {
        let s = self.present();
        match s.plan {
            Plan::Int { .. } | Plan::Long { .. } => s.unsigned(index.into()),
            Plan::String | Plan::Bytes => s.serialize_str(variant),
            Plan::Variant(_) => s.alternative(index, variant)?.serialize_none(),
            plan => Err(mismatch(&format!("unit variant {variant}"), plan)),
        }
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &str, value: &T) -> Result<()> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self.alternative(index, variant)?)
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>> {
        self.sequence(len)
    }

    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>> {
        self.sequence(Some(len))
    }

    #[inline]
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>> {
        self.sequence(Some(len))
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>> {
        self.alternative(index, variant)?.sequence(Some(len))
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>> {
        let s = self.present();
        let kind = match s.plan {
            Plan::Map(value) => Kind::Map {
                key: &STRING,
                value,
            },
            Plan::Pairs { key, value } => Kind::Map { key, value },
            plan => return Err(mismatch("a map", plan)),
        };
        if let Some(n) = len.filter(|&n| n > 0) {
            put_long(s.out, n as i64);
        }
        Ok(s.compound(kind, len))
    }

    #[inline]
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>> {
        let s = self.present();
        match s.plan {
            Plan::Record(fields) => Ok(s.compound(Kind::Record(fields), None)),
            Plan::Map(value) => {
                if len > 0 {
                    put_long(s.out, len as i64);
                }
                Ok(s.compound(Kind::NamedMap(value), Some(len)))
            }
            plan => Err(mismatch("a struct", plan)),
        }
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>> {
        self.alternative(index, variant)?
            .serialize_struct(variant, len)
    }
}

impl Compound<'_> {
    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T, name: Option<&str>) -> Result<()> {
        let index = self.count;
        self.count += 1;
        let out = &mut *self.out;
        match self.kind {
            Kind::Record(fields) => match fields.get(index) {
                Some(plan) => value
                    .serialize(Serializer { plan, out })
                    .map_err(|e| in_field(e, index, name)),
                None => Err(error(format!(
                    "more than {} fields into a record of {}",
                    fields.len(),
                    fields.len()
                ))),
            },
            Kind::Array(plan) => value.serialize(Serializer { plan, out }),
            Kind::Bytes(_) => {
                out.push(value.serialize(ByteSerializer)?);
                Ok(())
            }
            Kind::NamedMap(plan) => {
                put_bytes(out, name.unwrap_or_default().as_bytes());
                value.serialize(Serializer { plan, out })
            }
            Kind::Map { .. } => Err(error("a map entry without a key")),
        }
    }

    #[inline]
    fn end(self) -> Result<()> {
        let Compound {
            out,
            kind,
            count,
            start,
            announced,
        } = self;
        if let Some(n) = announced.filter(|&n| n != count) {
            return Err(error(format!(
                "{count} items written after {n} were announced"
            )));
        }
        match kind {
            Kind::Record(fields) if count != fields.len() => Err(error(format!(
                "{count} fields into a record of {}",
                fields.len()
            ))),
            Kind::Record(_) => Ok(()),
            Kind::Bytes(plan) => finish_bytes(plan, out, start, announced.is_some()),
            Kind::Array(_) | Kind::Map { .. } | Kind::NamedMap(_) => {
                if announced.is_none() && count > 0 {
                    insert_long(out, start, count as i64);
                }
                out.push(0);
                Ok(())
            }
        }
    }
}

macro_rules! sequence_like {
    ($($trait:ident::$method:ident),*) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = SerdeError;
            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value, None)
            }
            fn end(self) -> Result<()> {
                Compound::end(self)
            }
        })*
    };
}

sequence_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = SerdeError;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        match self.kind {
            Kind::Map { key: plan, .. } => {
                self.count += 1;
                key.serialize(Serializer {
                    plan,
                    out: &mut *self.out,
                })
            }
            _ => Err(error("a map key outside a map")),
        }
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        match self.kind {
            Kind::Map { value: plan, .. } => value.serialize(Serializer {
                plan,
                out: &mut *self.out,
            }),
            _ => Err(error("a map value outside a map")),
        }
    }
    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = SerdeError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<()> {
        self.element(value, Some(key))
    }
    #[inline]
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        match self.kind {
            Kind::NamedMap(_) => Ok(()),
            _ => Err(error(format!(
                "field {} ({key}) skipped: Avro records are positional",
                self.count
            ))),
        }
    }
    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = SerdeError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<()> {
        self.element(value, Some(key))
    }
    #[inline]
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        ser::SerializeStruct::skip_field(self, key)
    }
    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}
