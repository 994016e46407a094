//! The rpc study's messages and their encoding by any of our row formats.
//!
//! A message is one table row written through the formats crate's common interface
//! ([`PreparedFormat`]), so switching the wire format is switching a [`FormatKind`].
//! Requests are rows of `{op: int64, key: int64, <value columns>}`, responses rows of `{result: int64, <value columns>}`; the value columns are all optional and null when
//! a message carries no value (a get request, a put response). Avro is written as raw datums
//! (both ends know the schema, as in Avro's RPC), not as an object container file per message.

use shapeshift_formats::registry::{FormatKind, FormatOptions, PreparedFormat};
use shapeshift_formats::table::{FormatError, OwnedRefs, RowPosition, SharedOutput};
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value, ValueRef};

/// Read the item at `key`.
pub const OP_GET: i64 = 0;
/// Replace the item at `key`.
pub const OP_PUT: i64 = 1;
/// Server statistics: nanoseconds the server spent in its codec since it started.
pub const OP_CODEC_NS: i64 = 2;
/// Server statistics: requests answered since the server started.
pub const OP_REQUESTS: i64 = 3;

/// The request was served (for statistics: the counter's value is the result).
pub const RESULT_OK: i64 = 0;
/// No item at that key.
pub const RESULT_NOT_FOUND: i64 = -1;
/// The frame held no decodable request, an unknown op, or a put without a value.
pub const RESULT_BAD_REQUEST: i64 = -2;
/// The frame's length exceeds the server's maximum; the server closes the connection.
pub const RESULT_FRAME_TOO_LARGE: i64 = -3;
/// The server holds its maximum number of connections; it closes this one.
pub const RESULT_BUSY: i64 = -4;

/// The formats the study switches among (every row format of the list).
pub const STUDY_FORMATS: [FormatKind; 8] = [
    FormatKind::Msgpack,
    FormatKind::Thrift,
    FormatKind::ThriftCompact,
    FormatKind::Protobuf,
    FormatKind::Json,
    FormatKind::Yson,
    FormatKind::Cbor,
    FormatKind::Avro,
];

/// What the store holds at each key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// A 16-byte string.
    Tiny,
    /// jvm-serializers' MediaContent (media.1), as the serializers study's YT schema.
    Media,
}

/// The tiny value at `key`: 16 bytes, `value-0000000042`.
pub fn tiny_value(key: i64) -> Vec<u8> {
    format!("value-{key:010}").into_bytes()
}

impl ValueKind {
    pub const ALL: [ValueKind; 2] = [ValueKind::Tiny, ValueKind::Media];

    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Tiny => "tiny",
            ValueKind::Media => "media",
        }
    }

    pub fn from_name(name: &str) -> Option<ValueKind> {
        ValueKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The value's columns, each optional so a message without a value is all nulls.
    pub fn value_columns(self) -> Vec<ColumnSchema> {
        match self {
            ValueKind::Tiny => vec![ColumnSchema::new(
                "value",
                Type::optional(PrimitiveType::String.into()),
            )],
            ValueKind::Media => vec![
                ColumnSchema::new("images", Type::optional(Type::list(image_type()))),
                ColumnSchema::new("media", Type::optional(media_type())),
            ],
        }
    }

    /// The value the store starts with at `key` (tiny values differ per key; every
    /// MediaContent item is media.1).
    pub fn initial_item(self, key: i64) -> Item {
        match self {
            ValueKind::Tiny => Item(vec![Field::String(tiny_value(key))]),
            ValueKind::Media => {
                let schema = TableSchema::new(ValueKind::Media.value_columns());
                let values = media1();
                let mut refs = OwnedRefs::new();
                let refs = refs
                    .refs(&values, &schema)
                    .expect("media.1 fits its schema");
                Item(refs.iter().map(|r| Field::from_ref(*r)).collect())
            }
        }
    }
}

fn utf8() -> Type {
    PrimitiveType::Utf8.into()
}

fn member(name: &str, ty: Type) -> shapeshift_types::Member {
    shapeshift_types::Member::new(name, ty)
}

fn image_type() -> Type {
    Type::Struct(vec![
        member("uri", utf8()),
        member("title", Type::optional(utf8())),
        member("width", PrimitiveType::Int32.into()),
        member("height", PrimitiveType::Int32.into()),
        member("size", PrimitiveType::Int32.into()),
    ])
}

fn media_type() -> Type {
    Type::Struct(vec![
        member("uri", utf8()),
        member("title", Type::optional(utf8())),
        member("width", PrimitiveType::Int32.into()),
        member("height", PrimitiveType::Int32.into()),
        member("format", utf8()),
        member("duration", PrimitiveType::Int64.into()),
        member("size", PrimitiveType::Int64.into()),
        member("bitrate", Type::optional(PrimitiveType::Int32.into())),
        member("persons", Type::list(utf8())),
        member("player", PrimitiveType::Int32.into()),
        member("copyright", Type::optional(utf8())),
    ])
}

