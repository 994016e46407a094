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


def _spark_hash_bytes(raw: bytes, seed: int) -> int:
    """Spark's ``Murmur3_x86_32.hashUnsafeBytes`` one string at a time, in plain Python."""
    mask = 0xFFFFFFFF

    def mix(h1: int, k1: int) -> int:
        k1 = (k1 * 0xCC9E2D51) & mask
        k1 = ((k1 << 15) | (k1 >> 17)) & mask
        h1 ^= (k1 * 0x1B873593) & mask
        h1 = ((h1 << 13) | (h1 >> 19)) & mask
        return (h1 * 5 + 0xE6546B64) & mask

    h1 = seed
    aligned = len(raw) - len(raw) % 4
    for i in range(0, aligned, 4):
        h1 = mix(h1, int.from_bytes(raw[i : i + 4], "little"))
    for byte in raw[aligned:]:
        h1 = mix(h1, (byte - 256 if byte > 127 else byte) & mask)
    h1 ^= len(raw)
    h1 = ((h1 ^ (h1 >> 16)) * 0x85EBCA6B) & mask
    h1 = ((h1 ^ (h1 >> 13)) * 0xC2B2AE35) & mask
    return h1 ^ (h1 >> 16)


@pytest.mark.parametrize("longest", [0, 3, 9, 36, 80])
def test_string_hash_matches_sparks_on_every_path(longest, monkeypatch):
    # One length (a matrix of the bytes as they lie), several short lengths (padded), long
    # strings (one pass per length); a sliced array (an offset into the buffers); non-ASCII
    # bytes (sign-extended in the tail). Row i's seed varies, as in a chained hash.
    import random

    import pyarrow as pa

    rng = random.Random(longest)
    uniform = [rng.choice("xyé") * longest for _ in range(50)]
    varied = ["".join(rng.choice("abé€") for _ in range(rng.randint(0, longest))) for _ in range(300)]
    for strings in (uniform, varied):
        column = pa.array(["skipped"] + strings).slice(1)
        seed = np.arange(len(strings), dtype=np.uint32) * np.uint32(2654435761)
        expected = [_spark_hash_bytes(s.encode(), int(k)) for s, k in zip(strings, seed)]
        for padded_most in (0, 32, 1000):
            monkeypatch.setattr(data, "PADDED_STRING_MOST", padded_most)
            assert data._hash_strings(column, seed).tolist() == expected, (padded_most, strings[:3])


def test_spark_hash_in_chunks_equals_one_pass(monkeypatch):
    table = data.table(5_000, 0, np.random.default_rng(3))
    whole = data.spark_hash(table)
    monkeypatch.setattr(data, "HASH_CHUNK_ROWS", 999)
    assert data.spark_hash(table).tolist() == whole.tolist()
    assert data.spark_hash(table.slice(10, 1)).tolist() == whole[10:11].tolist()


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
