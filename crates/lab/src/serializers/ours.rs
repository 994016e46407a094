//! Our formats as contenders. The forward step turns the MediaContent structs into one row of
//! owned values of the YT schema ([`media::table_schema`]); the reverse step turns a row back.
//!
//! Two ways in for each format:
//! - [`Interface`]: the common row interface of the formats crate, as any user of the registry
//!   has it: `open_sink` + `write_owned_row` + `finish` into a buffer, and `open_source` +
//!   `next_row` (composite values arrive as binary YSON and are decoded against their column
//!   type, `value_from_ref`) for one row. Every call pays the stream's setup (the Avro
//!   container header, the Arrow schema message, YT's framing).
//! - [`RowCodec`]: a format's own one-message codec, where the crate has one (Thrift binary and
//!   compact, Avro datum, dynamic Protobuf message): the message alone, the same unit the
//!   crates' peers encode.
//! - [`Typed`]: a schema format's typed path (Thrift binary and compact, Avro, JSON): the program's
//!   own structs written and read as the table's row, guided by the schema, no row in between
//!   (the same bytes as the codec's).

use std::io::Cursor;

use serde::de::DeserializeOwned;
use serde::Serialize;
use shapeshift_formats::registry::{open_sink, open_source, FormatKind, SerdeRowCodec};
use shapeshift_formats::table::{value_from_ref, RowPosition, SharedOutput};
use shapeshift_formats::{avro, protobuf, thrift};
use shapeshift_types::{TableSchema, Value};

use super::contender::Contender;
use super::media::{Image, Media, MediaContent, Player, Size};

/// The forward step of our formats: one row of owned values.
pub fn to_row(value: &MediaContent) -> Vec<Value> {
    let images = value
        .images
        .iter()
        .map(|i| {
            Value::Tuple(vec![
                string(&i.uri),
                optional_string(&i.title),
                Value::Int64(i.width.into()),
                Value::Int64(i.height.into()),
                Value::Int64(i.size as i64),
            ])
        })
        .collect();
    let m = &value.media;
    let media = Value::Tuple(vec![
        string(&m.uri),
        optional_string(&m.title),
        Value::Int64(m.width.into()),
        Value::Int64(m.height.into()),
        string(&m.format),
        Value::Int64(m.duration),
        Value::Int64(m.size),
        m.bitrate.map_or(Value::Null, |b| Value::Int64(b.into())),
        Value::List(m.persons.iter().map(|p| string(p)).collect()),
        Value::Int64(m.player as i64),
        optional_string(&m.copyright),
    ]);
    vec![Value::List(images), media]
}

fn string(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

fn optional_string(s: &Option<String>) -> Value {
    s.as_deref().map_or(Value::Null, string)
}

/// The reverse step: the structs of a row.
///
/// # Errors
/// A row whose shape is not MediaContent's.
pub fn from_row(mut row: Vec<Value>) -> Result<MediaContent, String> {
    if row.len() != 2 {
        return Err(format!(
            "a MediaContent row has 2 columns, this one {}",
            row.len()
        ));
    }
    let media = media_from_value(row.pop().unwrap_or_default())?;
    let images = match row.pop().unwrap_or_default() {
        Value::List(items) => items
            .into_iter()
            .map(image_from_value)
            .collect::<Result<_, _>>()?,
        other => return Err(format!("images: expected a list, found {other:?}")),
    };
    Ok(MediaContent { images, media })
}

/// The shallow reverse step: the Media part of a row.
///
/// # Errors
/// A row whose shape is not MediaContent's.
pub fn media_from_row(mut row: Vec<Value>) -> Result<Media, String> {
    if row.len() != 2 {
        return Err(format!(
            "a MediaContent row has 2 columns, this one {}",
            row.len()
        ));
    }
    media_from_value(row.pop().unwrap_or_default())
}

fn members<const N: usize>(value: Value, what: &str) -> Result<[Value; N], String> {
    match value {
        Value::Tuple(items) => items
            .try_into()
            .map_err(|items: Vec<Value>| format!("{what}: {} members, expected {N}", items.len())),
        other => Err(format!("{what}: expected a struct, found {other:?}")),
    }
}

fn image_from_value(value: Value) -> Result<Image, String> {
    let [uri, title, width, height, size] = members(value, "image")?;
    Ok(Image {
        uri: text(uri)?,
        title: optional_text(title)?,
        width: int(width)?,
        height: int(height)?,
        size: Size::from_code(long(size)?)?,
    })
}

fn media_from_value(value: Value) -> Result<Media, String> {
    let [uri, title, width, height, format, duration, size, bitrate, persons, player, copyright] =
        members(value, "media")?;
    Ok(Media {
        uri: text(uri)?,
        title: optional_text(title)?,
        width: int(width)?,
        height: int(height)?,
        format: text(format)?,
        duration: long(duration)?,
        size: long(size)?,
        bitrate: match bitrate {
            Value::Null => None,
            v => Some(int(v)?),
        },
        persons: match persons {
            Value::List(items) => items.into_iter().map(text).collect::<Result<_, _>>()?,
            other => return Err(format!("persons: expected a list, found {other:?}")),
        },
        player: Player::from_code(long(player)?)?,
        copyright: optional_text(copyright)?,
    })
}

fn text(value: Value) -> Result<String, String> {
    match value {
        Value::String(bytes) => String::from_utf8(bytes).map_err(|e| e.to_string()),
        other => Err(format!("expected a string, found {other:?}")),
    }
}

fn optional_text(value: Value) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        v => text(v).map(Some),
    }
}

