//! `log.proto` and `mesh.proto`.

use prost::Message;

use super::{narrow, present, ProstDataset};
use crate::serializers::rsb_data::{Address, Log, Logs, Mesh, Triangle, Vector3};

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

impl ProstDataset for Logs {
    type Message = PbLogs;

    fn to_message(&self) -> PbLogs {
        PbLogs {
            logs: self
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
        }
    }

    fn from_message(message: PbLogs) -> Result<Logs, String> {
        let logs = message
            .logs
            .into_iter()
            .map(|l| {
                let a = present(l.address, "address")?;
                Ok(Log {
                    address: Address {
                        x0: narrow(a.x0)?,
                        x1: narrow(a.x1)?,
                        x2: narrow(a.x2)?,
                        x3: narrow(a.x3)?,
                    },
                    identity: l.identity,
                    userid: l.userid,
                    date: l.date,
                    request: l.request,
                    code: narrow(l.code)?,
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
    let v = present(v, "vector")?;
    Ok(Vector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    })
}

impl ProstDataset for Mesh {
    type Message = PbMesh;

    fn to_message(&self) -> PbMesh {
        PbMesh {
            triangles: self
                .triangles
                .iter()
                .map(|t| PbTriangle {
                    v0: pb_vector(t.v0),
                    v1: pb_vector(t.v1),
                    v2: pb_vector(t.v2),
                    normal: pb_vector(t.normal),
                })
                .collect(),
        }
    }

    fn from_message(message: PbMesh) -> Result<Mesh, String> {
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
