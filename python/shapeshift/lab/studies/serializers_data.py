"""jvm-serializers' MediaContent, its four test values and its schemas, for the serializers study.

The values are those of jvm-serializers (github eishay/jvm-serializers, ``tpc/data/``):
media.1 as the 2010 ``media.1.cks`` holds it (the value behind the published sizes; the later
``media.1.json`` adds U+C2A4 to "Steve Jobs"); media.2, media.3 and media.4 as
``media.2.json`` (everything different, non-ASCII strings, missing title/bitrate), ``media.3.json``
(long strings) and ``media.4.json`` (one-character strings). The schemas are jvm-serializers'
``tpc/schema/media.proto``, ``media.thrift`` and ``media.avro``, rebuilt here in each library's
own terms (a FileDescriptorProto, Thrift ``thrift_spec`` tuples, an Avro schema dict) so that the
study needs no code generator.

The reference object (jvm-serializers' ``data.media`` POJOs) is a set of slotted dataclasses;
enums are ``IntEnum`` with jvm-serializers' numbers, and every other representation (dicts,
rows, messages) carries them as int32 codes, as the Avro schema does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Player(enum.IntEnum):
    JAVA = 0
    FLASH = 1


class Size(enum.IntEnum):
    SMALL = 0
    LARGE = 1


@dataclass(slots=True)
class Image:
    uri: str
    title: str | None
    width: int
    height: int
    size: Size


@dataclass(slots=True)
class Media:
    uri: str
    title: str | None
    width: int
    height: int
    format: str
    duration: int
    size: int
    bitrate: int | None
    persons: list[str]
    player: Player
    copyright: str | None


@dataclass(slots=True)
class MediaContent:
    images: list[Image]
    media: Media


_LONG = "lkajldfjlskajdflkjslfjdslfjldjfljsdfljsdlfjsljfldjfldjals;djfasldjf;alskdjf;aslkdjf;asdjf;laskdjflsjdalfjd;alksjdfl;jsa;lfdja;slkdjf;alsjfd;lajsfl;dj"


def _media1() -> MediaContent:
    return MediaContent(
        images=[
            Image("http://javaone.com/keynote_large.jpg", "Javaone Keynote", 1024, 768, Size.LARGE),
            Image("http://javaone.com/keynote_small.jpg", "Javaone Keynote", 320, 240, Size.SMALL),
        ],
        media=Media(
            "http://javaone.com/keynote.mpg", "Javaone Keynote", 640, 480, "video/mpg4",
            18000000, 58982400, 262144, ["Bill Gates", "Steve Jobs"], Player.JAVA, None,
        ),
    )


def _media2() -> MediaContent:
    u = "\u1234"
    return MediaContent(
        images=[
            Image("http://javaone.com/keynote_huge.jpg" + u, "Javaone Keynote" + u, 32000, 24000, Size.LARGE),
            Image("http://javaone.com/keynote_large.jpg" + u, None, 1024, 768, Size.LARGE),
            Image("http://javaone.com/keynote_small.jpg" + u, None, 320, 240, Size.SMALL),
        ],
        media=Media(
            "http://javaone.com/keynote.ogg" + u, None, 641, 481, "video/theora" + u,
            18000001, 58982401, None, ["Bill Gates, Jr." + u, "Steven Jobs" + u], Player.FLASH,
            "2009, Scooby Doo\U0001D11E",
        ),
    )


def _media3() -> MediaContent:
    return MediaContent(
        images=[
            Image("http://javaone.com/keynote_large.jpg" + _LONG, "Javaone Keynote" + _LONG, 1024, 768, Size.LARGE),
            Image("http://javaone.com/keynote_small.jpg" + _LONG, "Javaone Keynote" + _LONG, 320, 240, Size.SMALL),
        ],
        media=Media(
            "http://javaone.com/keynote.mpg" + _LONG, "Javaone Keynote" + _LONG, 640, 480,
            "video/mpg4" + _LONG, 18000000, 58982400, 262144,
            ["Bill Gates" + _LONG, "Steve Jobs" + _LONG], Player.JAVA, None,
        ),
    )


def _media4() -> MediaContent:
    return MediaContent(
        images=[Image("h", "J", 1024, 768, Size.LARGE), Image("h", "J", 320, 240, Size.SMALL)],
        media=Media("g", "J", 640, 480, "v", 18000000, 58982400, 262144, ["B", "S"], Player.JAVA, None),
    )


# name -> builder; each call gives a fresh object.
DATASETS = {"media.1": _media1, "media.2": _media2, "media.3": _media3, "media.4": _media4}

# Sizes of media.1 that jvm-serializers published for its own schemas (bytes, bytes after
# deflate); the study's test checks every encoder of the same format and schema against them.
PUBLISHED_MEDIA1_SIZES = {
    "protobuf": (239, 149),
    "thrift binary": (349, 197),
    "thrift compact": (240, 148),
    "avro": (221, 133),
}


# --- dicts: the form JSON, MessagePack, CBOR, YAML, YSON, pickle-of-dicts and our row formats take


def image_to_dict(i: Image) -> dict:
    return {"uri": i.uri, "title": i.title, "width": i.width, "height": i.height, "size": int(i.size)}


def media_to_dict(m: Media) -> dict:
    return {
        "uri": m.uri, "title": m.title, "width": m.width, "height": m.height, "format": m.format,
        "duration": m.duration, "size": m.size, "bitrate": m.bitrate, "persons": list(m.persons),
        "player": int(m.player), "copyright": m.copyright,
    }


def to_dict(content: MediaContent) -> dict:
    return {"images": [image_to_dict(i) for i in content.images], "media": media_to_dict(content.media)}


def image_from_dict(d: dict) -> Image:
    return Image(d["uri"], d.get("title"), d["width"], d["height"], Size(d["size"]))


def media_from_dict(d: dict) -> Media:
    return Media(
        d["uri"], d.get("title"), d["width"], d["height"], d["format"], d["duration"], d["size"],
        d.get("bitrate"), list(d["persons"]), Player(d["player"]), d.get("copyright"),
    )


def from_dict(d: dict) -> MediaContent:
    return MediaContent([image_from_dict(i) for i in d["images"]], media_from_dict(d["media"]))


def shallow_from_dict(d: dict) -> Media:
    """jvm-serializers' "+shal" reverse step: only the Media part is rebuilt."""
    return media_from_dict(d["media"])


