"""Every row format behind one interface (the row-interface benchmark): throughput, size, and what the
interface costs against each format's own API.

The measuring is native: ``shapeshift bench formats`` writes, per (table, format), the
serialized and zstd sizes and raw seconds of writing the table through the common interface
(``RowSink``) and reading it back (``RowSource``, every value touched), and the same work
through the format's own API where the benchmark has one (our own codecs' lower layers, prost
for static Protobuf, arrow-rs for Arrow, apache-avro for Avro — whichever this build
measures; the rest are ``null``). This study turns those samples into rows/s, MB/s, overheads
and targets; nothing else is measured here, so the figures and the targets come from the
same run.

Overhead = interface time / own-API time - 1, on median times (negative: the interface did
the work faster). Per format the target figure is the overhead of the whole benchmark:
interface seconds over own-API seconds summed over tables and both directions, so a table
where the work is large weighs more than one where it is tiny.
"""

from __future__ import annotations

import math
import statistics

from shapeshift.lab.stats import summarize
from shapeshift.lab.study import LabContext, StudyResult, Table, Target

TITLE = "Row formats through one interface: throughput, size, interface overhead"

# Default row counts at scale 1 (``bench formats`` scales its own: BM1 4k, BM2 200k, BM3 200k,
# BM5 150k rows), and repeats, chosen so the benchmark takes about 40 s on two cores (scale
# 0.5 took 49 s under load).
BENCH_SCALE = 0.4
REPEAT = 3

OVERHEAD_GOAL_PCT = 5.0
# The peer libraries the issue names for Protobuf and Arrow, and the goal against them.
PEER_GOAL_PCT = 10.0
PEERS = {
    "protobuf": "prost",
    "protobuf-dynamic": "prost-reflect",
    "arrow": "arrow-rs",
    "avro": "apache-avro",
}
PEER_TARGETS = ("protobuf", "arrow")


def _median(values) -> float:
    return statistics.median(values) if values else math.nan


def _overhead_pct(interface: list[float], own: list[float] | None) -> float | None:
    if not own:
        return None
    return (_median(interface) / _median(own) - 1) * 100


def _measure(ctx: LabContext) -> list[dict]:
    scale = max(BENCH_SCALE * ctx.scale, 1e-4)
    raw, load = ctx.native("bench", "formats", "--scale", f"{scale:g}", "--repeat", str(REPEAT))
    # The benchmark times inside one process: each sample's load is that of the whole run.
    for r in raw:
        for arm in ("write", "read", "own_write", "own_read"):
            samples = r.get(f"{arm}_samples_s")
            if samples:
                ctx.record(f"{r['dataset']}/{r['format']}/{arm}", samples, loads=[load] * len(samples))
    return raw


def _own_api_name(record: dict) -> str | None:
    if not record.get("own_read_samples_s") and not record.get("own_write_samples_s"):
        return None
    return record.get("own_api") or PEERS.get(record["format"], "shapeshift codec, lower layer")


def _results(raw: list[dict]) -> list[dict]:
    out = []
    for r in raw:
        write, read = summarize(r["write_samples_s"]), summarize(r["read_samples_s"])
        own_write, own_read = r.get("own_write_samples_s"), r.get("own_read_samples_s")
        out.append({
            "dataset": r["dataset"],
            "format": r["format"],
            "rows": r["rows"],
            "bytes": r["bytes"],
            "zstd_bytes": r["zstd_bytes"],
            "write_rows_per_s": r["rows"] / write.median,
            "write_mb_per_s": r["bytes"] / 1e6 / write.median,
            "read_rows_per_s": r["rows"] / read.median,
            "read_mb_per_s": r["bytes"] / 1e6 / read.median,
            "write_s": write.as_dict(),
            "read_s": read.as_dict(),
            "own_api": _own_api_name(r),
            "own_write_s": summarize(own_write).as_dict() if own_write else None,
            "own_read_s": summarize(own_read).as_dict() if own_read else None,
            "write_overhead_pct": _overhead_pct(r["write_samples_s"], own_write),
            "read_overhead_pct": _overhead_pct(r["read_samples_s"], own_read),
        })
    return out


def _fmt_pct(value: float | None) -> str:
    return "null" if value is None else f"{value:+.1f}%"


def _overall_overhead(rows: list[dict]) -> float | None:
    """Interface seconds / own-API seconds - 1 over every measured (table, direction)."""
    interface = own = 0.0
    for r in rows:
        for direction in ("write", "read"):
            if r[f"own_{direction}_s"] is not None:
                interface += r[f"{direction}_s"]["median"]
                own += r[f"own_{direction}_s"]["median"]
    return (interface / own - 1) * 100 if own else None


