//! `minecraft_savedata`: players' save data, the benchmark's structs field for field (tuples
//! for positions, rotations and the vehicle, `[u32; 4]` UUIDs, unit enums, options).
//!
//! A player is a row of 28 columns in the order of the benchmark's `minecraft_savedata.proto`:
//! the enums `game_type` and `previous_game_type` as int32 codes (the proto's enum numbers,
//! what our Protobuf, Thrift and Avro write for an enum), integers in their own widths (`count`
//! int8, `slot` uint8, `fire`/`air`/`sleep_timer` uint16, ...), f32 as float, f64 as double,
//! each `Option` an `optional<T>`, each `Vec` a `list<T>`, and the tuples and arrays as the
//! proto's messages: structs `Vector3d {x; y; z}` (double), `Vector2f {x; y}` (float),
//! `Uuid {x0..x3}` (uint32) and `Vehicle {uuid; entity}` for `root_vehicle`.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shapeshift_types::{TableSchema, Value};

use super::{
    boolean, columns_of, double, double_value, enum_of, float, int_value, list_of, list_type,
    list_value, narrow, narrow_signed, optional_of, optional_type, optional_value, records_of,
    signed, string, struct_type, take, text, uint_value, TableRows,
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
pub enum GameType {
    #[default]
    Survival,
    Creative,
    Adventure,
    Spectator,
}

impl GameType {
    /// In code order (the proto's enum numbers).
    pub const ALL: [GameType; 4] = [
        GameType::Survival,
        GameType::Creative,
        GameType::Adventure,
        GameType::Spectator,
    ];
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Item {
    pub count: i8,
    pub slot: u8,
    pub id: String,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Abilities {
    pub walk_speed: f32,
    pub fly_speed: f32,
    pub may_fly: bool,
    pub flying: bool,
    pub invulnerable: bool,
    pub may_build: bool,
    pub instabuild: bool,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Entity {
    pub id: String,
    pub pos: (f64, f64, f64),
    pub motion: (f64, f64, f64),
    pub rotation: (f32, f32),
    pub fall_distance: f32,
    pub fire: u16,
    pub air: u16,
    pub on_ground: bool,
    pub no_gravity: bool,
    pub invulnerable: bool,
    pub portal_cooldown: i32,
    pub uuid: [u32; 4],
    pub custom_name: Option<String>,
    pub custom_name_visible: bool,
    pub silent: bool,
    pub glowing: bool,
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct RecipeBook {
    pub recipes: Vec<String>,
    pub to_be_displayed: Vec<String>,
    pub is_filtering_craftable: bool,
    pub is_gui_open: bool,
    pub is_furnace_filtering_craftable: bool,
    pub is_furnace_gui_open: bool,
    pub is_blasting_furnace_filtering_craftable: bool,
    pub is_blasting_furnace_gui_open: bool,
    pub is_smoker_filtering_craftable: bool,
    pub is_smoker_gui_open: bool,
}

impl RecipeBook {
    /// The names of the eight booleans after the two lists, in field order (the peers' schemas
    /// spell them out from here).
    pub const FLAG_NAMES: [&'static str; 8] = [
        "is_filtering_craftable",
        "is_gui_open",
        "is_furnace_filtering_craftable",
        "is_furnace_gui_open",
        "is_blasting_furnace_filtering_craftable",
        "is_blasting_furnace_gui_open",
        "is_smoker_filtering_craftable",
        "is_smoker_gui_open",
    ];

    pub fn flags(&self) -> [bool; 8] {
        [
            self.is_filtering_craftable,
            self.is_gui_open,
            self.is_furnace_filtering_craftable,
            self.is_furnace_gui_open,
            self.is_blasting_furnace_filtering_craftable,
            self.is_blasting_furnace_gui_open,
            self.is_smoker_filtering_craftable,
            self.is_smoker_gui_open,
        ]
    }

    pub fn with_flags(
        recipes: Vec<String>,
        to_be_displayed: Vec<String>,
        flags: [bool; 8],
    ) -> Self {
        let [a, b, c, d, e, f, g, h] = flags;
        RecipeBook {
            recipes,
            to_be_displayed,
            is_filtering_craftable: a,
            is_gui_open: b,
            is_furnace_filtering_craftable: c,
            is_furnace_gui_open: d,
            is_blasting_furnace_filtering_craftable: e,
            is_blasting_furnace_gui_open: f,
            is_smoker_filtering_craftable: g,
            is_smoker_gui_open: h,
        }
    }
}

#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Player {
    pub game_type: GameType,
    pub previous_game_type: GameType,
    pub score: i64,
    pub dimension: String,
    pub selected_item_slot: u32,
    pub selected_item: Item,
    pub spawn_dimension: Option<String>,
    pub spawn_x: i64,
    pub spawn_y: i64,
    pub spawn_z: i64,
    pub spawn_forced: Option<bool>,
    pub sleep_timer: u16,
    pub food_exhaustion_level: f32,
    pub food_saturation_level: f32,
    pub food_tick_timer: u32,
    pub xp_level: u32,
    pub xp_p: f32,
    pub xp_total: i32,
    pub xp_seed: i32,
    pub inventory: Vec<Item>,
    pub ender_items: Vec<Item>,
    pub abilities: Abilities,
    pub entered_nether_position: Option<(f64, f64, f64)>,
    pub root_vehicle: Option<([u32; 4], Entity)>,
    pub shoulder_entity_left: Option<Entity>,
    pub shoulder_entity_right: Option<Entity>,
    pub seen_credits: bool,
    pub recipe_book: RecipeBook,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Players {
    pub players: Vec<Player>,
}

/// The benchmark's record count.
pub const PLAYER_COUNT: usize = 500;

const ITEM_IDS: [&str; 8] = [
    "dirt",
    "stone",
    "pickaxe",
    "sand",
    "gravel",
    "shovel",
    "chestplate",
    "steak",
];
const ENTITY_IDS: [&str; 8] = [
    "cow", "sheep", "zombie", "skeleton", "spider", "creeper", "parrot", "bee",
];
const CUSTOM_NAMES: [&str; 8] = [
    "rainbow", "princess", "steve", "johnny", "missy", "coward", "fairy", "howard",
];
const RECIPES: [&str; 8] = [
    "pickaxe",
    "torch",
    "bow",
    "crafting table",
    "furnace",
    "shears",
    "arrow",
    "tnt",
];
const DIMENSIONS: [&str; 3] = ["overworld", "nether", "end"];
/// Exclusive upper bounds of the benchmark's vector lengths.
const MAX_ITEMS: usize = 40;
const MAX_ENDER_ITEMS: usize = 27;
const MAX_RECIPES: usize = 30;
const MAX_DISPLAYED_RECIPES: usize = 10;

/// The benchmark's draws: integers and floats over their whole type (floats in [0, 1)),
/// booleans and options 50/50, names from fixed lists, vectors of a uniform length below the
/// maximum.
struct Draw(ChaCha8Rng);

impl Draw {
    fn pick(&mut self, names: &[&str]) -> String {
        names[self.0.random_range(0..names.len())].to_string()
    }

    fn coin(&mut self) -> bool {
        self.0.random_bool(0.5)
    }

    fn maybe<T>(&mut self, value: impl FnOnce(&mut Self) -> T) -> Option<T> {
        self.coin().then(|| value(self))
    }

    fn many<T>(&mut self, max: usize, mut item: impl FnMut(&mut Self) -> T) -> Vec<T> {
        let len = self.0.random_range(0..max);
        (0..len).map(|_| item(self)).collect()
    }

    fn vector3d(&mut self) -> (f64, f64, f64) {
        (self.0.random(), self.0.random(), self.0.random())
    }

    fn uuid(&mut self) -> [u32; 4] {
        [(); 4].map(|_| self.0.random())
    }

    fn item(&mut self) -> Item {
        Item {
            count: self.0.random(),
            slot: self.0.random(),
            id: self.pick(&ITEM_IDS),
        }
    }

    fn entity(&mut self) -> Entity {
        Entity {
            id: self.pick(&ENTITY_IDS),
            pos: self.vector3d(),
            motion: self.vector3d(),
            rotation: (self.0.random(), self.0.random()),
            fall_distance: self.0.random(),
            fire: self.0.random(),
            air: self.0.random(),
            on_ground: self.coin(),
            no_gravity: self.coin(),
            invulnerable: self.coin(),
            portal_cooldown: self.0.random(),
            uuid: self.uuid(),
            custom_name: self.maybe(|d| d.pick(&CUSTOM_NAMES)),
            custom_name_visible: self.coin(),
            silent: self.coin(),
            glowing: self.coin(),
        }
    }

    fn player(&mut self) -> Player {
        let game_type = GameType::ALL[self.0.random_range(0..4)];
        let previous_game_type = GameType::ALL[self.0.random_range(0..4)];
        Player {
            game_type,
            previous_game_type,
            score: self.0.random(),
            dimension: self.pick(&DIMENSIONS),
            selected_item_slot: self.0.random(),
            selected_item: self.item(),
            spawn_dimension: self.maybe(|d| d.pick(&DIMENSIONS)),
            spawn_x: self.0.random(),
            spawn_y: self.0.random(),
            spawn_z: self.0.random(),
            spawn_forced: self.maybe(Draw::coin),
            sleep_timer: self.0.random(),
            food_exhaustion_level: self.0.random(),
            food_saturation_level: self.0.random(),
            food_tick_timer: self.0.random(),
            xp_level: self.0.random(),
            xp_p: self.0.random(),
            xp_total: self.0.random(),
            xp_seed: self.0.random(),
            inventory: self.many(MAX_ITEMS, Draw::item),
            ender_items: self.many(MAX_ENDER_ITEMS, Draw::item),
            abilities: Abilities {
                walk_speed: self.0.random(),
                fly_speed: self.0.random(),
                may_fly: self.coin(),
                flying: self.coin(),
                invulnerable: self.coin(),
                may_build: self.coin(),
                instabuild: self.coin(),
            },
            entered_nether_position: self.maybe(Draw::vector3d),
            root_vehicle: self.maybe(|d| (d.uuid(), d.entity())),
            shoulder_entity_left: self.maybe(Draw::entity),
            shoulder_entity_right: self.maybe(Draw::entity),
            seen_credits: self.coin(),
            recipe_book: RecipeBook::with_flags(
                self.many(MAX_RECIPES, |d| d.pick(&RECIPES)),
                self.many(MAX_DISPLAYED_RECIPES, |d| d.pick(&RECIPES)),
                [(); 8].map(|_| self.coin()),
            ),
        }
    }
}

/// `count` players from `seed`.
pub fn players(count: usize, seed: u64) -> Players {
    let mut draw = Draw(ChaCha8Rng::seed_from_u64(seed));
    Players {
        players: (0..count).map(|_| draw.player()).collect(),
    }
}

fn vector3d_type() -> String {
    struct_type(&[("x", "double"), ("y", "double"), ("z", "double")])
}

fn item_type() -> String {
    struct_type(&[("count", "int8"), ("slot", "uint8"), ("id", "utf8")])
}

fn uuid_type() -> String {
    struct_type(&[
        ("x0", "uint32"),
        ("x1", "uint32"),
        ("x2", "uint32"),
        ("x3", "uint32"),
    ])
}

fn entity_type() -> String {
    let vector3d = vector3d_type();
    struct_type(&[
        ("id", "utf8"),
        ("pos", &vector3d),
        ("motion", &vector3d),
        ("rotation", &struct_type(&[("x", "float"), ("y", "float")])),
        ("fall_distance", "float"),
        ("fire", "uint16"),
        ("air", "uint16"),
        ("on_ground", "bool"),
        ("no_gravity", "bool"),
        ("invulnerable", "bool"),
        ("portal_cooldown", "int32"),
        ("uuid", &uuid_type()),
        ("custom_name", &optional_type("utf8")),
        ("custom_name_visible", "bool"),
        ("silent", "bool"),
        ("glowing", "bool"),
    ])
}

fn vector3d_value(v: (f64, f64, f64)) -> Value {
    Value::Tuple(vec![
        double_value(v.0),
        double_value(v.1),
        double_value(v.2),
    ])
}

fn vector3d_of(value: Value) -> Result<(f64, f64, f64), String> {
    let [x, y, z] = take(value, "vector3d")?;
    Ok((double(x)?, double(y)?, double(z)?))
}

fn item_value(item: &Item) -> Value {
    Value::Tuple(vec![
        int_value(item.count),
        uint_value(item.slot),
        string(&item.id),
    ])
}

fn item_of(value: Value) -> Result<Item, String> {
    let [count, slot, id] = take(value, "item")?;
    Ok(Item {
        count: narrow_signed(count)?,
        slot: narrow(slot)?,
        id: text(id)?,
    })
}

fn uuid_value(uuid: [u32; 4]) -> Value {
    Value::Tuple(uuid.map(uint_value).to_vec())
}

fn uuid_of(value: Value) -> Result<[u32; 4], String> {
    let [x0, x1, x2, x3] = take(value, "uuid")?;
    Ok([narrow(x0)?, narrow(x1)?, narrow(x2)?, narrow(x3)?])
}

fn entity_value(e: &Entity) -> Value {
    Value::Tuple(vec![
        string(&e.id),
        vector3d_value(e.pos),
        vector3d_value(e.motion),
        Value::Tuple(vec![double_value(e.rotation.0), double_value(e.rotation.1)]),
        double_value(e.fall_distance),
        uint_value(e.fire),
        uint_value(e.air),
        Value::Bool(e.on_ground),
        Value::Bool(e.no_gravity),
        Value::Bool(e.invulnerable),
        int_value(e.portal_cooldown),
        uuid_value(e.uuid),
        optional_value(e.custom_name.as_deref(), string),
        Value::Bool(e.custom_name_visible),
        Value::Bool(e.silent),
        Value::Bool(e.glowing),
    ])
}

fn entity_of(value: Value) -> Result<Entity, String> {
    let [id, pos, motion, rotation, fall_distance, fire, air, on_ground, no_gravity, invulnerable, portal_cooldown, uuid, custom_name, custom_name_visible, silent, glowing] =
        take(value, "entity")?;
    let [yaw, pitch] = take(rotation, "rotation")?;
    Ok(Entity {
        id: text(id)?,
        pos: vector3d_of(pos)?,
        motion: vector3d_of(motion)?,
        rotation: (float(yaw)?, float(pitch)?),
        fall_distance: float(fall_distance)?,
        fire: narrow(fire)?,
        air: narrow(air)?,
        on_ground: boolean(on_ground)?,
        no_gravity: boolean(no_gravity)?,
        invulnerable: boolean(invulnerable)?,
        portal_cooldown: narrow_signed(portal_cooldown)?,
        uuid: uuid_of(uuid)?,
        custom_name: optional_of(custom_name, text)?,
        custom_name_visible: boolean(custom_name_visible)?,
        silent: boolean(silent)?,
        glowing: boolean(glowing)?,
    })
}

fn abilities_value(a: &Abilities) -> Value {
    Value::Tuple(vec![
        double_value(a.walk_speed),
        double_value(a.fly_speed),
        Value::Bool(a.may_fly),
        Value::Bool(a.flying),
        Value::Bool(a.invulnerable),
        Value::Bool(a.may_build),
        Value::Bool(a.instabuild),
    ])
}

fn abilities_of(value: Value) -> Result<Abilities, String> {
    let [walk_speed, fly_speed, may_fly, flying, invulnerable, may_build, instabuild] =
        take(value, "abilities")?;
    Ok(Abilities {
        walk_speed: float(walk_speed)?,
        fly_speed: float(fly_speed)?,
        may_fly: boolean(may_fly)?,
        flying: boolean(flying)?,
        invulnerable: boolean(invulnerable)?,
        may_build: boolean(may_build)?,
        instabuild: boolean(instabuild)?,
    })
}

fn recipe_book_value(r: &RecipeBook) -> Value {
    let names = |names: &[String]| list_value(names, |n| string(n));
    let mut members = vec![names(&r.recipes), names(&r.to_be_displayed)];
    members.extend(r.flags().map(Value::Bool));
    Value::Tuple(members)
}

fn recipe_book_of(value: Value) -> Result<RecipeBook, String> {
    let [recipes, to_be_displayed, flags @ ..] = take::<10>(value, "recipe_book")?;
    let mut bools = [false; 8];
    for (b, flag) in bools.iter_mut().zip(flags) {
        *b = boolean(flag)?;
    }
    Ok(RecipeBook::with_flags(
        list_of(recipes, text)?,
        list_of(to_be_displayed, text)?,
        bools,
    ))
}

impl TableRows for Players {
    fn schema() -> TableSchema {
        let item = item_type();
        let entity = entity_type();
        let list_utf8 = list_type("utf8");
        let mut recipe_book = vec![
            ("recipes", list_utf8.as_str()),
            ("to_be_displayed", list_utf8.as_str()),
        ];
        recipe_book.extend(RecipeBook::FLAG_NAMES.map(|name| (name, "bool")));
        columns_of(&[
            ("game_type", "int32"),
            ("previous_game_type", "int32"),
            ("score", "int64"),
            ("dimension", "utf8"),
            ("selected_item_slot", "uint32"),
            ("selected_item", &item),
            ("spawn_dimension", &optional_type("utf8")),
            ("spawn_x", "int64"),
            ("spawn_y", "int64"),
            ("spawn_z", "int64"),
            ("spawn_forced", &optional_type("bool")),
            ("sleep_timer", "uint16"),
            ("food_exhaustion_level", "float"),
            ("food_saturation_level", "float"),
            ("food_tick_timer", "uint32"),
            ("xp_level", "uint32"),
            ("xp_p", "float"),
            ("xp_total", "int32"),
            ("xp_seed", "int32"),
            ("inventory", &list_type(&item)),
            ("ender_items", &list_type(&item)),
            (
                "abilities",
                &struct_type(&[
                    ("walk_speed", "float"),
                    ("fly_speed", "float"),
                    ("may_fly", "bool"),
                    ("flying", "bool"),
                    ("invulnerable", "bool"),
                    ("may_build", "bool"),
                    ("instabuild", "bool"),
                ]),
            ),
            ("entered_nether_position", &optional_type(&vector3d_type())),
            (
                "root_vehicle",
                &optional_type(&struct_type(&[("uuid", &uuid_type()), ("entity", &entity)])),
            ),
            ("shoulder_entity_left", &optional_type(&entity)),
            ("shoulder_entity_right", &optional_type(&entity)),
            ("seen_credits", "bool"),
            ("recipe_book", &struct_type(&recipe_book)),
        ])
    }

    fn for_each_row(
        &self,
        mut row: impl FnMut(Vec<Value>) -> Result<(), String>,
    ) -> Result<(), String> {
        for p in &self.players {
            row(vec![
                int_value(p.game_type as i32),
                int_value(p.previous_game_type as i32),
                int_value(p.score),
                string(&p.dimension),
                uint_value(p.selected_item_slot),
                item_value(&p.selected_item),
                optional_value(p.spawn_dimension.as_deref(), string),
                int_value(p.spawn_x),
                int_value(p.spawn_y),
                int_value(p.spawn_z),
                optional_value(p.spawn_forced, Value::Bool),
                uint_value(p.sleep_timer),
                double_value(p.food_exhaustion_level),
                double_value(p.food_saturation_level),
                uint_value(p.food_tick_timer),
                uint_value(p.xp_level),
                double_value(p.xp_p),
                int_value(p.xp_total),
                int_value(p.xp_seed),
                list_value(&p.inventory, item_value),
                list_value(&p.ender_items, item_value),
                abilities_value(&p.abilities),
                optional_value(p.entered_nether_position, vector3d_value),
                optional_value(p.root_vehicle.as_ref(), |(uuid, entity)| {
                    Value::Tuple(vec![uuid_value(*uuid), entity_value(entity)])
                }),
                optional_value(p.shoulder_entity_left.as_ref(), entity_value),
                optional_value(p.shoulder_entity_right.as_ref(), entity_value),
                Value::Bool(p.seen_credits),
                recipe_book_value(&p.recipe_book),
            ])?;
        }
        Ok(())
    }

    fn from_rows(
        rows: impl Iterator<Item = Result<Vec<Value>, String>>,
    ) -> Result<Players, String> {
        let players = records_of(rows, "player", |[game_type, previous_game_type, score, dimension, selected_item_slot, selected_item, spawn_dimension, spawn_x, spawn_y, spawn_z, spawn_forced, sleep_timer, food_exhaustion_level, food_saturation_level, food_tick_timer, xp_level, xp_p, xp_total, xp_seed, inventory, ender_items, abilities, entered_nether_position, root_vehicle, shoulder_entity_left, shoulder_entity_right, seen_credits, recipe_book]| {
                Ok(Player {
                    game_type: enum_of(game_type, &GameType::ALL, "game type")?,
                    previous_game_type: enum_of(previous_game_type, &GameType::ALL, "game type")?,
                    score: signed(score)?,
                    dimension: text(dimension)?,
                    selected_item_slot: narrow(selected_item_slot)?,
                    selected_item: item_of(selected_item)?,
                    spawn_dimension: optional_of(spawn_dimension, text)?,
                    spawn_x: signed(spawn_x)?,
                    spawn_y: signed(spawn_y)?,
                    spawn_z: signed(spawn_z)?,
                    spawn_forced: optional_of(spawn_forced, boolean)?,
                    sleep_timer: narrow(sleep_timer)?,
                    food_exhaustion_level: float(food_exhaustion_level)?,
                    food_saturation_level: float(food_saturation_level)?,
                    food_tick_timer: narrow(food_tick_timer)?,
                    xp_level: narrow(xp_level)?,
                    xp_p: float(xp_p)?,
                    xp_total: narrow_signed(xp_total)?,
                    xp_seed: narrow_signed(xp_seed)?,
                    inventory: list_of(inventory, item_of)?,
                    ender_items: list_of(ender_items, item_of)?,
                    abilities: abilities_of(abilities)?,
                    entered_nether_position: optional_of(entered_nether_position, vector3d_of)?,
                    root_vehicle: optional_of(root_vehicle, |v| {
                        let [uuid, entity] = take(v, "root_vehicle")?;
                        Ok((uuid_of(uuid)?, entity_of(entity)?))
                    })?,
                    shoulder_entity_left: optional_of(shoulder_entity_left, entity_of)?,
                    shoulder_entity_right: optional_of(shoulder_entity_right, entity_of)?,
                    seen_credits: boolean(seen_credits)?,
                    recipe_book: recipe_book_of(recipe_book)?,
                })
            })?;
        Ok(Players { players })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_keeps_the_benchmarks_ranges() {
        assert_eq!(players(50, 7), players(50, 7));
        assert_ne!(players(50, 7), players(50, 8));
        let all = players(2000, 1).players;
        let share = |f: &dyn Fn(&Player) -> bool| {
            all.iter().filter(|p| f(p)).count() as f64 / all.len() as f64
        };
        for (what, got) in [
            ("spawn_dimension", share(&|p| p.spawn_dimension.is_some())),
            ("spawn_forced", share(&|p| p.spawn_forced.is_some())),
            ("nether", share(&|p| p.entered_nether_position.is_some())),
            ("vehicle", share(&|p| p.root_vehicle.is_some())),
            ("left", share(&|p| p.shoulder_entity_left.is_some())),
            ("right", share(&|p| p.shoulder_entity_right.is_some())),
            ("seen_credits", share(&|p| p.seen_credits)),
        ] {
            assert!((0.45..0.55).contains(&got), "{what}: {got}");
        }
        let longest = |f: &dyn Fn(&Player) -> usize| all.iter().map(f).max().unwrap();
        assert_eq!(longest(&|p| p.inventory.len()), MAX_ITEMS - 1);
        assert_eq!(longest(&|p| p.ender_items.len()), MAX_ENDER_ITEMS - 1);
        assert_eq!(longest(&|p| p.recipe_book.recipes.len()), MAX_RECIPES - 1);
        assert_eq!(
            longest(&|p| p.recipe_book.to_be_displayed.len()),
            MAX_DISPLAYED_RECIPES - 1
        );
        assert!(all.iter().any(|p| p.inventory.is_empty()));
        for kind in GameType::ALL {
            assert!(all.iter().any(|p| p.game_type == kind));
        }
        // Whole-range integers: both signs and values past i32/u16.
        assert!(all.iter().any(|p| p.score < 0) && all.iter().any(|p| p.score > 0));
        assert!(all.iter().any(|p| p.selected_item_slot > i32::MAX as u32));
        for p in &all {
            assert!(DIMENSIONS.contains(&p.dimension.as_str()));
            assert!((0.0..1.0).contains(&p.xp_p) && (0.0..1.0).contains(&p.abilities.walk_speed));
            let items = p.inventory.iter().chain(&p.ender_items);
            assert!(items.into_iter().all(|i| ITEM_IDS.contains(&i.id.as_str())));
            assert!(p
                .recipe_book
                .recipes
                .iter()
                .all(|r| RECIPES.contains(&r.as_str())));
            for e in [&p.shoulder_entity_left, &p.shoulder_entity_right]
                .into_iter()
                .flatten()
            {
                assert!(ENTITY_IDS.contains(&e.id.as_str()));
                assert!((0.0..1.0).contains(&e.pos.0) && (0.0..1.0).contains(&e.rotation.1));
                if let Some(name) = &e.custom_name {
                    assert!(CUSTOM_NAMES.contains(&name.as_str()));
                }
            }
        }
    }
}
