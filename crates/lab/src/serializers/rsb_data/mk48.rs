//! `mk48`: updates of the mk48.io ship game sent to a client, the benchmark's structs field
//! for field (tuples for positions and chunk ids, `Vec<u8>` terrain data, `Option`s).
//!
//! An update is a row of `contacts` (a list of structs), `score` (uint32), `world_radius`
//! (float) and `terrain_updates` (a list of structs), in the order of the benchmark's
//! `mk48.proto`: integers in their own widths (`damage` uint8, `altitude` int8, angles
//! uint16, velocities int16, ...), `entity_type` an `optional<int32>` of the proto's enum
//! numbers, the position a struct `Vector2f {x; y}` of floats, the chunk id a struct
//! `ChunkId {x; y}` of int8, terrain data a `string` (YT's bytes).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shapeshift_types::{TableSchema, Value};

use super::{
    boolean, bytes, columns_of, double_value, enum_of, float, int_value, list_of, list_type,
    list_value, narrow, narrow_signed, optional_of, optional_type, optional_value, records_of,
    struct_type, take, uint_value, TableRows,
};

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    bitcode::Encode,
    bitcode::Decode,
)]
pub enum EntityType {
    #[default]
    ArleighBurke,
    Bismarck,
    Clemenceau,
    Fletcher,
    G5,
    Iowa,
    Kolkata,
    Osa,
    Yasen,
    Zubr,
}

impl EntityType {
    /// In code order (the proto's enum numbers).
    pub const ALL: [EntityType; 10] = [
        EntityType::ArleighBurke,
        EntityType::Bismarck,
        EntityType::Clemenceau,
        EntityType::Fletcher,
        EntityType::G5,
        EntityType::Iowa,
        EntityType::Kolkata,
        EntityType::Osa,
        EntityType::Yasen,
        EntityType::Zubr,
    ];

    /// The benchmark's relative frequencies of the ship types among contacts.
    fn frequency(self) -> f32 {
        use EntityType::*;
        match self {
            ArleighBurke => 2.14,
            Bismarck => 0.52,
            Clemenceau => 0.97,
            Fletcher => 1.46,
            G5 => 13.16,
            Iowa => 1.55,
            Kolkata => 0.83,
            Osa => 7.25,
            Yasen => 4.06,
            Zubr => 12.92,
        }
    }

    /// (turrets, weapons) of the ship type: the lengths of a visible contact's
    /// `turret_angles` and `reloads`.
    fn armament(self) -> (usize, usize) {
        use EntityType::*;
        match self {
            ArleighBurke => (1, 20),
            Bismarck => (4, 10),
            Clemenceau => (4, 16),
            Fletcher => (4, 18),
            G5 => (0, 2),
            Iowa => (3, 28),
            Kolkata => (1, 15),
            Osa => (2, 6),
            Yasen => (0, 14),
            Zubr => (3, 11),
        }
    }

