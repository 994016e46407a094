"""Writes YSON test vectors with the reference implementation, `yt.yson` (ytsaurus-yson).

Each line of crates/formats/tests/vectors/yson/vectors.tsv is one document:

    name <TAB> yson_type <TAB> binary hex <TAB> text hex <TAB> pretty hex

all three written by `yt.yson.dumps` for the same value. The Rust tests (tests/yson_vectors.rs)
read each encoding, check the three give the same node, and write the node back to the same
bytes. Run from the repository root with the project's venv:

    .venv/bin/python python/tools/gen_yson_vectors.py
"""

import math
import os
import random
import sys

import yt.yson as yson

OUT = os.path.join("crates", "formats", "tests", "vectors", "yson", "vectors.tsv")


def with_attributes(value, attributes):
    return yson.to_yson_type(value, attributes=attributes)


def edge_cases():
    doubles = [0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, 1e20, 1e21, 1e-7, 1e-10, 1e-11, 5e-324,
               2.2250738585072014e-308, 1.7976931348623157e308, 9.999999999999998e16,
               123456789.123, float("inf"), float("-inf"), 1e100, 12345678901234566.0]
    for i, d in enumerate(doubles):
        yield "double_%d" % i, "node", d
    yield "nan", "node", float("nan")
    ints = [0, 1, -1, 63, 64, -64, -65, 127, 128, 2 ** 31, -2 ** 31, 2 ** 63 - 1, -2 ** 63]
    for i, v in enumerate(ints):
        yield "int64_%d" % i, "node", v
    for i, v in enumerate([0, 1, 127, 128, 2 ** 63, 2 ** 64 - 1]):
        yield "uint64_%d" % i, "node", yson.YsonUint64(v)
    yield "true", "node", True
    yield "false", "node", False
    yield "entity", "node", None
    strings = [b"", b"abc", b"a b", b"_a.b-c", b"1abc", b"\"\\", b"\t\r\n", bytes(range(256)),
               b"\x001", b"\x008", b"\x08a", b"\x08g", b"\x7fa", b"\x017", "привет".encode(),
               b"%true", b"#", b"x" * 300]
    for i, s in enumerate(strings):
        yield "string_%d" % i, "node", s
    yield "empty_list", "node", []
    yield "empty_map", "node", {}
    yield "nested", "node", {"a": [1, {"b": 2, "c": []}], "d": {}, "e": with_attributes([1], {"q": {}})}
    yield "attributes_on_entity", "node", with_attributes(None, {"a": b"b"})
    yield "attributes_nested", "node", with_attributes(1, {"b": with_attributes(2, {"c": 3})})
    yield "attributes_on_map", "node", with_attributes({"a": 1}, {"x": [1, 2]})
    yield "empty_key", "node", {"": 1, "\x00": 2}
    yield "list_fragment", "list_fragment", [1, 2, {"a": 3}, "x", None]
    yield "empty_list_fragment", "list_fragment", []
    yield "map_fragment", "map_fragment", {"a": 1, "b": [2], "c": {"d": None}}
    yield "empty_map_fragment", "map_fragment", {}
    yield "table", "list_fragment", [
        with_attributes(None, {"table_index": 1}),
        {"a": 1, "b": "x"},
        with_attributes(None, {"row_index": 5}),
        {"a": 2, "b": "y"},
        with_attributes(None, {"range_index": 0}),
        with_attributes(None, {"key_switch": True}),
        {"a": 3, "b": with_attributes(None, {"z": 1})},
    ]


def random_scalar(rng):
    kind = rng.randrange(8)
    if kind == 0:
        return rng.randrange(-2 ** 63, 2 ** 63)
    if kind == 1:
        return yson.YsonUint64(rng.randrange(0, 2 ** 64))
    if kind == 2:
        return rng.choice([rng.random() * 10 ** rng.randrange(-15, 25), -rng.random(),
                           float(rng.randrange(-1000, 1000)),
                           rng.uniform(-1, 1) * 10.0 ** rng.randrange(-300, 300)])
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return None
    if kind == 5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
    if kind == 6:
        return "".join(rng.choice("abcxyz_.-09 \"\\\n") for _ in range(rng.randrange(10)))
    return rng.randrange(-300, 300)


def random_key(rng):
    return "".join(rng.choice("abk_\x01é") for _ in range(rng.randrange(1, 5)))


def random_value(rng, depth):
    choice = rng.randrange(10)
    if depth > 3 or choice < 5:
        value = random_scalar(rng)
    elif choice < 7:
        value = [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    else:
        keys = {random_key(rng) for _ in range(rng.randrange(4))}
        value = {k: random_value(rng, depth + 1) for k in sorted(keys)}
    if rng.randrange(8) == 0:
        keys = {random_key(rng) for _ in range(rng.randrange(1, 3))}
        value = with_attributes(value, {k: random_value(rng, depth + 2) for k in sorted(keys)})
    return value


def random_cases(count):
    rng = random.Random(20261121)
    for i in range(count):
        yield "random_%d" % i, "node", random_value(rng, 0)
    for i in range(count // 4):
        rows = [{random_key(rng): random_value(rng, 1) for _ in range(3)} for _ in range(rng.randrange(5))]
        yield "random_rows_%d" % i, "list_fragment", rows


def main():
    lines = []
    for name, yson_type, value in list(edge_cases()) + list(random_cases(400)):
        encodings = []
        for fmt in ("binary", "text", "pretty"):
            if isinstance(value, yson.YsonType) and value.has_attributes() and yson_type != "node":
                raise ValueError(name)
            encodings.append(yson.dumps(value, yson_format=fmt, yson_type=yson_type).hex())
        lines.append("\t".join([name, yson_type] + encodings))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as out:
        out.write("\n".join(lines) + "\n")
    print("wrote %d vectors to %s" % (len(lines), OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
