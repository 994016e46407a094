"""Conformance with the Skiff reader and writer of yt_yson_bindings (ytsaurus-yson 0.4.10).

Both directions, for the wire types those bindings handle (int64, uint64, double, boolean,
string32, yson32, optionals of them, the system fields and $other_columns): rows the peer
writes we read to the same values, rows we write the peer reads to the same values, and for
the same rows both write the same bytes wherever the encoding is canonical. The peer aborts
the whole process on narrow integers and int128 (ytsaurus-yson 0.4.10's SkiffRecord); that is checked in a
subprocess, and those wire types are covered by hand-derived vectors in the Rust tests.
"""

import io
import random
import struct
import subprocess
import sys

import pytest

from shapeshift import skiff

yb = pytest.importorskip("yt_yson_bindings")


def optional(wire):
    return {"wire_type": "variant8", "children": [{"wire_type": "nothing"}, {"wire_type": wire}]}


COLUMNS = [
    {"wire_type": "int64", "name": "i"},
    {"wire_type": "uint64", "name": "u"},
    {"wire_type": "double", "name": "d"},
    {"wire_type": "boolean", "name": "b"},
    {"wire_type": "string32", "name": "s"},
    {"wire_type": "yson32", "name": "y"},
    dict(optional("int64"), name="oi"),
    dict(optional("uint64"), name="ou"),
    dict(optional("double"), name="od"),
    dict(optional("boolean"), name="ob"),
    dict(optional("string32"), name="os"),
]
SYSTEM = [
    {"wire_type": "boolean", "name": "$key_switch"},
    dict(optional("int64"), name="$row_index"),
    dict(optional("int64"), name="$range_index"),
    {"wire_type": "yson32", "name": "$other_columns"},
]
SCHEMA = {"wire_type": "tuple", "children": COLUMNS + SYSTEM}


def peer_schema(schema=SCHEMA):
    return yb.SkiffSchema([schema], {}, "@range_index", "@row_index")


def random_text(rng):
    alphabet = "abcxyz019 _-Юникод✓"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