/// jvm-serializers' media.1 as the row `[images, media]`.
fn media1() -> Vec<Value> {
    let s = |text: &str| Value::String(text.as_bytes().to_vec());
    let image = |uri: &str, width: i64, height: i64, size: i64| {
        Value::Tuple(vec![
            s(uri),
            s("Javaone Keynote"),
            Value::Int64(width),
            Value::Int64(height),
            Value::Int64(size),
        ])
    };
    vec![
        Value::List(vec![
            image("http://javaone.com/keynote_large.jpg", 1024, 768, 1),
            image("http://javaone.com/keynote_small.jpg", 320, 240, 0),
        ]),
        Value::Tuple(vec![
            s("http://javaone.com/keynote.mpg"),
            s("Javaone Keynote"),
            Value::Int64(640),
            Value::Int64(480),
            s("video/mpg4"),
            Value::Int64(18_000_000),
            Value::Int64(58_982_400),
            Value::Int64(262_144),
            Value::List(vec![s("Bill Gates"), s("Steve Jobs")]),
            Value::Int64(0),
            Value::Null,
        ]),
    ]
}

/// One value column of a stored item, in the common interface's convention (composite values
/// as binary YSON), owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Null,
    String(Vec<u8>),
    Composite(Vec<u8>),
}

impl Field {
    fn from_ref(value: ValueRef<'_>) -> Field {
        match value {
            ValueRef::String(bytes) => Field::String(bytes.to_vec()),
            ValueRef::Composite(bytes) | ValueRef::Any(bytes) => Field::Composite(bytes.to_vec()),
            _ => Field::Null,
        }
    }

    fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Field::Null => ValueRef::Null,
            Field::String(bytes) => ValueRef::String(bytes),
            Field::Composite(bytes) => ValueRef::Composite(bytes),
        }
    }
}

/// A stored value: its value columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Item(pub Vec<Field>);

#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub op: i64,
    pub key: i64,
    pub value: Option<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub result: i64,
    pub value: Option<Item>,
}

/// Encodes and decodes the study's messages in one format.
#[derive(Clone)]
pub struct MessageCodec {
    format: FormatKind,
    request: PreparedFormat,
    response: PreparedFormat,
    value_columns: usize,
}

impl std::fmt::Debug for MessageCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageCodec")
            .field("format", &self.format)
            .field("value_columns", &self.value_columns)
            .finish()
    }
}

/// One message type's schema compiled once (Avro as raw datums, as Avro's RPC sends them):
/// a server answering one small message per stream would otherwise compile it for every
/// request (a quarter of the server's CPU per tiny MessagePack read), as a generated RPC stub
/// never does. Bytes in memory are read in place where the format can.
fn prepare(format: FormatKind, schema: TableSchema) -> Result<PreparedFormat, FormatError> {
    let options = FormatOptions {
        avro_datums: format == FormatKind::Avro,
        ..FormatOptions::default()
    };
    PreparedFormat::new(format, vec![schema], options)
}

impl MessageCodec {
    /// The codec of the study's messages in `format`.
    ///
    /// # Errors
    /// A [`FormatError`] when the format cannot express the message schemas.
    pub fn new(format: FormatKind, kind: ValueKind) -> Result<MessageCodec, FormatError> {
        let int64 = |name: &str| ColumnSchema::new(name, PrimitiveType::Int64.into());
        let values = kind.value_columns();
        let value_columns = values.len();
        let mut request = vec![int64("op"), int64("key")];
        request.extend(values.iter().cloned());
        let mut response = vec![int64("result")];
        response.extend(values);
        Ok(MessageCodec {
            format,
            request: prepare(format, TableSchema::new(request))?,
            response: prepare(format, TableSchema::new(response))?,
            value_columns,
        })
    }

    pub fn format(&self) -> FormatKind {
        self.format
    }

    /// # Errors
    /// A [`FormatError`] when the value does not fit the schema (a caller's bug).
    pub fn encode_request(&self, request: &Request) -> Result<Vec<u8>, FormatError> {
        let head = [ValueRef::Int64(request.op), ValueRef::Int64(request.key)];
        self.encode(&self.request, &head, request.value.as_ref())
    }

    /// # Errors
    /// A [`FormatError`] when the value does not fit the schema (a caller's bug).
    pub fn encode_response(&self, response: &Response) -> Result<Vec<u8>, FormatError> {
        self.encode_response_parts(response.result, response.value.as_ref())
    }

    /// [`MessageCodec::encode_response`] of a borrowed value.
    ///
    /// # Errors
    /// As [`MessageCodec::encode_response`].
    pub fn encode_response_parts(
        &self,
        result: i64,
        value: Option<&Item>,
    ) -> Result<Vec<u8>, FormatError> {
        self.encode(&self.response, &[ValueRef::Int64(result)], value)
    }

