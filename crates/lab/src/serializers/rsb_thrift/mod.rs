//! The thrift crate on rust_serialization_benchmark's datasets, with Thrift structs of the
//! shape of the benchmark's `.proto` messages in Thrift's types (Thrift has no unsigned or
//! 32-bit float types: an unsigned integer takes the next wider signed type unless its values
//! fit a narrower one, f32 is a double), read and written in the shape the Thrift compiler
//! generates for Rust (field loops over `TInputProtocol`, unknown fields skipped, the fields
//! that are not `optional` checked present). Each dataset's module gives its IDL.

mod log_mesh;
mod minecraft;
mod mk48;

use thrift::protocol::{
    field_id, TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol,
    TCompactOutputProtocol, TInputProtocol, TListIdentifier, TOutputProtocol, TStructIdentifier,
    TType,
};

use super::peer_thrift::{err, field, protocol_error, ThriftCrate};
use super::rsb_bench::DataCodec;

/// A dataset as a Thrift struct: the compiler's `write_to_out_protocol` and
/// `read_from_in_protocol`.
pub trait ThriftDataset: Sized {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()>;
    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Self>;
}

impl<T: ThriftDataset> DataCodec<T> for ThriftCrate {
    fn serialize(&self, data: &T, out: &mut Vec<u8>) -> Result<(), String> {
        if self.compact {
            data.write(&mut TCompactOutputProtocol::new(out))
        } else {
            data.write(&mut TBinaryOutputProtocol::new(out, true))
        }
        .map_err(err)
    }

    fn deserialize(&self, mut bytes: &[u8]) -> Result<T, String> {
        if self.compact {
            T::read(&mut TCompactInputProtocol::new(&mut bytes))
        } else {
            T::read(&mut TBinaryInputProtocol::new(&mut bytes, true))
        }
        .map_err(err)
    }
}

type Out<'a> = &'a mut dyn TOutputProtocol;
type In<'a> = &'a mut dyn TInputProtocol;

/// Writes field `id` of type `ty`: its header, `value`, its end.
fn put(
    o: &mut dyn TOutputProtocol,
    name: &str,
    ty: TType,
    id: i16,
    value: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>,
) -> thrift::Result<()> {
    field(o, name, ty, id)?;
    value(o)?;
    o.write_field_end()
}

/// Writes a struct named `name` whose fields `fields` writes.
fn put_struct(
    o: &mut dyn TOutputProtocol,
    name: &str,
    fields: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>,
) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new(name))?;
    fields(o)?;
    o.write_field_stop()?;
    o.write_struct_end()
}

/// Writes a list of `items` of type `ty`, each by `item`.
fn put_list<T>(
    o: &mut dyn TOutputProtocol,
    ty: TType,
    items: &[T],
    mut item: impl FnMut(&mut dyn TOutputProtocol, &T) -> thrift::Result<()>,
) -> thrift::Result<()> {
    let count = i32::try_from(items.len()).map_err(|_| protocol_error("too many items".into()))?;
    o.write_list_begin(&TListIdentifier::new(ty, count))?;
    for value in items {
        item(o, value)?;
    }
    o.write_list_end()
}

/// Reads a list of items read by `item`.
fn get_list<T>(
    i: &mut dyn TInputProtocol,
    mut item: impl FnMut(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> thrift::Result<Vec<T>> {
    let list = i.read_list_begin()?;
    let mut values = Vec::with_capacity(list.size.clamp(0, 4096) as usize);
    for _ in 0..list.size {
        values.push(item(i)?);
    }
    i.read_list_end()?;
    Ok(values)
}

fn write_i8(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: i8) -> thrift::Result<()> {
    put(o, name, TType::I08, id, |o| o.write_i8(v))
}

fn write_bool(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: bool) -> thrift::Result<()> {
    put(o, name, TType::Bool, id, |o| o.write_bool(v))
}

/// Writes a struct field of doubles named x, y, z (as many as `xyz` has).
fn write_vector(o: Out, name: &str, id: i16, ty: &str, xyz: &[f64]) -> thrift::Result<()> {
    put(o, name, TType::Struct, id, |o| {
        put_struct(o, ty, |o| {
            for (n, (axis, v)) in ["x", "y", "z"].into_iter().zip(xyz).enumerate() {
                write_double(o, axis, n as i16 + 1, *v)?;
            }
            Ok(())
        })
    })
}

/// Reads a struct of `N` (at most 3) doubles with ids 1 to N.
fn read_vector<const N: usize>(i: In, name: &str) -> thrift::Result<[f64; N]> {
    let mut xyz = [0.0; N];
    read_struct(i, name, &[1, 2, 3][..N], |i, id| {
        match usize::try_from(id) {
            Ok(n @ 1..) if n <= N => {
                xyz[n - 1] = i.read_double()?;
                Ok(true)
            }
            _ => Ok(false),
        }
    })?;
    Ok(xyz)
}

/// A Thrift integer (wider or signed) back in the struct's type.
fn narrow<T: TryFrom<U>, U: Copy + std::fmt::Display>(v: U) -> thrift::Result<T> {
    T::try_from(v).map_err(|_| protocol_error(format!("{v} out of range")))
}

fn write_i16(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: i16) -> thrift::Result<()> {
    field(o, name, TType::I16, id)?;
    o.write_i16(v)?;
    o.write_field_end()
}

fn write_double(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: f64) -> thrift::Result<()> {
    field(o, name, TType::Double, id)?;
    o.write_double(v)?;
    o.write_field_end()
}

/// Writes a struct of `name` whose only field 1 is a list of structs written by `item`.
fn write_list_struct<T>(
    o: &mut dyn TOutputProtocol,
    name: &str,
    field_name: &str,
    items: &[T],
    item: impl Fn(&mut dyn TOutputProtocol, &T) -> thrift::Result<()>,
) -> thrift::Result<()> {
    put_struct(o, name, |o| {
        put(o, field_name, TType::List, 1, |o| {
            put_list(o, TType::Struct, items, item)
        })
    })?;
    o.flush()
}

/// Reads a struct whose field 1 is a list of structs read by `item`.
fn read_list_struct<T>(
    i: &mut dyn TInputProtocol,
    item: impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> thrift::Result<Vec<T>> {
    i.read_struct_begin()?;
    let mut items = None;
    loop {
        let ident = i.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        if field_id(&ident)? == 1 {
            items = Some(get_list(i, &item)?);
        } else {
            i.skip(ident.field_type)?;
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    items.ok_or_else(|| protocol_error("required field 1 (the list) is missing".into()))
}

/// Reads a struct's fields, calling `field` with each id; `field` returns false for ids it
/// does not know (skipped). Every id in `required` must have been seen.
fn read_struct(
    i: &mut dyn TInputProtocol,
    name: &str,
    required: &[i16],
    mut field: impl FnMut(&mut dyn TInputProtocol, i16) -> thrift::Result<bool>,
) -> thrift::Result<()> {
    i.read_struct_begin()?;
    let mut seen = 0u64;
    loop {
        let ident = i.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        let id = field_id(&ident)?;
        if field(i, id)? {
            seen |= 1 << (id & 63);
        } else {
            i.skip(ident.field_type)?;
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    match required.iter().find(|id| seen & (1 << (**id & 63)) == 0) {
        Some(id) => Err(protocol_error(format!(
            "{name}: required field {id} is missing"
        ))),
        None => Ok(()),
    }
}
