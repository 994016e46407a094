//! `mk48.proto`: positions become `Vector2f` messages, chunk ids `ChunkId`, terrain data
//! `bytes`, the narrow integers the proto's int32/uint32.

use prost::Message;

use super::{narrow, present, ProstDataset};
use crate::serializers::rsb_data::{
    enum_from_code, Contact, EntityType, Guidance, TerrainUpdate, Transform, Update, Updates,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PbEntityType {
    ArleighBurke = 0,
    Bismarck = 1,
    Clemenceau = 2,
    Fletcher = 3,
    G5 = 4,
    Iowa = 5,
    Kolkata = 6,
    Osa = 7,
    Yasen = 8,
    Zubr = 9,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbVector2f {
    #[prost(float, tag = "1")]
    pub x: f32,
    #[prost(float, tag = "2")]
    pub y: f32,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbTransform {
    #[prost(int32, tag = "1")]
    pub altitude: i32,
    #[prost(uint32, tag = "2")]
    pub angle: u32,
    #[prost(message, optional, tag = "3")]
    pub position: Option<PbVector2f>,
    #[prost(int32, tag = "4")]
    pub velocity: i32,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbGuidance {
    #[prost(uint32, tag = "1")]
    pub angle: u32,
    #[prost(bool, tag = "2")]
    pub submerge: bool,
    #[prost(int32, tag = "3")]
    pub velocity: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbContact {
    #[prost(uint32, tag = "1")]
    pub damage: u32,
    #[prost(uint32, tag = "2")]
    pub entity_id: u32,
    #[prost(enumeration = "PbEntityType", optional, tag = "3")]
    pub entity_type: Option<i32>,
    #[prost(message, optional, tag = "4")]
    pub guidance: Option<PbGuidance>,
    #[prost(uint32, optional, tag = "5")]
    pub player_id: Option<u32>,
    #[prost(bool, repeated, tag = "6")]
    pub reloads: Vec<bool>,
    #[prost(message, optional, tag = "7")]
    pub transform: Option<PbTransform>,
    #[prost(uint32, repeated, tag = "8")]
    pub turret_angles: Vec<u32>,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbChunkId {
    #[prost(int32, tag = "1")]
    pub x: i32,
    #[prost(int32, tag = "2")]
    pub y: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbTerrainUpdate {
    #[prost(message, optional, tag = "1")]
    pub chunk_id: Option<PbChunkId>,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbUpdate {
    #[prost(message, repeated, tag = "1")]
    pub contacts: Vec<PbContact>,
    #[prost(uint32, tag = "2")]
    pub score: u32,
    #[prost(float, tag = "3")]
    pub world_radius: f32,
    #[prost(message, repeated, tag = "4")]
    pub terrain_updates: Vec<PbTerrainUpdate>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbUpdates {
    #[prost(message, repeated, tag = "1")]
    pub updates: Vec<PbUpdate>,
}

fn pb_contact(c: &Contact) -> PbContact {
    let (g, t) = (c.guidance, c.transform);
    PbContact {
        damage: c.damage.into(),
        entity_id: c.entity_id,
        entity_type: c.entity_type.map(|k| k as i32),
        guidance: Some(PbGuidance {
            angle: g.angle.into(),
            submerge: g.submerge,
            velocity: g.velocity.into(),
        }),
        player_id: c.player_id.map(u32::from),
        reloads: c.reloads.clone(),
        transform: Some(PbTransform {
            altitude: t.altitude.into(),
            angle: t.angle.into(),
            position: Some(PbVector2f {
                x: t.position.0,
                y: t.position.1,
            }),
            velocity: t.velocity.into(),
        }),
        turret_angles: c.turret_angles.iter().map(|&a| a.into()).collect(),
    }
}

fn contact(c: PbContact) -> Result<Contact, String> {
    let g = present(c.guidance, "guidance")?;
    let t = present(c.transform, "transform")?;
    let position = present(t.position, "position")?;
    Ok(Contact {
        damage: narrow(c.damage)?,
        entity_id: c.entity_id,
        entity_type: c
            .entity_type
            .map(|k| enum_from_code(&EntityType::ALL, k.into(), "entity type"))
            .transpose()?,
        guidance: Guidance {
            angle: narrow(g.angle)?,
            submerge: g.submerge,
            velocity: narrow(g.velocity)?,
        },
        player_id: c.player_id.map(narrow).transpose()?,
        reloads: c.reloads,
        transform: Transform {
            altitude: narrow(t.altitude)?,
            angle: narrow(t.angle)?,
            position: (position.x, position.y),
            velocity: narrow(t.velocity)?,
        },
        turret_angles: c
            .turret_angles
            .into_iter()
            .map(narrow)
            .collect::<Result<_, _>>()?,
    })
}

fn pb_terrain_update(t: &TerrainUpdate) -> PbTerrainUpdate {
    PbTerrainUpdate {
        chunk_id: Some(PbChunkId {
            x: t.chunk_id.0.into(),
            y: t.chunk_id.1.into(),
        }),
        data: t.data.clone(),
    }
}

fn terrain_update(t: PbTerrainUpdate) -> Result<TerrainUpdate, String> {
    let id = present(t.chunk_id, "chunk_id")?;
    Ok(TerrainUpdate {
        chunk_id: (narrow(id.x)?, narrow(id.y)?),
        data: t.data,
    })
}

impl ProstDataset for Updates {
    type Message = PbUpdates;

    fn to_message(&self) -> PbUpdates {
        let updates = self
            .updates
            .iter()
            .map(|u| PbUpdate {
                contacts: u.contacts.iter().map(pb_contact).collect(),
                score: u.score,
                world_radius: u.world_radius,
                terrain_updates: u.terrain_updates.iter().map(pb_terrain_update).collect(),
            })
            .collect();
        PbUpdates { updates }
    }

    fn from_message(message: PbUpdates) -> Result<Updates, String> {
        let updates = message
            .updates
            .into_iter()
            .map(|u| {
                Ok(Update {
                    contacts: u
                        .contacts
                        .into_iter()
                        .map(contact)
                        .collect::<Result<_, _>>()?,
                    score: u.score,
                    world_radius: u.world_radius,
                    terrain_updates: u
                        .terrain_updates
                        .into_iter()
                        .map(terrain_update)
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Updates { updates })
    }
}
