//! `minecraft_savedata`, in the shape of the benchmark's `minecraft_savedata.proto` (u8 as
//! i16, u16 as i32, u32 as i64, f32 as double; the proto's `optional` fields `optional`):
//!
//! ```thrift
//! enum GameType { SURVIVAL, CREATIVE, ADVENTURE, SPECTATOR }
//! struct Item { 1: byte count, 2: i16 slot, 3: string id }
//! struct Abilities { 1: double walk_speed, 2: double fly_speed, 3: bool may_fly,
//!   4: bool flying, 5: bool invulnerable, 6: bool may_build, 7: bool instabuild }
//! struct Vector3d { 1: double x, 2: double y, 3: double z }
//! struct Vector2f { 1: double x, 2: double y }
//! struct Uuid { 1: i64 x0, 2: i64 x1, 3: i64 x2, 4: i64 x3 }
//! struct Entity { 1: string id, 2: Vector3d pos, 3: Vector3d motion, 4: Vector2f rotation,
//!   5: double fall_distance, 6: i32 fire, 7: i32 air, 8: bool on_ground, 9: bool no_gravity,
//!   10: bool invulnerable, 11: i32 portal_cooldown, 12: Uuid uuid,
//!   13: optional string custom_name, 14: bool custom_name_visible, 15: bool silent,
//!   16: bool glowing }
//! struct RecipeBook { 1: list<string> recipes, 2: list<string> to_be_displayed,
//!   3: bool is_filtering_craftable, 4: bool is_gui_open, 5: bool is_furnace_filtering_craftable,
//!   6: bool is_furnace_gui_open, 7: bool is_blasting_furnace_filtering_craftable,
//!   8: bool is_blasting_furnace_gui_open, 9: bool is_smoker_filtering_craftable,
//!   10: bool is_smoker_gui_open }
//! struct Vehicle { 1: Uuid uuid, 2: Entity entity }
//! struct Player { 1: GameType game_type, 2: GameType previous_game_type, 3: i64 score,
//!   4: string dimension, 5: i64 selected_item_slot, 6: Item selected_item,
//!   7: optional string spawn_dimension, 8: i64 spawn_x, 9: i64 spawn_y, 10: i64 spawn_z,
//!   11: optional bool spawn_forced, 12: i32 sleep_timer, 13: double food_exhaustion_level,
//!   14: double food_saturation_level, 15: i64 food_tick_timer, 16: i64 xp_level,
//!   17: double xp_p, 18: i32 xp_total, 19: i32 xp_seed, 20: list<Item> inventory,
//!   21: list<Item> ender_items, 22: Abilities abilities,
//!   23: optional Vector3d entered_nether_position, 24: optional Vehicle root_vehicle,
//!   25: optional Entity shoulder_entity_left, 26: optional Entity shoulder_entity_right,
//!   27: bool seen_credits, 28: RecipeBook recipe_book }
//! struct Players { 1: list<Player> players }
//! ```

use thrift::protocol::{TInputProtocol, TOutputProtocol, TType};

use super::{
    get_list, narrow, put, put_list, put_struct, read_list_struct, read_struct, read_vector,
    write_bool, write_double, write_i16, write_i8, write_list_struct, write_vector, In, Out,
    ThriftDataset,
};
use crate::serializers::peer_thrift::{protocol_error, write_i32, write_i64, write_string};
use crate::serializers::rsb_data::{
    enum_from_code, Abilities, Entity, GameType, Item, Player, Players, RecipeBook,
};

fn write_item(o: Out, item: &Item) -> thrift::Result<()> {
    put_struct(o, "Item", |o| {
        write_i8(o, "count", 1, item.count)?;
        write_i16(o, "slot", 2, item.slot.into())?;
        write_string(o, "id", 3, &item.id)
    })
}

