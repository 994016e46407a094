//! Avro schemas of rust_serialization_benchmark's datasets for apache-avro: the shape of the
//! dataset's structs as its serde writer walks them (structs as records, unit enums as enums
//! whose symbols are the variant names, `Option` as a union with null, tuples, arrays and
//! `Vec`s as arrays; Avro has no unsigned types, so u32 is a long and u8/u16 an int).
//!
//! apache-avro's serde writer does not resolve a named type's later references ("Unresolved
//! schema reference"), so a record or enum used twice is spelled out under a name of its own
//! (the same bytes).

use serde_json::{json, Value};

use super::rsb_data::RecipeBook;

/// `log`.
pub const LOGS_AVRO: &str = r#"{"type": "record", "name": "Logs", "fields": [
  {"name": "logs", "type": {"type": "array", "items": {"type": "record", "name": "Log", "fields": [
    {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
      {"name": "x0", "type": "int"}, {"name": "x1", "type": "int"},
      {"name": "x2", "type": "int"}, {"name": "x3", "type": "int"}]}},
    {"name": "identity", "type": "string"}, {"name": "userid", "type": "string"},
    {"name": "date", "type": "string"}, {"name": "request", "type": "string"},
    {"name": "code", "type": "int"}, {"name": "size", "type": "long"}]}}}]}"#;

/// `mesh`: each vector spelled out under its own name.
pub const MESH_AVRO: &str = r#"{"type": "record", "name": "Mesh", "fields": [
  {"name": "triangles", "type": {"type": "array", "items": {"type": "record", "name": "Triangle",
    "fields": [
      {"name": "v0", "type": {"type": "record", "name": "V0", "fields": [
        {"name": "x", "type": "float"}, {"name": "y", "type": "float"}, {"name": "z", "type": "float"}]}},
      {"name": "v1", "type": {"type": "record", "name": "V1", "fields": [
        {"name": "x", "type": "float"}, {"name": "y", "type": "float"}, {"name": "z", "type": "float"}]}},
      {"name": "v2", "type": {"type": "record", "name": "V2", "fields": [
        {"name": "x", "type": "float"}, {"name": "y", "type": "float"}, {"name": "z", "type": "float"}]}},
      {"name": "normal", "type": {"type": "record", "name": "Normal", "fields": [
        {"name": "x", "type": "float"}, {"name": "y", "type": "float"}, {"name": "z", "type": "float"}]}}
    ]}}}]}"#;

fn field(name: &str, ty: Value) -> Value {
    json!({"name": name, "type": ty})
}

fn record(name: &str, fields: Vec<Value>) -> Value {
    json!({"type": "record", "name": name, "fields": fields})
}

fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

fn optional(ty: Value) -> Value {
    json!(["null", ty])
}

fn booleans(names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| field(n, json!("boolean"))).collect()
}

fn minecraft_item(name: &str) -> Value {
    record(
        name,
        vec![
            field("count", json!("int")),
            field("slot", json!("int")),
            field("id", json!("string")),
        ],
    )
}

/// An entity record named `name`. Inside the root vehicle's tuple it must be `Entity`: a
/// struct serialized against a union (the tuple's items, below) picks the record of its own
/// name.
fn minecraft_entity(name: &str) -> Value {
    let mut fields = vec![
        field("id", json!("string")),
        field("pos", array(json!("double"))),
        field("motion", array(json!("double"))),
        field("rotation", array(json!("float"))),
        field("fall_distance", json!("float")),
        field("fire", json!("int")),
        field("air", json!("int")),
    ];
    fields.extend(booleans(&["on_ground", "no_gravity", "invulnerable"]));
    fields.extend([
        field("portal_cooldown", json!("int")),
        field("uuid", array(json!("long"))),
        field("custom_name", optional(json!("string"))),
    ]);
    fields.extend(booleans(&["custom_name_visible", "silent", "glowing"]));
    record(name, fields)
}

