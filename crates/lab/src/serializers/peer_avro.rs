//! apache-avro (the Apache Avro project's Rust library) with jvm-serializers'
//! `tpc/schema/media.avro` (enums as `int` codes). Its fastest paths each way: serialize with
//! the schema-aware serde writer (`write_avro_datum_ref`, no intermediate `Value`), and
//! deserialize a datum (`from_avro_datum`, its only datum reader: into a `Value`) and then
//! `from_value` into structs. The forward step builds those structs (the shape of the schema,
//! as Avro's specific classes in jvm-serializers), the reverse step turns them back.

use apache_avro::Schema;
use serde::{Deserialize, Serialize};

use super::contender::Contender;
use super::media::{Image, Media, MediaContent, Player, Size};

pub const MEDIA_AVRO: &str = r#"{
  "type": "record", "name": "MediaContent", "namespace": "serializers.avro.media",
  "fields": [
    {"name": "images", "type": {"type": "array", "items": {"type": "record", "name": "Image",
      "fields": [
        {"name": "uri", "type": "string"}, {"name": "title", "type": ["null", "string"]},
        {"name": "width", "type": "int"}, {"name": "height", "type": "int"},
        {"name": "size", "type": "int"}]}}},
    {"name": "media", "type": {"type": "record", "name": "Media", "fields": [
      {"name": "uri", "type": "string"}, {"name": "title", "type": ["null", "string"]},
      {"name": "width", "type": "int"}, {"name": "height", "type": "int"},
      {"name": "format", "type": "string"}, {"name": "duration", "type": "long"},
      {"name": "size", "type": "long"}, {"name": "bitrate", "type": ["null", "int"]},
      {"name": "persons", "type": {"type": "array", "items": "string"}},
      {"name": "player", "type": "int"}, {"name": "copyright", "type": ["null", "string"]}]}}
  ]
}"#;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AvroImage {
    uri: String,
    title: Option<String>,
    width: i32,
    height: i32,
    size: i32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AvroMedia {
    uri: String,
    title: Option<String>,
    width: i32,
    height: i32,
    format: String,
    duration: i64,
    size: i64,
    bitrate: Option<i32>,
    persons: Vec<String>,
    player: i32,
    copyright: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AvroMediaContent {
    images: Vec<AvroImage>,
    media: AvroMedia,
}

pub struct ApacheAvro {
    schema: Schema,
}

impl ApacheAvro {
    pub fn new() -> Result<ApacheAvro, String> {
        Ok(ApacheAvro {
            schema: Schema::parse_str(MEDIA_AVRO).map_err(|e| e.to_string())?,
        })
    }
}

fn media_from_avro(m: AvroMedia) -> Result<Media, String> {
    Ok(Media {
        uri: m.uri,
        title: m.title,
        width: m.width,
        height: m.height,
        format: m.format,
        duration: m.duration,
        size: m.size,
        bitrate: m.bitrate,
        persons: m.persons,
        player: Player::from_code(m.player.into())?,
        copyright: m.copyright,
    })
}

impl Contender for ApacheAvro {
    type Built<'a> = AvroMediaContent;
    type Decoded = AvroMediaContent;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<AvroMediaContent, String> {
        let m = &value.media;
        Ok(AvroMediaContent {
            images: value
                .images
                .iter()
                .map(|i| AvroImage {
                    uri: i.uri.clone(),
                    title: i.title.clone(),
                    width: i.width,
                    height: i.height,
                    size: i.size as i32,
                })
                .collect(),
            media: AvroMedia {
                uri: m.uri.clone(),
                title: m.title.clone(),
                width: m.width,
                height: m.height,
                format: m.format.clone(),
                duration: m.duration,
                size: m.size,
                bitrate: m.bitrate,
                persons: m.persons.clone(),
                player: m.player as i32,
                copyright: m.copyright.clone(),
            },
        })
    }

    fn serialize(&self, built: &AvroMediaContent) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        apache_avro::write_avro_datum_ref(&self.schema, built, &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn deserialize(&self, mut bytes: &[u8]) -> Result<AvroMediaContent, String> {
        let value = apache_avro::from_avro_datum(&self.schema, &mut bytes, None)
            .map_err(|e| e.to_string())?;
        if !bytes.is_empty() {
            return Err(format!("{} bytes after the datum", bytes.len()));
        }
        apache_avro::from_value(&value).map_err(|e| e.to_string())
    }

    fn shallow(&self, decoded: AvroMediaContent) -> Result<Media, String> {
        media_from_avro(decoded.media)
    }

    fn deep(&self, decoded: AvroMediaContent) -> Result<MediaContent, String> {
        Ok(MediaContent {
            images: decoded
                .images
                .into_iter()
                .map(|i| {
                    Ok(Image {
                        uri: i.uri,
                        title: i.title,
                        width: i.width,
                        height: i.height,
                        size: Size::from_code(i.size.into())?,
                    })
                })
                .collect::<Result<_, String>>()?,
            media: media_from_avro(decoded.media)?,
        })
    }
}