# --- YT table schema for shapeshift.formats: one row per MediaContent, columns in the order of
# jvm-serializers' .proto and .thrift (images = field 1, media = field 2), struct members in
# their field order, enums as int32 (the codes of the Avro schema; the same wire bytes as
# Protobuf's and Thrift's enums), nullable fields as optional.

_IMAGE_TYPE = {
    "type_name": "struct",
    "members": [
        {"name": "uri", "type": "utf8"},
        {"name": "title", "type": {"type_name": "optional", "item": "utf8"}},
        {"name": "width", "type": "int32"},
        {"name": "height", "type": "int32"},
        {"name": "size", "type": "int32"},
    ],
}
_MEDIA_TYPE = {
    "type_name": "struct",
    "members": [
        {"name": "uri", "type": "utf8"},
        {"name": "title", "type": {"type_name": "optional", "item": "utf8"}},
        {"name": "width", "type": "int32"},
        {"name": "height", "type": "int32"},
        {"name": "format", "type": "utf8"},
        {"name": "duration", "type": "int64"},
        {"name": "size", "type": "int64"},
        {"name": "bitrate", "type": {"type_name": "optional", "item": "int32"}},
        {"name": "persons", "type": {"type_name": "list", "item": "utf8"}},
        {"name": "player", "type": "int32"},
        {"name": "copyright", "type": {"type_name": "optional", "item": "utf8"}},
    ],
}
YT_SCHEMA = [
    {"name": "images", "type_v3": {"type_name": "list", "item": _IMAGE_TYPE}},
    {"name": "media", "type_v3": _MEDIA_TYPE},
]


def _with_optional_enums(struct: dict, enum_member: str) -> dict:
    members = [
        dict(m, type={"type_name": "optional", "item": "int32"}) if m["name"] == enum_member else m
        for m in struct["members"]
    ]
    return dict(struct, members=members)


# Our Protobuf follows proto3: an int32 of 0 is left out, so media.1's JAVA player and SMALL
# image (both 0) take no bytes there (235 bytes, not 239). jvm-serializers' media.proto is proto2
# with *required* enums, always written; the YT type with that presence is optional<int32>.
# With it our Protobuf writes exactly media.proto's bytes (the size check uses this schema).
YT_SCHEMA_PROTO2_ENUMS = [
    {"name": "images", "type_v3": {"type_name": "list", "item": _with_optional_enums(_IMAGE_TYPE, "size")}},
    {"name": "media", "type_v3": _with_optional_enums(_MEDIA_TYPE, "player")},
]


# --- Avro: jvm-serializers' tpc/schema/media.avro

AVRO_SCHEMA = {
    "type": "record", "name": "MediaContent", "namespace": "serializers.avro.media",
    "fields": [
        {"name": "images", "type": {"type": "array", "items": {
            "type": "record", "name": "Image", "fields": [
                {"name": "uri", "type": "string"},
                {"name": "title", "type": ["null", "string"]},
                {"name": "width", "type": "int"},
                {"name": "height", "type": "int"},
                {"name": "size", "type": "int"},
            ]}}},
        {"name": "media", "type": {"type": "record", "name": "Media", "fields": [
            {"name": "uri", "type": "string"},
            {"name": "title", "type": ["null", "string"]},
            {"name": "width", "type": "int"},
            {"name": "height", "type": "int"},
            {"name": "format", "type": "string"},
            {"name": "duration", "type": "long"},
            {"name": "size", "type": "long"},
            {"name": "bitrate", "type": ["null", "int"]},
            {"name": "persons", "type": {"type": "array", "items": "string"}},
            {"name": "player", "type": "int"},
            {"name": "copyright", "type": ["null", "string"]},
        ]}},
    ],
}


