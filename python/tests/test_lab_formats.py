"""The format study's operation runner and study, end to end on tiny inputs."""

from __future__ import annotations

import json
import time

import pytest

from shapeshift.lab import operation
from shapeshift.lab.study import LabContext


@pytest.fixture(scope="module")
def exe():
    return operation.find_cli()


def test_split_rows_is_even_and_complete():
    assert operation.split_rows(10, 3) == [4, 3, 3]
    assert sum(operation.split_rows(1001, 10)) == 1001
    assert operation.split_rows(2, 5) == [1, 1, 1, 1, 1]  # every job gets a row


def test_operation_runs_jobs_and_measures_each(exe):
    inputs = [operation.generate("BM3", 40 + j, 7 + j, "yson", exe=exe) for j in range(3)]
    result = operation.run_operation("BM3", "yson", "native", inputs, exe=exe, keep_output=True)
    assert [j.rows_in for j in result.jobs] == [40, 41, 42]
    assert [j.rows_out for j in result.jobs] == [40, 41, 42]
    for job, data in zip(result.jobs, inputs):
        assert job.bytes_in == len(data)
        assert job.bytes_out > 0
        assert job.wall_s >= job.scenario_s > 0
        assert job.cpu_s >= 0
        assert 0 < job.maxrss_kib < 1 << 22
    assert result.jobs[0].output is not None and len(result.jobs[0].output) == result.jobs[0].bytes_out
    assert result.jobs[1].output is None


def test_every_format_and_path_agree_on_the_statistic(exe):
    stats = {}
    for fmt in ["yson", "skiff", "protobuf", "protobuf-dynamic", "msgpack", "json"]:
        inputs = [operation.generate("BM5", 25, 100 + j, fmt, exe=exe) for j in range(2)]
        paths = ["interface", "native"] if fmt in ("yson", "skiff", "protobuf") else ["interface"]
        for path in paths:
            result = operation.run_operation("BM5", fmt, path, inputs, exe=exe)
            stats[(fmt, path)] = [j.stat for j in result.jobs]
    assert len(set(map(tuple, stats.values()))) == 1, stats


def test_bandwidth_limit_slows_the_feed(exe):
    data = operation.generate("BM2", 300, 1, "yson", exe=exe)
    rate = len(data) / 0.25  # bytes per second: about a quarter second for the input
    start = time.perf_counter()
    result = operation.run_operation("BM2", "yson", "native", [data], exe=exe, bandwidth=rate)
    elapsed = time.perf_counter() - start
    assert elapsed >= 0.2, elapsed
    assert result.jobs[0].wall_s >= 0.2
    unthrottled = operation.run_operation("BM2", "yson", "native", [data], exe=exe)
    assert unthrottled.jobs[0].wall_s < result.jobs[0].wall_s


def test_a_failing_job_reports_its_own_error(exe):
    with pytest.raises(operation.JobFailed, match="yson"):
        operation.run_operation("BM3", "yson", "native", [b"{counter=1;", b""], exe=exe)
    with pytest.raises(operation.JobFailed, match="no fast path"):
        operation.run_operation("BM6", "json", "native", [b""], exe=exe, bm6_rows=1)


def test_study_end_to_end_at_tiny_scale(tmp_path, monkeypatch):
    from shapeshift.lab.studies import formats

    monkeypatch.setattr(formats, "ALL_FORMATS", ["yson", "skiff", "protobuf"])
    monkeypatch.setattr(formats, "REPEAT", 2)
    monkeypatch.setattr(formats, "JOBS", 2)
    ctx = LabContext(tmp_path, scale=0.002, quiet=True)
    result = formats.run(ctx)
    assert isinstance(result.data, list)
    keys = {(r["scenario"], r["format"], r["path"]) for r in result.data}
    for scenario in ["BM1", "BM2", "BM3", "BM4", "BM4-mid", "BM5", "BM6", "BM1-lowcard"]:
        for fmt in ["yson", "skiff", "protobuf"]:
            assert (scenario, fmt, "interface") in keys
            assert (scenario, fmt, "native") in keys
    for r in result.data:
        assert r["median_s"] > 0 and r["bytes"] > 0
        assert r["same_stat_as_others"], r
    assert result.recommendations and result.tables and result.targets
    assert all((tmp_path / chart).exists() for chart in result.charts)
    json.dumps(result.data)  # serializable as formats.json