fn long(value: Value) -> Result<i64, String> {
    match value {
        Value::Int64(v) => Ok(v),
        other => Err(format!("expected an integer, found {other:?}")),
    }
}

fn int(value: Value) -> Result<i32, String> {
    i32::try_from(long(value)?).map_err(|e| e.to_string())
}

/// A format through the common row interface.
pub struct Interface {
    pub kind: FormatKind,
    pub schema: TableSchema,
}

impl Contender for Interface {
    type Built<'a> = Vec<Value>;
    type Decoded = Vec<Value>;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<Vec<Value>, String> {
        Ok(to_row(value))
    }

    fn serialize(&self, row: &Vec<Value>) -> Result<Vec<u8>, String> {
        interface_write(self.kind, &self.schema, |write| write(row))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Vec<Value>, String> {
        interface_rows(self.kind, &self.schema, bytes)?
            .next()
            .ok_or("no row in the stream")?
    }

    fn shallow(&self, row: Vec<Value>) -> Result<Media, String> {
        media_from_row(row)
    }

    fn deep(&self, row: Vec<Value>) -> Result<MediaContent, String> {
        from_row(row)
    }
}

/// The bytes of a stream of `kind` for `schema` whose rows `rows` writes (through the
/// callback it is given): `open_sink`, `write_owned_row` per row, `finish`.
///
/// # Errors
/// A row that does not fit the schema, or the format's error.
pub fn interface_write(
    kind: FormatKind,
    schema: &TableSchema,
    rows: impl FnOnce(&mut dyn FnMut(&[Value]) -> Result<(), String>) -> Result<(), String>,
) -> Result<Vec<u8>, String> {
    let buffer = SharedOutput::default();
    let mut sink = open_sink(kind, std::slice::from_ref(schema), Box::new(buffer.clone()))
        .map_err(|e| e.to_string())?;
    let position = RowPosition::default();
    rows(&mut |row| {
        sink.write_owned_row(&position, row)
            .map_err(|e| e.to_string())
    })?;
    sink.finish().map_err(|e| e.to_string())?;
    drop(sink);
    Ok(buffer.take())
}

/// The rows of a stream of `kind` as owned values of `schema` (composite values, which the
/// interface hands out as binary YSON, decoded against their column types).
///
/// # Errors
/// A stream whose header cannot be read; later errors come with the rows.
pub fn interface_rows<'s>(
    kind: FormatKind,
    schema: &'s TableSchema,
    bytes: &[u8],
) -> Result<impl Iterator<Item = Result<Vec<Value>, String>> + 's, String> {
    // The source reads an owned input (a copy: tens of ns for a MediaContent).
    let mut source = open_source(
        kind,
        std::slice::from_ref(schema),
        Box::new(Cursor::new(bytes.to_vec())),
    )
    .map_err(|e| e.to_string())?;
    Ok(std::iter::from_fn(move || match source.next_row() {
        Ok(None) => None,
        Err(e) => Some(Err(e.to_string())),
        Ok(Some(row)) => Some(
            row.values
                .iter()
                .zip(&schema.columns)
                .map(|(v, c)| value_from_ref(*v, &c.ty).map_err(|e| e.to_string()))
                .collect(),
        ),
    }))
}

/// A format's own one-message codec.
pub enum RowCodec {
    Thrift(thrift::RowCodec),
    Avro(avro::RowCodec),
    Protobuf(protobuf::dynamic::RowCodec),
}

