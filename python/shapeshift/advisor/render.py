"""An ``Advice`` as a compact terminal text, as a lab ``StudyResult`` (the report's tables and
charts, so the HTML page has the report's look), and as a standalone HTML page."""

from __future__ import annotations

import time
from pathlib import Path

from shapeshift.advisor.inputs import type_text
from shapeshift.lab.study import StudyResult, Table

TERMINAL_ARMS = 8  # rows of each section's table in the terminal (all of them in HTML/JSON)


def _rate(per_s: float) -> str:
    return f"{per_s / 1e6:.2f}M" if per_s >= 1e6 else f"{per_s / 1e3:.1f}k" if per_s >= 1e3 else f"{per_s:.0f}"


def _ms(figures: dict) -> str:
    ci = figures.get("ci95_s")
    return f"{figures['mean_s'] * 1e3:.3g}" + (f" ± {ci * 1e3:.2g}" if ci is not None else "")


def rows_table(rows: dict) -> Table:
    arms = sorted(rows["arms"], key=lambda a: a["write"]["median_s"] + a["read"]["median_s"])
    return Table(
        f"Rows between jobs and over the wire: {rows['sample']}",
        ["format · library · path", "bytes", "zstd bytes", "write rows/s", "read rows/s",
         "write ms (mean ± 95% CI)", "read ms (mean ± 95% CI)"],
        [[a["name"], a["bytes"], a["zstd_bytes"], _rate(a["write"]["per_s"]), _rate(a["read"]["per_s"]),
          _ms(a["write"]), _ms(a["read"])] for a in arms],
        note=f"path arrow: a pyarrow Table in and out (no Python object per value); path dicts: rows as "
             f"Python dicts in and out. zstd at level {rows['zstd_level']}. Rows/s on the median of "
             f"{len(arms[0]['write']['samples_s']) if arms else 0} interleaved runs.",
    )


def columns_table(columns: dict) -> Table:
    figures = columns["columns"]
    systems = list(next(iter(figures.values()))["systems"])
    rows = []
    for system in systems:
        per = [c["systems"][system] for c in figures.values()]
        rows.append([system, sum(p["bytes"] for p in per),
                     sum(p["decode_seconds"] for p in per) * 1e3,
                     sum(p["take_seconds"][str(columns["take_fraction"])] for p in per) * 1e3])
    rows.sort(key=lambda r: r[2])
    return Table(
        f"Numeric columns at rest ({len(figures)} columns): {columns['sample']}",
        ["system", "bytes (sum)", "full decode ms (sum)", f"take {columns['take_fraction']:.0%} ms (sum)"],
        rows,
        note="Fastest run of each; per-column figures in the JSON. Vortex's bytes are its compressed "
             "in-memory array (no file); the others are the encoded bytes a file would hold.",
    )


def records_table(records: dict) -> Table:
    arms = sorted(records["arms"], key=lambda a: a["read"]["median_s"])
    return Table(
        f"Record files, {records['access']} access ({records['reads_per_run']:,} records per run): {records['sample']}",
        ["library · compression · group", "file bytes", "% of raw", "records/s", "read ms (mean ± 95% CI)", "write s"],
        [[a["name"], a["bytes"], f"{100 * a['bytes'] / max(1, records['raw_bytes']):.1f}%",
          _rate(a["read"]["per_s"]), _ms(a["read"]), a["write_s"]] for a in arms],
        note=f"One record per row ({records['record_format']}); {records['raw_bytes']:,} bytes of records. "
             "File sizes are whole ArrayRecord files, in 64 KiB multiples.",
    )


def query_table(query: dict) -> Table:
    arms = sorted(query["arms"], key=lambda a: a["run"]["median_s"])
    return Table(
        f"Your query over each storage choice: {query['sample']}",
        ["storage", "bytes", "rows/s", "query ms (mean ± 95% CI)"],
        [[a["name"], a["bytes"], _rate(a["run"]["per_s"]), _ms(a["run"])] for a in arms],
        note=f"shapeshift sql (DataFusion) of: {query['query']} — {query['result_rows']} result rows, checked "
             "equal to the Parquet file's before timing; rounds interleave the choices.",
    )


def _tables(advice) -> list[Table]:
    tables = []
    makers = {"rows": rows_table, "columns": columns_table, "records": records_table, "query": query_table}
    for name, make in makers.items():
        figures = advice.figures.get(name)
        if figures and (figures.get("arms") or figures.get("columns")):
            tables.append(make(figures))
    return tables


def _schema_lines(advice) -> list[str]:
    return [f"{c['name']}: {type_text(c.get('type_v3', c.get('type')))}" for c in advice.schema]


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _text_table(table: Table, limit: int) -> list[str]:
    cells = [[_cell(v) for v in row] for row in table.rows[:limit]]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(table.columns)]
    line = lambda values: "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))  # noqa: E731
    out = [table.title, line(table.columns)] + [line(r) for r in cells]
    if len(table.rows) > limit:
        out.append(f"... {len(table.rows) - limit} more (--json or --html for all)")
    return out


