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


def test_a_job_reads_its_input_from_a_file(exe, tmp_path):
    path = tmp_path / "bm3.skiff"
    assert operation.generate("BM3", 30, 5, "skiff", exe=exe, out_path=path) is None
    assert path.read_bytes() == operation.generate("BM3", 30, 5, "skiff", exe=exe)
    result = operation.run_operation("BM3", "skiff", "native", [path, path], exe=exe)
    assert [j.rows_in for j in result.jobs] == [30, 30]
    assert all(j.bytes_in == path.stat().st_size for j in result.jobs)
    throttled = operation.run_operation(
        "BM3", "skiff", "native", [path], exe=exe, bandwidth=50e6
    )
    assert throttled.jobs[0].bytes_in == path.stat().st_size
    assert throttled.jobs[0].stat == result.jobs[0].stat


def test_columnar_variant_counts_what_bm1_counts(exe):
    stats = set()
    for fmt, paths in [("yson", ["interface"]), ("skiff", ["interface"]),
                       ("protobuf", ["interface"]), ("arrow", ["interface", "native"])]:
        inputs = [operation.generate("BM1", 20 + j, 3 + j, fmt, exe=exe) for j in range(2)]
        rows = operation.run_operation("BM1", fmt, "interface", inputs, exe=exe)
        stats.add(tuple(j.stat for j in rows.jobs))
        for path in paths:
            columns = operation.run_operation("BM1-columnar", fmt, path, inputs, exe=exe)
            stats.add(tuple(j.stat for j in columns.jobs))
            assert [j.rows_out for j in columns.jobs] == [1, 1]
    assert len(stats) == 1, stats
    with pytest.raises(operation.JobFailed, match="no columnar fast path"):
        operation.run_operation("BM1-columnar", "yson", "native", [b""], exe=exe)


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
    from shapeshift.lab.studies import mapjobs

    monkeypatch.setattr(mapjobs, "ALL_FORMATS", ["yson", "skiff", "protobuf"])
    monkeypatch.setattr(mapjobs, "REPEAT", 2)
    monkeypatch.setattr(mapjobs, "JOBS", 2)
    ctx = LabContext(tmp_path, scale=0.002, quiet=True)
    result = mapjobs.run(ctx)
    assert isinstance(result.data, list)
    keys = {(r["scenario"], r["format"], r["path"]) for r in result.data}
    for scenario in ["BM1", "BM2", "BM3", "BM4", "BM4-mid", "BM5", "BM6", "BM1-lowcard"]:
        for fmt in ["yson", "skiff", "protobuf"]:
            assert (scenario, fmt, "interface") in keys
            assert (scenario, fmt, "native") in keys
    # The column-ordered variant: row formats through the interface only (Arrow is left out
    # here, so it has no fast-path entry either).
    for fmt in ["yson", "skiff", "protobuf"]:
        assert ("BM1-columnar", fmt, "interface") in keys
        assert ("BM1-columnar", fmt, "native") not in keys
    for r in result.data:
        assert r["median_s"] > 0 and r["bytes"] > 0
        assert r["same_stat_as_others"], r
        assert 0 <= r["fixed_share"] <= 1 and r["startup_s"] >= 0, r
        assert r["bytes_in_zstd"] > 0 or r["scenario"] == "BM6", r
        # Wall and CPU ratios vs YSON, which to believe, and the load of the rounds.
        assert r["cpu_ratio_vs_yson"]["n"] == r["ratio_vs_yson"]["n"] == r["runs"], r
        assert r["believe"] in ("wall", "cpu") and r["why"], r
        assert r["others_share"] is None or 0 <= r["others_share"] <= 1, r
        samples = ctx.measurements[f"{r['scenario']}/{r['format']}/{r['path']}"]
        assert len(samples["wall_s"]) == len(samples["cpu_s"]) == r["runs"] * r["jobs"], r
    by_case = {}
    for r in result.data:
        by_case.setdefault(r["scenario"], set()).add(r["rows_in"])
    assert by_case["BM1-columnar"] == by_case["BM1"]  # the same input files
    titles = [t.title for t in result.tables]
    assert any("other findings" in t for t in titles)
    assert any("column-at-a-time" in r for r in result.recommendations)
    assert result.recommendations and result.tables and result.targets
    assert all((tmp_path / chart).exists() for chart in result.charts)
    json.dumps(result.data)  # serializable as mapjobs.json