    /// # Errors
    /// A [`FormatError`] saying where and what for bytes that are not one request of this
    /// format and schema.
    pub fn decode_request(&self, bytes: Vec<u8>) -> Result<Request, FormatError> {
        let (head, value) = self.decode(&self.request, bytes, 2)?;
        Ok(Request {
            op: head[0],
            key: head[1],
            value,
        })
    }

    /// # Errors
    /// As [`MessageCodec::decode_request`].
    pub fn decode_response(&self, bytes: Vec<u8>) -> Result<Response, FormatError> {
        let (head, value) = self.decode(&self.response, bytes, 1)?;
        Ok(Response {
            result: head[0],
            value,
        })
    }

    fn encode(
        &self,
        messages: &PreparedFormat,
        head: &[ValueRef<'_>],
        value: Option<&Item>,
    ) -> Result<Vec<u8>, FormatError> {
        let mut row: Vec<ValueRef<'_>> = Vec::with_capacity(head.len() + self.value_columns);
        row.extend_from_slice(head);
        match value {
            Some(item) => row.extend(item.0.iter().map(Field::as_ref)),
            None => row.extend(std::iter::repeat_n(ValueRef::Null, self.value_columns)),
        }
        let out = SharedOutput::default();
        let mut sink = messages.open_sink(Box::new(out.clone()))?;
        sink.write_row(&RowPosition::default(), &row)?;
        sink.finish()?;
        drop(sink);
        Ok(out.take())
    }

    /// The `heads` int64 columns and the value of the one row in `bytes`.
    fn decode(
        &self,
        messages: &PreparedFormat,
        bytes: Vec<u8>,
        heads: usize,
    ) -> Result<([i64; 2], Option<Item>), FormatError> {
        let name = self.format.name();
        let mut source = messages.open_source(bytes)?;
        let mut head = [0i64; 2];
        let value = {
            let row = source
                .next_row()?
                .ok_or_else(|| FormatError::new(name, "empty message: no row"))?;
            if row.values.len() != heads + self.value_columns {
                return Err(FormatError::new(
                    name,
                    format!(
                        "message has {} columns, expected {}",
                        row.values.len(),
                        heads + self.value_columns
                    ),
                ));
            }
            for (slot, value) in head.iter_mut().zip(&row.values[..heads]) {
                *slot = match value {
                    ValueRef::Int64(v) => *v,
                    other => {
                        return Err(FormatError::new(
                            name,
                            format!("message header column holds {other:?}, not an int64"),
                        ))
                    }
                };
            }
            let fields: Vec<Field> = row.values[heads..]
                .iter()
                .map(|v| Field::from_ref(*v))
                .collect();
            if fields.iter().all(|f| *f == Field::Null) {
                None
            } else {
                Some(Item(fields))
            }
        };
        if source.next_row()?.is_some() {
            return Err(FormatError::new(name, "message holds more than one row"));
        }
        Ok((head, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_study_format_round_trips_requests_and_responses_of_both_value_kinds() {
        for format in STUDY_FORMATS {
            for kind in ValueKind::ALL {
                let codec = MessageCodec::new(format, kind).unwrap();
                let put = Request {
                    op: OP_PUT,
                    key: 7,
                    value: Some(kind.initial_item(7)),
                };
                let bytes = codec.encode_request(&put).unwrap();
                assert_eq!(
                    codec.decode_request(bytes).unwrap(),
                    put,
                    "{format} {kind:?}"
                );
                let get = Request {
                    op: OP_GET,
                    key: 99,
                    value: None,
                };
                let bytes = codec.encode_request(&get).unwrap();
                assert_eq!(
                    codec.decode_request(bytes).unwrap(),
                    get,
                    "{format} {kind:?}"
                );
                let response = Response {
                    result: RESULT_OK,
                    value: Some(kind.initial_item(3)),
                };
                let bytes = codec.encode_response(&response).unwrap();
                assert_eq!(
                    codec.decode_response(bytes).unwrap(),
                    response,
                    "{format} {kind:?}"
                );
            }
        }
    }

    #[test]
    fn garbage_and_truncated_messages_are_errors_in_every_format() {
        for format in STUDY_FORMATS {
            let codec = MessageCodec::new(format, ValueKind::Media).unwrap();
            let good = codec
                .encode_request(&Request {
                    op: OP_PUT,
                    key: 1,
                    value: Some(ValueKind::Media.initial_item(1)),
                })
                .unwrap();
            for cut in [1, good.len() / 2, good.len() - 2] {
                assert!(
                    codec.decode_request(good[..cut].to_vec()).is_err(),
                    "{format}: cut at {cut}"
                );
            }
            assert!(codec.decode_request(Vec::new()).is_err(), "{format}: empty");
            let garbage: Vec<u8> = (0..200u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            assert!(codec.decode_request(garbage).is_err(), "{format}: garbage");
        }
    }
}
