//! `mk48`, in the shape of the benchmark's `mk48.proto` (u8 as i16, u16 as i32, u32 as i64,
//! f32 as double, terrain data `binary`; the proto's `optional` fields `optional`):
//!
//! ```thrift
//! enum EntityType { ARLEIGH_BURKE, BISMARCK, CLEMENCEAU, FLETCHER, G5, IOWA, KOLKATA, OSA,
//!   YASEN, ZUBR }
//! struct Vector2f { 1: double x, 2: double y }
//! struct Transform { 1: byte altitude, 2: i32 angle, 3: Vector2f position, 4: i16 velocity }
//! struct Guidance { 1: i32 angle, 2: bool submerge, 3: i16 velocity }
//! struct Contact { 1: i16 damage, 2: i64 entity_id, 3: optional EntityType entity_type,
//!   4: Guidance guidance, 5: optional i32 player_id, 6: list<bool> reloads,
//!   7: Transform transform, 8: list<i32> turret_angles }
//! struct ChunkId { 1: byte x, 2: byte y }
//! struct TerrainUpdate { 1: ChunkId chunk_id, 2: binary data }
//! struct Update { 1: list<Contact> contacts, 2: i64 score, 3: double world_radius,
//!   4: list<TerrainUpdate> terrain_updates }
//! struct Updates { 1: list<Update> updates }
//! ```

use thrift::protocol::{TInputProtocol, TOutputProtocol, TType};

use super::{
    get_list, narrow, put, put_list, put_struct, read_list_struct, read_struct, read_vector,
    write_bool, write_double, write_i16, write_i8, write_list_struct, write_vector, In, Out,
    ThriftDataset,
};
use crate::serializers::peer_thrift::{protocol_error, write_i32, write_i64};
use crate::serializers::rsb_data::{
    enum_from_code, Contact, EntityType, Guidance, TerrainUpdate, Transform, Update, Updates,
};

fn write_contact(o: Out, c: &Contact) -> thrift::Result<()> {
    put_struct(o, "Contact", |o| {
        write_i16(o, "damage", 1, c.damage.into())?;
        write_i64(o, "entity_id", 2, c.entity_id.into())?;
        if let Some(kind) = c.entity_type {
            write_i32(o, "entity_type", 3, kind as i32)?;
        }
        let g = c.guidance;
        put(o, "guidance", TType::Struct, 4, |o| {
            put_struct(o, "Guidance", |o| {
                write_i32(o, "angle", 1, g.angle.into())?;
                write_bool(o, "submerge", 2, g.submerge)?;
                write_i16(o, "velocity", 3, g.velocity)
            })
        })?;
        if let Some(player) = c.player_id {
            write_i32(o, "player_id", 5, player.into())?;
        }
        put(o, "reloads", TType::List, 6, |o| {
            put_list(o, TType::Bool, &c.reloads, |o, r| o.write_bool(*r))
        })?;
        let t = c.transform;
        put(o, "transform", TType::Struct, 7, |o| {
            put_struct(o, "Transform", |o| {
                write_i8(o, "altitude", 1, t.altitude)?;
                write_i32(o, "angle", 2, t.angle.into())?;
                let position = [t.position.0.into(), t.position.1.into()];
                write_vector(o, "position", 3, "Vector2f", &position)?;
                write_i16(o, "velocity", 4, t.velocity)
            })
        })?;
        put(o, "turret_angles", TType::List, 8, |o| {
            put_list(o, TType::I32, &c.turret_angles, |o, a| {
                o.write_i32((*a).into())
            })
        })
    })
}

fn read_guidance(i: In) -> thrift::Result<Guidance> {
    let mut g = Guidance::default();
    read_struct(i, "Guidance", &[1, 2, 3], |i, id| {
        match id {
            1 => g.angle = narrow(i.read_i32()?)?,
            2 => g.submerge = i.read_bool()?,
            3 => g.velocity = i.read_i16()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(g)
}

fn read_transform(i: In) -> thrift::Result<Transform> {
    let mut t = Transform::default();
    read_struct(i, "Transform", &[1, 2, 3, 4], |i, id| {
        match id {
            1 => t.altitude = i.read_i8()?,
            2 => t.angle = narrow(i.read_i32()?)?,
            3 => {
                let [x, y] = read_vector(i, "Vector2f")?;
                t.position = (x as f32, y as f32);
            }
            4 => t.velocity = i.read_i16()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(t)
}

fn read_contact(i: In) -> thrift::Result<Contact> {
    let mut c = Contact::default();
    read_struct(i, "Contact", &[1, 2, 4, 6, 7, 8], |i, id| {
        match id {
            1 => c.damage = narrow(i.read_i16()?)?,
            2 => c.entity_id = narrow(i.read_i64()?)?,
            3 => {
                let code = i.read_i32()?.into();
                let kind = enum_from_code(&EntityType::ALL, code, "entity type");
                c.entity_type = Some(kind.map_err(protocol_error)?);
            }
            4 => c.guidance = read_guidance(i)?,
            5 => c.player_id = Some(narrow(i.read_i32()?)?),
            6 => c.reloads = get_list(i, |i| i.read_bool())?,
            7 => c.transform = read_transform(i)?,
            8 => c.turret_angles = get_list(i, |i| narrow(i.read_i32()?))?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(c)
}

fn write_terrain_update(o: Out, t: &TerrainUpdate) -> thrift::Result<()> {
    put_struct(o, "TerrainUpdate", |o| {
        put(o, "chunk_id", TType::Struct, 1, |o| {
            put_struct(o, "ChunkId", |o| {
                write_i8(o, "x", 1, t.chunk_id.0)?;
                write_i8(o, "y", 2, t.chunk_id.1)
            })
        })?;
        put(o, "data", TType::String, 2, |o| o.write_bytes(&t.data))
    })
}

fn read_terrain_update(i: In) -> thrift::Result<TerrainUpdate> {
    let mut t = TerrainUpdate::default();
    read_struct(i, "TerrainUpdate", &[1, 2], |i, id| {
        match id {
            1 => {
                let (mut x, mut y) = (0, 0);
                read_struct(i, "ChunkId", &[1, 2], |i, id| {
                    match id {
                        1 => x = i.read_i8()?,
                        2 => y = i.read_i8()?,
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                t.chunk_id = (x, y);
            }
            2 => t.data = i.read_bytes()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(t)
}

fn write_update(o: Out, u: &Update) -> thrift::Result<()> {
    put_struct(o, "Update", |o| {
        put(o, "contacts", TType::List, 1, |o| {
            put_list(o, TType::Struct, &u.contacts, write_contact)
        })?;
        write_i64(o, "score", 2, u.score.into())?;
        write_double(o, "world_radius", 3, u.world_radius.into())?;
        put(o, "terrain_updates", TType::List, 4, |o| {
            put_list(o, TType::Struct, &u.terrain_updates, write_terrain_update)
        })
    })
}

fn read_update(i: In) -> thrift::Result<Update> {
    let mut u = Update::default();
    read_struct(i, "Update", &[1, 2, 3, 4], |i, id| {
        match id {
            1 => u.contacts = get_list(i, read_contact)?,
            2 => u.score = narrow(i.read_i64()?)?,
            3 => u.world_radius = i.read_double()? as f32,
            4 => u.terrain_updates = get_list(i, read_terrain_update)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(u)
}

impl ThriftDataset for Updates {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        write_list_struct(o, "Updates", "updates", &self.updates, write_update)
    }

    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Updates> {
        Ok(Updates {
            updates: read_list_struct(i, read_update)?,
        })
    }
}