def analyze(ctx: LabContext, raw: list[dict]) -> StudyResult:
    """The report of the benchmark's raw output ``raw`` (``bench formats`` JSON)."""
    data = _results(raw)
    datasets = list(dict.fromkeys(r["dataset"] for r in data))
    formats = list(dict.fromkeys(r["format"] for r in data))

    tables = []
    for dataset in datasets:
        rows = [r for r in data if r["dataset"] == dataset]
        yson = next((r for r in rows if r["format"] == "yson"), None)
        tables.append(Table(
            f"{dataset}: {rows[0]['rows']:,} rows, per format",
            ["format", "write rows/s", "write MB/s", "read rows/s", "read MB/s", "bytes",
             "vs YSON", "zstd bytes", "own API", "write overhead", "read overhead"],
            [[
                r["format"],
                f"{r['write_rows_per_s']:,.0f}", f"{r['write_mb_per_s']:.0f}",
                f"{r['read_rows_per_s']:,.0f}", f"{r['read_mb_per_s']:.0f}",
                r["bytes"], f"{r['bytes'] / yson['bytes']:.2f}" if yson else "–",
                r["zstd_bytes"], r["own_api"] or "none",
                _fmt_pct(r["write_overhead_pct"]), _fmt_pct(r["read_overhead_pct"]),
            ] for r in rows],
            note="MB/s of serialized bytes; overhead = interface / own API - 1 on median "
            f"times of {REPEAT} runs after a warm-up (null: no own API measured).",
        ))

    per_format = {f: [r for r in data if r["format"] == f] for f in formats}
    overall = {f: _overall_overhead(rows) for f, rows in per_format.items()}
    summary_rows = [[
        f,
        per_format[f][0]["own_api"] or "none",
        _fmt_pct(overall[f]),
        _fmt_pct(max((r["write_overhead_pct"] for r in per_format[f]
                      if r["write_overhead_pct"] is not None), default=None)),
        _fmt_pct(max((r["read_overhead_pct"] for r in per_format[f]
                      if r["read_overhead_pct"] is not None), default=None)),
    ] for f in formats]
    tables.insert(0, Table(
        "Interface overhead per format (all tables, both directions)",
        ["format", "own API", "overall", "worst write", "worst read"],
        summary_rows,
        note="overall = interface seconds / own-API seconds - 1, summed over tables and "
        "directions.",
    ))

    targets = []
    for f in formats:
        if overall[f] is None:
            continue
        targets.append(Target(
            f"{f}: interface overhead vs its own API ({per_format[f][0]['own_api']}), "
            "all tables and directions",
            round(overall[f], 1), OVERHEAD_GOAL_PCT, "%", lower_is_better=True,
        ))
        peer = PEERS.get(f)
        if f in PEER_TARGETS and per_format[f][0]["own_api"] == peer:
            targets.append(Target(
                f"{f}: within {PEER_GOAL_PCT:.0f}% of {peer} used directly",
                round(overall[f], 1), PEER_GOAL_PCT, "%", lower_is_better=True,
            ))
    missing_peers = [f"{f} ({PEERS[f]})" for f in PEER_TARGETS
                     if f in overall and overall[f] is None]

    charts = [
        ctx.bar_chart(
            "rowformats_read.svg", "Read through the interface (MB/s of serialized bytes)",
            datasets,
            {f: [next((r["read_mb_per_s"] for r in per_format[f] if r["dataset"] == d), 0.0)
                 for d in datasets] for f in formats},
            "MB/s",
        ),
        ctx.bar_chart(
            "rowformats_write.svg", "Write through the interface (MB/s of serialized bytes)",
            datasets,
            {f: [next((r["write_mb_per_s"] for r in per_format[f] if r["dataset"] == d), 0.0)
                 for d in datasets] for f in formats},
            "MB/s",
        ),
        ctx.bar_chart(
            "rowformats_overhead.svg",
            "Interface overhead vs the format's own API (%, all tables; 0 = no own API)",
            ["overall"],
            {f: [overall[f] or 0.0] for f in formats if overall[f] is not None},
            "%",
        ),
    ]

    recommendations = []
    for dataset in datasets:
        rows = [r for r in data if r["dataset"] == dataset]
        for label, key in (("read", "read_mb_per_s"), ("write", "write_mb_per_s")):
            ranked = sorted(rows, key=lambda r: -r[key])
            if len(ranked) > 1:
                recommendations.append(
                    f"{dataset}, {label}: {ranked[0]['format']} "
                    f"({ranked[0][key]:.0f} MB/s, {ranked[0][key] / ranked[1][key]:.2f}x "
                    f"{ranked[1]['format']})"
                )
        smallest = min(rows, key=lambda r: r["zstd_bytes"])
        recommendations.append(
            f"{dataset}, smallest after zstd: {smallest['format']} ({smallest['zstd_bytes']:,} bytes)"
        )

    measured = [f for f in formats if overall[f] is not None]
    met = [t for t in targets if t.met]
    summary = (
        f"{len(data)} (table, format) results on {', '.join(datasets)}; "
        f"{len(measured)} of {len(formats)} formats have an own-API baseline "
        f"({', '.join(f + ': ' + per_format[f][0]['own_api'] for f in measured) or 'none'}). "
        f"Overall interface overhead: "
        + ", ".join(f"{f} {_fmt_pct(overall[f])}" for f in measured)
        + f". {len(met)}/{len(targets)} targets met."
        + (f" No peer baseline in this build for {', '.join(missing_peers)}." if missing_peers else "")
    )
    return StudyResult(
        name="rowformats",
        title=TITLE,
        summary=summary,
        tables=tables,
        charts=charts,
        targets=targets,
        recommendations=recommendations,
        data=data,
    )


def run(ctx: LabContext) -> StudyResult:
    ctx.progress(f"rowformats: shapeshift bench formats (scale {BENCH_SCALE * ctx.scale:g}, "
                 f"{REPEAT} runs)")
    return analyze(ctx, _measure(ctx))
