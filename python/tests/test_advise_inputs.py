"""The advisor's inputs and edge cases: every reader, schema inference and override, bad input
named by file and row/column, all-null columns, one row, wide and nested tables; and the
recommendation logic on figures given."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import shapeshift
from shapeshift import formats, records
from shapeshift.advisor.inputs import InputError, load, type_text
from shapeshift.advisor.recommend import Candidate, recommend


def _table(rows: int = 200) -> pa.Table:
    return pa.table({"id": pa.array(range(rows), pa.int64()), "name": pa.array([f"n{i}" for i in range(rows)])})


@pytest.mark.parametrize("suffix", [".parquet", ".feather", ".arrows", ".csv", ".jsonl"])
def test_every_reader_gives_the_same_table(tmp_path, suffix):
    table = _table()
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        pq.write_table(table, path)
    elif suffix == ".feather":
        feather.write_feather(table, path)
    elif suffix == ".arrows":
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    elif suffix == ".csv":
        path.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(200)))
    else:
        path.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(200)))
    data = load(path)
    assert data.table.to_pylist() == table.to_pylist()
    assert [type_text(c["type_v3"]) for c in data.schema] == ["optional<int64>", "optional<utf8>"]


def test_row_format_input_needs_a_schema_file_and_reads_with_it(tmp_path):
    schema = [{"name": "id", "type_v3": "int64"}, {"name": "name", "type_v3": "utf8"}]
    path = tmp_path / "t.yson"
    path.write_bytes(formats.dumps([{"id": i, "name": f"n{i}"} for i in range(50)], "yson", schema))
    with pytest.raises(InputError, match=r"t\.yson: yson rows carry no schema; give one with --schema"):
        load(path)
    schema_file = tmp_path / "schema.yson"
    schema_file.write_text("[{name=id;type_v3=int64};{name=name;type_v3=utf8}]")
    data = load(path, schema_file)
    assert data.table.num_rows == 50 and data.schema_origin == f"schema file {schema_file}"
    assert [type_text(c["type_v3"]) for c in data.schema] == ["int64", "utf8"]


def test_record_file_input_is_one_binary_column(tmp_path):
    path = tmp_path / "r.array_record"
    writer = records.Writer(str(path), "group_size:1")
    for i in range(30):
        writer.write(b"record %d" % i)
    writer.close()
    data = load(path)
    assert data.table.column("record").to_pylist()[:2] == [b"record 0", b"record 1"]


def test_bad_input_is_named(tmp_path):
    garbage = tmp_path / "broken.parquet"
    garbage.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match=r"broken\.parquet: not readable as parquet"):
        load(garbage)
    with pytest.raises(InputError, match=r"nothing\.csv: no such file"):
        load(tmp_path / "nothing.csv")
    odd = tmp_path / "data.xyz"
    odd.write_bytes(b"\x00\x01\x02")
    with pytest.raises(InputError, match=r"data\.xyz: unknown kind of file"):
        load(odd)
    with pytest.raises(InputError, match="the table has no rows"):
        load(_table().slice(0, 0))
    truncated = tmp_path / "t.yson"
    truncated.write_bytes(formats.dumps([{"id": 1}], "yson", [{"name": "id", "type_v3": "int64"}])[:-3])
    with pytest.raises(InputError, match=r"t\.yson: not yson rows of the schema given, at (row|byte) \d+"):
        load(truncated, [{"name": "id", "type_v3": "int64"}])


def test_a_schema_that_does_not_fit_names_the_column(tmp_path):
    with pytest.raises(InputError, match="columns in the schema but not the data: missing"):
        load(_table(), [{"name": "id", "type_v3": "int64"}, {"name": "name", "type_v3": "utf8"},
                        {"name": "missing", "type_v3": "int64"}])
    with pytest.raises(InputError, match=r"does not fit the data.*name"):
        load(_table(), [{"name": "id", "type_v3": "int64"}, {"name": "name", "type_v3": "int64"}])
    bad = tmp_path / "schema.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(InputError, match=r"schema\.json: a schema is a list of columns"):
        load(_table(), bad)


def test_all_null_columns_and_one_row():
    table = pa.table({
        "id": pa.array(range(400), pa.int64()),
        "nothing": pa.nulls(400, pa.int64()),
        "void": pa.array([None] * 400, pa.null()),
    })
    advice = shapeshift.advise(table, budget=1)
    assert "nothing" in advice.figures["columns"]["columns"]  # all NaN as float64
    assert advice.figures["rows"]["arms"]
    one = shapeshift.advise(_table(1), budget=1)
    assert one.figures["rows"]["rows"] == 1 and one.figures["records"]["rows"] == 1
    assert one.figures["rows"]["sample"] == "all 1 rows"


def test_wide_and_nested_tables():
    wide = pa.table({f"c{i}": pa.array(np.arange(60) * i) for i in range(300)})
    advice = shapeshift.advise(wide, budget=1, sections=("rows",))
    assert advice.columns == 300 and advice.figures["rows"]["arms"]
    nested = pa.table({
        "id": pa.array(range(300)),
        "tags": pa.array([[f"t{i % 7}"] * (i % 3) for i in range(300)]),
        "point": pa.array([{"x": i, "y": float(i) / 3} for i in range(300)]),
        "attrs": pa.array([[("k", i)] for i in range(300)], pa.map_(pa.string(), pa.int64())),
    })
    advice = shapeshift.advise(nested, budget=1, sections=("rows", "records"))
    types = {c["name"]: c["type"] for c in advice.as_dict()["schema"]}
    assert types["tags"] == "optional<list<optional<utf8>>>"
    assert types["point"].startswith("optional<struct<x:")
    # Arrow maps have no YT type in shapeshift's Arrow mapping: the column is left out, named.
    assert "attrs" not in types
    [dropped] = [s for s in advice.skipped if s["what"].startswith("column attrs")]
    assert "no YT type holds Arrow type map<string, int64>" in dropped["why"]
    formats_measured = {a["format"] for a in advice.figures["rows"]["arms"]}
    assert {"yson", "arrow", "msgpack"} <= formats_measured
    for skip in advice.skipped:  # a format that cannot hold the nesting says so
        assert skip["why"]


def test_recommend_no_clear_winner_when_the_ci_reaches_one():
    fast = Candidate("a", [1.0, 1.1, 0.9, 1.0, 1.05], 100)
    close = Candidate("b", [1.05, 1.0, 1.0, 1.1, 0.95], 50)
    slow = Candidate("c", [2.0, 2.2, 1.8, 2.0, 2.1], 200)
    tied = recommend("Use", "time", [fast, close, slow], paired=True, unit="rows")
    assert not tied["clear"] and tied["no_clear_winner_with"] == ["b"]
    assert "no clear winner" in tied["text"] and "Among these, b is smallest (50 B)" in tied["text"]
    clear = recommend("Use", "time", [fast, slow], paired=True, unit="rows")
    assert clear["clear"] and clear["winner"] == "a"
    ratio = clear["losers"][0]["time_ratio"]
    assert 1.9 < ratio < 2.1 and f"takes {ratio:.2f}x as long" in clear["text"]
    assert "c: " in clear["loser_costs"][0] and "2.00x the bytes (200 B)" in clear["loser_costs"][0]