# --- Protobuf: jvm-serializers' tpc/schema/media.proto (proto2), as a FileDescriptorProto


def protobuf_classes():
    """(MediaContent, Media, Image) message classes of media.proto, built at run time in the
    protobuf package's default pool (its upb backend when installed)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.Default()
    name = "serializers/protobuf/media.proto"
    try:
        file_desc = pool.FindFileByName(name)
    except KeyError:
        F = descriptor_pb2.FieldDescriptorProto
        REQ, OPT, REP = F.LABEL_REQUIRED, F.LABEL_OPTIONAL, F.LABEL_REPEATED
        STR, I32, I64, ENUM, MSG = F.TYPE_STRING, F.TYPE_INT32, F.TYPE_INT64, F.TYPE_ENUM, F.TYPE_MESSAGE
        pkg = "serializers.protobuf.media"
        proto = descriptor_pb2.FileDescriptorProto(name=name, package=pkg, syntax="proto2")

        def message(msg_name, fields, enum_name=None, values=()):
            m = proto.message_type.add(name=msg_name)
            for number, (field_name, label, kind, type_name) in enumerate(fields, 1):
                f = m.field.add(name=field_name, number=number, label=label, type=kind)
                if type_name:
                    f.type_name = type_name
            if enum_name:
                e = m.enum_type.add(name=enum_name)
                for value_name, number in values:
                    e.value.add(name=value_name, number=number)

        message("Image", [
            ("uri", REQ, STR, None), ("title", OPT, STR, None), ("width", REQ, I32, None),
            ("height", REQ, I32, None), ("size", REQ, ENUM, f".{pkg}.Image.Size"),
        ], "Size", [("SMALL", 0), ("LARGE", 1)])
        message("Media", [
            ("uri", REQ, STR, None), ("title", OPT, STR, None), ("width", REQ, I32, None),
            ("height", REQ, I32, None), ("format", REQ, STR, None), ("duration", REQ, I64, None),
            ("size", REQ, I64, None), ("bitrate", OPT, I32, None), ("person", REP, STR, None),
            ("player", REQ, ENUM, f".{pkg}.Media.Player"), ("copyright", OPT, STR, None),
        ], "Player", [("JAVA", 0), ("FLASH", 1)])
        message("MediaContent", [
            ("image", REP, MSG, f".{pkg}.Image"), ("media", REQ, MSG, f".{pkg}.Media"),
        ])
        pool.Add(proto)
        file_desc = pool.FindFileByName(name)
    return tuple(
        message_factory.GetMessageClass(file_desc.message_types_by_name[n])
        for n in ("MediaContent", "Media", "Image")
    )


# --- Thrift: jvm-serializers' tpc/schema/media.thrift as the ``thrift_spec`` tuples the Thrift
# compiler generates for Python (read and written by the thrift package's C protocols)


class _ThriftStruct:
    __slots__ = ()

    def __init__(self, **values):
        for field in self.__slots__:
            setattr(self, field, values.get(field))

    def read(self, iprot):
        iprot._fast_decode(self, iprot, [self.__class__, self.thrift_spec])

    def write(self, oprot):
        oprot.trans.write(oprot._fast_encode(self, [self.__class__, self.thrift_spec]))

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__
        )


class ThriftImage(_ThriftStruct):
    __slots__ = ("uri", "title", "width", "height", "size")


class ThriftMedia(_ThriftStruct):
    __slots__ = ("uri", "title", "width", "height", "format", "duration", "size", "bitrate",
                 "person", "player", "copyright")


class ThriftMediaContent(_ThriftStruct):
    __slots__ = ("image", "media")


def _thrift_specs() -> None:
    from thrift.Thrift import TType

    S, I32, I64 = TType.STRING, TType.I32, TType.I64
    ThriftImage.thrift_spec = (
        None, (1, S, "uri", "UTF8", None), (2, S, "title", "UTF8", None),
        (3, I32, "width", None, None), (4, I32, "height", None, None), (5, I32, "size", None, None),
    )
    ThriftMedia.thrift_spec = (
        None, (1, S, "uri", "UTF8", None), (2, S, "title", "UTF8", None),
        (3, I32, "width", None, None), (4, I32, "height", None, None),
        (5, S, "format", "UTF8", None), (6, I64, "duration", None, None),
        (7, I64, "size", None, None), (8, I32, "bitrate", None, None),
        (9, TType.LIST, "person", (S, "UTF8", False), None), (10, I32, "player", None, None),
        (11, S, "copyright", "UTF8", None),
    )
    ThriftMediaContent.thrift_spec = (
        None,
        (1, TType.LIST, "image", (TType.STRUCT, [ThriftImage, ThriftImage.thrift_spec], False), None),
        (2, TType.STRUCT, "media", [ThriftMedia, ThriftMedia.thrift_spec], None),
    )


def thrift_classes():
    """(MediaContent, Media, Image) Thrift structs of media.thrift."""
    if not hasattr(ThriftMediaContent, "thrift_spec"):
        _thrift_specs()
    return ThriftMediaContent, ThriftMedia, ThriftImage
