"""shapeshift.skiff: schemas, value mapping, system fields, streaming, errors."""

import decimal
import io

import pytest

from shapeshift import skiff

TABLE = [
    {"name": "id", "type_v3": "uint32"},
    {"name": "name", "type_v3": {"type_name": "optional", "item": "utf8"}},
    {"name": "blob", "type_v3": "string"},
    {"name": "score", "type_v3": "double"},
    {"name": "tags", "type_v3": {"type_name": "list", "item": "int16"}},
    {"name": "point", "type_v3": {"type_name": "struct", "members": [
        {"name": "x", "type": "int8"}, {"name": "y", "type": "float"}]}},
    {"name": "attrs", "type_v3": {"type_name": "dict", "key": "string", "value": "int64"}},
    {"name": "choice", "type_v3": {"type_name": "variant", "members": [
        {"name": "n", "type": "int64"}, {"name": "s", "type": "string"}]}},
    {"name": "pair", "type_v3": {"type_name": "tuple", "elements": [{"type": "bool"}, {"type": "uint8"}]}},
    {"name": "money", "type_v3": {"type_name": "decimal", "precision": 10, "scale": 2}},
    {"name": "doc", "type_v3": {"type_name": "optional", "item": "yson"}},
    {"name": "maybe", "type_v3": {"type_name": "optional", "item": {"type_name": "optional", "item": "int64"}}},
]

ROW = {
    "id": 7,
    "name": "Ада",
    "blob": b"\x00\xff",
    "score": 2.5,
    "tags": [1, -2, 30000],
    "point": {"x": -3, "y": 0.5},
    "attrs": {b"k": 1, b"j": -1},
    "choice": ("s", b"str"),
    "pair": (True, 255),
    "money": decimal.Decimal("-12.34"),
    "doc": {"a": [1, "b", None], "n": {"$attributes": {"x": 1}, "$value": 5}},
    "maybe": [None],
}


def test_table_schema_round_trip():
    data = skiff.dumps([ROW, dict(ROW, maybe=None, name=None, tags=[])], TABLE)
    rows = skiff.loads(data, TABLE)
    assert rows[0] == ROW
    assert rows[1]["maybe"] is None and rows[1]["name"] is None and rows[1]["tags"] == []


def test_schema_forms_agree():
    codec = skiff.Codec(TABLE)
    text = skiff.Codec("[{name=id;type_v3=uint32};{name=s;type=string;required=%false}]")
    assert text.column_names() == ["id", "s"]
    assert "wire_type=uint32" in text.format().replace('"', "")
    as_skiff = skiff.Codec(codec.skiff_schemas()[0])
    data = codec.dumps([ROW])
    # Without column types the shapes follow the wire: structs still dicts (named children).
    assert as_skiff.loads(data)[0]["point"] == {"x": -3, "y": 0.5}
    typed = skiff.Codec(codec.format(), table_schemas=[TABLE])
    assert typed.loads(data) == [ROW]


def test_hand_vector_bytes():
    schema = [{"name": "a", "type_v3": "int8"}, {"name": "b", "type_v3": "uint16"},
              {"name": "c", "type_v3": {"type_name": "optional", "item": "string"}}]
    data = skiff.dumps([{"a": -2, "b": 0xfedc, "c": b"hi"}, {"a": 1, "b": 0, "c": None}], schema)
    assert data.hex() == "0000" "fe" "dcfe" "01" "02000000" "6869" "0000" "01" "0000" "00"


def test_system_fields_and_other_columns():
    schema = "<strict=%false>[{name=a;type_v3=int64}]"
    rows = [
        {"a": 1, "extra": "x", "@row_index": 5, "@range_index": 0, "@key_switch": True},
        {"a": 2, "@row_index": 6, "@range_index": 0, "@key_switch": False},
    ]
    options = dict(row_index=True, range_index=True, key_switch=True)
    data = skiff.dumps(rows, schema, **options)
    back = skiff.loads(data, schema, **options)
    assert back == rows
    with pytest.raises(ValueError, match="not in the skiff schema"):
        skiff.dumps([{"a": 1, "extra": 2}], "[{name=a;type_v3=int64}]")