/// `minecraft_savedata`'s Players. The root vehicle, a `([u32; 4], Entity)` tuple, is an
/// array whose items are a union of the UUID's array and the entity's record (Avro arrays are
/// of one type).
pub fn players_avro() -> String {
    let game_type = |name: &str| {
        json!({"type": "enum", "name": name,
               "symbols": ["Survival", "Creative", "Adventure", "Spectator"]})
    };
    let mut abilities = vec![
        field("walk_speed", json!("float")),
        field("fly_speed", json!("float")),
    ];
    abilities.extend(booleans(&[
        "may_fly",
        "flying",
        "invulnerable",
        "may_build",
        "instabuild",
    ]));
    let mut recipe_book = vec![
        field("recipes", array(json!("string"))),
        field("to_be_displayed", array(json!("string"))),
    ];
    recipe_book.extend(booleans(&RecipeBook::FLAG_NAMES));
    let vehicle = array(json!([array(json!("long")), minecraft_entity("Entity")]));
    let player = record(
        "Player",
        vec![
            field("game_type", game_type("GameType")),
            field("previous_game_type", game_type("PreviousGameType")),
            field("score", json!("long")),
            field("dimension", json!("string")),
            field("selected_item_slot", json!("long")),
            field("selected_item", minecraft_item("SelectedItem")),
            field("spawn_dimension", optional(json!("string"))),
            field("spawn_x", json!("long")),
            field("spawn_y", json!("long")),
            field("spawn_z", json!("long")),
            field("spawn_forced", optional(json!("boolean"))),
            field("sleep_timer", json!("int")),
            field("food_exhaustion_level", json!("float")),
            field("food_saturation_level", json!("float")),
            field("food_tick_timer", json!("long")),
            field("xp_level", json!("long")),
            field("xp_p", json!("float")),
            field("xp_total", json!("int")),
            field("xp_seed", json!("int")),
            field("inventory", array(minecraft_item("InventoryItem"))),
            field("ender_items", array(minecraft_item("EnderItem"))),
            field("abilities", record("Abilities", abilities)),
            field("entered_nether_position", optional(array(json!("double")))),
            field("root_vehicle", optional(vehicle)),
            field(
                "shoulder_entity_left",
                optional(minecraft_entity("ShoulderEntityLeft")),
            ),
            field(
                "shoulder_entity_right",
                optional(minecraft_entity("ShoulderEntityRight")),
            ),
            field("seen_credits", json!("boolean")),
            field("recipe_book", record("RecipeBook", recipe_book)),
        ],
    );
    record("Players", vec![field("players", array(player))]).to_string()
}

/// `mk48`'s Updates; the terrain data (`Vec<u8>`, a sequence to serde) an array of ints.
pub fn updates_avro() -> String {
    let entity_type = json!({"type": "enum", "name": "EntityType", "symbols": [
        "ArleighBurke", "Bismarck", "Clemenceau", "Fletcher", "G5", "Iowa", "Kolkata", "Osa",
        "Yasen", "Zubr"]});
    let guidance = record(
        "Guidance",
        vec![
            field("angle", json!("int")),
            field("submerge", json!("boolean")),
            field("velocity", json!("int")),
        ],
    );
    let transform = record(
        "Transform",
        vec![
            field("altitude", json!("int")),
            field("angle", json!("int")),
            field("position", array(json!("float"))),
            field("velocity", json!("int")),
        ],
    );
    let contact = record(
        "Contact",
        vec![
            field("damage", json!("int")),
            field("entity_id", json!("long")),
            field("entity_type", optional(entity_type)),
            field("guidance", guidance),
            field("player_id", optional(json!("int"))),
            field("reloads", array(json!("boolean"))),
            field("transform", transform),
            field("turret_angles", array(json!("int"))),
        ],
    );
    let terrain_update = record(
        "TerrainUpdate",
        vec![
            field("chunk_id", array(json!("int"))),
            field("data", array(json!("int"))),
        ],
    );
    let update = record(
        "Update",
        vec![
            field("contacts", array(contact)),
            field("score", json!("long")),
            field("world_radius", json!("float")),
            field("terrain_updates", array(terrain_update)),
        ],
    );
    record("Updates", vec![field("updates", array(update))]).to_string()
}