def random_yson(rng, depth=0):
    kind = rng.randrange(6 if depth < 2 else 4)
    if kind == 0:
        return rng.randrange(-(2**63), 2**63)
    if kind == 1:
        return random_text(rng)
    if kind == 2:
        return rng.choice([0.0, -1.5, 1e300, 2.25])
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return [random_yson(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {random_text(rng) or "k": random_yson(rng, depth + 1) for _ in range(rng.randrange(3))}


def random_row(rng, index):
    maybe = lambda v: v if rng.random() < 0.7 else None  # noqa: E731
    return {
        "i": rng.randrange(-(2**63), 2**63),
        "u": rng.randrange(0, 2**64),
        "d": rng.choice([0.0, -0.0, 1.0, -2.5, 1e-310, 1.7976931348623157e308, float("inf")]),
        "b": rng.random() < 0.5,
        "s": random_text(rng).encode(),
        "y": random_yson(rng),
        "oi": maybe(rng.randrange(-(2**63), 2**63)),
        "ou": maybe(rng.randrange(0, 2**64)),
        "od": maybe(rng.random()),
        "ob": maybe(rng.random() < 0.5),
        "os": maybe(random_text(rng).encode()),
        "@key_switch": rng.random() < 0.2,
        # Gaps everywhere: each index is explicit (tag 1), which the peer reports.
        "@row_index": 10 * index + 3,
        "@range_index": maybe(rng.randrange(0, 5)),
    }


ROWS = [random_row(random.Random(1234), n) for n in range(200)]
for n, row in enumerate(ROWS):
    if n % 3 == 0:
        row["extra"] = n  # lands in $other_columns


def peer_items(record):
    """A peer record as our row dict: `$` system keys renamed to `@`."""
    out = {}
    for key, value in record.items():
        key = key if isinstance(key, str) else key.decode()
        if key in ("$key_switch", "$row_index", "$range_index"):
            out["@" + key[1:]] = value
        else:
            out[key] = value
    return out


def peer_dumps(rows):
    schema = peer_schema()
    records = []
    for row in rows:
        record = schema.create_record()
        for key, value in row.items():
            if key.startswith("@") or value is None:
                continue
            record[key] = value
        records.append(record)
    out = io.BytesIO()
    yb.dump_skiff(records, [out], [schema])
    return out.getvalue()


def test_we_read_what_the_peer_writes():
    data = peer_dumps(ROWS)
    ours = skiff.loads(data, SCHEMA)
    assert len(ours) == len(ROWS)
    for mine, theirs in zip(ours, ROWS):
        for column in COLUMNS:
            name = column["name"]
            assert mine[name] == theirs[name], name
        assert mine.get("extra") == theirs.get("extra")
    # And the peer's own reading of its bytes agrees with ours.
    peer_rows = list(yb.load_skiff(io.BytesIO(data), [peer_schema()], "@range_index", "@row_index", raw=True))
    assert len(peer_rows) == len(ours)


def test_the_peer_reads_what_we_write():
    data = skiff.dumps(ROWS, SCHEMA)
    records = list(yb.load_skiff(io.BytesIO(data), [peer_schema()], "@range_index", "@row_index", raw=False))
    assert len(records) == len(ROWS)
    for record, row in zip(records, ROWS):
        theirs = peer_items(record)
        for column in COLUMNS:
            name = column["name"]
            expected = row[name]
            if isinstance(expected, bytes):
                expected = expected.decode()  # raw=False gives str
            assert theirs.get(name) == expected, name
        assert theirs.get("@key_switch") == row["@key_switch"]
        assert theirs.get("@row_index") == row["@row_index"]
        assert theirs.get("@range_index") == row["@range_index"]
        assert theirs.get("extra") == row.get("extra")


def test_same_bytes_for_canonical_columns():
    """Without yson32 (whose YSON spelling may differ) and system fields, both write identical bytes."""
    columns = [c for c in COLUMNS if c["wire_type"] != "yson32"]
    schema = {"wire_type": "tuple", "children": columns}
    rows = [{c["name"]: row[c["name"]] for c in columns} for row in ROWS]
    pschema = peer_schema(schema)
    records = []
    for row in rows:
        record = pschema.create_record()
        for key, value in row.items():
            if value is not None:
                record[key] = value
        records.append(record)
    out = io.BytesIO()
    yb.dump_skiff(records, [out], [pschema])
    assert skiff.dumps(rows, schema) == out.getvalue()


def test_several_tables_both_ways():
    t0 = {"wire_type": "tuple", "children": [{"wire_type": "int64", "name": "a"}]}
    t1 = {"wire_type": "tuple", "children": [{"wire_type": "string32", "name": "s"}, dict(optional("double"), name="x")]}
    rows = [{"@table_index": 0, "a": 1}, {"@table_index": 1, "s": b"hi", "x": None},
            {"@table_index": 1, "s": b"", "x": 0.5}, {"@table_index": 0, "a": -7}]
    data = skiff.dumps(rows, [t0, t1])
    schemas = [peer_schema(t0), peer_schema(t1)]
    records = list(yb.load_skiff(io.BytesIO(data), schemas, "@range_index", "@row_index", raw=False))
    got = [dict(r.items()) for r in records]
    assert got == [{"a": 1}, {"s": "hi"}, {"s": "", "x": 0.5}, {"a": -7}]  # the peer omits nulls
    # The peer's raw mode splits the stream into rows: the same boundaries we find.
    raw_rows = list(yb.load_skiff(io.BytesIO(data), schemas, "@range_index", "@row_index", raw=True))
    assert b"".join(raw_rows) == data
    assert len(raw_rows) == 4


def test_consecutive_row_indexes():
    """We write index n+1 after n as tag 0 (like YT); the peer leaves such rows without an index,
    we resolve it."""
    schema = {"wire_type": "tuple", "children": [{"wire_type": "int64", "name": "a"}, dict(optional("int64"), name="$row_index")]}
    rows = [{"a": k, "@row_index": 100 + k} for k in range(3)]
    data = skiff.dumps(rows, schema)
    assert data[10] == 1 and data[10 + 11 + 8] == 0, "first explicit, then tag 0"
    assert skiff.loads(data, schema) == rows
    records = list(yb.load_skiff(io.BytesIO(data), [peer_schema(schema)], "@range_index", "@row_index", raw=False))
    assert peer_items(records[0]).get("@row_index") == 100


def test_peer_aborts_on_narrow_integers():
    """The peer cannot handle narrow ints; it kills the process. Run it apart."""
    code = (
        "import io, yt_yson_bindings as yb\n"
        "s = yb.SkiffSchema([{'wire_type': 'tuple', 'children': [{'wire_type': 'int8', 'name': 'a'}]}], {}, '@r', '@i')\n"
        "list(yb.load_skiff(io.BytesIO(b'\\x00\\x00\\xfe'), [s], '@r', '@i'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert result.returncode != 0
    # Ours reads the same bytes.
    assert skiff.loads(b"\x00\x00\xfe", {"wire_type": "tuple", "children": [{"wire_type": "int8", "name": "a"}]}) == [{"a": -2}]
    assert struct.pack("<b", -2) == b"\xfe"
