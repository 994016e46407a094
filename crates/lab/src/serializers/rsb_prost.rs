//! prost on rust_serialization_benchmark's `log` and `mesh`: the messages of the benchmark's
//! `log.proto` and `mesh.proto` (proto3), derived by hand as prost-build generates them, and
//! the conversions from and to the dataset's structs (the benchmark's way: build the message,
//! encode; decode, convert back).

use prost::Message;

use super::rsb_bench::DataCodec;
use super::rsb_data::{Address, Log, Logs, Mesh, Triangle, Vector3};

#[derive(Clone, PartialEq, Message)]
pub struct PbAddress {
    #[prost(uint32, tag = "1")]
    pub x0: u32,
    #[prost(uint32, tag = "2")]
    pub x1: u32,
    #[prost(uint32, tag = "3")]
    pub x2: u32,
    #[prost(uint32, tag = "4")]
    pub x3: u32,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbLog {
    #[prost(message, optional, tag = "1")]
    pub address: Option<PbAddress>,
    #[prost(string, tag = "2")]
    pub identity: String,
    #[prost(string, tag = "3")]
    pub userid: String,
    #[prost(string, tag = "4")]
    pub date: String,
    #[prost(string, tag = "5")]
    pub request: String,
    #[prost(uint32, tag = "6")]
    pub code: u32,
    #[prost(uint64, tag = "7")]
    pub size: u64,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbLogs {
    #[prost(message, repeated, tag = "1")]
    pub logs: Vec<PbLog>,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbVector3 {
    #[prost(float, tag = "1")]
    pub x: f32,
    #[prost(float, tag = "2")]
    pub y: f32,
    #[prost(float, tag = "3")]
    pub z: f32,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbTriangle {
    #[prost(message, optional, tag = "1")]
    pub v0: Option<PbVector3>,
    #[prost(message, optional, tag = "2")]
    pub v1: Option<PbVector3>,
    #[prost(message, optional, tag = "3")]
    pub v2: Option<PbVector3>,
    #[prost(message, optional, tag = "4")]
    pub normal: Option<PbVector3>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbMesh {
    #[prost(message, repeated, tag = "1")]
    pub triangles: Vec<PbTriangle>,
}

pub struct ProstCrate;

fn byte(v: u32) -> Result<u8, String> {
    u8::try_from(v).map_err(|_| format!("address byte {v} out of range"))
}

impl DataCodec<Logs> for ProstCrate {
    fn serialize(&self, data: &Logs) -> Result<Vec<u8>, String> {
        let message = PbLogs {
            logs: data
                .logs
                .iter()
                .map(|l| PbLog {
                    address: Some(PbAddress {
                        x0: l.address.x0.into(),
                        x1: l.address.x1.into(),
                        x2: l.address.x2.into(),
                        x3: l.address.x3.into(),
                    }),
                    identity: l.identity.clone(),
                    userid: l.userid.clone(),
                    date: l.date.clone(),
                    request: l.request.clone(),
                    code: l.code.into(),
                    size: l.size,
                })
                .collect(),
        };
        Ok(message.encode_to_vec())
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Logs, String> {
        let message = PbLogs::decode(bytes).map_err(|e| e.to_string())?;
        let logs = message
            .logs
            .into_iter()
            .map(|l| {
                let a = l.address.ok_or("a log without its address")?;
                Ok(Log {
                    address: Address {
                        x0: byte(a.x0)?,
                        x1: byte(a.x1)?,
                        x2: byte(a.x2)?,
                        x3: byte(a.x3)?,
                    },
                    identity: l.identity,
                    userid: l.userid,
                    date: l.date,
                    request: l.request,
                    code: u16::try_from(l.code)
                        .map_err(|_| format!("code {} out of range", l.code))?,
                    size: l.size,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Logs { logs })
    }
}

fn pb_vector(v: Vector3) -> Option<PbVector3> {
    Some(PbVector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    })
}

fn vector(v: Option<PbVector3>) -> Result<Vector3, String> {
    let v = v.ok_or("a triangle without one of its vectors")?;
    Ok(Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    })
}

impl DataCodec<Mesh> for ProstCrate {
    fn serialize(&self, data: &Mesh) -> Result<Vec<u8>, String> {
        let message = PbMesh {
            triangles: data
                .triangles
                .iter()
                .map(|t| PbTriangle {
                    v0: pb_vector(t.v0),
                    v1: pb_vector(t.v1),
                    v2: pb_vector(t.v2),
                    normal: pb_vector(t.normal),
                })
                .collect(),
        };
        Ok(message.encode_to_vec())
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Mesh, String> {
        let message = PbMesh::decode(bytes).map_err(|e| e.to_string())?;
        let triangles = message
            .triangles
            .into_iter()
            .map(|t| {
                Ok(Triangle {
                    v0: vector(t.v0)?,
                    v1: vector(t.v1)?,
                    v2: vector(t.v2)?,
                    normal: vector(t.normal)?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Mesh { triangles })
    }
}