impl RowCodec {
    /// The codecs the formats crate has, with their format names.
    pub fn all(schema: &TableSchema) -> Result<Vec<(&'static str, RowCodec)>, String> {
        Ok(vec![
            (
                "thrift",
                RowCodec::Thrift(thrift::RowCodec::new(schema, thrift::Protocol::Binary)?),
            ),
            (
                "thrift-compact",
                RowCodec::Thrift(thrift::RowCodec::new(schema, thrift::Protocol::Compact)?),
            ),
            ("avro", RowCodec::Avro(avro::RowCodec::new(schema))),
            (
                "protobuf-dynamic",
                RowCodec::Protobuf(protobuf::dynamic::RowCodec::new(schema)),
            ),
        ])
    }
}

impl RowCodec {
    /// Appends the message of `row` to `out`.
    ///
    /// # Errors
    /// A value that does not fit its column.
    pub fn encode(&self, row: &[Value], out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            RowCodec::Thrift(codec) => codec.encode(row, out),
            RowCodec::Avro(codec) => codec.encode_row(row, out).map_err(|e| e.to_string()),
            RowCodec::Protobuf(codec) => codec.encode_row(row, out).map_err(|e| e.to_string()),
        }
    }

    /// The row of the message that is the whole of `bytes`.
    ///
    /// # Errors
    /// Truncated or corrupt input, with where.
    pub fn decode(&self, bytes: &[u8]) -> Result<Vec<Value>, String> {
        match self {
            RowCodec::Thrift(codec) => codec.decode(bytes).map_err(|e| e.message),
            RowCodec::Avro(codec) => codec.decode_row(bytes).map_err(|e| e.to_string()),
            RowCodec::Protobuf(codec) => codec.decode_row(bytes).map_err(|e| e.to_string()),
        }
    }
}

impl Contender for RowCodec {
    type Built<'a> = Vec<Value>;
    type Decoded = Vec<Value>;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<Vec<Value>, String> {
        Ok(to_row(value))
    }

    fn serialize(&self, row: &Vec<Value>) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.encode(row, &mut out)?;
        Ok(out)
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Vec<Value>, String> {
        self.decode(bytes)
    }

    fn shallow(&self, row: Vec<Value>) -> Result<Media, String> {
        media_from_row(row)
    }

    fn deep(&self, row: Vec<Value>) -> Result<MediaContent, String> {
        from_row(row)
    }
}

/// A schema format's typed path: serde on the program's own structs, guided by the table
/// schema (the structs' fields are its columns); the registry's serde path of the format.
pub struct Typed(SerdeRowCodec);

impl Typed {
    /// The schema formats' typed paths, with their format names (MessagePack and CBOR, whose
    /// serde paths take no schema, are the serde crates' arms).
    ///
    /// # Errors
    /// A schema a format cannot hold.
    pub fn all(schema: &TableSchema) -> Result<Vec<(&'static str, Typed)>, String> {
        let mut out = Vec::new();
        for kind in [
            FormatKind::Thrift,
            FormatKind::ThriftCompact,
            FormatKind::Avro,
            FormatKind::Json,
            FormatKind::Protobuf,
        ] {
            let codec = SerdeRowCodec::new(kind, schema)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("{} has no serde path", kind.name()))?;
            out.push((kind.name(), Typed(codec)));
        }
        Ok(out)
    }

    /// The bytes of `value`.
    ///
    /// # Errors
    /// A value that does not fit the schema.
    pub fn to_vec<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.append(value, &mut out)?;
        Ok(out)
    }

    /// Appends the bytes of `value` to `out`.
    ///
    /// # Errors
    /// A value that does not fit the schema.
    pub fn append<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.0.serialize(value, out).map_err(|e| e.to_string())
    }

    /// The value of `bytes`.
    ///
    /// # Errors
    /// Bytes that are not a value of the schema, or that do not fit `T`.
    pub fn from_slice<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, String> {
        self.0
            .deserialize_seed(std::marker::PhantomData::<T>, bytes)
            .map_err(|e| e.to_string())
    }
}

impl Contender for Typed {
    type Built<'a> = &'a MediaContent;
    type Decoded = MediaContent;

    fn forward<'a>(&self, value: &'a MediaContent) -> Result<&'a MediaContent, String> {
        Ok(value)
    }

    fn serialize(&self, value: &&MediaContent) -> Result<Vec<u8>, String> {
        self.to_vec(*value)
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<MediaContent, String> {
        self.from_slice(bytes)
    }

    fn shallow(&self, decoded: MediaContent) -> Result<Media, String> {
        Ok(decoded.media)
    }

    fn deep(&self, decoded: MediaContent) -> Result<MediaContent, String> {
        Ok(decoded)
    }
}