def terminal_text(advice) -> str:
    lines = [
        f"{advice.source}: {advice.rows:,} rows x {advice.columns} columns, read as {advice.reader}; "
        f"schema {advice.schema_origin}:",
        "  " + "; ".join(_schema_lines(advice)),
        f"{advice.seconds:.1f} s of a {advice.budget_s:g} s budget, {advice.load.get('description', '')}.",
        "",
    ]
    for table in _tables(advice):
        lines += _text_table(table, TERMINAL_ARMS) + [""]
    lines.append("Recommendations (from this run's figures):")
    for recommendation in advice.recommendations:
        lines.append(f"- {recommendation['text']}")
    if advice.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in advice.notes]
    if advice.skipped:
        lines += ["", "Skipped:"] + [f"- {s['section']}: {s['what']}: {s['why']}" for s in advice.skipped]
    return "\n".join(lines)


def study_result(advice, ctx, prefix: str = "advise") -> StudyResult:
    """The advice as a section of the lab report (charts drawn into ``ctx.out_dir``)."""
    charts = []
    rows = advice.figures.get("rows")
    if rows and rows.get("arms"):
        names = [a["name"] for a in rows["arms"]]
        charts.append(ctx.bar_chart(
            f"{prefix}_rows.svg", f"Rows: write and read, rows/s ({rows['rows']:,} rows)", names,
            {"write": [a["write"]["per_s"] for a in rows["arms"]], "read": [a["read"]["per_s"] for a in rows["arms"]]},
            "rows / s", log=True))
        charts.append(ctx.bar_chart(
            f"{prefix}_rows_bytes.svg", "Rows: bytes and zstd bytes", names,
            {"bytes": [a["bytes"] for a in rows["arms"]], "zstd": [a["zstd_bytes"] for a in rows["arms"]]},
            "bytes", log=True))
    columns = advice.figures.get("columns")
    if columns and columns.get("columns"):
        names = list(columns["columns"])
        systems = list(columns["columns"][names[0]]["systems"])
        charts.append(ctx.bar_chart(
            f"{prefix}_columns_bytes.svg", "Numeric columns: encoded bytes", names,
            {s: [columns["columns"][c]["systems"][s]["bytes"] for c in names] for s in systems}, "bytes", log=True))
        charts.append(ctx.bar_chart(
            f"{prefix}_columns_decode.svg", "Numeric columns: full decode", names,
            {s: [columns["columns"][c]["systems"][s]["decode_ns_per_value"] for c in names] for s in systems},
            "ns per value", log=True))
    records = advice.figures.get("records")
    if records and records.get("arms"):
        arms = records["arms"]
        charts.append(ctx.bar_chart(
            f"{prefix}_records.svg", f"Record files: {records['access']} access, records/s",
            [a["name"] for a in arms], {"records/s": [a["read"]["per_s"] for a in arms]}, "records / s", log=True))
    tables = [Table("Schema (YT type_v3), " + advice.schema_origin, ["column", "type"],
                    [[c["name"], type_text(c.get("type_v3", c.get("type")))] for c in advice.schema])]
    tables += _tables(advice)
    if advice.skipped:
        tables.append(Table("Skipped, and why", ["section", "what", "why"],
                            [[s["section"], s["what"], s["why"]] for s in advice.skipped]))
    summary = (f"{advice.source}: {advice.rows:,} rows x {advice.columns} columns ({advice.reader}), measured in "
               f"{advice.seconds:.1f} s of a {advice.budget_s:g} s budget; "
               + "; ".join(f"{name}: {f.get('sample')}" for name, f in advice.figures.items())
               + "." + (" Notes: " + "; ".join(advice.notes) + "." if advice.notes else ""))
    return StudyResult(
        name=prefix, title=f"Advice for {advice.source}", summary=summary, tables=tables, charts=charts,
        recommendations=[r["text"] for r in advice.recommendations]
        + [f"{r['use']}, cost of each other choice: " + "; ".join(r["loser_costs"])
           for r in advice.recommendations if r.get("loser_costs")],
        data=advice.as_dict(),
    )


def write_html(advice, path: Path) -> Path:
    """A page with the lab report's look: ``path``, its charts beside it (``<stem>_*.svg``)."""
    import json

    from shapeshift.lab.machine_load import fingerprint
    from shapeshift.lab.report import write_report
    from shapeshift.lab.study import LabContext

    path = Path(path)
    ctx = LabContext(path.parent, quiet=True)
    result = study_result(advice, ctx, prefix=path.stem)
    (path.parent / f"{path.stem}.json").write_text(json.dumps(advice.as_dict(), indent=1, default=float))
    load = advice.load
    meta = {
        "fingerprint": fingerprint(), "scale": 1.0, "seconds": advice.seconds, "failures": [],
        "studies": [{
            "name": result.name, "seconds": advice.seconds,
            "load": {k: load.get(k) for k in ("wall_s", "cpu_s", "others_share", "loadavg", "cpu_mhz")}
            | {"samples": load.get("samples", {})},
            "rerun_seconds": 0.0, "rerun_budget_seconds": 0.0, "targets": [],
        }],
    }
    return write_report(path.parent, [result], meta, index_name=path.name,
                        title=f"shapeshift advise: {advice.source} ({time.strftime('%Y-%m-%d %H:%M')})")
