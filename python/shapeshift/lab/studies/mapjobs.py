"""The YTsaurus format study, reproduced: YT-style map operations over six scenarios (BM1-BM6)
and variants.

Every operation is ten ``shapeshift job`` processes (at most one per core at a time), fed
their part of a seeded table in the operation's format on standard input and writing the
output table on standard output (``shapeshift.lab.operation``). Each (case, format, path)
runs once to warm up, then ``REPEAT`` times in rounds: a round runs every combination of a
case once, so ratios against YSON are taken pair by pair within a round. Everything in the
report — tables, rankings, explanations, recommendations — is computed from these runs;
the only fixed numbers are the study's own published figures, shown beside ours.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from shapeshift.lab import operation
from shapeshift.lab.machine_load import Load
from shapeshift.lab.stats import median_ci, straddles, summarize
from shapeshift.lab.studies.mapjobs_report import report
from shapeshift.lab.study import LabContext, StudyResult, paired_comparison

TITLE = "Formats for map jobs (the YTsaurus format study reproduced)"

JOBS = 10
REPEAT = 3
WARMUP = 1  # warm-up jobs of every combination before the measured runs
SEED = 4242
TEN_MBIT = 10e6 / 8  # bytes per second
# Cases with a rate target (GB/s per job) and the goal; their rounds may be repeated up to
# MAX_REPEAT while the rate's CI straddles the goal, within RERUN_BUDGET_S (at scale 1).
RATE_TARGET_CASES = ("BM1", "BM6")
RATE_GOAL_GB_S = 1.0
MAX_REPEAT = 6
RERUN_BUDGET_S = 20.0

STUDY_FORMATS = ["skiff", "protobuf", "protobuf-dynamic", "yson", "arrow"]
REFERENCE_FORMATS = ["msgpack", "json"]
ALL_FORMATS = STUDY_FORMATS + REFERENCE_FORMATS

@dataclass
class Case:
    name: str  # "BM1", "BM4-mid", "BM1-lowcard", ...
    scenario: str  # the job's --scenario ("BM1-columnar" names the column-ordered logic)
    dataset: str | None  # input table (None: BM6 writes only)
    rows: int  # rows over all jobs
    cardinality: str = "high"
    bandwidth: float | None = None
    note: str = ""
    # Formats measured on their fast path in this case (None: every format that has one).
    native_formats: frozenset | None = None

    @property
    def input_key(self) -> tuple:
        """Cases with the same key read the same input files (BM3, BM4 and BM4-mid do)."""
        return (self.dataset, self.rows, self.cardinality)


# Rows over the ten jobs at scale 1. Chosen so that on the fastest path the serialized work
# dominates a job (several times the process start-up of a few ms), while the whole study
# stays near four minutes on two cores: see docs/lab-mapjobs.md, "Scale".
DEFAULT_ROWS = {"BM1": 20_000, "BM2": 1_500_000, "BM3": 720_000, "BM5": 300_000, "BM6": 1_200_000}


def _cases(ctx: LabContext) -> list[Case]:
    bm1, bm2 = ctx.rows(DEFAULT_ROWS["BM1"], JOBS), ctx.rows(DEFAULT_ROWS["BM2"], JOBS)
    bm3, bm5 = ctx.rows(DEFAULT_ROWS["BM3"], JOBS), ctx.rows(DEFAULT_ROWS["BM5"], JOBS)
    return [
        Case("BM1", "BM1", "BM1", bm1),
        Case("BM2", "BM2", "BM2", bm2),
        Case("BM3", "BM3", "BM3", bm3),
        Case("BM4", "BM4", "BM3", bm3),
        Case("BM4-mid", "BM4-mid", "BM3", bm3, note="new column mid-schema"),
        Case("BM5", "BM5", "BM5", bm5),
        Case("BM6", "BM6", None, ctx.rows(DEFAULT_ROWS["BM6"], JOBS)),
        Case(
            "BM1-columnar",
            "BM1-columnar",
            "BM1",
            bm1,
            note="BM1's logic column by column over 8192-row blocks",
            native_formats=frozenset({"arrow"}),
        ),
        Case("BM1-lowcard", "BM1", "BM1", bm1, "low", note="<= 16 values/column"),
        Case("BM3-lowcard", "BM3", "BM3", bm3, "low", note="<= 16 values/column"),
        Case("BM1-10mbit", "BM1", "BM1", ctx.rows(60, JOBS), bandwidth=TEN_MBIT, note="10 Mbit/s"),
        Case("BM2-10mbit", "BM2", "BM2", ctx.rows(3000, JOBS), bandwidth=TEN_MBIT, note="10 Mbit/s"),
    ]


def _case_combos(case: Case, combos: list[tuple[str, str]]) -> list[tuple[str, str]]:
    if case.native_formats is None:
        return combos
    return [(f, p) for f, p in combos if p == "interface" or f in case.native_formats]


def _zstd_size(data: bytes) -> int:
    import pyarrow

    if not data:
        return 0
    return len(pyarrow.compress(data, "zstd", asbytes=True))


def _zstd_file_size(path) -> int:
    with open(path, "rb") as file:
        return _zstd_size(file.read())


def _probe(exe: str, fmt: str) -> tuple[list[str], str]:
    """The paths ``fmt`` runs in this build (found by running each), and why none if so."""
    try:
        data = operation.generate("BM3", 2, 1, fmt, exe=exe)
    except RuntimeError as error:
        return [], str(error).splitlines()[-1][:200]
    paths, why = [], ""
    for path in ("interface", "native"):
        try:
            operation.run_operation("BM3", fmt, path, [data], exe=exe)
            paths.append(path)
        except operation.JobFailed as error:
            if path == "interface":
                why = str(error).splitlines()[-1][:200]
    return paths, why


def _median(values):
    return statistics.median(values) if values else math.nan


def run(ctx: LabContext) -> StudyResult:
    exe = operation.find_cli()
    cases = _cases(ctx)
    formats, native, unavailable, no_interface = [], {}, {}, {}
    for fmt in ALL_FORMATS:
        paths, why = _probe(exe, fmt)
        if paths:
            formats.append(fmt)
            native[fmt] = "native" in paths and "interface" in paths
            if "interface" not in paths:
                no_interface[fmt] = why
                ctx.progress(f"mapjobs: {fmt} only through its fast path ({why})")
        else:
            unavailable[fmt] = why
            ctx.progress(f"mapjobs: {fmt} unavailable ({why})")
    combos = [(f, "interface") for f in formats if f not in no_interface] + [
        (f, "native") for f in formats if native[f] or f in no_interface
    ]
    case_combos = {case.name: _case_combos(case, combos) for case in cases}

    with tempfile.TemporaryDirectory(prefix="shapeshift-mapjobs-", dir=_scratch_dir()) as scratch:
        scratch = Path(scratch)
        # Inputs: the same seeded rows in every format, one file per job, shared by the cases
        # that read the same table.
        files: dict[tuple, dict[str, list[Path]]] = {}
        zstd: dict[tuple, dict[str, int]] = {}
        inputs: dict[tuple[str, str], list[Path]] = {}
        for case in cases:
            if case.dataset is None:
                continue
            key = case.input_key
            if key not in files:
                # Not timed: generated as many at a time as there are cores.
                jobs = [
                    (fmt, j, n, scratch / f"{case.dataset}-{case.rows}-{case.cardinality}-{j}.{fmt}")
                    for fmt in formats
                    for j, n in enumerate(operation.split_rows(case.rows, JOBS))
                ]

                def make(job, case=case):
                    fmt, j, n, path = job
                    operation.generate(
                        case.dataset, n, SEED + j, fmt, case.cardinality, exe=exe, out_path=path
                    )
                    return _zstd_file_size(path)

                with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                    compressed = list(pool.map(make, jobs))
                files[key] = {fmt: [p for f, _, _, p in jobs if f == fmt] for fmt in formats}
                zstd[key] = {
                    fmt: sum(z for (f, *_), z in zip(jobs, compressed) if f == fmt)
                    for fmt in formats
                }
                ctx.progress(f"mapjobs: generated {case.name}'s input in {len(formats)} formats")
            for fmt in formats:
                inputs[(case.name, fmt)] = files[key][fmt]

        # Fixed cost of a job (codec compilation, stream headers): a job over the same table
        # with no rows, timed inside the job; process start-up is the rest of its wall time.
        setup: dict[tuple[str, str, str], float] = {}
        startup: dict[tuple[str, str, str], float] = {}
        for case in cases:
            for fmt, path in case_combos[case.name]:
                empty = (
                    [operation.generate(case.dataset, 0, SEED, fmt, exe=exe)]
                    if case.dataset is not None
                    else [b""]
                )
                probes = [
                    operation.run_operation(case.scenario, fmt, path, empty, exe=exe).jobs[0]
                    for _ in range(3)
                ]
                setup[(case.name, fmt, path)] = _median([j.scenario_s for j in probes])
                startup[(case.name, fmt, path)] = _median([j.wall_s - j.scenario_s for j in probes])
        ctx.progress("mapjobs: measured each job's fixed cost (no rows)")

        def bm6_rows(case):
            return operation.split_rows(case.rows, JOBS)[0] if case.dataset is None else 0

        # Warm-up: one job of every combination (page cache, code, CPU frequency) before
        # anything is measured.
        for case in cases:
            for fmt, path in case_combos[case.name]:
                chunks = inputs.get((case.name, fmt)) or [b""] * WARMUP
                operation.run_operation(
                    case.scenario, fmt, path, chunks[:WARMUP], exe=exe,
                    bandwidth=case.bandwidth, bm6_rows=bm6_rows(case),
                )
        ctx.progress("mapjobs: warm-up done (one job per combination)")

        runs: dict[tuple[str, str, str], list[operation.OperationResult]] = {}
        loads: dict[tuple[str, str, str], list[Load]] = {}
        kept_output: dict[tuple[str, str, str], bytes] = {}

        def one_round(case):
            for fmt, path in case_combos[case.name]:
                chunks = inputs.get((case.name, fmt)) or [b""] * JOBS
                result, load = ctx.measure(lambda: operation.run_operation(
                    case.scenario,
                    fmt,
                    path,
                    chunks,
                    exe=exe,
                    bandwidth=case.bandwidth,
                    bm6_rows=bm6_rows(case),
                    keep_output=(case.name, fmt, path) not in kept_output,
                ))
                runs.setdefault((case.name, fmt, path), []).append(result)
                loads.setdefault((case.name, fmt, path), []).append(load)
                if result.jobs[0].output is not None:
                    kept_output[(case.name, fmt, path)] = result.jobs[0].output

        with ctx.steps(REPEAT * len(cases), "mapjobs") as steps:
            for round_index in range(REPEAT):
                for case in cases:
                    one_round(case)
                    steps.advance(note=f"round {round_index + 1}/{REPEAT}: {case.name}")
        # A rate target whose CI straddles its goal gets more rounds of its case while the
        # study's re-run budget lasts (all of the case's combinations, so rounds stay paired).
        for case in cases:
            if case.name not in RATE_TARGET_CASES:
                continue
            first = (case.name, *case_combos[case.name][0])
            while len(runs[first]) < MAX_REPEAT:
                ci = _fastest_rate_ci(case, case_combos, runs, setup)
                round_s = sum(loads[(case.name, f, p)][-1].wall_s for f, p in case_combos[case.name])
                if not straddles(ci, RATE_GOAL_GB_S) or ctx.rerun_spent_s + round_s > ctx.rerun_budget_s:
                    break
                started = time.perf_counter()
                one_round(case)
                ctx.rerun_spent_s += time.perf_counter() - started
                ctx.progress(f"mapjobs: {case.name}: an extra round, the rate's CI {ci} straddled the goal")
        for (case_name, fmt, path), ops in runs.items():
            jobs = [(j, load) for op, load in zip(ops, loads[(case_name, fmt, path)]) for j in op.jobs]
            ctx.record(f"{case_name}/{fmt}/{path}", [j.wall_s for j, _ in jobs], [j.cpu_s for j, _ in jobs],
                       [load for _, load in jobs])

        sizes = {
            (case.name, fmt): (
                sum(c.stat().st_size for c in inputs[(case.name, fmt)]),
                zstd[case.input_key][fmt],
            )
            for case in cases
            if case.dataset is not None
            for fmt in formats
        }
    data = _results(cases, case_combos, runs, loads, sizes, kept_output, setup, startup)
    return report(
        ctx, TITLE, cases, formats, native, unavailable, data, no_interface, JOBS, REPEAT
    )


def _scratch_dir() -> str | None:
    """Job inputs live in memory (``/dev/shm``) where there is one."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _job_rates(jobs, fixed: float, has_input: bool) -> list[float]:
    """Bytes per second of each job beyond the fixed cost (jobs slower than it give none)."""
    return [
        (j.bytes_in if has_input else j.bytes_out) / (j.scenario_s - fixed)
        for j in jobs
        if j.scenario_s > fixed
    ]


