//! The thrift crate on rust_serialization_benchmark's `log` and `mesh`, with structs the
//! benchmark's schemas give in Thrift's types (Thrift has no unsigned or 32-bit float types:
//! the address bytes and the status code are i16, the size i64, coordinates double), read and
//! written in the shape the Thrift compiler generates for Rust:
//!
//! ```thrift
//! struct Address { 1: i16 x0, 2: i16 x1, 3: i16 x2, 4: i16 x3 }
//! struct Log { 1: Address address, 2: string identity, 3: string userid, 4: string date,
//!   5: string request, 6: i16 code, 7: i64 size }
//! struct Logs { 1: list<Log> logs }
//! struct Vector3 { 1: double x, 2: double y, 3: double z }
//! struct Triangle { 1: Vector3 v0, 2: Vector3 v1, 3: Vector3 v2, 4: Vector3 normal }
//! struct Mesh { 1: list<Triangle> triangles }
//! ```

use thrift::protocol::{
    field_id, TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol,
    TCompactOutputProtocol, TInputProtocol, TListIdentifier, TOutputProtocol, TStructIdentifier,
    TType,
};

use super::peer_thrift::{err, field, protocol_error, write_i64, write_string, ThriftCrate};
use super::rsb_bench::DataCodec;
use super::rsb_data::{Address, Log, Logs, Mesh, Triangle, Vector3};

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
    o.write_struct_begin(&TStructIdentifier::new(name))?;
    field(o, field_name, TType::List, 1)?;
    let count = i32::try_from(items.len()).map_err(|_| protocol_error("too many items".into()))?;
    o.write_list_begin(&TListIdentifier::new(TType::Struct, count))?;
    for value in items {
        item(o, value)?;
    }
    o.write_list_end()?;
    o.write_field_end()?;
    o.write_field_stop()?;
    o.write_struct_end()?;
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
            let list = i.read_list_begin()?;
            let mut values = Vec::with_capacity(list.size.clamp(0, 4096) as usize);
            for _ in 0..list.size {
                values.push(item(i)?);
            }
            i.read_list_end()?;
            items = Some(values);
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

fn byte(v: i16) -> thrift::Result<u8> {
    u8::try_from(v).map_err(|_| protocol_error(format!("address byte {v} out of range")))
}

fn write_log(o: &mut dyn TOutputProtocol, log: &Log) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("Log"))?;
    field(o, "address", TType::Struct, 1)?;
    o.write_struct_begin(&TStructIdentifier::new("Address"))?;
    let a = log.address;
    for (id, (name, x)) in [("x0", a.x0), ("x1", a.x1), ("x2", a.x2), ("x3", a.x3)]
        .into_iter()
        .enumerate()
    {
        write_i16(o, name, id as i16 + 1, x.into())?;
    }
    o.write_field_stop()?;
    o.write_struct_end()?;
    o.write_field_end()?;
    write_string(o, "identity", 2, &log.identity)?;
    write_string(o, "userid", 3, &log.userid)?;
    write_string(o, "date", 4, &log.date)?;
    write_string(o, "request", 5, &log.request)?;
    let code = i16::try_from(log.code).map_err(|_| protocol_error("code out of range".into()))?;
    write_i16(o, "code", 6, code)?;
    let size = i64::try_from(log.size).map_err(|_| protocol_error("size out of range".into()))?;
    write_i64(o, "size", 7, size)?;
    o.write_field_stop()?;
    o.write_struct_end()
}

