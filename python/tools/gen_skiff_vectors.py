"""Writes Skiff conformance vectors with the peer, yt_yson_bindings (ytsaurus-yson 0.4.10).

For each case: `<case>.skiff`, the bytes the peer's `dump_skiff` writes, and `<case>.yson`,
a binary YSON map `{format=<skiff format>; rows=[{column=value; ...}; ...]}` holding the values
the rows were built from (system fields under their `$` names, absent optionals as `#`).
The Rust test `skiff_vectors.rs` reads the bytes back to these values and, for cases without
yson32 payloads, writes the values back to the same bytes.

Run: .venv/bin/python python/tools/gen_skiff_vectors.py crates/formats/tests/vectors/skiff
"""

import io
import pathlib
import random
import sys

import yt.yson as yson
import yt_yson_bindings as yb


def optional(wire, name):
    return {"wire_type": "variant8", "name": name, "children": [{"wire_type": "nothing"}, {"wire_type": wire}]}


def text(rng):
    return "".join(rng.choice("abcxyz019 _-Юникод✓") for _ in range(rng.randrange(0, 10))).encode()


def yson_value(rng, depth=0):
    kind = rng.randrange(6 if depth < 2 else 4)
    if kind == 0:
        return rng.randrange(-(2**63), 2**63)
    if kind == 1:
        return text(rng)
    if kind == 2:
        return rng.choice([0.0, -1.5, 1e300, 2.25])
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return [yson_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {(text(rng) or b"k").decode(): yson_value(rng, depth + 1) for _ in range(rng.randrange(3))}


def maybe(rng, value):
    return value if rng.random() < 0.7 else None


CASES = {
    "scalars": (
        [
            {"wire_type": "int64", "name": "i"},
            {"wire_type": "uint64", "name": "u"},
            {"wire_type": "double", "name": "d"},
            {"wire_type": "boolean", "name": "b"},
            {"wire_type": "string32", "name": "s"},
            optional("int64", "oi"),
            optional("uint64", "ou"),
            optional("double", "od"),
            optional("boolean", "ob"),
            optional("string32", "os"),
        ],
        lambda rng, n: {
            "i": rng.randrange(-(2**63), 2**63),
            "u": yson.YsonUint64(rng.randrange(0, 2**64)),
            "d": rng.choice([0.0, -0.0, 1.0, -2.5, 1e-310, 1.7976931348623157e308, float("-inf")]),
            "b": rng.random() < 0.5,
            "s": text(rng),
            "oi": maybe(rng, rng.randrange(-(2**63), 2**63)),
            "ou": maybe(rng, yson.YsonUint64(rng.randrange(0, 2**64))),
            "od": maybe(rng, rng.random()),
            "ob": maybe(rng, rng.random() < 0.5),
            "os": maybe(rng, text(rng)),
        },
    ),
    "system": (
        [
            {"wire_type": "int64", "name": "a"},
            {"wire_type": "boolean", "name": "$key_switch"},
            optional("int64", "$row_index"),
            optional("int64", "$range_index"),
        ],
        lambda rng, n: {
            "a": n,
            "$key_switch": rng.random() < 0.3,
            "$row_index": 7 * n + 1,
            "$range_index": maybe(rng, rng.randrange(4)),
        },
    ),
    "yson": (
        [{"wire_type": "yson32", "name": "y"}, {"wire_type": "yson32", "name": "$other_columns"}],
        lambda rng, n: dict({"y": yson_value(rng) if n % 5 else {"nested": [1, b"x", None]}},
                            **({"extra": yson_value(rng)} if n % 2 else {})),
    ),
}


def main(out_dir):
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for case, (children, make_row) in CASES.items():
        rng = random.Random(case)
        table = {"wire_type": "tuple", "children": children}
        schema = yb.SkiffSchema([table], {}, "@range_index", "@row_index")
        rows = [make_row(rng, n) for n in range(24)]
        records = []
        for row in rows:
            record = schema.create_record()
            for key, value in row.items():
                if value is not None:
                    record[key] = value
            records.append(record)
        stream = io.BytesIO()
        yb.dump_skiff(records, [stream], [schema])
        (out / f"{case}.skiff").write_bytes(stream.getvalue())
        skiff_format = yson.to_yson_type("skiff", attributes={"table_skiff_schemas": [table]})
        expected = {"format": skiff_format, "rows": rows}
        (out / f"{case}.yson").write_bytes(yson.dumps(expected, yson_format="binary"))
        print(case, len(stream.getvalue()), "bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "crates/formats/tests/vectors/skiff")