def _fastest_rate_ci(case, case_combos, runs, setup) -> tuple[float, float] | None:
    """95% CI (GB/s) of the median job rate of the case's fastest combination."""
    best = None
    for fmt, path in case_combos[case.name]:
        jobs = [j for op in runs[(case.name, fmt, path)] for j in op.jobs]
        rates = _job_rates(jobs, setup[(case.name, fmt, path)], case.dataset is not None)
        if rates and (best is None or statistics.median(rates) > statistics.median(best)):
            best = rates
    ci = median_ci(best or [])
    return None if ci is None else (ci[0] / 1e9, ci[1] / 1e9)


def _round_loads(runs, loads, key) -> list[Load]:
    """Per round of ``key``: the median job's wall and CPU seconds, with the round's load."""
    return [
        replace(load, wall_s=_median(op.job_walls), cpu_s=_median([j.cpu_s for j in op.jobs]))
        for op, load in zip(runs[key], loads[key])
    ]


def _results(cases, case_combos, runs, loads, sizes, kept_output, setup, startup) -> list[dict]:
    out = []
    for case in cases:
        combos = case_combos[case.name]
        stats_by_combo = {}
        for fmt, path in combos:
            ops = runs[(case.name, fmt, path)]
            stats_by_combo[(fmt, path)] = [j.stat for j in ops[0].jobs]
        reference = next(iter(stats_by_combo.values()))
        for fmt, path in combos:
            ops = runs[(case.name, fmt, path)]
            jobs = [j for op in ops for j in op.jobs]
            walls = summarize([j.wall_s for j in jobs])
            per_round = [_median(op.job_walls) for op in ops]
            base_path = path if ("yson", path) in stats_by_combo else "interface"
            has_input = case.dataset is not None
            bytes_in, bytes_in_zstd = sizes.get((case.name, fmt), (0, 0))
            bytes_out = sum(j.bytes_out for j in ops[0].jobs)
            out0 = kept_output.get((case.name, fmt, path), b"")
            serialized = bytes_in if has_input else bytes_out
            fixed = setup[(case.name, fmt, path)]
            per_job_rate = _job_rates(jobs, fixed, has_input)
            rate_ci = median_ci(per_job_rate)
            # The same pairing on wall and CPU time of the median job of each round: a job is
            # one single-threaded process, so its CPU time is what it costs whatever else ran.
            vs_yson = paired_comparison("yson", "this", {
                "yson": _round_loads(runs, loads, (case.name, "yson", base_path)),
                "this": _round_loads(runs, loads, (case.name, fmt, path)),
            })
            believe, why = vs_yson.believe
            shares = [l.others_share for l in loads[(case.name, fmt, path)] if l.others_share is not None]
            median_s = walls.median
            out.append(
                {
                    "scenario": case.name,
                    "base_scenario": case.scenario,
                    "format": fmt,
                    "path": path,
                    "median_s": median_s,
                    "mean_s": walls.mean,
                    "ci95_s": walls.ci95,
                    "bytes": serialized,
                    "bytes_in": bytes_in,
                    "bytes_in_zstd": bytes_in_zstd,
                    "bytes_out": bytes_out,
                    "bytes_out_job0": len(out0),
                    "bytes_out_job0_zstd": _zstd_size(out0),
                    "scenario_median_s": _median([j.scenario_s for j in jobs]),
                    "setup_s": fixed,
                    "startup_s": startup[(case.name, fmt, path)],
                    # Share of the median job spent on neither rows nor bytes: process
                    # start-up and exit, codec compilation, stream headers.
                    "fixed_share": min(1.0, (fixed + startup[(case.name, fmt, path)]) / median_s),
                    "cpu_median_s": _median([j.cpu_s for j in jobs]),
                    "peak_rss_kib": max(j.maxrss_kib for j in jobs),
                    "operation_median_s": _median([op.wall_s for op in ops]),
                    "per_round_median_s": per_round,
                    "ratio_vs_yson": {"vs_path": base_path, **vs_yson.wall.as_dict()},
                    "cpu_ratio_vs_yson": {"vs_path": base_path, **vs_yson.cpu.as_dict()},
                    "believe": believe,
                    "why": why,
                    "serialized_gb_per_s_ci": [v / 1e9 for v in rate_ci] if rate_ci else None,
                    "others_share": statistics.fmean(shares) if shares else None,
                    "serialized_gb_per_s": _median(per_job_rate) / 1e9 if per_job_rate else 0.0,
                    "rows_in": sum(j.rows_in for j in ops[0].jobs),
                    "rows_out": sum(j.rows_out for j in ops[0].jobs),
                    "jobs": len(ops[0].jobs),
                    "runs": len(ops),
                    "same_stat_as_others": stats_by_combo[(fmt, path)] == reference,
                }
            )
    return out


