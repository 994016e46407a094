"""yt.wrapper (ytsaurus-client) running on shapeshift.yson as ``yt.yson``: the YsonFormat moves
table rows (binary and text; parsed, raw and lazy; with control attributes) with the same bytes
and rows as on yt.yson itself.

Each side runs in its own interpreter: ``yt.wrapper`` binds ``yt.yson`` at import, so the
aliasing must come before it and must not leak into the rest of the suite.
"""

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("yt.wrapper", reason="ytsaurus-client is not installed")

SCRIPT = textwrap.dedent("""
    import io, json, sys
    if sys.argv[1] == "shapeshift":
        import shapeshift.yson as yson
        import yt
        yt.yson = yson
        sys.modules["yt.yson"] = yson
        for name in ("yson_types", "convert", "parser", "writer", "common", "yson_token", "tokenizer"):
            sys.modules["yt.yson." + name] = getattr(yson, name)
    import yt.wrapper
    import yt.yson
    from yt.wrapper.format import YsonFormat

    assert yt.yson.__name__ == ("shapeshift.yson" if sys.argv[1] == "shapeshift" else "yt.yson")
    rows = [
        {"key": "a", "value": 1, "double": 2.5, "flag": True, "none": None,
         "list": [1, "two", {"three": 3}], "uint": yt.yson.YsonUint64(7)},
        {"key": "b\\u00e9", "value": -(2 ** 40), "bytes": b"\\xff\\x00raw", "empty": {}},
        {"key": "c", "@table_index": 1, "value": 0},
    ]

    def hexed(value):
        if isinstance(value, bytes):
            return "hex:" + value.hex()
        if isinstance(value, dict):
            return {key: hexed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [hexed(item) for item in value]
        return value

    def plain(row):
        return hexed(yt.yson.yson_to_json(row, annotate_with_types=True, use_byte_strings=True))

    result = {}
    for fmt in ("binary", "text"):
        for mode in ("parsed", "raw", "lazy"):
            format = YsonFormat(format=fmt, control_attributes_mode="row_fields",
                                lazy=(mode == "lazy"))
            stream = io.BytesIO()
            format.dump_rows([dict(row) for row in rows], stream)
            data = stream.getvalue()
            stream = io.BytesIO(data)
            if mode == "raw":
                loaded = [chunk.hex() for chunk in format.load_rows(stream, raw=True)]
            elif mode == "lazy":
                # yt.yson's lazy map has no items() and its own key order: compare the rows
                # as written back by dumps and parsed again.
                loaded = [plain(yt.yson.loads(yt.yson.dumps(row)))
                          for row in format.load_rows(stream)]
            else:
                loaded = [plain(dict(row.items())) for row in format.load_rows(stream)]
            result[fmt + "/" + mode] = {"bytes": data.hex(), "rows": loaded}
    print(json.dumps(result, sort_keys=True))
""")


def run(target):
    completed = subprocess.run([sys.executable, "-c", SCRIPT, target], capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_yson_format_rows_are_the_same_on_shapeshift_and_yt_yson():
    ours, theirs = run("shapeshift"), run("yt.yson")
    assert set(ours) == {"binary/parsed", "binary/raw", "binary/lazy", "text/parsed",
                         "text/raw", "text/lazy"}
    for case in ours:
        assert ours[case]["bytes"] == theirs[case]["bytes"], case
        assert ours[case]["rows"] == theirs[case]["rows"], case
    # The rows made it through: three rows, the control attribute back as a row field.
    rows = ours["binary/parsed"]["rows"]
    assert len(rows) == 3
    assert rows[2]["@table_index"] == {"$type": "int64", "$value": 1}
