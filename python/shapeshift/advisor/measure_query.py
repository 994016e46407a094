"""The user's own query (``--query SQL``, the table named ``t``) over each storage choice, run by
shapeshift's query engine (a ``shapeshift.Session`` per choice, DataFusion): Parquet+zstd and Arrow IPC files as
pyarrow writes them, and YT tables in our row formats. Every choice's result is checked equal to
Parquet's before timing; rounds interleave the choices. The sample is a random set of rows kept in
file order, like the rows section's."""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path

from shapeshift.advisor.timing import Slice, interleaved_rounds, random_rows, random_sample_text, rows_for, timing_figures
from shapeshift.lab.study import LabContext

PILOT_ROWS = 20_000
# Row formats the engine reads straight into Arrow; the others go through the same readers.
ROW_FORMATS = ("skiff", "arrow", "yson", "protobuf", "msgpack")


def _digest(table) -> str:
    rows = sorted(json.dumps([str(v) for v in row.values()]) for row in table.to_pylist())
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def _write_choices(sample, schema: list[dict], directory: Path) -> tuple[dict, list[dict]]:
    """{choice: (path, format or None, schema or None, bytes)} and what could not be written."""
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    from shapeshift import formats

    choices, skipped = {}, []
    path = directory / "t.parquet"
    pq.write_table(sample, path, compression="zstd")
    choices["parquet+zstd"] = (str(path), None, None, path.stat().st_size)
    path = directory / "t.arrow"
    feather.write_feather(sample, path, compression="uncompressed")
    choices["arrow ipc file"] = (str(path), None, None, path.stat().st_size)
    for name in ROW_FORMATS:
        try:
            data = formats.from_arrow(sample, name, schema)
        except Exception as error:
            skipped.append({"section": "query", "what": name, "why": f"{type(error).__name__}: {error}"})
            continue
        path = directory / f"t.{name}"
        path.write_bytes(data)
        choices[name] = (str(path), name, schema, len(data))
    return choices, skipped


def measure(ctx: LabContext, table, schema: list[dict], query: str, budget_s: float) -> dict:
    import shapeshift

    budget = Slice(budget_s)
    total = table.num_rows

    def session(path, fmt, fmt_schema):
        return shapeshift.Session({"t": path}, formats={"t": fmt} if fmt else None,
                                  schemas={"t": fmt_schema} if fmt_schema is not None else None)

    def run(path, fmt, fmt_schema):
        return session(path, fmt, fmt_schema).sql(query)

    with tempfile.TemporaryDirectory(prefix="shapeshift-advise-query-") as scratch:
        directory = Path(scratch)

        def pilot(count: int) -> float:
            sample = table.take(random_rows(total, count))
            choices, _ = _write_choices(sample, schema, directory)
            started = time.perf_counter()
            for path, fmt, fmt_schema, _ in choices.values():
                run(path, fmt, fmt_schema)
            return time.perf_counter() - started

        # One warm-up and up to five rounds of every choice: ~6 pilot passes.
        count = rows_for(budget, pilot, min(PILOT_ROWS, total), total, 6)
        sample = table.take(random_rows(total, count))
        choices, skipped = _write_choices(sample, schema, directory)
        reference = _digest(run(*choices["parquet+zstd"][:3]))
        arms = {}
        result_rows = None
        for name, (path, fmt, fmt_schema, _) in choices.items():
            try:
                result = run(path, fmt, fmt_schema)
            except Exception as error:
                skipped.append({"section": "query", "what": name, "why": f"{type(error).__name__}: {error}"})
                continue
            if _digest(result) != reference:
                skipped.append({"section": "query", "what": name, "why": "its result differs from Parquet's"})
                continue
            result_rows = result.num_rows
            # Each choice's table registered once (files listed, footers and schemas read), as
            # an application keeps its session; the rounds time the query.
            arms[name] = (lambda s=session(path, fmt, fmt_schema): s.sql(query))
        with ctx.steps(5, f"query: {len(arms)} storage choices, {count:,} rows") as progress:
            samples = interleaved_rounds(ctx, arms, budget, progress)
    return {
        "query": query,
        "rows": count,
        "of_rows": total,
        "sample": random_sample_text(count, total),
        "result_rows": result_rows,
        "arms": [
            {"name": name, "bytes": choices[name][3], "run": timing_figures(samples[name], count)}
            for name in arms
        ],
        "skipped": skipped,
    }
