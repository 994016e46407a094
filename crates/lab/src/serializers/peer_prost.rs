//! prost with the messages of jvm-serializers' `tpc/schema/media.proto` (proto2), derived by
//! hand as prost-build would generate them (required fields as plain values, optional ones as
//! `Option`, enums as `i32` of a `prost::Enumeration`). Forward and reverse steps copy between
//! the MediaContent structs and the messages field by field, as jvm-serializers' protobuf
//! serializer does.

use prost::Message;

use super::contender::Contender;
use super::media::{Image, Media, MediaContent, Player, Size};

#[derive(Clone, PartialEq, Message)]
pub struct PbImage {
    #[prost(string, required, tag = "1")]
    pub uri: String,
    #[prost(string, optional, tag = "2")]
    pub title: Option<String>,
    #[prost(int32, required, tag = "3")]
    pub width: i32,
    #[prost(int32, required, tag = "4")]
    pub height: i32,
    #[prost(enumeration = "PbSize", required, tag = "5")]
    pub size: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PbSize {
    Small = 0,
    Large = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PbPlayer {
    Java = 0,
    Flash = 1,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbMedia {
    #[prost(string, required, tag = "1")]
    pub uri: String,
    #[prost(string, optional, tag = "2")]
    pub title: Option<String>,
    #[prost(int32, required, tag = "3")]
    pub width: i32,
    #[prost(int32, required, tag = "4")]
    pub height: i32,
    #[prost(string, required, tag = "5")]
    pub format: String,
    #[prost(int64, required, tag = "6")]
    pub duration: i64,
    #[prost(int64, required, tag = "7")]
    pub size: i64,
    #[prost(int32, optional, tag = "8")]
    pub bitrate: Option<i32>,
    #[prost(string, repeated, tag = "9")]
    pub person: Vec<String>,
    #[prost(enumeration = "PbPlayer", required, tag = "10")]
    pub player: i32,
    #[prost(string, optional, tag = "11")]
    pub copyright: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PbMediaContent {
    #[prost(message, repeated, tag = "1")]
    pub image: Vec<PbImage>,
    #[prost(message, required, tag = "2")]
    pub media: PbMedia,
}

pub struct Prost;

fn media_to_pb(m: &Media) -> PbMedia {
    PbMedia {
        uri: m.uri.clone(),
        title: m.title.clone(),
        width: m.width,
        height: m.height,
        format: m.format.clone(),
        duration: m.duration,
        size: m.size,
        bitrate: m.bitrate,
        person: m.persons.clone(),
        player: m.player as i32,
        copyright: m.copyright.clone(),
    }
}

fn media_from_pb(m: PbMedia) -> Result<Media, String> {
    Ok(Media {
        uri: m.uri,
        title: m.title,
        width: m.width,
        height: m.height,
        format: m.format,
        duration: m.duration,
        size: m.size,
        bitrate: m.bitrate,
        persons: m.person,
        player: Player::from_code(m.player.into())?,
        copyright: m.copyright,
    })
}

impl Contender for Prost {
    type Built<'a> = PbMediaContent;
    type Decoded = PbMediaContent;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<PbMediaContent, String> {
        Ok(PbMediaContent {
            image: value
                .images
                .iter()
                .map(|i| PbImage {
                    uri: i.uri.clone(),
                    title: i.title.clone(),
                    width: i.width,
                    height: i.height,
                    size: i.size as i32,
                })
                .collect(),
            media: media_to_pb(&value.media),
        })
    }

    fn serialize(&self, built: &PbMediaContent) -> Result<Vec<u8>, String> {
        Ok(built.encode_to_vec())
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<PbMediaContent, String> {
        PbMediaContent::decode(bytes).map_err(|e| e.to_string())
    }

    fn shallow(&self, decoded: PbMediaContent) -> Result<Media, String> {
        media_from_pb(decoded.media)
    }

    fn deep(&self, decoded: PbMediaContent) -> Result<MediaContent, String> {
        Ok(MediaContent {
            images: decoded
                .image
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
            media: media_from_pb(decoded.media)?,
        })
    }
}
