//! jvm-serializers' MediaContent (its `data.media` POJOs) as plain Rust structs: the reference
//! object every contender's forward step starts from and its reverse step must rebuild.
//!
//! The four values (media.1 to media.4, from jvm-serializers' `tpc/data/`) live in
//! `crates/lab/data/media_content.json`, the one copy the Rust side reads; a Python test checks
//! that it equals the Python study's fixture (`serializers_data.DATASETS`).

use serde::{Deserialize, Serialize};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub enum Player {
    JAVA = 0,
    FLASH = 1,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub enum Size {
    SMALL = 0,
    LARGE = 1,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Image {
    pub uri: String,
    pub title: Option<String>,
    pub width: i32,
    pub height: i32,
    pub size: Size,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Media {
    pub uri: String,
    pub title: Option<String>,
    pub width: i32,
    pub height: i32,
    pub format: String,
    pub duration: i64,
    pub size: i64,
    pub bitrate: Option<i32>,
    pub persons: Vec<String>,
    pub player: Player,
    pub copyright: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct MediaContent {
    pub images: Vec<Image>,
    pub media: Media,
}

impl Player {
    pub fn from_code(code: i64) -> Result<Player, String> {
        match code {
            0 => Ok(Player::JAVA),
            1 => Ok(Player::FLASH),
            _ => Err(format!(
                "player code {code} is neither JAVA (0) nor FLASH (1)"
            )),
        }
    }
}

impl Size {
    pub fn from_code(code: i64) -> Result<Size, String> {
        match code {
            0 => Ok(Size::SMALL),
            1 => Ok(Size::LARGE),
            _ => Err(format!(
                "image size code {code} is neither SMALL (0) nor LARGE (1)"
            )),
        }
    }
}

/// The value names, in order.
pub const VALUE_NAMES: [&str; 4] = ["media.1", "media.2", "media.3", "media.4"];

/// The values named `names` (all four when empty).
///
/// # Errors
/// An unknown name.
pub fn values(names: &[String]) -> Result<Vec<(String, MediaContent)>, String> {
    let mut all: std::collections::BTreeMap<String, MediaContent> =
        serde_json::from_str(include_str!("../../data/media_content.json"))
            .map_err(|e| format!("media_content.json: {e}"))?;
    if names.is_empty() {
        return Ok(VALUE_NAMES
            .iter()
            .filter_map(|n| all.remove(*n).map(|v| (n.to_string(), v)))
            .collect());
    }
    names
        .iter()
        .map(|n| {
            all.get(n)
                .cloned()
                .map(|v| (n.clone(), v))
                .ok_or_else(|| format!("unknown MediaContent value '{n}' (media.1 to media.4)"))
        })
        .collect()
}

/// The YT table schema of a MediaContent row (the Python study's `YT_SCHEMA`): columns in the
/// field order of jvm-serializers' `media.proto`/`media.thrift`, enums as int32 codes.
pub const YT_SCHEMA: &str = r#"[
  {name=images; type_v3={type_name=list; item={type_name=struct; members=[
    {name=uri; type=utf8}; {name=title; type={type_name=optional; item=utf8}};
    {name=width; type=int32}; {name=height; type=int32}; {name=size; type=%SIZE%}]}}};
  {name=media; type_v3={type_name=struct; members=[
    {name=uri; type=utf8}; {name=title; type={type_name=optional; item=utf8}};
    {name=width; type=int32}; {name=height; type=int32}; {name=format; type=utf8};
    {name=duration; type=int64}; {name=size; type=int64};
    {name=bitrate; type={type_name=optional; item=int32}};
    {name=persons; type={type_name=list; item=utf8}}; {name=player; type=%PLAYER%};
    {name=copyright; type={type_name=optional; item=utf8}}]}}]"#;

/// The table schema; with `proto2_enums` the enums are `optional<int32>`, the presence of
/// media.proto's *required* enums, so that our Protobuf writes them even when zero (the
/// published sizes' bytes; plain int32 follows proto3 and leaves zeros out).
pub fn table_schema(proto2_enums: bool) -> shapeshift_types::TableSchema {
    let enum_type = if proto2_enums {
        "{type_name=optional; item=int32}"
    } else {
        "int32"
    };
    let text = YT_SCHEMA
        .replace("%SIZE%", enum_type)
        .replace("%PLAYER%", enum_type);
    let node = shapeshift_formats::yson::from_slice(text.as_bytes()).expect("the schema parses");
    shapeshift_types::TableSchema::from_node(&node).expect("the schema is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_values_load_and_differ_as_jvm_serializers_made_them() {
        let all = values(&[]).unwrap();
        assert_eq!(all.len(), 4);
        let media1 = &all[0].1;
        assert_eq!(media1.media.uri, "http://javaone.com/keynote.mpg");
        assert_eq!(media1.media.persons, ["Bill Gates", "Steve Jobs"]);
        assert_eq!(media1.images[0].size, Size::LARGE);
        let media2 = &all[1].1;
        assert_eq!(media2.images.len(), 3);
        assert_eq!(media2.media.bitrate, None);
        assert_eq!(media2.media.player, Player::FLASH);
        assert!(media2
            .media
            .copyright
            .as_deref()
            .unwrap()
            .ends_with('\u{1D11E}'));
        assert!(values(&["media.9".into()]).is_err());
        assert_eq!(table_schema(false).columns.len(), 2);
        assert_eq!(table_schema(true).columns.len(), 2);
    }
}
