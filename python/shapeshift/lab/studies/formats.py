"""The format study of seed 000, reproduced: YT-style map operations over six scenarios.

Every operation is ten ``shapeshift job`` processes (at most one per core at a time), fed
their part of a seeded table in the operation's format on standard input and writing the
output table on standard output (``shapeshift.lab.operation``). Each (case, format, path)
runs once to warm up, then ``REPEAT`` times in rounds: a round runs every combination of a
case once, so ratios against YSON are taken pair by pair within a round. Everything in the
report — tables, rankings, explanations, recommendations — is computed from these runs;
the only fixed numbers are the study's own (REFERENCE.md §1), shown beside ours.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from shapeshift.lab import operation
from shapeshift.lab.stats import format_ci, paired_ratio, summarize
from shapeshift.lab.study import LabContext, StudyResult, Table, Target

TITLE = "Formats for map jobs (seed 000 reproduced)"

JOBS = 10
REPEAT = 3
WARMUP = 1
SEED = 4242
TEN_MBIT = 10e6 / 8  # bytes per second

STUDY_FORMATS = ["skiff", "protobuf", "protobuf-dynamic", "yson", "arrow"]
REFERENCE_FORMATS = ["msgpack", "json"]
ALL_FORMATS = STUDY_FORMATS + REFERENCE_FORMATS
MAIN_SCENARIOS = ["BM1", "BM2", "BM3", "BM4", "BM5", "BM6"]

# Job seconds the study reports (REFERENCE.md §1; BM4's Skiff figure is the column-last run,
# 30.4 s is its column-in-the-middle figure).
STUDY_SECONDS = {
    "BM1": {"skiff": 11.5, "protobuf": 12, "protobuf-dynamic": 19.5, "yson": 22, "arrow": 33.5},
    "BM2": {"skiff": 16.5, "protobuf": 14, "protobuf-dynamic": 23.5, "yson": 17.5, "arrow": 28.5},
    "BM3": {"skiff": 24, "protobuf": 28.5, "protobuf-dynamic": 51, "yson": 50.5, "arrow": 90},
    "BM4": {"skiff": 28.0, "protobuf": 29.5, "protobuf-dynamic": 56, "yson": 52, "arrow": 93},
    "BM5": {"skiff": 19.5, "protobuf": 25.5, "protobuf-dynamic": 37.5, "yson": 32, "arrow": 23.5},
    "BM6": {"skiff": 12, "protobuf": 19, "protobuf-dynamic": 34, "yson": 28, "arrow": 46.5},
}
STUDY_BM4_MID_SKIFF = 30.4


@dataclass
class Case:
    name: str  # "BM1", "BM4-mid", "BM1-lowcard", ...
    scenario: str  # the job's --scenario
    dataset: str | None  # input table (None: BM6 writes only)
    rows: int  # rows over all jobs
    cardinality: str = "high"
    bandwidth: float | None = None
    note: str = ""


def _cases(ctx: LabContext) -> list[Case]:
    return [
        Case("BM1", "BM1", "BM1", ctx.rows(8000, JOBS)),
        Case("BM2", "BM2", "BM2", ctx.rows(300_000, JOBS)),
        Case("BM3", "BM3", "BM3", ctx.rows(180_000, JOBS)),
        Case("BM4", "BM4", "BM3", ctx.rows(180_000, JOBS)),
        Case("BM4-mid", "BM4-mid", "BM3", ctx.rows(180_000, JOBS), note="new column mid-schema"),
        Case("BM5", "BM5", "BM5", ctx.rows(120_000, JOBS)),
        Case("BM6", "BM6", None, ctx.rows(180_000, JOBS)),
        Case("BM1-lowcard", "BM1", "BM1", ctx.rows(8000, JOBS), "low", note="<= 16 values/column"),
        Case("BM3-lowcard", "BM3", "BM3", ctx.rows(180_000, JOBS), "low", note="<= 16 values/column"),
        Case("BM1-10mbit", "BM1", "BM1", ctx.rows(60, JOBS), bandwidth=TEN_MBIT, note="10 Mbit/s"),
        Case("BM2-10mbit", "BM2", "BM2", ctx.rows(3000, JOBS), bandwidth=TEN_MBIT, note="10 Mbit/s"),
    ]


def _zstd_size(data: bytes) -> int:
    import pyarrow

    if not data:
        return 0
    return len(pyarrow.compress(data, "zstd", asbytes=True))


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
                ctx.progress(f"formats: {fmt} only through its fast path ({why})")
        else:
            unavailable[fmt] = why
            ctx.progress(f"formats: {fmt} unavailable ({why})")
    combos = [(f, "interface") for f in formats if f not in no_interface] + [
        (f, "native") for f in formats if native[f] or f in no_interface
    ]

    # Inputs: the same seeded rows in every format, one chunk per job.
    inputs: dict[tuple[str, str], list[bytes]] = {}
    for case in cases:
        if case.dataset is None:
            continue
        for fmt in formats:
            key = (case.name, fmt)
            inputs[key] = [
                operation.generate(case.dataset, n, SEED + j, fmt, case.cardinality, exe=exe)
                for j, n in enumerate(operation.split_rows(case.rows, JOBS))
            ]
        ctx.progress(f"formats: generated {case.name} in {len(formats)} formats")

    # Fixed cost of a job (process start, codec compilation, stream headers): a job over the
    # same table with no rows. Throughput is taken over the time beyond it.
    setup: dict[tuple[str, str, str], float] = {}
    for case in cases:
        for fmt, path in combos:
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
    ctx.progress("formats: measured each job's fixed cost (no rows)")

    runs: dict[tuple[str, str, str], list[operation.OperationResult]] = {}
    kept_output: dict[tuple[str, str, str], bytes] = {}
    total_rounds = WARMUP + REPEAT
    for round_index in range(total_rounds):
        measured = round_index >= WARMUP
        for case in cases:
            for fmt, path in combos:
                chunks = inputs.get((case.name, fmt)) or [b""] * JOBS
                bm6_rows = operation.split_rows(case.rows, JOBS)[0] if case.dataset is None else 0
                result = operation.run_operation(
                    case.scenario,
                    fmt,
                    path,
                    chunks,
                    exe=exe,
                    bandwidth=case.bandwidth,
                    bm6_rows=bm6_rows,
                    keep_output=measured and (case.name, fmt, path) not in kept_output,
                )
                if measured:
                    runs.setdefault((case.name, fmt, path), []).append(result)
                    if result.jobs[0].output is not None:
                        kept_output[(case.name, fmt, path)] = result.jobs[0].output
            ctx.progress(
                f"formats: round {round_index + 1}/{total_rounds}"
                f"{'' if measured else ' (warm-up)'}: {case.name} done"
            )

    data = _results(cases, combos, runs, inputs, kept_output, setup)
    return _report(ctx, cases, formats, native, unavailable, data, no_interface)


def _results(cases, combos, runs, inputs, kept_output, setup) -> list[dict]:
    out = []
    for case in cases:
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
            yson_rounds = [_median(op.job_walls) for op in runs[(case.name, "yson", base_path)]]
            ratio = paired_ratio(per_round, yson_rounds)
            chunks = inputs.get((case.name, fmt), [])
            bytes_in = sum(len(c) for c in chunks)
            bytes_out = sum(j.bytes_out for j in ops[0].jobs)
            out0 = kept_output.get((case.name, fmt, path), b"")
            serialized = bytes_in if chunks else bytes_out
            fixed = setup[(case.name, fmt, path)]
            per_job_rate = [
                (j.bytes_in if chunks else j.bytes_out) / (j.scenario_s - fixed)
                for j in jobs
                if j.scenario_s > fixed
            ]
            out.append(
                {
                    "scenario": case.name,
                    "base_scenario": case.scenario,
                    "format": fmt,
                    "path": path,
                    "median_s": walls.median,
                    "mean_s": walls.mean,
                    "ci95_s": walls.ci95,
                    "bytes": serialized,
                    "bytes_in": bytes_in,
                    "bytes_in_zstd": sum(_zstd_size(c) for c in chunks),
                    "bytes_out": bytes_out,
                    "bytes_out_job0": len(out0),
                    "bytes_out_job0_zstd": _zstd_size(out0),
                    "scenario_median_s": _median([j.scenario_s for j in jobs]),
                    "setup_s": fixed,
                    "cpu_median_s": _median([j.cpu_s for j in jobs]),
                    "peak_rss_kib": max(j.maxrss_kib for j in jobs),
                    "operation_median_s": _median([op.wall_s for op in ops]),
                    "per_round_median_s": per_round,
                    "ratio_vs_yson": {"vs_path": base_path, **ratio.as_dict()},
                    "serialized_gb_per_s": _median(per_job_rate) / 1e9 if per_job_rate else 0.0,
                    "rows_in": sum(j.rows_in for j in ops[0].jobs),
                    "rows_out": sum(j.rows_out for j in ops[0].jobs),
                    "jobs": len(ops[0].jobs),
                    "runs": len(ops),
                    "same_stat_as_others": stats_by_combo[(fmt, path)] == reference,
                }
            )
    return out


# ---------------------------------------------------------------------------------------
# Report: everything below is computed from ``data``.


def _best(data, case, fmt):
    """The faster path of ``fmt`` on ``case`` (the study measured formats at their fastest)."""
    rows = [r for r in data if r["scenario"] == case and r["format"] == fmt]
    return min(rows, key=lambda r: r["median_s"]) if rows else None


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def _ranking(times: dict[str, float]) -> list[str]:
    return sorted(times, key=times.get)


def _explain(a: str, b: str, case: str, ours: dict, data) -> str:
    """Why ``b`` beat ``a`` here although the study had ``a`` ahead, from our measurements."""
    ra, rb = _best(data, case, a), _best(data, case, b)
    study_gap = STUDY_SECONDS[case][b] / STUDY_SECONDS[case][a]
    our_gap = ra["median_s"] / rb["median_s"]
    parts = [
        f"{b} {our_gap:.2f}x faster than {a} here; the study had {a} {study_gap:.2f}x faster"
    ]
    cpu = ra["scenario_median_s"] / rb["scenario_median_s"] if rb["scenario_median_s"] else math.nan
    size = ra["bytes"] / rb["bytes"] if rb["bytes"] else math.nan
    parts.append(f"in-job time {a}/{b} = {cpu:.2f}, serialized bytes {a}/{b} = {size:.2f}")
    if study_gap < 1.10:
        parts.append(f"the study's gap was {100 * (study_gap - 1):.0f}%, within one cluster run's noise")
    if "protobuf-dynamic" in (a, b):
        st, dy = _best(data, case, "protobuf"), _best(data, case, "protobuf-dynamic")
        if st and dy:
            parts.append(
                "our dynamic Protobuf is a schema-compiled wire codec (YT's is reflection-based); "
                f"dynamic/static = {dy['median_s'] / st['median_s']:.2f} here"
            )
    if "arrow" in (a, b):
        parts.append(
            "in YT the proxy converts rows to Arrow batches; here the job reads a ready IPC stream"
        )
    if "yson" in (a, b):
        y = _best(data, case, "yson")
        parts.append(
            f"our YSON {'fast path' if y['path'] == 'native' else 'interface'} runs "
            f"{y['serialized_gb_per_s']:.2f} GB/s per job"
        )
    if cpu < 1:
        gap = (ra["mean_s"] - rb["mean_s"]) * 1e3
        noise = (ra["ci95_s"] + rb["ci95_s"]) * 1e3
        if not math.isnan(noise) and abs(gap) <= noise:
            parts.append(
                f"inside the scenario {a} is faster, as in the study; the {gap:.2f} ms gap in "
                f"mean job time is within the two means' 95% CIs (±{noise:.2f} ms)"
            )
        else:
            parts.append(
                f"inside the scenario {a} is faster, as in the study; the difference comes from "
                f"the job's fixed cost (empty-table job: {a} {ra['setup_s'] * 1e3:.2f} ms, "
                f"{b} {rb['setup_s'] * 1e3:.2f} ms) and process start-up"
            )
    outside = rb["median_s"] - rb["scenario_median_s"]
    if rb["median_s"] and outside / rb["median_s"] > 0.3:
        parts.append(
            f"{100 * outside / rb['median_s']:.0f}% of {b}'s job time is outside the scenario "
            "(process start, exit)"
        )
    return "; ".join(parts)


def _pairwise_agreement(study: dict, ours: dict) -> tuple[int, int, list[tuple[str, str]]]:
    fmts = [f for f in study if f in ours]
    agree, total, flipped = 0, 0, []
    for i, a in enumerate(fmts):
        for b in fmts[i + 1 :]:
            total += 1
            if (study[a] < study[b]) == (ours[a] < ours[b]):
                agree += 1
            else:
                first, second = (a, b) if study[a] < study[b] else (b, a)
                flipped.append((first, second))
    return agree, total, flipped


SITUATIONS = [
    ("schema known at compile time", ["BM1", "BM2", "BM3", "BM4", "BM5", "BM6"], None),
    ("schema known only at run time", ["BM1", "BM2", "BM3", "BM4", "BM5", "BM6"], {"protobuf"}),
    ("no usable schema (non-strict tables)", ["BM1", "BM2", "BM3", "BM4", "BM5", "BM6"],
     {"protobuf", "protobuf-dynamic", "skiff", "arrow"}),
    ("wide numeric rows", ["BM1"], None),
    ("few columns with strings", ["BM2"], None),
    ("modify rows in place", ["BM3"], None),
    ("add a column (last or mid-schema)", ["BM4", "BM4-mid"], None),
    ("complex types", ["BM5"], None),
    ("write-heavy", ["BM6"], None),
    ("low cardinality", ["BM1-lowcard", "BM3-lowcard"], None),
    ("slow network (10 Mbit/s per job)", ["BM1-10mbit", "BM2-10mbit"], None),
]


def _recommendations(data, formats) -> list[str]:
    out = []
    for situation, cases, excluded in SITUATIONS:
        candidates = [f for f in formats if not excluded or f not in excluded]
        scores = {}
        for fmt in candidates:
            logs = []
            for case in cases:
                mine, yson = _best(data, case, fmt), _best(data, case, "yson")
                if mine is None or yson is None:
                    break
                logs.append(math.log(mine["median_s"] / yson["median_s"]))
            else:
                if logs:
                    scores[fmt] = math.exp(statistics.fmean(logs))
        if len(scores) < 2:
            continue
        order = _ranking(scores)
        win, second = order[0], order[1]
        paths = ", ".join(f"{c}: {_best(data, c, win)['path']}" for c in cases)
        out.append(
            f"{situation}: {win} ({scores[win]:.2f}x YSON's job time, geometric mean over "
            f"{', '.join(cases)}; path {paths}), {scores[second] / scores[win]:.2f}x ahead of "
            f"{second}"
        )
    return out


def _report(ctx, cases, formats, native, unavailable, data, no_interface) -> StudyResult:
    case_names = [c.name for c in cases]
    shown = [f for f in ALL_FORMATS if f in formats]

    # 1. The study's chart: scenarios x formats, median job seconds at each format's best path.
    main_rows = []
    for case in case_names:
        row = [case]
        for fmt in shown:
            best = _best(data, case, fmt)
            row.append(f"{best['median_s']:.4f}" + ("" if best["path"] == "native" else "ⁱ"))
        main_rows.append(row)
    time_table = Table(
        "Median job time (s) per scenario and format (fastest path; ⁱ = common interface)",
        ["scenario"] + shown,
        main_rows,
        note=f"{JOBS} jobs per operation, {REPEAT} measured runs after {WARMUP} warm-up; "
        "job time = process spawn to reap, as YT's per-job time.",
    )

    # 2. Interface vs fast path.
    path_rows = []
    for case in case_names:
        for fmt in shown:
            if not native.get(fmt):
                continue
            i = next(r for r in data if r["scenario"] == case and r["format"] == fmt and r["path"] == "interface")
            n = next(r for r in data if r["scenario"] == case and r["format"] == fmt and r["path"] == "native")
            ratio = paired_ratio(i["per_round_median_s"], n["per_round_median_s"])
            path_rows.append(
                [case, fmt, _ms(i["median_s"]), _ms(n["median_s"]),
                 _ms(i["scenario_median_s"]), _ms(n["scenario_median_s"]), format_ci(ratio)]
            )
    no_native = [f for f in shown if not native.get(f) and f not in no_interface]
    path_table = Table(
        "Common interface vs the format's own fast path (median job ms; in-job ms)",
        ["scenario", "format", "interface", "native", "in-job interface", "in-job native",
         "interface / native (paired)"],
        path_rows,
        note="No separate fast path (measured through the interface only): "
        + (", ".join(no_native) or "none")
        + "; fast path only (no common-interface entry in this build): "
        + (", ".join(f"{f} ({w})" for f, w in no_interface.items()) or "none"),
    )

    # 3. Sizes.
    size_rows = []
    for case in case_names:
        yson = _best(data, case, "yson")
        for fmt in shown:
            r = _best(data, case, fmt)
            size_rows.append([
                case, fmt, r["bytes"], f"{r['bytes'] / yson['bytes']:.2f}",
                r["bytes_in_zstd"] or r["bytes_out_job0_zstd"],
                r["bytes_out"],
            ])
    size_table = Table(
        "Serialized size (bytes over all jobs; zstd = input, or job 0's output for BM6)",
        ["scenario", "format", "bytes", "vs YSON", "zstd bytes", "bytes out"],
        size_rows,
    )

    # 4. Paired ratios, CPU, memory.
    ratio_rows = []
    for case in case_names:
        for fmt in shown:
            r = _best(data, case, fmt)
            ratio = r["ratio_vs_yson"]
            ratio_rows.append([
                case, fmt, r["path"],
                f"{ratio['mean']:.3f} ± {ratio['ci95']:.2g}" if not math.isnan(ratio["ci95"]) else f"{ratio['mean']:.3f}",
                f"{r['mean_s'] * 1e3:.2f} ± {r['ci95_s'] * 1e3:.2g}",
                _ms(r["cpu_median_s"]), _ms(r["setup_s"]), f"{r['peak_rss_kib'] / 1024:.1f}",
                f"{r['serialized_gb_per_s']:.2f}",
            ])
    ratio_table = Table(
        "Job time vs YSON (paired per run, mean ± 95% CI), CPU, peak memory, throughput",
        ["scenario", "format", "path", "time / YSON", "job ms (mean ± CI)", "CPU ms (median)",
         "fixed ms (no rows)", "peak RSS MiB", "GB/s per job beyond the fixed cost"],
        ratio_rows,
    )

    # 5. Ranking: ours next to the study's.
    rank_rows, explanations = [], []
    agree_total, pairs_total = 0, 0
    for case in MAIN_SCENARIOS:
        study = STUDY_SECONDS[case]
        ours = {f: _best(data, case, f)["median_s"] for f in study if f in formats}
        study_seen = {f: s for f, s in study.items() if f in ours}
        agree, total, flipped = _pairwise_agreement(study_seen, ours)
        agree_total += agree
        pairs_total += total
        rank_rows.append([
            case,
            " < ".join(_ranking(study_seen)),
            " < ".join(_ranking(ours)),
            f"{agree}/{total}",
        ])
        for a, b in flipped:
            explanations.append(f"{case}: {_explain(a, b, case, ours, data)}.")
    rank_table = Table(
        "Ranking (fastest first): the study's vs ours, formats the study measured",
        ["scenario", "study", "ours", "pairs in the same order"],
        rank_rows,
        note="Unavailable here: " + (", ".join(f"{f} ({w})" for f, w in unavailable.items()) or "none"),
    )
    explain_table = Table(
        "Each disagreement with the study, explained from our measurements",
        ["explanation"],
        [[e] for e in explanations] or [["no disagreement"]],
    )

    # Charts.
    charts = [
        ctx.bar_chart(
            "formats_jobs.svg",
            "Median job time per scenario (ms, fastest path)",
            MAIN_SCENARIOS + ["BM4-mid"],
            {f: [_best(data, c, f)["median_s"] * 1e3 for c in MAIN_SCENARIOS + ["BM4-mid"]] for f in shown},
            "ms",
        ),
        ctx.bar_chart(
            "formats_variants.svg",
            "Variants: low cardinality and a 10 Mbit/s link (ms)",
            ["BM1-lowcard", "BM3-lowcard", "BM1-10mbit", "BM2-10mbit"],
            {f: [_best(data, c, f)["median_s"] * 1e3 for c in ["BM1-lowcard", "BM3-lowcard", "BM1-10mbit", "BM2-10mbit"]] for f in shown},
            "ms",
            log=True,
        ),
    ]

    # Targets.
    def fastest_rate(case):
        rows = [r for r in data if r["scenario"] == case]
        best = max(rows, key=lambda r: r["serialized_gb_per_s"])
        return best

    targets = []
    for case in ("BM1", "BM6"):
        best = fastest_rate(case)
        targets.append(Target(
            f"{case}: fastest format moves >= 1 GB/s of serialized rows per job, beyond the "
            f"job's fixed cost ({best['format']} {best['path']})",
            round(best["serialized_gb_per_s"], 3), 1.0, "GB/s",
        ))
    agreement = agree_total / pairs_total if pairs_total else 0.0
    targets.append(Target(
        "study's ranking: share of format pairs in the study's order (every other pair explained)",
        round(agreement, 3), 1.0, "",
    ))
    consistent = all(r["same_stat_as_others"] for r in data)
    targets.append(Target(
        "every format and path computed the same statistic per job", float(consistent), 1.0, ""
    ))

    # Summary.
    def geo(fmt, cases):
        vals = [_best(data, c, fmt)["median_s"] / _best(data, c, "yson")["median_s"] for c in cases]
        return math.exp(statistics.fmean(math.log(v) for v in vals))

    overall = {f: geo(f, MAIN_SCENARIOS) for f in shown}
    order = _ranking(overall)
    iface_over_native = [
        paired_ratio(
            next(r for r in data if r["scenario"] == c and r["format"] == f and r["path"] == "interface")["per_round_median_s"],
            next(r for r in data if r["scenario"] == c and r["format"] == f and r["path"] == "native")["per_round_median_s"],
        ).mean
        for c in MAIN_SCENARIOS for f in shown if native.get(f)
    ]
    size_vs_yson = {
        f: statistics.fmean(
            _best(data, c, f)["bytes"] / _best(data, c, "yson")["bytes"] for c in MAIN_SCENARIOS
        )
        for f in shown
    }
    summary = (
        f"{len(data)} (scenario, format, path) results, {JOBS} jobs each, {REPEAT} runs. "
        f"Over BM1-BM6 (geometric mean of job time vs YSON, fastest path): "
        + ", ".join(f"{f} {overall[f]:.2f}x" for f in order)
        + f". The common interface costs a median {100 * (statistics.median(iface_over_native) - 1):+.0f}% "
        f"over each format's fast path (study: +10-15%). Serialized size vs YSON (mean over "
        f"BM1-BM6): " + ", ".join(f"{f} {100 * (v - 1):+.0f}%" for f, v in size_vs_yson.items())
        + " (study: Protobuf -18%, Skiff and Arrow -34%). "
        f"{agree_total}/{pairs_total} format pairs rank as in the study."
        + (f" Not measured: {', '.join(unavailable)}." if unavailable else "")
        + ("" if consistent else " WARNING: some job statistics differ between formats.")
    )

    return StudyResult(
        name="formats",
        title=TITLE,
        summary=summary,
        tables=[time_table, rank_table, explain_table, path_table, size_table, ratio_table],
        charts=charts,
        targets=targets,
        recommendations=_recommendations(data, formats),
        data=data,
    )
