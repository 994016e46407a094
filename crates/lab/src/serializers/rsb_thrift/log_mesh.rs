//! `log` and `mesh` (the address bytes and the status code i16, the size i64):
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

use thrift::protocol::{TInputProtocol, TOutputProtocol, TStructIdentifier, TType};

use super::{
    narrow, read_list_struct, read_struct, read_vector, write_i16, write_list_struct, write_vector,
    ThriftDataset,
};
use crate::serializers::peer_thrift::{field, protocol_error, write_i64, write_string};
use crate::serializers::rsb_data::{Address, Log, Logs, Mesh, Triangle, Vector3};

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
            x[id as usize - 1] = narrow(i.read_i16()?)?;
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

fn write_vector3(
    o: &mut dyn TOutputProtocol,
    name: &str,
    id: i16,
    v: Vector3,
) -> thrift::Result<()> {
    write_vector(
        o,
        name,
        id,
        "Vector3",
        &[v.x.into(), v.y.into(), v.z.into()],
    )
}

fn write_triangle(o: &mut dyn TOutputProtocol, t: &Triangle) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("Triangle"))?;
    write_vector3(o, "v0", 1, t.v0)?;
    write_vector3(o, "v1", 2, t.v1)?;
    write_vector3(o, "v2", 3, t.v2)?;
    write_vector3(o, "normal", 4, t.normal)?;
    o.write_field_stop()?;
    o.write_struct_end()
}

fn read_vector3(i: &mut dyn TInputProtocol) -> thrift::Result<Vector3> {
    // The f32 written as a double reads back exactly.
    let [x, y, z] = read_vector(i, "Vector3")?;
    Ok(Vector3 {
        x: x as f32,
        y: y as f32,
        z: z as f32,
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
            v[id as usize - 1] = read_vector3(i)?;
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

impl ThriftDataset for Logs {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        write_list_struct(o, "Logs", "logs", &self.logs, write_log)
    }

    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Logs> {
        Ok(Logs {
            logs: read_list_struct(i, read_log)?,
        })
    }
}

impl ThriftDataset for Mesh {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        write_list_struct(o, "Mesh", "triangles", &self.triangles, write_triangle)
    }

    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Mesh> {
        Ok(Mesh {
            triangles: read_list_struct(i, read_triangle)?,
        })
    }
}
