"""``shapeshift.formats.typed_codec``: one row as a dataclass, through each format's serde path.

By property: every row of the schema round-trips in every format with a typed path, and its
bytes are those ``dumps`` writes for the same row as a dict (without the u32 frame of Protobuf
and Thrift rows). By example: the class is checked against the schema when the codec is made,
values against their YT types when written, and bad bytes give a ``FormatError`` that says
where, never a crash.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapeshift import formats

TYPED = ["json", "msgpack", "cbor", "protobuf", "protobuf-dynamic", "thrift", "thrift-compact", "avro"]
FRAMED = {"protobuf", "protobuf-dynamic", "thrift", "thrift-compact"}


class Color(enum.IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 7


@dataclass(slots=True)
class Point:
    x: float
    y: float


@dataclass
class Tag:
    name: str
    weight: int | None


@dataclass(slots=True)
class Row:
    id: int
    small: int
    big: int
    ratio: float
    flag: bool
    label: str
    blob: bytes
    raw_text: str
    color: Color
    maybe: int | None
    tags: list[Tag]
    points: list[Point]
    origin: Point | None
    names: list[str]
    counts: dict[str, int]
    by_id: dict[int, Point | None]


SCHEMA = [
    {"name": "id", "type_v3": "int64"},
    {"name": "small", "type_v3": "int8"},
    {"name": "big", "type_v3": "uint64"},
    {"name": "ratio", "type_v3": "double"},
    {"name": "flag", "type_v3": "bool"},
    {"name": "label", "type_v3": "utf8"},
    {"name": "blob", "type_v3": "string"},
    {"name": "raw_text", "type_v3": "string"},
    {"name": "color", "type_v3": "int32"},
    {"name": "maybe", "type_v3": {"type_name": "optional", "item": "int32"}},
    {"name": "tags", "type_v3": {"type_name": "list", "item": {"type_name": "struct", "members": [
        {"name": "name", "type": "utf8"},
        {"name": "weight", "type": {"type_name": "optional", "item": "int64"}},
    ]}}},
    {"name": "points", "type_v3": {"type_name": "list", "item": {"type_name": "struct", "members": [
        {"name": "x", "type": "double"}, {"name": "y", "type": "double"},
    ]}}},
    {"name": "origin", "type_v3": {"type_name": "optional", "item": {"type_name": "struct", "members": [
        {"name": "x", "type": "double"}, {"name": "y", "type": "double"},
    ]}}},
    {"name": "names", "type_v3": {"type_name": "list", "item": "utf8"}},
    {"name": "counts", "type_v3": {"type_name": "dict", "key": "utf8", "value": "int64"}},
    {"name": "by_id", "type_v3": {"type_name": "dict", "key": "int32", "value": {"type_name": "optional", "item": {
        "type_name": "struct", "members": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}}}},
]

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)
points = st.builds(Point, finite, finite)
rows = st.builds(
    Row,
    id=st.integers(-(2**63), 2**63 - 1),
    small=st.integers(-128, 127),
    big=st.integers(0, 2**64 - 1),
    ratio=finite,
    flag=st.booleans(),
    label=text,
    blob=st.binary(max_size=12),
    raw_text=text,
    color=st.sampled_from(Color),
    maybe=st.none() | st.integers(-(2**31), 2**31 - 1),
    tags=st.lists(st.builds(Tag, text, st.none() | st.integers(-(2**63), 2**63 - 1)), max_size=3),
    points=st.lists(points, max_size=3),
    origin=st.none() | points,
    names=st.lists(text, max_size=3),
    counts=st.dictionaries(text, st.integers(-(2**63), 2**63 - 1), max_size=3),
    by_id=st.dictionaries(st.integers(-(2**31), 2**31 - 1), st.none() | points, max_size=3),
)


def _as_dict(row: Row) -> dict:
    d = dataclasses.asdict(row)
    d["color"] = int(row.color)
    d["raw_text"] = row.raw_text.encode()
    return d


def _unframed(fmt: str, data: bytes) -> bytes:
    if fmt in FRAMED:
        length = int.from_bytes(data[:4], "little")
        return data[4:4 + length]
    return data


CODECS = {fmt: formats.typed_codec(fmt, SCHEMA, Row) for fmt in TYPED}


@pytest.mark.parametrize("fmt", TYPED)
@settings(max_examples=60, deadline=None)
@given(row=rows)
def test_rows_round_trip_and_write_the_row_codecs_bytes(fmt, row):
    codec = CODECS[fmt]
    data = codec.encode(row)
    back = codec.decode(data)
    assert back == row
    assert type(back.color) is Color and type(back.tags[0] if back.tags else Tag("", None)) is Tag
    assert data == _unframed(fmt, formats.dumps([_as_dict(row)], format=fmt, schema=SCHEMA, avro_datums=fmt == "avro"))


@pytest.mark.parametrize("fmt", TYPED)
def test_rows_the_row_codec_wrote_decode_as_objects(fmt):
    row = Row(1, -5, 2**64 - 1, 0.5, True, "ü", b"\x00\xff", "abc", Color.BLUE, None,
              [Tag("a", 3), Tag("b", None)], [Point(1.0, 2.0)], None, ["x", "y"], {"a": 1, "b": -2},
              {7: Point(0.5, 1.5), -1: None})
    written = _unframed(fmt, formats.dumps([_as_dict(row)], format=fmt, schema=SCHEMA, avro_datums=fmt == "avro"))
    assert CODECS[fmt].decode(written) == row


POST_INIT_CALLS: list[int] = []


@dataclass(frozen=True)
class Frozen:
    id: int

    def __post_init__(self):
        if self.id < 0:
            raise ValueError("ids are not negative")
        POST_INIT_CALLS.append(self.id)


def test_frozen_classes_are_built_and_post_init_runs_and_may_refuse():
    codec = formats.typed_codec("msgpack", [{"name": "id", "type_v3": "int64"}], Frozen)
    data = codec.encode(Frozen(3))
    POST_INIT_CALLS.clear()
    back = codec.decode(data)
    assert POST_INIT_CALLS == [3] and back == Frozen(3)
    with pytest.raises(formats.FormatError, match="ids are not negative"):
        codec.decode(b"\x81\xa2id\xff")  # {"id": -1}


class Mode(enum.Enum):
    OFF = 0
    ON = 5


@dataclass
class M:
    mode: Mode


def test_a_plain_enum_of_int_values_is_written_by_value():
    codec = formats.typed_codec("json", [{"name": "mode", "type_v3": "int32"}], M)
    assert codec.encode(M(Mode.ON)) == b'{"mode":5}\n'
    assert codec.decode(b'{"mode":5}') == M(Mode.ON)
    with pytest.raises(formats.FormatError, match="mode"):
        codec.decode(b'{"mode":4}')


# --- The class against the schema, when the codec is made


@dataclass
class Missing:
    id: int


@dataclass
class Extra:
    id: int
    label: str
    other: int


@dataclass
class NotOptional:
    id: int
    maybe: int


@dataclass
class WronglyOptional:
    id: int | None


@dataclass
class Unsupported:
    id: tuple[int, int]


@pytest.mark.parametrize("cls,schema,message", [
    (Missing, [{"name": "id", "type_v3": "int64"}, {"name": "label", "type_v3": "utf8"}], "no field `label`"),
    (Extra, [{"name": "id", "type_v3": "int64"}, {"name": "label", "type_v3": "utf8"}], "`other`.*would be lost"),
    (NotOptional, [{"name": "id", "type_v3": "int64"},
                   {"name": "maybe", "type_v3": {"type_name": "optional", "item": "int64"}}], r"maybe.*\| None"),
    (WronglyOptional, [{"name": "id", "type_v3": "int64"}], "id.*required"),
    (Unsupported, [{"name": "id", "type_v3": "int64"}], "not a type the typed path carries"),
])
def test_a_class_that_does_not_fit_the_schema_is_refused_when_the_codec_is_made(cls, schema, message):
    with pytest.raises(TypeError, match=message):
        formats.typed_codec("json", schema, cls)


@pytest.mark.parametrize("fmt", ["yson", "skiff", "arrow"])
def test_formats_without_a_typed_path_say_so(fmt):
    with pytest.raises(ValueError, match="no typed path"):
        formats.typed_codec(fmt, [{"name": "id", "type_v3": "int64"}], Missing)


# --- Values against their types, when written


def _row(**changes) -> Row:
    base = Row(1, 1, 1, 1.0, False, "a", b"b", "c", Color.RED, None, [Tag("t", 1)], [], None, [], {}, {})
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize("fmt", TYPED)
@pytest.mark.parametrize("changes,message", [
    ({"id": "1"}, "id: expected an int, got str"),
    ({"small": 128}, "small: 128 is out of the column's range -128..=127"),
    ({"big": -1}, "big: -1 is out of the column's range"),
    ({"label": None}, "label: expected a str, got NoneType"),
    ({"flag": 1}, "flag: expected a bool, got int"),
    ({"tags": [Tag("t", 1), Tag(5, None)]}, r"tags\[1\]\.name: expected a str, got int"),
    ({"origin": Tag("x", 1)}, "origin: expected a Point, got Tag"),
    ({"names": "abc"}, "names: expected a list, got str"),
    ({"counts": {"a": 1, "b": "x"}}, r"counts\[1\]: expected an int, got str"),
    ({"by_id": {1: Tag("t", 1)}}, r"by_id\[0\]: expected a Point, got Tag"),
])
def test_a_value_outside_its_type_is_refused_with_its_path(fmt, changes, message):
    with pytest.raises(formats.FormatError, match=message) as caught:
        CODECS[fmt].encode(_row(**changes))
    assert caught.value.format.startswith(fmt.split("-")[0])


# --- Bad bytes


@pytest.mark.parametrize("fmt", TYPED)
def test_every_truncation_and_corruption_is_an_error_or_a_row(fmt):
    codec = CODECS[fmt]
    data = codec.encode(_row(tags=[Tag("name", 7), Tag("ü", None)], points=[Point(1.5, -2.0)], names=["a", "b"]))
    for cut in range(len(data)):
        try:
            codec.decode(data[:cut])
        except formats.FormatError as e:
            assert e.format and e.message
    for i in range(len(data)):
        for flip in (0x01, 0x80, 0xFF):
            corrupt = bytearray(data)
            corrupt[i] ^= flip
            try:
                back = codec.decode(bytes(corrupt))
            except formats.FormatError:
                continue
            assert isinstance(back, Row)


def test_a_value_out_of_its_column_range_is_refused_by_the_self_describing_formats_too():
    import msgpack

    @dataclass
    class Small:
        small: int

    schema = [{"name": "small", "type_v3": "int8"}]
    for fmt, dumps in (("msgpack", msgpack.packb),):
        with pytest.raises(formats.FormatError, match="small: 300 is out of the column's range"):
            formats.typed_codec(fmt, schema, Small).decode(dumps({"small": 300}))
        with pytest.raises(formats.FormatError, match="member `other` is not in the schema"):
            formats.typed_codec(fmt, schema, Small).decode(dumps({"small": 1, "other": 2}))
        with pytest.raises(formats.FormatError, match="member `small` is missing"):
            formats.typed_codec(fmt, schema, Small).decode(dumps({}))


@dataclass
class Text:
    label: str


@pytest.mark.parametrize("fmt", TYPED)
@pytest.mark.parametrize("value", [
    "", "plain ascii longer than eight bytes", "é", "ascii prefix of sixteen+ é", "\u00ff" * 9,
    "ሴ", "http://javaone.com/keynote.ogg\u1234", "\U0001D11E", "2009, Scooby Doo\U0001D11E", "aé\u1234\U0001D11E",
])
def test_strings_of_every_width_read_back_as_the_same_str(fmt, value):
    codec = formats.typed_codec(fmt, [{"name": "label", "type_v3": "utf8"}], Text)
    back = codec.decode(codec.encode(Text(value)))
    assert back.label == value and type(back.label) is str
    assert back.label.encode() == value.encode()  # the same code points, at any width


@dataclass
class Counts:
    counts: dict[str, int]


@dataclass
class ByPoint:
    by: dict[Point, int]


def test_dict_keys_are_scalars_and_a_repeated_key_is_refused_not_overwritten():
    import msgpack

    schema = [{"name": "counts", "type_v3": {"type_name": "dict", "key": "utf8", "value": "int64"}}]
    codec = formats.typed_codec("msgpack", schema, Counts)
    assert codec.decode(codec.encode(Counts({"a": 1, "é": 2}))) == Counts({"a": 1, "é": 2})
    # MessagePack maps may repeat a key: a Python dict cannot hold both values.
    repeated = b"\x91\x82\xa1a\x01\xa1a\x02"
    with pytest.raises(formats.FormatError, match=r"counts\[1\]: a key repeated"):
        codec.decode(repeated)
    point_keys = [{"name": "by", "type_v3": {"type_name": "dict", "key": {"type_name": "struct", "members": [
        {"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}, "value": "int64"}}]
    with pytest.raises(TypeError, match="keys are scalars"):
        formats.typed_codec("msgpack", point_keys, ByPoint)
    # A row is an array of its columns; a dict a map, in the dict's order.
    assert msgpack.unpackb(codec.encode(Counts({"z": 1, "a": 2}))) == [{"z": 1, "a": 2}]


class Big(enum.IntEnum):
    SMALL = 3
    HUGE = 2**63 + 5


@dataclass
class Flags:
    flag: Big


@pytest.mark.parametrize("fmt", TYPED)
def test_enum_members_beyond_the_table_come_from_the_class_even_above_i64(fmt):
    codec = formats.typed_codec(fmt, [{"name": "flag", "type_v3": "uint64"}], Flags)
    for member in Big:
        back = codec.decode(codec.encode(Flags(member)))
        assert back.flag is member


@pytest.mark.parametrize("fmt", TYPED)
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=160))
def test_arbitrary_bytes_decode_to_a_row_or_a_format_error(fmt, data):
    try:
        back = CODECS[fmt].decode(data)
    except formats.FormatError as e:
        assert e.format and e.message
    else:
        assert isinstance(back, Row)


class Reentrant:
    """A class whose attribute encodes another row with the same codec while it is read."""

    codec = None

    @property
    def id(self):
        nested = Reentrant.codec.encode(Plain(7))
        assert Reentrant.codec.decode(nested) == Plain(7)
        return 5


@dataclass
class Plain:
    id: int


def test_a_codec_called_again_from_a_property_while_it_writes_gives_both_rows():
    codec = formats.typed_codec("msgpack", [{"name": "id", "type_v3": "int64"}], Plain)
    Reentrant.codec = codec

    class Sub(Plain):
        pass

    obj = Sub(0)
    # An instance of a subclass is read by attribute access, so a property runs.
    Sub.id = Reentrant.id
    assert codec.decode(codec.encode(obj)) == Plain(5)
    big = formats.typed_codec("msgpack", [{"name": "id", "type_v3": "string"}], Blob)
    assert len(big.encode(Blob(b"x" * (3 << 20)))) > 3 << 20
    assert big.decode(big.encode(Blob(b"y"))) == Blob(b"y")


@dataclass
class Blob:
    id: bytes
