//! Apache Thrift's Rust library (the `thrift` crate) with the structs of jvm-serializers'
//! `tpc/schema/media.thrift`, read and written in the shape the Thrift compiler generates for
//! Rust (`write_to_out_protocol` / `read_from_in_protocol`: field loops over `TInputProtocol`,
//! unknown fields skipped, required fields checked), in its binary and compact protocols.
//!
//! ```thrift
//! enum Size { SMALL, LARGE }   enum Player { JAVA, FLASH }
//! struct Image { 1: string uri, 2: optional string title, 3: i32 width, 4: i32 height, 5: Size size }
//! struct Media { 1: string uri, 2: optional string title, 3: i32 width, 4: i32 height,
//!   5: string format, 6: i64 duration, 7: i64 size, 8: optional i32 bitrate,
//!   9: list<string> person, 10: Player player, 11: optional string copyright }
//! struct MediaContent { 1: list<Image> image, 2: Media media }
//! ```
//!
//! The generated structs are the MediaContent structs' own shape (strings, options, i32
//! enums), so the forward and reverse steps are the compiler's conversions: none here; the
//! library's work is the protocol calls.

use thrift::protocol::{
    field_id, verify_required_field_exists, TBinaryInputProtocol, TBinaryOutputProtocol,
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol,
    TListIdentifier, TOutputProtocol, TStructIdentifier, TType,
};

use super::contender::Contender;
use super::media::{Image, Media, MediaContent, Player, Size};

/// The thrift crate in one of its protocols.
pub struct ThriftCrate {
    pub compact: bool,
}

pub(crate) fn err(e: thrift::Error) -> String {
    e.to_string()
}

pub(crate) fn field(
    o: &mut dyn TOutputProtocol,
    name: &str,
    ty: TType,
    id: i16,
) -> thrift::Result<()> {
    o.write_field_begin(&TFieldIdentifier::new(name, ty, id))
}

pub(crate) fn write_string(
    o: &mut dyn TOutputProtocol,
    name: &str,
    id: i16,
    v: &str,
) -> thrift::Result<()> {
    field(o, name, TType::String, id)?;
    o.write_string(v)?;
    o.write_field_end()
}

pub(crate) fn write_i32(
    o: &mut dyn TOutputProtocol,
    name: &str,
    id: i16,
    v: i32,
) -> thrift::Result<()> {
    field(o, name, TType::I32, id)?;
    o.write_i32(v)?;
    o.write_field_end()
}

pub(crate) fn write_i64(
    o: &mut dyn TOutputProtocol,
    name: &str,
    id: i16,
    v: i64,
) -> thrift::Result<()> {
    field(o, name, TType::I64, id)?;
    o.write_i64(v)?;
    o.write_field_end()
}

fn write_image(o: &mut dyn TOutputProtocol, i: &Image) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("Image"))?;
    write_string(o, "uri", 1, &i.uri)?;
    if let Some(title) = &i.title {
        write_string(o, "title", 2, title)?;
    }
    write_i32(o, "width", 3, i.width)?;
    write_i32(o, "height", 4, i.height)?;
    write_i32(o, "size", 5, i.size as i32)?;
    o.write_field_stop()?;
    o.write_struct_end()
}

fn write_media(o: &mut dyn TOutputProtocol, m: &Media) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("Media"))?;
    write_string(o, "uri", 1, &m.uri)?;
    if let Some(title) = &m.title {
        write_string(o, "title", 2, title)?;
    }
    write_i32(o, "width", 3, m.width)?;
    write_i32(o, "height", 4, m.height)?;
    write_string(o, "format", 5, &m.format)?;
    write_i64(o, "duration", 6, m.duration)?;
    write_i64(o, "size", 7, m.size)?;
    if let Some(bitrate) = m.bitrate {
        write_i32(o, "bitrate", 8, bitrate)?;
    }
    field(o, "person", TType::List, 9)?;
    o.write_list_begin(&TListIdentifier::new(TType::String, m.persons.len() as i32))?;
    for person in &m.persons {
        o.write_string(person)?;
    }
    o.write_list_end()?;
    o.write_field_end()?;
    write_i32(o, "player", 10, m.player as i32)?;
    if let Some(copyright) = &m.copyright {
        write_string(o, "copyright", 11, copyright)?;
    }
    o.write_field_stop()?;
    o.write_struct_end()
}

fn write_media_content(o: &mut dyn TOutputProtocol, c: &MediaContent) -> thrift::Result<()> {
    o.write_struct_begin(&TStructIdentifier::new("MediaContent"))?;
    field(o, "image", TType::List, 1)?;
    o.write_list_begin(&TListIdentifier::new(TType::Struct, c.images.len() as i32))?;
    for image in &c.images {
        write_image(o, image)?;
    }
    o.write_list_end()?;
    o.write_field_end()?;
    field(o, "media", TType::Struct, 2)?;
    write_media(o, &c.media)?;
    o.write_field_end()?;
    o.write_field_stop()?;
    o.write_struct_end()?;
    o.flush()
}

pub(crate) fn protocol_error(message: String) -> thrift::Error {
    thrift::Error::Protocol(thrift::ProtocolError::new(
        thrift::ProtocolErrorKind::InvalidData,
        message,
    ))
}