def test_several_tables():
    schemas = [[{"name": "a", "type_v3": "int64"}], [{"name": "s", "type_v3": "string"}]]
    rows = [{"@table_index": 0, "a": 1}, {"@table_index": 1, "s": b"z"}, {"@table_index": 0, "a": 3}]
    assert skiff.loads(skiff.dumps(rows, schemas), schemas) == rows


def test_registry_references():
    fmt = ('<table_skiff_schemas=["$t"]; skiff_schema_registry={t={wire_type=tuple;children=['
           '{wire_type=int64;name=a};"$s"]}; s={wire_type=string32;name=s}}>skiff')
    data = skiff.dumps([{"a": 1, "s": b"q"}], fmt)
    assert skiff.loads(data, fmt) == [{"a": 1, "s": b"q"}]
    with pytest.raises(ValueError, match="cyclic registry reference"):
        skiff.Codec('<table_skiff_schemas=["$a"]; skiff_schema_registry={a="$a"}>skiff')


def test_wide_integers_and_uuid():
    schema = [{"wire_type": "int128", "name": "i"}, {"wire_type": "uint256", "name": "u"}]
    fmt = {"wire_type": "tuple", "children": schema}
    rows = [{"i": -(2**100), "u": 2**255 + 1}]
    assert skiff.loads(skiff.dumps(rows, fmt), fmt) == rows
    with pytest.raises(ValueError, match="out of range"):
        skiff.dumps([{"i": 2**130, "u": 0}], fmt)
    uuid_table = [{"name": "u", "type_v3": "uuid"}]
    u = bytes(range(16))
    assert skiff.loads(skiff.dumps([{"u": u}], uuid_table), uuid_table) == [{"u": u}]


def test_streaming_load_and_dump():
    rows = [{"id": i, "name": None, "blob": b"x" * i, "score": float(i), "tags": [], "point": {"x": 0, "y": 0.0},
             "attrs": {}, "choice": ("n", i), "pair": (False, 0), "money": decimal.Decimal("0.00"),
             "doc": None, "maybe": None} for i in range(2000)]
    out = io.BytesIO()
    skiff.dump(rows, out, TABLE)
    out.seek(0)
    assert list(skiff.load(out, TABLE)) == rows
    assert list(skiff.load(out.getvalue(), TABLE)) == rows


def test_errors_name_offset_row_and_column():
    schema = [{"name": "a", "type_v3": "int64"}, {"name": "b", "type_v3": "bool"}]
    data = bytearray(skiff.dumps([{"a": 1, "b": True}, {"a": 2, "b": False}], schema))
    data[21] = 7
    with pytest.raises(skiff.SkiffDecodeError, match=r"at byte 21, row 1, column 'b': expected boolean 0 or 1, got 7"):
        skiff.loads(bytes(data), schema)
    with pytest.raises(skiff.SkiffDecodeError, match=r"row 1.*input ends inside"):
        list(skiff.load(bytes(data[:-3]), schema))
    with pytest.raises(ValueError, match=r"row 0: column 'a'"):
        skiff.dumps([{"a": "nope", "b": True}], schema)
    with pytest.raises(ValueError, match="out of range for int8"):
        skiff.dumps([{"x": 300}], [{"name": "x", "type_v3": "int8"}])


def test_garbage_never_crashes():
    import random

    rng = random.Random(5)
    codec = skiff.Codec(TABLE)
    good = codec.dumps([ROW])
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            codec.loads(bytes(data[: rng.randint(0, len(data))]))
        except ValueError:
            pass


def test_sparse_columns():
    fmt = {"wire_type": "tuple", "children": [
        {"wire_type": "int64", "name": "a"},
        {"wire_type": "repeated_variant16", "name": "$sparse_columns", "children": [
            {"wire_type": "int64", "name": "x"}, {"wire_type": "string32", "name": "y"}]},
    ]}
    rows = [{"a": 1, "y": b"q"}, {"a": 2, "x": -5, "y": b""}, {"a": 3}]
    data = skiff.dumps(rows, fmt)
    assert data[:10].hex() == "0000" "0100000000000000"
    assert skiff.loads(data, fmt) == rows
    # x present, as (tag 0, int64), then the 0xFFFF end tag.
    assert skiff.dumps([{"a": 0, "x": 7}], fmt).hex() == "0000" "0000000000000000" "0000" "0700000000000000" "ffff"
