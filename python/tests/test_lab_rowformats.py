"""The row-format study: figures, overheads and targets computed from ``bench formats``'s
raw output, whichever own-API baselines that output holds."""

from __future__ import annotations

import json

import pytest

from shapeshift.lab.study import LabContext
from shapeshift.lab.studies import rowformats


def _record(dataset, fmt, rows, size, write_s, read_s, own_write_s=None, own_read_s=None):
    return {
        "dataset": dataset,
        "format": fmt,
        "rows": rows,
        "bytes": size,
        "zstd_bytes": size // 3,
        "write_samples_s": write_s,
        "read_samples_s": read_s,
        "own_write_samples_s": own_write_s,
        "own_read_samples_s": own_read_s,
        # Fields the study recomputes itself; present in the benchmark's output.
        "write_rows_per_s": 0.0,
        "read_rows_per_s": 0.0,
    }


RAW = [
    _record("BM3", "yson", 1000, 2_000_000, [0.010, 0.011, 0.012], [0.020, 0.020, 0.021],
            [0.008, 0.008, 0.008], [0.016, 0.016, 0.016]),
    _record("BM3", "protobuf", 1000, 1_000_000, [0.0103] * 3, [0.0206] * 3,
            [0.010] * 3, [0.020] * 3),
    _record("BM3", "arrow", 1000, 900_000, [0.004] * 3, [0.002] * 3),
    _record("BM5", "yson", 500, 1_000_000, [0.010] * 3, [0.010] * 3, [0.010] * 3, [0.010] * 3),
    _record("BM5", "protobuf", 500, 600_000, [0.013] * 3, [0.013] * 3, [0.010] * 3, [0.010] * 3),
    _record("BM5", "arrow", 500, 500_000, [0.004] * 3, [0.002] * 3),
]


def test_figures_overheads_and_targets_come_from_the_samples(tmp_path):
    result = rowformats.analyze(LabContext(tmp_path, quiet=True), RAW)
    by_key = {(r["dataset"], r["format"]): r for r in result.data}
    yson = by_key[("BM3", "yson")]
    assert yson["write_rows_per_s"] == pytest.approx(1000 / 0.011)
    assert yson["read_mb_per_s"] == pytest.approx(2.0 / 0.020)
    assert yson["write_overhead_pct"] == pytest.approx(37.5)
    assert yson["read_overhead_pct"] == pytest.approx(25.0)
    assert by_key[("BM3", "arrow")]["write_overhead_pct"] is None
    assert by_key[("BM3", "arrow")]["own_api"] is None
    assert by_key[("BM3", "protobuf")]["own_api"] == "prost"

    targets = {t.name.split(":")[0] + (" peer" if "within" in t.name else ""): t
               for t in result.targets}
    # protobuf: (0.0103 + 0.0206 + 0.013 + 0.013) / (0.01 + 0.02 + 0.01 + 0.01) - 1 = 13.8%
    assert targets["protobuf"].measured == pytest.approx(13.8, abs=0.05)
    assert not targets["protobuf"].met and not targets["protobuf peer"].met
    # yson: (0.011 + 0.020 + 0.01 + 0.01) / (0.008 + 0.016 + 0.01 + 0.01) - 1 = 15.9%
    assert targets["yson"].measured == pytest.approx(15.9, abs=0.05)
    assert "arrow" not in targets  # no own API: no overhead target, and the summary says so
    assert "arrow (arrow-rs)" in result.summary

    overview = result.tables[0]
    assert [row[0] for row in overview.rows] == ["yson", "protobuf", "arrow"]
    assert overview.rows[2][2] == "null"
    bm3 = result.tables[1]
    assert any("null" in row for row in bm3.rows)
    assert all((tmp_path / chart).exists() for chart in result.charts)
    json.dumps(result.data)


def test_a_small_overhead_meets_both_targets(tmp_path):
    raw = [
        _record("BM2", "arrow", 100, 1000, [0.0102] * 3, [0.0103] * 3, [0.010] * 3, [0.010] * 3),
        _record("BM2", "yson", 100, 1000, [0.010] * 3, [0.010] * 3),
    ]
    result = rowformats.analyze(LabContext(tmp_path, quiet=True), raw)
    assert len(result.targets) == 2
    assert all(t.met for t in result.targets), result.targets
    assert "within 10% of arrow-rs" in result.targets[1].name


def test_study_runs_the_native_benchmark(tmp_path, monkeypatch):
    monkeypatch.setattr(rowformats, "BENCH_SCALE", 0.002)
    monkeypatch.setattr(rowformats, "REPEAT", 1)
    result = rowformats.run(LabContext(tmp_path, quiet=True))
    formats = {r["format"] for r in result.data}
    assert {"yson", "skiff", "protobuf", "arrow", "json", "msgpack"} <= formats
    for r in result.data:
        assert r["bytes"] > 0 and r["zstd_bytes"] > 0
        assert r["read_rows_per_s"] > 0 and r["write_rows_per_s"] > 0
        assert (r["own_api"] is None) == (r["read_overhead_pct"] is None)