fn read_image(i: &mut dyn TInputProtocol) -> thrift::Result<Image> {
    i.read_struct_begin()?;
    let (mut uri, mut title, mut width, mut height, mut size) = (None, None, None, None, None);
    loop {
        let ident = i.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        match field_id(&ident)? {
            1 => uri = Some(i.read_string()?),
            2 => title = Some(i.read_string()?),
            3 => width = Some(i.read_i32()?),
            4 => height = Some(i.read_i32()?),
            5 => size = Some(i.read_i32()?),
            _ => i.skip(ident.field_type)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    verify_required_field_exists("Image.uri", &uri)?;
    verify_required_field_exists("Image.width", &width)?;
    verify_required_field_exists("Image.height", &height)?;
    verify_required_field_exists("Image.size", &size)?;
    Ok(Image {
        uri: uri.unwrap_or_default(),
        title,
        width: width.unwrap_or_default(),
        height: height.unwrap_or_default(),
        size: Size::from_code(size.unwrap_or_default().into()).map_err(protocol_error)?,
    })
}

fn read_media(i: &mut dyn TInputProtocol) -> thrift::Result<Media> {
    i.read_struct_begin()?;
    let mut m = Media {
        uri: String::new(),
        title: None,
        width: 0,
        height: 0,
        format: String::new(),
        duration: 0,
        size: 0,
        bitrate: None,
        persons: Vec::new(),
        player: Player::JAVA,
        copyright: None,
    };
    let mut seen = 0u32;
    loop {
        let ident = i.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        let id = field_id(&ident)?;
        match id {
            1 => m.uri = i.read_string()?,
            2 => m.title = Some(i.read_string()?),
            3 => m.width = i.read_i32()?,
            4 => m.height = i.read_i32()?,
            5 => m.format = i.read_string()?,
            6 => m.duration = i.read_i64()?,
            7 => m.size = i.read_i64()?,
            8 => m.bitrate = Some(i.read_i32()?),
            9 => {
                let list = i.read_list_begin()?;
                let mut persons = Vec::with_capacity(list.size.clamp(0, 1024) as usize);
                for _ in 0..list.size {
                    persons.push(i.read_string()?);
                }
                i.read_list_end()?;
                m.persons = persons;
            }
            10 => {
                m.player = Player::from_code(i.read_i32()?.into()).map_err(protocol_error)?;
            }
            11 => m.copyright = Some(i.read_string()?),
            _ => i.skip(ident.field_type)?,
        }
        if (1..=11).contains(&id) {
            seen |= 1 << id;
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    // The default-requiredness fields (all but 2, 8 and 11).
    let required = [1, 3, 4, 5, 6, 7, 9, 10]
        .iter()
        .fold(0u32, |a, id| a | 1 << id);
    if seen & required != required {
        return Err(protocol_error(format!(
            "Media: missing required fields (seen mask {seen:#b})"
        )));
    }
    Ok(m)
}

fn read_media_content(i: &mut dyn TInputProtocol) -> thrift::Result<MediaContent> {
    i.read_struct_begin()?;
    let (mut images, mut media) = (None, None);
    loop {
        let ident = i.read_field_begin()?;
        if ident.field_type == TType::Stop {
            break;
        }
        match field_id(&ident)? {
            1 => {
                let list = i.read_list_begin()?;
                let mut items = Vec::with_capacity(list.size.clamp(0, 1024) as usize);
                for _ in 0..list.size {
                    items.push(read_image(i)?);
                }
                i.read_list_end()?;
                images = Some(items);
            }
            2 => media = Some(read_media(i)?),
            _ => i.skip(ident.field_type)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    verify_required_field_exists("MediaContent.image", &images)?;
    verify_required_field_exists("MediaContent.media", &media)?;
    Ok(MediaContent {
        images: images.unwrap_or_default(),
        media: media.ok_or_else(|| protocol_error("no media".into()))?,
    })
}

impl ThriftCrate {
    fn read(&self, mut bytes: &[u8]) -> thrift::Result<MediaContent> {
        if self.compact {
            read_media_content(&mut TCompactInputProtocol::new(&mut bytes))
        } else {
            read_media_content(&mut TBinaryInputProtocol::new(&mut bytes, true))
        }
    }
}

impl Contender for ThriftCrate {
    type Built<'a> = &'a MediaContent;
    type Decoded = MediaContent;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<&'a MediaContent, String> {
        Ok(value)
    }

    fn serialize(&self, built: &&MediaContent) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        if self.compact {
            write_media_content(&mut TCompactOutputProtocol::new(&mut out), built).map_err(err)?;
        } else {
            write_media_content(&mut TBinaryOutputProtocol::new(&mut out, true), built)
                .map_err(err)?;
        }
        Ok(out)
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<MediaContent, String> {
        self.read(bytes).map_err(err)
    }

    fn shallow(&self, decoded: MediaContent) -> Result<Media, String> {
        Ok(decoded.media)
    }

    fn deep(&self, decoded: MediaContent) -> Result<MediaContent, String> {
        Ok(decoded)
    }
}
