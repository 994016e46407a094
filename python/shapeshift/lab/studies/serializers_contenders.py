"""The contenders of the serializers study: every format of ``shapeshift.formats`` and the Python
libraries users pick for the same job, each with jvm-serializers' four steps for MediaContent.

jvm-serializers' method: per library a *forward* step builds the library's own object from the
reference object (``serializers_data.MediaContent``), *serialize* turns it into bytes,
*deserialize* turns bytes into the library's object, and a *reverse* step rebuilds the reference
object from it (``shallow``: the Media part only; ``deep``: everything). A library that works on
the reference object itself (pickle, orjson and msgspec on dataclasses) has identity steps, as
jvm-serializers' databinding libraries do.
"""

from __future__ import annotations

import io
import json
import pickle
from dataclasses import dataclass
from typing import Any, Callable

from shapeshift.lab.studies import serializers_data as media
from shapeshift.lab.studies.serializers_data import MediaContent


@dataclass
class Contender:
    name: str
    family: str  # the wire format; ours is compared with the fastest peer of the same family
    ours: bool
    forward: Callable[[MediaContent], Any]
    serialize: Callable[[Any], bytes]
    deserialize: Callable[[bytes], Any]
    shallow: Callable[[Any], media.Media]
    deep: Callable[[Any], MediaContent]
    api: str = ""  # the calls measured, for the report
    checked: bool = False  # a shapeshift.formats arm: checked against the Python target
    registry_format: str = ""  # ours: the format's registry name
    typed: bool = False  # ours: the typed path (dataclasses in and out, unframed messages)


def _identity(x):
    return x


def _media_of(content):
    return content.media


# Registry name -> wire-format family (the peers' families use the same words).
OUR_FAMILIES = {
    "yson": "yson binary", "yson-text": "yson text", "json": "json", "msgpack": "msgpack",
    "cbor": "cbor", "arrow": "arrow ipc", "avro": "avro", "protobuf": "protobuf",
    "protobuf-dynamic": "protobuf", "skiff": "skiff", "thrift": "thrift binary",
    "thrift-compact": "thrift compact",
}


def ours() -> list[Contender]:
    """``shapeshift.formats`` in every format of the registry: one row per MediaContent with the
    table schema ``serializers_data.YT_SCHEMA``, through a codec made once (as the peers'
    encoders, message classes and parsed schemas are). Avro as raw datums (``avro_datums``),
    the message form fastavro's schemaless writer and jvm-serializers' Avro write: a container
    file would add a header with the schema's JSON to every message."""
    from shapeshift import formats

    out = []
    for fmt in formats.FORMATS:
        datums = fmt == "avro"
        codec = formats.codec(fmt, media.YT_SCHEMA, avro_datums=datums)

        def serialize(row, dumps=codec.dumps):
            return dumps([row])

        out.append(Contender(
            f"shapeshift {fmt}", OUR_FAMILIES.get(fmt, fmt), True, media.to_dict, serialize,
            codec.loads, lambda rows: media.shallow_from_dict(rows[0]),
            lambda rows: media.from_dict(rows[0]),
            api=f"shapeshift.formats.codec({fmt!r}, MediaContent table schema"
            f"{', avro_datums=True' if datums else ''}), made once: .dumps([row]) / .loads(data)",
            checked=True, registry_format=fmt,
        ))
    return out + typed()


def typed() -> list[Contender]:
    """``shapeshift.formats.typed_codec`` on the reference dataclasses themselves (identity
    forward and reverse steps, as msgspec's typed decoding): one arm per format family that has
    a typed path (``protobuf`` and ``protobuf-dynamic`` share one)."""
    from shapeshift import formats

    out, families = [], set()
    for fmt in formats.FORMATS:
        family = OUR_FAMILIES.get(fmt, fmt)
        if family in families:
            continue
        try:
            codec = formats.typed_codec(fmt, media.YT_SCHEMA, MediaContent)
        except ValueError:  # no typed path: YSON, Skiff, Arrow
            continue
        families.add(family)
        out.append(Contender(
            f"shapeshift {fmt} typed", family, True, _identity, codec.encode, codec.decode,
            _media_of, _identity,
            api=f"shapeshift.formats.typed_codec({fmt!r}, MediaContent table schema, MediaContent), "
            "made once: .encode(obj) / .decode(data) (typed: decoding builds the dataclasses)",
            checked=True, registry_format=fmt, typed=True,
        ))
    return out


def _dict_contender(name, family, dumps, loads, api) -> Contender:
    return Contender(name, family, False, media.to_dict, dumps, loads, media.shallow_from_dict,
                     media.from_dict, api=api)


