//! `minecraft_savedata.proto`: the tuples become `Vector3d`, `Vector2f`, `Uuid` and `Vehicle`
//! messages, the narrow integers the proto's int32/uint32.

use prost::Message;

use super::{narrow, present, ProstDataset};
use crate::serializers::rsb_data::{
    enum_from_code, Abilities, Entity, GameType, Item, Player, Players, RecipeBook,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PbGameType {
    Survival = 0,
    Creative = 1,
    Adventure = 2,
    Spectator = 3,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbItem {
    #[prost(int32, tag = "1")]
    pub count: i32,
    #[prost(uint32, tag = "2")]
    pub slot: u32,
    #[prost(string, tag = "3")]
    pub id: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbAbilities {
    #[prost(float, tag = "1")]
    pub walk_speed: f32,
    #[prost(float, tag = "2")]
    pub fly_speed: f32,
    #[prost(bool, tag = "3")]
    pub may_fly: bool,
    #[prost(bool, tag = "4")]
    pub flying: bool,
    #[prost(bool, tag = "5")]
    pub invulnerable: bool,
    #[prost(bool, tag = "6")]
    pub may_build: bool,
    #[prost(bool, tag = "7")]
    pub instabuild: bool,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbVector3d {
    #[prost(double, tag = "1")]
    pub x: f64,
    #[prost(double, tag = "2")]
    pub y: f64,
    #[prost(double, tag = "3")]
    pub z: f64,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbVector2f {
    #[prost(float, tag = "1")]
    pub x: f32,
    #[prost(float, tag = "2")]
    pub y: f32,
}

#[derive(Clone, Copy, PartialEq, Message)]
pub struct PbUuid {
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
pub struct PbEntity {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(message, optional, tag = "2")]
    pub pos: Option<PbVector3d>,
    #[prost(message, optional, tag = "3")]
    pub motion: Option<PbVector3d>,
    #[prost(message, optional, tag = "4")]
    pub rotation: Option<PbVector2f>,
    #[prost(float, tag = "5")]
    pub fall_distance: f32,
    #[prost(uint32, tag = "6")]
    pub fire: u32,
    #[prost(uint32, tag = "7")]
    pub air: u32,
    #[prost(bool, tag = "8")]
    pub on_ground: bool,
    #[prost(bool, tag = "9")]
    pub no_gravity: bool,
    #[prost(bool, tag = "10")]
    pub invulnerable: bool,
    #[prost(int32, tag = "11")]
    pub portal_cooldown: i32,
    #[prost(message, optional, tag = "12")]
    pub uuid: Option<PbUuid>,
    #[prost(string, optional, tag = "13")]
    pub custom_name: Option<String>,
    #[prost(bool, tag = "14")]
    pub custom_name_visible: bool,
    #[prost(bool, tag = "15")]
    pub silent: bool,
    #[prost(bool, tag = "16")]
    pub glowing: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbRecipeBook {
    #[prost(string, repeated, tag = "1")]
    pub recipes: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub to_be_displayed: Vec<String>,
    #[prost(bool, tag = "3")]
    pub is_filtering_craftable: bool,
    #[prost(bool, tag = "4")]
    pub is_gui_open: bool,
    #[prost(bool, tag = "5")]
    pub is_furnace_filtering_craftable: bool,
    #[prost(bool, tag = "6")]
    pub is_furnace_gui_open: bool,
    #[prost(bool, tag = "7")]
    pub is_blasting_furnace_filtering_craftable: bool,
    #[prost(bool, tag = "8")]
    pub is_blasting_furnace_gui_open: bool,
    #[prost(bool, tag = "9")]
    pub is_smoker_filtering_craftable: bool,
    #[prost(bool, tag = "10")]
    pub is_smoker_gui_open: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbVehicle {
    #[prost(message, optional, tag = "1")]
    pub uuid: Option<PbUuid>,
    #[prost(message, optional, tag = "2")]
    pub entity: Option<PbEntity>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbPlayer {
    #[prost(enumeration = "PbGameType", tag = "1")]
    pub game_type: i32,
    #[prost(enumeration = "PbGameType", tag = "2")]
    pub previous_game_type: i32,
    #[prost(int64, tag = "3")]
    pub score: i64,
    #[prost(string, tag = "4")]
    pub dimension: String,
    #[prost(uint32, tag = "5")]
    pub selected_item_slot: u32,
    #[prost(message, optional, tag = "6")]
    pub selected_item: Option<PbItem>,
    #[prost(string, optional, tag = "7")]
    pub spawn_dimension: Option<String>,
    #[prost(int64, tag = "8")]
    pub spawn_x: i64,
    #[prost(int64, tag = "9")]
    pub spawn_y: i64,
    #[prost(int64, tag = "10")]
    pub spawn_z: i64,
    #[prost(bool, optional, tag = "11")]
    pub spawn_forced: Option<bool>,
    #[prost(uint32, tag = "12")]
    pub sleep_timer: u32,
    #[prost(float, tag = "13")]
    pub food_exhaustion_level: f32,
    #[prost(float, tag = "14")]
    pub food_saturation_level: f32,
    #[prost(uint32, tag = "15")]
    pub food_tick_timer: u32,
    #[prost(uint32, tag = "16")]
    pub xp_level: u32,
    #[prost(float, tag = "17")]
    pub xp_p: f32,
    #[prost(int32, tag = "18")]
    pub xp_total: i32,
    #[prost(int32, tag = "19")]
    pub xp_seed: i32,
    #[prost(message, repeated, tag = "20")]
    pub inventory: Vec<PbItem>,
    #[prost(message, repeated, tag = "21")]
    pub ender_items: Vec<PbItem>,
    #[prost(message, optional, tag = "22")]
    pub abilities: Option<PbAbilities>,
    #[prost(message, optional, tag = "23")]
    pub entered_nether_position: Option<PbVector3d>,
    #[prost(message, optional, tag = "24")]
    pub root_vehicle: Option<PbVehicle>,
    #[prost(message, optional, tag = "25")]
    pub shoulder_entity_left: Option<PbEntity>,
    #[prost(message, optional, tag = "26")]
    pub shoulder_entity_right: Option<PbEntity>,
    #[prost(bool, tag = "27")]
    pub seen_credits: bool,
    #[prost(message, optional, tag = "28")]
    pub recipe_book: Option<PbRecipeBook>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbPlayers {
    #[prost(message, repeated, tag = "1")]
    pub players: Vec<PbPlayer>,
}

fn pb_item(i: &Item) -> PbItem {
    PbItem {
        count: i.count.into(),
        slot: i.slot.into(),
        id: i.id.clone(),
    }
}

fn item(i: PbItem) -> Result<Item, String> {
    Ok(Item {
        count: narrow(i.count)?,
        slot: narrow(i.slot)?,
        id: i.id,
    })
}

fn pb_vector3d(v: (f64, f64, f64)) -> PbVector3d {
    PbVector3d {
        x: v.0,
        y: v.1,
        z: v.2,
    }
}

fn vector3d(v: Option<PbVector3d>) -> Result<(f64, f64, f64), String> {
    let v = present(v, "vector3d")?;
    Ok((v.x, v.y, v.z))
}

fn pb_uuid(u: [u32; 4]) -> PbUuid {
    PbUuid {
        x0: u[0],
        x1: u[1],
        x2: u[2],
        x3: u[3],
    }
}

fn uuid(u: Option<PbUuid>) -> Result<[u32; 4], String> {
    let u = present(u, "uuid")?;
    Ok([u.x0, u.x1, u.x2, u.x3])
}

fn pb_entity(e: &Entity) -> PbEntity {
    PbEntity {
        id: e.id.clone(),
        pos: Some(pb_vector3d(e.pos)),
        motion: Some(pb_vector3d(e.motion)),
        rotation: Some(PbVector2f {
            x: e.rotation.0,
            y: e.rotation.1,
        }),
        fall_distance: e.fall_distance,
        fire: e.fire.into(),
        air: e.air.into(),
        on_ground: e.on_ground,
        no_gravity: e.no_gravity,
        invulnerable: e.invulnerable,
        portal_cooldown: e.portal_cooldown,
        uuid: Some(pb_uuid(e.uuid)),
        custom_name: e.custom_name.clone(),
        custom_name_visible: e.custom_name_visible,
        silent: e.silent,
        glowing: e.glowing,
    }
}

fn entity(e: PbEntity) -> Result<Entity, String> {
    let rotation = present(e.rotation, "rotation")?;
    Ok(Entity {
        id: e.id,
        pos: vector3d(e.pos)?,
        motion: vector3d(e.motion)?,
        rotation: (rotation.x, rotation.y),
        fall_distance: e.fall_distance,
        fire: narrow(e.fire)?,
        air: narrow(e.air)?,
        on_ground: e.on_ground,
        no_gravity: e.no_gravity,
        invulnerable: e.invulnerable,
        portal_cooldown: e.portal_cooldown,
        uuid: uuid(e.uuid)?,
        custom_name: e.custom_name,
        custom_name_visible: e.custom_name_visible,
        silent: e.silent,
        glowing: e.glowing,
    })
}

fn game_type(code: i32) -> Result<GameType, String> {
    enum_from_code(&GameType::ALL, code.into(), "game type")
}

fn pb_player(p: &Player) -> PbPlayer {
    let a = &p.abilities;
    let r = &p.recipe_book;
    PbPlayer {
        game_type: p.game_type as i32,
        previous_game_type: p.previous_game_type as i32,
        score: p.score,
        dimension: p.dimension.clone(),
        selected_item_slot: p.selected_item_slot,
        selected_item: Some(pb_item(&p.selected_item)),
        spawn_dimension: p.spawn_dimension.clone(),
        spawn_x: p.spawn_x,
        spawn_y: p.spawn_y,
        spawn_z: p.spawn_z,
        spawn_forced: p.spawn_forced,
        sleep_timer: p.sleep_timer.into(),
        food_exhaustion_level: p.food_exhaustion_level,
        food_saturation_level: p.food_saturation_level,
        food_tick_timer: p.food_tick_timer,
        xp_level: p.xp_level,
        xp_p: p.xp_p,
        xp_total: p.xp_total,
        xp_seed: p.xp_seed,
        inventory: p.inventory.iter().map(pb_item).collect(),
        ender_items: p.ender_items.iter().map(pb_item).collect(),
        abilities: Some(PbAbilities {
            walk_speed: a.walk_speed,
            fly_speed: a.fly_speed,
            may_fly: a.may_fly,
            flying: a.flying,
            invulnerable: a.invulnerable,
            may_build: a.may_build,
            instabuild: a.instabuild,
        }),
        entered_nether_position: p.entered_nether_position.map(pb_vector3d),
        root_vehicle: p.root_vehicle.as_ref().map(|(u, e)| PbVehicle {
            uuid: Some(pb_uuid(*u)),
            entity: Some(pb_entity(e)),
        }),
        shoulder_entity_left: p.shoulder_entity_left.as_ref().map(pb_entity),
        shoulder_entity_right: p.shoulder_entity_right.as_ref().map(pb_entity),
        seen_credits: p.seen_credits,
        recipe_book: Some({
            let [a, b, c, d, e, f, g, h] = r.flags();
            PbRecipeBook {
                recipes: r.recipes.clone(),
                to_be_displayed: r.to_be_displayed.clone(),
                is_filtering_craftable: a,
                is_gui_open: b,
                is_furnace_filtering_craftable: c,
                is_furnace_gui_open: d,
                is_blasting_furnace_filtering_craftable: e,
                is_blasting_furnace_gui_open: f,
                is_smoker_filtering_craftable: g,
                is_smoker_gui_open: h,
            }
        }),
    }
}

fn player(p: PbPlayer) -> Result<Player, String> {
    let a = present(p.abilities, "abilities")?;
    let r = present(p.recipe_book, "recipe_book")?;
    Ok(Player {
        game_type: game_type(p.game_type)?,
        previous_game_type: game_type(p.previous_game_type)?,
        score: p.score,
        dimension: p.dimension,
        selected_item_slot: p.selected_item_slot,
        selected_item: item(present(p.selected_item, "selected_item")?)?,
        spawn_dimension: p.spawn_dimension,
        spawn_x: p.spawn_x,
        spawn_y: p.spawn_y,
        spawn_z: p.spawn_z,
        spawn_forced: p.spawn_forced,
        sleep_timer: narrow(p.sleep_timer)?,
        food_exhaustion_level: p.food_exhaustion_level,
        food_saturation_level: p.food_saturation_level,
        food_tick_timer: p.food_tick_timer,
        xp_level: p.xp_level,
        xp_p: p.xp_p,
        xp_total: p.xp_total,
        xp_seed: p.xp_seed,
        inventory: p
            .inventory
            .into_iter()
            .map(item)
            .collect::<Result<_, _>>()?,
        ender_items: p
            .ender_items
            .into_iter()
            .map(item)
            .collect::<Result<_, _>>()?,
        abilities: Abilities {
            walk_speed: a.walk_speed,
            fly_speed: a.fly_speed,
            may_fly: a.may_fly,
            flying: a.flying,
            invulnerable: a.invulnerable,
            may_build: a.may_build,
            instabuild: a.instabuild,
        },
        entered_nether_position: p
            .entered_nether_position
            .map(|v| vector3d(Some(v)))
            .transpose()?,
        root_vehicle: p
            .root_vehicle
            .map(|v| Ok::<_, String>((uuid(v.uuid)?, entity(present(v.entity, "entity")?)?)))
            .transpose()?,
        shoulder_entity_left: p.shoulder_entity_left.map(entity).transpose()?,
        shoulder_entity_right: p.shoulder_entity_right.map(entity).transpose()?,
        seen_credits: p.seen_credits,
        recipe_book: RecipeBook::with_flags(
            r.recipes,
            r.to_be_displayed,
            [
                r.is_filtering_craftable,
                r.is_gui_open,
                r.is_furnace_filtering_craftable,
                r.is_furnace_gui_open,
                r.is_blasting_furnace_filtering_craftable,
                r.is_blasting_furnace_gui_open,
                r.is_smoker_filtering_craftable,
                r.is_smoker_gui_open,
            ],
        ),
    })
}

impl ProstDataset for Players {
    type Message = PbPlayers;

    fn to_message(&self) -> PbPlayers {
        PbPlayers {
            players: self.players.iter().map(pb_player).collect(),
        }
    }

    fn from_message(message: PbPlayers) -> Result<Players, String> {
        let players = message
            .players
            .into_iter()
            .map(player)
            .collect::<Result<_, _>>()?;
        Ok(Players { players })
    }
}
