"""The engine study's pieces without Spark: seeded data, Spark's hash, workers agreeing."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shapeshift.lab.engines import data, murmur3


def test_murmur3_known_values():
    # Spark: SELECT hash(1), hash(1L), hash('') -> -559580957, -1712319331, 142593372
    seed = murmur3.seed_for(1)
    assert murmur3.as_signed(murmur3.hash_int(np.array([1]), seed))[0] == -559580957
    assert murmur3.as_signed(murmur3.hash_long(np.array([1]), seed))[0] == -1712319331
    import pyarrow as pa

    assert murmur3.as_signed(data._hash_strings(pa.array([""]), seed))[0] == 142593372


def test_generated_table_is_seeded_and_has_the_study_schema(tmp_path):
    a = data.generate(tmp_path / "a", 10_000, files=3, seed=5)
    b = data.generate(tmp_path / "b", 10_000, files=3, seed=5)
    import pyarrow.parquet as pq

    ta, tb = (pq.read_table([str(p) for p in paths]) for paths in (a, b))
    assert ta.equals(tb)
    assert tuple(ta.column_names) == data.COLUMNS
    assert ta.num_rows == 10_000
    assert len(set(ta["object_id"].to_pylist())) == 10_000
    days, months = ta["day"].to_numpy(), ta["month"].to_numpy()
    assert days.min() >= 1 and days.max() <= 31 and months.min() >= 1 and months.max() <= 12
    assert all(len(g) == 36 and g[8] == "-" for g in ta["guid"].to_pylist()[:100])


@pytest.mark.parametrize("engine", ["duckdb", "polars", "datafusion"])
def test_workers_agree_on_both_queries(tmp_path, engine):
    pytest.importorskip(engine)
    data.generate(tmp_path / "parquet", 20_000, files=2)
    reference = _digests("duckdb", tmp_path)
    assert _digests(engine, tmp_path) == reference


def test_our_formats_read_into_the_engine_as_parquet_does(tmp_path):
    """Every row and column of the Skiff and Arrow-row copies (the `read` query's checksum of
    every column) and both queries agree with Parquet's in shapeshift's engine."""
    from shapeshift.lab.studies.engine import stream_seconds

    paths = data.generate(tmp_path / "parquet", 20_000, files=2)
    copies = {f: data.copy_as(paths, f, tmp_path / f) for f in ("skiff", "arrow")}
    queries = ("q1", "q2", "read")
    reference = _digests("shapeshift", tmp_path, queries)
    assert reference["read"][1] == 1  # one checksum row
    for name in ("shapeshift-skiff", "shapeshift-arrow"):
        assert _digests(name, tmp_path, queries) == reference, name
    assert _digests("duckdb", tmp_path)["q1"] == reference["q1"]
    assert 0 < stream_seconds(copies["skiff"], repeat=2) < 5


def _digests(engine: str, data_dir, queries=("q1", "q2")) -> dict:
    worker = subprocess.Popen(
        [sys.executable, "-m", "shapeshift.lab.engines.worker", engine, str(data_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert json.loads(worker.stdout.readline())["ready"]
        out = {}
        for query in queries:
            worker.stdin.write(json.dumps({"op": "check", "query": query}) + "\n")
            worker.stdin.flush()
            answer = json.loads(worker.stdout.readline())
            assert "error" not in answer, answer
            out[query] = (answer["digest"], answer["rows"])
        return out
    finally:
        worker.stdin.write('{"op": "quit"}\n')
        worker.stdin.flush()
        worker.wait(timeout=60)