    fn is_submarine(self) -> bool {
        self == EntityType::Yasen
    }
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Transform {
    pub altitude: i8,
    pub angle: u16,
    pub position: (f32, f32),
    pub velocity: i16,
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Guidance {
    pub angle: u16,
    pub submerge: bool,
    pub velocity: i16,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Contact {
    pub damage: u8,
    pub entity_id: u32,
    pub entity_type: Option<EntityType>,
    pub guidance: Guidance,
    pub player_id: Option<u16>,
    pub reloads: Vec<bool>,
    pub transform: Transform,
    pub turret_angles: Vec<u16>,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct TerrainUpdate {
    pub chunk_id: (i8, i8),
    pub data: Vec<u8>,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Update {
    pub contacts: Vec<Contact>,
    pub score: u32,
    pub world_radius: f32,
    pub terrain_updates: Vec<TerrainUpdate>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Updates {
    pub updates: Vec<Update>,
}

/// The benchmark's record count.
pub const UPDATE_COUNT: usize = 1_000;

/// Ship speeds: 80% forward, 10% stopped, 10% slowly astern.
fn velocity(rng: &mut ChaCha8Rng) -> i16 {
    const MIN: i16 = 140;
    const MAX: i16 = 900;
    const ASTERN: i16 = 4;
    match rng.random_range(0..100) {
        0..80 => rng.random_range(MIN..MAX),
        80..90 => 0,
        _ => rng.random_range(-MAX / ASTERN..-MIN / ASTERN),
    }
}

/// A ship type drawn by the benchmark's frequencies.
fn entity_type(rng: &mut ChaCha8Rng) -> EntityType {
    let total: f32 = EntityType::ALL.iter().map(|t| t.frequency()).sum();
    let mut left = rng.random_range(0.0..total);
    for kind in EntityType::ALL {
        if left < kind.frequency() {
            return kind;
        }
        left -= kind.frequency();
    }
    EntityType::Zubr // rounding at the top end
}

/// A contact among `player_count` players: visible 70% of the time (then with its type,
/// player, reloads and turrets), a submarine submerged 90% of the time.
fn contact(rng: &mut ChaCha8Rng, player_count: u16) -> Contact {
    let entity_count = u32::from(player_count) * 20;
    let kind = entity_type(rng);
    let visible = rng.random_bool(0.7);
    let damage = if visible && rng.random_bool(0.6) {
        0
    } else {
        rng.random_range(0..200)
    };
    let entity_id = rng.random_range(0..entity_count);
    let guidance = Guidance {
        angle: rng.random(),
        submerge: kind.is_submarine() && rng.random_bool(0.9),
        velocity: velocity(rng),
    };
    let player_id = visible.then(|| rng.random_range(0..player_count));
    let (turrets, weapons) = kind.armament();
    let reloads = if visible {
        let p = rng.random_range(0.0..1.0);
        (0..weapons).map(|_| rng.random_bool(p)).collect()
    } else {
        Vec::new()
    };
    let submerged = kind.is_submarine() && rng.random_bool(0.9);
    let transform = Transform {
        altitude: if submerged {
            rng.random_range(-120..-35)
        } else {
            0
        },
        angle: rng.random(),
        position: (
            rng.random_range(-750.0..750.0),
            rng.random_range(-750.0..750.0),
        ),
        velocity: velocity(rng),
    };
    let turret_angles = if visible {
        // Mostly near the ship's common aim, sometimes anywhere.
        let aim: u16 = rng.random();
        (0..turrets)
            .map(|_| {
                if rng.random_bool(0.75) {
                    (aim as i16).wrapping_add(rng.random_range(-200..200)) as u16
                } else {
                    rng.random()
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Contact {
        damage,
        entity_id,
        entity_type: visible.then_some(kind),
        guidance,
        player_id,
        reloads,
        transform,
        turret_angles,
    }
}

/// `count` updates from `seed`: 200 to 399 players, a world radius that grows with them,
/// 20 to 39 contacts, 3 to 9 terrain updates (2% of them new chunks of 900 to 1,099 bytes,
/// the rest 3 to 8 bytes of changes).
pub fn updates(count: usize, seed: u64) -> Updates {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let updates = (0..count)
        .map(|_| {
            let player_count: u16 = rng.random_range(200..400);
            let world_radius =
                (f32::from(player_count) * 15000.0).sqrt() + rng.random_range(-50.0..50.0);
            let terrain_radius = (world_radius / 1600.0).ceil() as i8;
            let contacts = (0..rng.random_range(20..40))
                .map(|_| contact(&mut rng, player_count))
                .collect();
            let score = (rng.random::<f32>().powi(4) * 5000.0) as u32 + rng.random_range(0..50);
            let terrain_updates = (0..rng.random_range(3..10))
                .map(|_| {
                    let new = rng.random_bool(0.02);
                    let chunk_id = (
                        rng.random_range(-terrain_radius..terrain_radius),
                        rng.random_range(-terrain_radius..terrain_radius),
                    );
                    let len = rng.random_range(if new { 900..1100 } else { 3..9 });
                    TerrainUpdate {
                        chunk_id,
                        data: (0..len).map(|_| rng.random()).collect(),
                    }
                })
                .collect();
            Update {
                contacts,
                score,
                world_radius,
                terrain_updates,
            }
        })
        .collect();
    Updates { updates }
}

fn contact_type() -> String {
    struct_type(&[
        ("damage", "uint8"),
        ("entity_id", "uint32"),
        ("entity_type", &optional_type("int32")),
        (
            "guidance",
            &struct_type(&[
                ("angle", "uint16"),
                ("submerge", "bool"),
                ("velocity", "int16"),
            ]),
        ),
        ("player_id", &optional_type("uint16")),
        ("reloads", &list_type("bool")),
        (
            "transform",
            &struct_type(&[
                ("altitude", "int8"),
                ("angle", "uint16"),
                ("position", &struct_type(&[("x", "float"), ("y", "float")])),
                ("velocity", "int16"),
            ]),
        ),
        ("turret_angles", &list_type("uint16")),
    ])
}

fn contact_value(c: &Contact) -> Value {
    let g = c.guidance;
    let t = c.transform;
    Value::Tuple(vec![
        uint_value(c.damage),
        uint_value(c.entity_id),
        optional_value(c.entity_type, |k| int_value(k as i32)),
        Value::Tuple(vec![
            uint_value(g.angle),
            Value::Bool(g.submerge),
            int_value(g.velocity),
        ]),
        optional_value(c.player_id, uint_value),
        list_value(&c.reloads, |r| Value::Bool(*r)),
        Value::Tuple(vec![
            int_value(t.altitude),
            uint_value(t.angle),
            Value::Tuple(vec![double_value(t.position.0), double_value(t.position.1)]),
            int_value(t.velocity),
        ]),
        list_value(&c.turret_angles, |a| uint_value(*a)),
    ])
}

fn contact_of(value: Value) -> Result<Contact, String> {
    let [damage, entity_id, entity_type, guidance, player_id, reloads, transform, turret_angles] =
        take(value, "contact")?;
    let [g_angle, submerge, g_velocity] = take(guidance, "guidance")?;
    let [altitude, angle, position, velocity] = take(transform, "transform")?;
    let [x, y] = take(position, "position")?;
    Ok(Contact {
        damage: narrow(damage)?,
        entity_id: narrow(entity_id)?,
        entity_type: optional_of(entity_type, |k| enum_of(k, &EntityType::ALL, "entity type"))?,
        guidance: Guidance {
            angle: narrow(g_angle)?,
            submerge: boolean(submerge)?,
            velocity: narrow_signed(g_velocity)?,
        },
        player_id: optional_of(player_id, narrow)?,
        reloads: list_of(reloads, boolean)?,
        transform: Transform {
            altitude: narrow_signed(altitude)?,
            angle: narrow(angle)?,
            position: (float(x)?, float(y)?),
            velocity: narrow_signed(velocity)?,
        },
        turret_angles: list_of(turret_angles, narrow)?,
    })
}

fn terrain_update_value(t: &TerrainUpdate) -> Value {
    Value::Tuple(vec![
        Value::Tuple(vec![int_value(t.chunk_id.0), int_value(t.chunk_id.1)]),
        Value::String(t.data.clone()),
    ])
}

fn terrain_update_of(value: Value) -> Result<TerrainUpdate, String> {
    let [chunk_id, data] = take(value, "terrain update")?;
    let [x, y] = take(chunk_id, "chunk id")?;
    Ok(TerrainUpdate {
        chunk_id: (narrow_signed(x)?, narrow_signed(y)?),
        data: bytes(data)?,
    })
}

impl TableRows for Updates {
    fn schema() -> TableSchema {
        let chunk_id = struct_type(&[("x", "int8"), ("y", "int8")]);
        columns_of(&[
            ("contacts", &list_type(&contact_type())),
            ("score", "uint32"),
            ("world_radius", "float"),
            (
                "terrain_updates",
                &list_type(&struct_type(&[("chunk_id", &chunk_id), ("data", "string")])),
            ),
        ])
    }

    fn for_each_row(
        &self,
        mut row: impl FnMut(Vec<Value>) -> Result<(), String>,
    ) -> Result<(), String> {
        for u in &self.updates {
            row(vec![
                list_value(&u.contacts, contact_value),
                uint_value(u.score),
                double_value(u.world_radius),
                list_value(&u.terrain_updates, terrain_update_value),
            ])?;
        }
        Ok(())
    }

    fn from_rows(
        rows: impl Iterator<Item = Result<Vec<Value>, String>>,
    ) -> Result<Updates, String> {
        let updates = records_of(
            rows,
            "update",
            |[contacts, score, world_radius, terrain_updates]| {
                Ok(Update {
                    contacts: list_of(contacts, contact_of)?,
                    score: narrow(score)?,
                    world_radius: float(world_radius)?,
                    terrain_updates: list_of(terrain_updates, terrain_update_of)?,
                })
            },
        )?;
        Ok(Updates { updates })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_keeps_the_benchmarks_ranges() {
        assert_eq!(updates(20, 7), updates(20, 7));
        assert_ne!(updates(20, 7), updates(20, 8));
        let all = updates(1000, 1).updates;
        let contacts: Vec<&Contact> = all.iter().flat_map(|u| &u.contacts).collect();
        let visible: Vec<&Contact> = contacts
            .iter()
            .copied()
            .filter(|c| c.entity_type.is_some())
            .collect();
        let share = visible.len() as f64 / contacts.len() as f64;
        assert!((0.67..0.73).contains(&share), "visible {share}");
        // Ship types by the benchmark's frequencies: G5 the most common, Bismarck the rarest.
        let count = |k: EntityType| visible.iter().filter(|c| c.entity_type == Some(k)).count();
        let total: f32 = EntityType::ALL.iter().map(|t| t.frequency()).sum();
        for kind in EntityType::ALL {
            let expected = kind.frequency() / total * visible.len() as f32;
            let got = count(kind) as f32;
            assert!(
                (got - expected).abs() < 0.15 * expected + 30.0,
                "{kind:?}: {got} vs {expected}"
            );
        }
        for c in &contacts {
            let (turrets, weapons) = c.entity_type.map_or((0, 0), EntityType::armament);
            assert_eq!(
                (c.turret_angles.len(), c.reloads.len()),
                (turrets, weapons),
                "{c:?}"
            );
            assert_eq!(c.player_id.is_some(), c.entity_type.is_some());
            assert!(c.damage < 200 && c.entity_id < 400 * 20);
            let t = c.transform;
            assert!(
                t.altitude == 0 || (-120..-35).contains(&t.altitude),
                "{t:?}"
            );
            assert!(t.position.0.abs() <= 750.0 && t.position.1.abs() <= 750.0);
            for v in [t.velocity, c.guidance.velocity] {
                assert!(
                    v == 0 || (140..900).contains(&v) || (-225..-35).contains(&v),
                    "{v}"
                );
            }
        }
        assert!(contacts.iter().any(|c| c.transform.altitude < 0));
        let mut new_chunks = 0;
        let mut terrain_updates = 0;
        for u in &all {
            assert!(
                (20..40).contains(&u.contacts.len()) && (3..10).contains(&u.terrain_updates.len())
            );
            assert!(
                u.score < 5050 && (1682.0..2500.0).contains(&u.world_radius),
                "{}",
                u.world_radius
            );
            for t in &u.terrain_updates {
                let len = t.data.len();
                assert!((3..9).contains(&len) || (900..1100).contains(&len), "{len}");
                assert!((-2..2).contains(&t.chunk_id.0) && (-2..2).contains(&t.chunk_id.1));
                new_chunks += usize::from(len >= 900);
                terrain_updates += 1;
            }
        }
        let new_share = new_chunks as f64 / terrain_updates as f64;
        assert!((0.01..0.03).contains(&new_share), "new chunks {new_share}");
    }
}