def _protobuf() -> Contender:
    MC, M, I = media.protobuf_classes()

    def forward(c: MediaContent):
        m = c.media
        return MC(
            image=[I(uri=i.uri, title=i.title, width=i.width, height=i.height, size=i.size) for i in c.images],
            media=M(uri=m.uri, title=m.title, width=m.width, height=m.height, format=m.format,
                    duration=m.duration, size=m.size, bitrate=m.bitrate, person=m.persons,
                    player=m.player, copyright=m.copyright),
        )

    def shallow(msg) -> media.Media:
        m = msg.media
        return media.Media(
            m.uri, m.title if m.HasField("title") else None, m.width, m.height, m.format,
            m.duration, m.size, m.bitrate if m.HasField("bitrate") else None, list(m.person),
            media.Player(m.player), m.copyright if m.HasField("copyright") else None,
        )

    def deep(msg) -> MediaContent:
        return MediaContent(
            [media.Image(i.uri, i.title if i.HasField("title") else None, i.width, i.height,
                         media.Size(i.size)) for i in msg.image],
            shallow(msg),
        )

    from google.protobuf.internal import api_implementation

    return Contender(
        f"protobuf ({api_implementation.Type()})", "protobuf", False, forward,
        lambda msg: msg.SerializeToString(), MC.FromString, shallow, deep,
        api="message built field by field; SerializeToString / FromString (jvm-serializers' media.proto)",
    )


def _thrift(compact: bool) -> Contender:
    from thrift.protocol import TBinaryProtocol, TCompactProtocol
    from thrift.transport import TTransport

    MC, M, I = media.thrift_classes()
    factory = (TCompactProtocol.TCompactProtocolAcceleratedFactory() if compact
               else TBinaryProtocol.TBinaryProtocolAcceleratedFactory())
    if factory.getProtocol(TTransport.TMemoryBuffer())._fast_encode is None:
        raise RuntimeError("the thrift package was installed without its C protocols (fastbinary)")

    def forward(c: MediaContent):
        m = c.media
        return MC(
            image=[I(uri=i.uri, title=i.title, width=i.width, height=i.height, size=int(i.size)) for i in c.images],
            media=M(uri=m.uri, title=m.title, width=m.width, height=m.height, format=m.format,
                    duration=m.duration, size=m.size, bitrate=m.bitrate, person=m.persons,
                    player=int(m.player), copyright=m.copyright),
        )

    def serialize(obj) -> bytes:
        buffer = TTransport.TMemoryBuffer()
        obj.write(factory.getProtocol(buffer))
        return buffer.getvalue()

    def deserialize(data: bytes):
        obj = MC()
        obj.read(factory.getProtocol(TTransport.TMemoryBuffer(data)))
        return obj

    def shallow(obj) -> media.Media:
        m = obj.media
        return media.Media(m.uri, m.title, m.width, m.height, m.format, m.duration, m.size,
                           m.bitrate, list(m.person), media.Player(m.player), m.copyright)

    def deep(obj) -> MediaContent:
        return MediaContent(
            [media.Image(i.uri, i.title, i.width, i.height, media.Size(i.size)) for i in obj.image],
            shallow(obj),
        )

    kind = "compact" if compact else "binary"
    return Contender(
        f"thrift {kind} (C)", f"thrift {kind}", False, forward, serialize, deserialize, shallow,
        deep, api=f"Apache thrift, T{kind.capitalize()}ProtocolAccelerated over TMemoryBuffer (jvm-serializers' media.thrift)",
    )


def _fastavro() -> Contender:
    import fastavro

    parsed = fastavro.parse_schema(media.AVRO_SCHEMA)

    def serialize(d) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, d)
        return out.getvalue()

    return _dict_contender(
        "fastavro", "avro", serialize, lambda data: fastavro.schemaless_reader(io.BytesIO(data), parsed),
        "schemaless_writer / schemaless_reader (jvm-serializers' media.avro)",
    )


def _pyarrow() -> Contender:
    import pyarrow as pa

    from shapeshift import formats

    # The Arrow schema our Arrow format writes for the table schema, so both carry the same types.
    schema = formats.to_arrow(
        formats.dumps([media.to_dict(media.DATASETS["media.1"]())], format="arrow", schema=media.YT_SCHEMA),
        "arrow", media.YT_SCHEMA,
    ).schema

    def forward(c: MediaContent):
        return pa.RecordBatch.from_pylist([media.to_dict(c)], schema=schema)

    def serialize(batch) -> bytes:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as writer:
            writer.write_batch(batch)
        return sink.getvalue().to_pybytes()

    def deserialize(data: bytes):
        return pa.ipc.open_stream(data).read_all()

    return Contender(
        "pyarrow", "arrow ipc", False, forward, serialize, deserialize,
        lambda table: media.shallow_from_dict(table.to_pylist()[0]),
        lambda table: media.from_dict(table.to_pylist()[0]),
        api="RecordBatch.from_pylist; IPC stream writer / open_stream().read_all(); to_pylist",
    )