fn read_item(i: In) -> thrift::Result<Item> {
    let mut item = Item::default();
    read_struct(i, "Item", &[1, 2, 3], |i, id| {
        match id {
            1 => item.count = i.read_i8()?,
            2 => item.slot = narrow(i.read_i16()?)?,
            3 => item.id = i.read_string()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(item)
}

fn write_vector3d(o: Out, name: &str, id: i16, v: (f64, f64, f64)) -> thrift::Result<()> {
    write_vector(o, name, id, "Vector3d", &[v.0, v.1, v.2])
}

fn read_vector3d(i: In) -> thrift::Result<(f64, f64, f64)> {
    let [x, y, z] = read_vector(i, "Vector3d")?;
    Ok((x, y, z))
}

fn write_uuid(o: Out, id: i16, uuid: [u32; 4]) -> thrift::Result<()> {
    put(o, "uuid", TType::Struct, id, |o| {
        put_struct(o, "Uuid", |o| {
            for (n, (name, x)) in ["x0", "x1", "x2", "x3"].into_iter().zip(uuid).enumerate() {
                write_i64(o, name, n as i16 + 1, x.into())?;
            }
            Ok(())
        })
    })
}

fn read_uuid(i: In) -> thrift::Result<[u32; 4]> {
    let mut uuid = [0; 4];
    read_struct(i, "Uuid", &[1, 2, 3, 4], |i, id| match id {
        1..=4 => {
            uuid[id as usize - 1] = narrow(i.read_i64()?)?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(uuid)
}

fn write_entity(o: Out, e: &Entity) -> thrift::Result<()> {
    put_struct(o, "Entity", |o| {
        write_string(o, "id", 1, &e.id)?;
        write_vector3d(o, "pos", 2, e.pos)?;
        write_vector3d(o, "motion", 3, e.motion)?;
        let rotation = [e.rotation.0.into(), e.rotation.1.into()];
        write_vector(o, "rotation", 4, "Vector2f", &rotation)?;
        write_double(o, "fall_distance", 5, e.fall_distance.into())?;
        write_i32(o, "fire", 6, e.fire.into())?;
        write_i32(o, "air", 7, e.air.into())?;
        write_bool(o, "on_ground", 8, e.on_ground)?;
        write_bool(o, "no_gravity", 9, e.no_gravity)?;
        write_bool(o, "invulnerable", 10, e.invulnerable)?;
        write_i32(o, "portal_cooldown", 11, e.portal_cooldown)?;
        write_uuid(o, 12, e.uuid)?;
        if let Some(name) = &e.custom_name {
            write_string(o, "custom_name", 13, name)?;
        }
        write_bool(o, "custom_name_visible", 14, e.custom_name_visible)?;
        write_bool(o, "silent", 15, e.silent)?;
        write_bool(o, "glowing", 16, e.glowing)
    })
}

fn read_entity(i: In) -> thrift::Result<Entity> {
    let mut e = Entity::default();
    let required = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16];
    read_struct(i, "Entity", &required, |i, id| {
        match id {
            1 => e.id = i.read_string()?,
            2 => e.pos = read_vector3d(i)?,
            3 => e.motion = read_vector3d(i)?,
            4 => {
                let [x, y] = read_vector(i, "Vector2f")?;
                e.rotation = (x as f32, y as f32);
            }
            5 => e.fall_distance = i.read_double()? as f32,
            6 => e.fire = narrow(i.read_i32()?)?,
            7 => e.air = narrow(i.read_i32()?)?,
            8 => e.on_ground = i.read_bool()?,
            9 => e.no_gravity = i.read_bool()?,
            10 => e.invulnerable = i.read_bool()?,
            11 => e.portal_cooldown = i.read_i32()?,
            12 => e.uuid = read_uuid(i)?,
            13 => e.custom_name = Some(i.read_string()?),
            14 => e.custom_name_visible = i.read_bool()?,
            15 => e.silent = i.read_bool()?,
            16 => e.glowing = i.read_bool()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(e)
}

fn write_recipe_book(o: Out, r: &RecipeBook) -> thrift::Result<()> {
    put_struct(o, "RecipeBook", |o| {
        let lists = [
            ("recipes", &r.recipes),
            ("to_be_displayed", &r.to_be_displayed),
        ];
        for (id, (name, names)) in (1..).zip(lists) {
            put(o, name, TType::List, id, |o| {
                put_list(o, TType::String, names, |o, n| o.write_string(n))
            })?;
        }
        let flags = RecipeBook::FLAG_NAMES.into_iter().zip(r.flags());
        for (id, (name, flag)) in (3..).zip(flags) {
            write_bool(o, name, id, flag)?;
        }
        Ok(())
    })
}

fn read_recipe_book(i: In) -> thrift::Result<RecipeBook> {
    let (mut recipes, mut to_be_displayed, mut flags) = (Vec::new(), Vec::new(), [false; 8]);
    read_struct(
        i,
        "RecipeBook",
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        |i, id| {
            match id {
                1 => recipes = get_list(i, |i| i.read_string())?,
                2 => to_be_displayed = get_list(i, |i| i.read_string())?,
                3..=10 => flags[id as usize - 3] = i.read_bool()?,
                _ => return Ok(false),
            }
            Ok(true)
        },
    )?;
    Ok(RecipeBook::with_flags(recipes, to_be_displayed, flags))
}

fn write_player(o: Out, p: &Player) -> thrift::Result<()> {
    put_struct(o, "Player", |o| {
        write_i32(o, "game_type", 1, p.game_type as i32)?;
        write_i32(o, "previous_game_type", 2, p.previous_game_type as i32)?;
        write_i64(o, "score", 3, p.score)?;
        write_string(o, "dimension", 4, &p.dimension)?;
        write_i64(o, "selected_item_slot", 5, p.selected_item_slot.into())?;
        put(o, "selected_item", TType::Struct, 6, |o| {
            write_item(o, &p.selected_item)
        })?;
        if let Some(dimension) = &p.spawn_dimension {
            write_string(o, "spawn_dimension", 7, dimension)?;
        }
        write_i64(o, "spawn_x", 8, p.spawn_x)?;
        write_i64(o, "spawn_y", 9, p.spawn_y)?;
        write_i64(o, "spawn_z", 10, p.spawn_z)?;
        if let Some(forced) = p.spawn_forced {
            write_bool(o, "spawn_forced", 11, forced)?;
        }
        write_i32(o, "sleep_timer", 12, p.sleep_timer.into())?;
        write_double(
            o,
            "food_exhaustion_level",
            13,
            p.food_exhaustion_level.into(),
        )?;
        write_double(
            o,
            "food_saturation_level",
            14,
            p.food_saturation_level.into(),
        )?;
        write_i64(o, "food_tick_timer", 15, p.food_tick_timer.into())?;
        write_i64(o, "xp_level", 16, p.xp_level.into())?;
        write_double(o, "xp_p", 17, p.xp_p.into())?;
        write_i32(o, "xp_total", 18, p.xp_total)?;
        write_i32(o, "xp_seed", 19, p.xp_seed)?;
        let items = [("inventory", &p.inventory), ("ender_items", &p.ender_items)];
        for (id, (name, items)) in (20..).zip(items) {
            put(o, name, TType::List, id, |o| {
                put_list(o, TType::Struct, items, write_item)
            })?;
        }
        let a = &p.abilities;
        put(o, "abilities", TType::Struct, 22, |o| {
            put_struct(o, "Abilities", |o| {
                write_double(o, "walk_speed", 1, a.walk_speed.into())?;
                write_double(o, "fly_speed", 2, a.fly_speed.into())?;
                write_bool(o, "may_fly", 3, a.may_fly)?;
                write_bool(o, "flying", 4, a.flying)?;
                write_bool(o, "invulnerable", 5, a.invulnerable)?;
                write_bool(o, "may_build", 6, a.may_build)?;
                write_bool(o, "instabuild", 7, a.instabuild)
            })
        })?;
        if let Some(position) = p.entered_nether_position {
            write_vector3d(o, "entered_nether_position", 23, position)?;
        }
        if let Some((uuid, entity)) = &p.root_vehicle {
            put(o, "root_vehicle", TType::Struct, 24, |o| {
                put_struct(o, "Vehicle", |o| {
                    write_uuid(o, 1, *uuid)?;
                    put(o, "entity", TType::Struct, 2, |o| write_entity(o, entity))
                })
            })?;
        }
        let shoulders = [
            ("shoulder_entity_left", &p.shoulder_entity_left),
            ("shoulder_entity_right", &p.shoulder_entity_right),
        ];
        for (id, (name, entity)) in (25..).zip(shoulders) {
            if let Some(entity) = entity {
                put(o, name, TType::Struct, id, |o| write_entity(o, entity))?;
            }
        }
        write_bool(o, "seen_credits", 27, p.seen_credits)?;
        put(o, "recipe_book", TType::Struct, 28, |o| {
            write_recipe_book(o, &p.recipe_book)
        })
    })
}

fn read_abilities(i: In) -> thrift::Result<Abilities> {
    let mut a = Abilities::default();
    read_struct(i, "Abilities", &[1, 2, 3, 4, 5, 6, 7], |i, id| {
        match id {
            1 => a.walk_speed = i.read_double()? as f32,
            2 => a.fly_speed = i.read_double()? as f32,
            3 => a.may_fly = i.read_bool()?,
            4 => a.flying = i.read_bool()?,
            5 => a.invulnerable = i.read_bool()?,
            6 => a.may_build = i.read_bool()?,
            7 => a.instabuild = i.read_bool()?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(a)
}

fn read_vehicle(i: In) -> thrift::Result<([u32; 4], Entity)> {
    let (mut uuid, mut entity) = ([0; 4], Entity::default());
    read_struct(i, "Vehicle", &[1, 2], |i, id| {
        match id {
            1 => uuid = read_uuid(i)?,
            2 => entity = read_entity(i)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok((uuid, entity))
}

fn game_type(code: i32) -> thrift::Result<GameType> {
    enum_from_code(&GameType::ALL, code.into(), "game type").map_err(protocol_error)
}

fn read_player(i: In) -> thrift::Result<Player> {
    let mut p = Player::default();
    let required = [
        1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28,
    ];
    read_struct(i, "Player", &required, |i, id| {
        match id {
            1 => p.game_type = game_type(i.read_i32()?)?,
            2 => p.previous_game_type = game_type(i.read_i32()?)?,
            3 => p.score = i.read_i64()?,
            4 => p.dimension = i.read_string()?,
            5 => p.selected_item_slot = narrow(i.read_i64()?)?,
            6 => p.selected_item = read_item(i)?,
            7 => p.spawn_dimension = Some(i.read_string()?),
            8 => p.spawn_x = i.read_i64()?,
            9 => p.spawn_y = i.read_i64()?,
            10 => p.spawn_z = i.read_i64()?,
            11 => p.spawn_forced = Some(i.read_bool()?),
            12 => p.sleep_timer = narrow(i.read_i32()?)?,
            13 => p.food_exhaustion_level = i.read_double()? as f32,
            14 => p.food_saturation_level = i.read_double()? as f32,
            15 => p.food_tick_timer = narrow(i.read_i64()?)?,
            16 => p.xp_level = narrow(i.read_i64()?)?,
            17 => p.xp_p = i.read_double()? as f32,
            18 => p.xp_total = i.read_i32()?,
            19 => p.xp_seed = i.read_i32()?,
            20 => p.inventory = get_list(i, read_item)?,
            21 => p.ender_items = get_list(i, read_item)?,
            22 => p.abilities = read_abilities(i)?,
            23 => p.entered_nether_position = Some(read_vector3d(i)?),
            24 => p.root_vehicle = Some(read_vehicle(i)?),
            25 => p.shoulder_entity_left = Some(read_entity(i)?),
            26 => p.shoulder_entity_right = Some(read_entity(i)?),
            27 => p.seen_credits = i.read_bool()?,
            28 => p.recipe_book = read_recipe_book(i)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(p)
}

impl ThriftDataset for Players {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        write_list_struct(o, "Players", "players", &self.players, write_player)
    }

    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Players> {
        Ok(Players {
            players: read_list_struct(i, read_player)?,
        })
    }
}