fn read_address(i: &mut dyn TInputProtocol) -> thrift::Result<Address> {
    let mut x = [0u8; 4];
    read_struct(i, "Address", &[1, 2, 3, 4], |i, id| match id {
        1..=4 => {
            x[id as usize - 1] = byte(i.read_i16()?)?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(Address {
        x0: x[0],
        x1: x[1],
        x2: x[2],
        x3: x[3],
    })
}

fn read_log(i: &mut dyn TInputProtocol) -> thrift::Result<Log> {
    let mut log = Log {
        address: Address {
            x0: 0,
            x1: 0,
            x2: 0,
            x3: 0,
        },
        identity: String::new(),
        userid: String::new(),
        date: String::new(),
        request: String::new(),
        code: 0,
        size: 0,
    };
    read_struct(i, "Log", &[1, 2, 3, 4, 5, 6, 7], |i, id| {
        match id {
            1 => log.address = read_address(i)?,
            2 => log.identity = i.read_string()?,
            3 => log.userid = i.read_string()?,
            4 => log.date = i.read_string()?,
            5 => log.request = i.read_string()?,
            6 => {
                let code = i.read_i16()?;
                log.code = u16::try_from(code)
                    .map_err(|_| protocol_error(format!("code {code} out of range")))?;
            }
            7 => {
                let size = i.read_i64()?;
                log.size = u64::try_from(size)
                    .map_err(|_| protocol_error(format!("size {size} out of range")))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(log)
}

fn write_vector(
    o: &mut dyn TOutputProtocol,
    name: &str,
    id: i16,
    v: Vector3,
) -> thrift::Result<()> {
    field(o, name, TType::Struct, id)?;
    o.write_struct_begin(&TStructIdentifier::new("Vector3"))?;
    write_double(o, "x", 1, v.x.into())?;
    write_double(o, "y", 2, v.y.into())?;
    write_double(o, "z", 3, v.z.into())?;
    o.write_field_stop()?;
    o.write_struct_end()?;
    o.write_field_end()
}

fn write_triangle(o: &mut dyn TOutputProtocol, t: &Triangle) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("Triangle"))?;
    write_vector(o, "v0", 1, t.v0)?;
    write_vector(o, "v1", 2, t.v1)?;
    write_vector(o, "v2", 3, t.v2)?;
    write_vector(o, "normal", 4, t.normal)?;
    o.write_field_stop()?;
    o.write_struct_end()
}

fn read_vector(i: &mut dyn TInputProtocol) -> thrift::Result<Vector3> {
    let mut xyz = [0f32; 3];
    read_struct(i, "Vector3", &[1, 2, 3], |i, id| match id {
        // The f32 written as a double reads back exactly.
        1..=3 => {
            xyz[id as usize - 1] = i.read_double()? as f32;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(Vector3 {
        x: xyz[0],
        y: xyz[1],
        z: xyz[2],
    })
}

fn read_triangle(i: &mut dyn TInputProtocol) -> thrift::Result<Triangle> {
    let zero = Vector3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    };
    let mut v = [zero; 4];
    read_struct(i, "Triangle", &[1, 2, 3, 4], |i, id| match id {
        1..=4 => {
            v[id as usize - 1] = read_vector(i)?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(Triangle {
        v0: v[0],
        v1: v[1],
        v2: v[2],
        normal: v[3],
    })
}

impl ThriftCrate {
    fn write<T>(
        &self,
        write: impl Fn(&mut dyn TOutputProtocol) -> thrift::Result<T>,
    ) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        if self.compact {
            write(&mut TCompactOutputProtocol::new(&mut out)).map_err(err)?;
        } else {
            write(&mut TBinaryOutputProtocol::new(&mut out, true)).map_err(err)?;
        }
        Ok(out)
    }

    fn read_from<T>(
        &self,
        mut bytes: &[u8],
        read: impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
    ) -> Result<T, String> {
        if self.compact {
            read(&mut TCompactInputProtocol::new(&mut bytes)).map_err(err)
        } else {
            read(&mut TBinaryInputProtocol::new(&mut bytes, true)).map_err(err)
        }
    }
}

impl DataCodec<Logs> for ThriftCrate {
    fn serialize(&self, data: &Logs) -> Result<Vec<u8>, String> {
        self.write(|o| write_list_struct(o, "Logs", "logs", &data.logs, write_log))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Logs, String> {
        let logs = self.read_from(bytes, |i| read_list_struct(i, read_log))?;
        Ok(Logs { logs })
    }
}

impl DataCodec<Mesh> for ThriftCrate {
    fn serialize(&self, data: &Mesh) -> Result<Vec<u8>, String> {
        self.write(|o| write_list_struct(o, "Mesh", "triangles", &data.triangles, write_triangle))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Mesh, String> {
        let triangles = self.read_from(bytes, |i| read_list_struct(i, read_triangle))?;
        Ok(Mesh { triangles })
    }
}