def _yt_yson(fmt: str) -> Contender:
    import yt.yson

    return _dict_contender(
        f"yt.yson {fmt}", f"yson {fmt}",
        lambda d: yt.yson.dumps(d, yson_format=fmt),
        lambda data: yt.yson.loads(data, always_create_attributes=False),
        f"yt.yson.dumps(yson_format={fmt!r}) / loads(always_create_attributes=False) (ytsaurus-yson, C++)",
    )


def peers() -> list[Contender]:
    """The Python libraries, each as users call it."""
    import cbor2
    import msgpack
    import msgspec
    import orjson
    import ormsgpack
    import yaml

    from shapeshift import yson as shapeshift_yson

    out = [
        Contender("pickle", "pickle", False, _identity,
                  lambda obj: pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), pickle.loads,
                  _media_of, _identity, api="pickle.dumps(dataclasses, protocol 5) / loads"),
        _dict_contender("json (stdlib)", "json",
                        lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode(),
                        json.loads, "json.dumps(compact).encode() / json.loads"),
        Contender("orjson", "json", False, _identity, orjson.dumps, orjson.loads,
                  media.shallow_from_dict, media.from_dict,
                  api="orjson.dumps(dataclasses) / orjson.loads"),
    ]
    for family, module in (("json", msgspec.json), ("msgpack", msgspec.msgpack)):
        encoder, decoder = module.Encoder(), module.Decoder(MediaContent)
        out.append(Contender(
            f"msgspec {family}", family, False, _identity, encoder.encode, decoder.decode,
            _media_of, _identity,
            api=f"msgspec.{family}.Encoder().encode / Decoder(MediaContent).decode (typed: "
            "deserializing builds the dataclasses)",
        ))
    out += [
        _dict_contender("msgpack", "msgpack", msgpack.packb, msgpack.unpackb, "msgpack.packb / unpackb"),
        Contender("ormsgpack", "msgpack", False, _identity, ormsgpack.packb, ormsgpack.unpackb,
                  media.shallow_from_dict, media.from_dict,
                  api="ormsgpack.packb(dataclasses) / unpackb"),
        _dict_contender("cbor2", "cbor", cbor2.dumps, cbor2.loads, "cbor2.dumps / loads (C extension)"),
        _protobuf(),
        _thrift(compact=False),
        _thrift(compact=True),
        _fastavro(),
        _pyarrow(),
        _dict_contender(
            "PyYAML (C)", "yaml",
            lambda d: yaml.dump(d, Dumper=yaml.CSafeDumper, encoding="utf-8", allow_unicode=True),
            lambda data: yaml.load(data, Loader=yaml.CSafeLoader),
            "yaml.dump(CSafeDumper) / yaml.load(CSafeLoader) (libyaml)",
        ),
        _yt_yson("binary"),
        _yt_yson("text"),
        Contender("shapeshift.yson binary", "yson binary", True, media.to_dict,
                  lambda d: shapeshift_yson.dumps(d, yson_format="binary"), shapeshift_yson.loads,
                  media.shallow_from_dict, media.from_dict,
                  api="shapeshift.yson.dumps(yson_format='binary') / loads (document codec)"),
    ]
    return out


def contenders() -> list[Contender]:
    """Ours (``shapeshift.formats``), then the peers."""
    return ours() + peers()


def published_schema_message(c: Contender, content: MediaContent) -> bytes:
    """The bytes of ``content`` that are compared with jvm-serializers' published sizes: what
    ``c`` writes, the message taken out of our row framing, and our Protobuf with the enums'
    proto2 presence (``serializers_data.YT_SCHEMA_PROTO2_ENUMS``; the typed path writes the
    row codec's bytes, so its arm is checked through the row codec too)."""
    if c.checked and c.family == "protobuf":
        from shapeshift import formats

        data = formats.dumps([media.to_dict(content)], format=c.registry_format,
                             schema=media.YT_SCHEMA_PROTO2_ENUMS)
        return _unframed(data)
    return row_message(c, c.serialize(c.forward(content)))


def row_message(c: Contender, data: bytes) -> bytes:
    """The encoded MediaContent inside what ``c`` wrote: for our framed row formats (Protobuf,
    Thrift) the message after YT's u32 length; for everything else (our Avro writes raw
    datums here, and the typed path writes bare messages) ``data`` itself."""
    if c.checked and not c.typed and c.family in ("protobuf", "thrift binary", "thrift compact"):
        return _unframed(data)
    return data


def _unframed(data: bytes) -> bytes:
    length = int.from_bytes(data[:4], "little")
    return data[4:4 + length]
