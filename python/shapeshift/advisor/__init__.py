"""Which format for *this* data? ``shapeshift.advise`` measures every choice on the user's
own table, within a time budget, and recommends per use from the figures of the run.

    >>> import shapeshift
    >>> advice = shapeshift.advise("flights.parquet", budget=60, access="random")
    >>> print(advice.text())            # the terminal summary
    >>> advice.as_dict()                # every figure, as ``--json`` prints it
    >>> advice.write_html("advice.html")

Sections (each on its own sample of the rows, sized to its share of the budget): rows between
jobs and over the wire (``measure_rows``), numeric columns at rest (``measure_columns``),
record files for an access pattern (``measure_records``), the user's SQL over each storage choice
(``measure_query``, with ``query=``); recommendations in ``recommend``,
rendering in ``render``. See docs/advise.md.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapeshift.advisor.inputs import Input, InputError, load, type_text

__all__ = ["advise", "Advice", "InputError", "SECTIONS"]

# Each section's share of the budget; a section that ends early leaves its time to the next.
# "query" runs only when a query is given.
SECTIONS = {"rows": 0.45, "columns": 0.30, "records": 0.25, "query": 0.25}


@dataclass
class Advice:
    """Every figure of one ``advise`` run and the recommendations computed from them."""

    source: str
    reader: str
    rows: int
    columns: int
    schema: list[dict]
    schema_origin: str
    budget_s: float
    access: str
    figures: dict = field(default_factory=dict)  # section name -> its figures
    recommendations: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"section", "what", "why"}
    notes: list[str] = field(default_factory=list)  # conversions made to read or measure the data
    seconds: float = 0.0
    load: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "source": self.source, "reader": self.reader, "rows": self.rows, "columns": self.columns,
            "schema": [{"name": c["name"], "type_v3": c.get("type_v3", c.get("type")),
                        "type": type_text(c.get("type_v3", c.get("type")))} for c in self.schema],
            "schema_origin": self.schema_origin, "budget_s": self.budget_s, "access": self.access,
            "seconds": self.seconds, "load": self.load, "sections": self.figures,
            "recommendations": self.recommendations, "skipped": self.skipped, "notes": self.notes,
        }

    def text(self) -> str:
        from shapeshift.advisor.render import terminal_text

        return terminal_text(self)

    def study_result(self, ctx, prefix: str = "advise"):
        from shapeshift.advisor.render import study_result

        return study_result(self, ctx, prefix)

    def write_html(self, path: str | os.PathLike) -> Path:
        from shapeshift.advisor.render import write_html

        return write_html(self, Path(path))


def _run_section(name: str, advice: Advice, run) -> None:
    try:
        figures = run()
    except Exception as error:  # one section failing leaves the others measured
        advice.skipped.append({"section": name, "what": f"the {name} section",
                               "why": f"{type(error).__name__}: {error}",
                               "traceback": traceback.format_exc()})
        return
    advice.skipped += figures.pop("skipped", [])
    advice.notes += figures.pop("notes", [])
    advice.figures[name] = figures


def advise(path_or_table: Any, budget: float = 60.0, access: str = "random", schema: Any = None,
           sections: tuple[str, ...] = tuple(SECTIONS), ctx=None, quiet: bool = True,
           query: str | None = None) -> Advice:
    """Measures the formats on ``path_or_table`` (a path, a pyarrow Table, or anything with
    ``__arrow_c_stream__``) in about ``budget`` seconds and recommends per use.

    ``access`` is the record files' access pattern (random, batch or sequential); ``schema``
    a schema file (JSON or YSON) or a list of YT columns replacing the inferred schema;
    ``sections`` a subset of :data:`SECTIONS`; ``query`` SQL over the table named ``t``, timed
    over each storage choice by ``shapeshift.sql``; ``ctx`` a ``LabContext`` (the lab passes its
    own; by default a private one, for timing and progress); ``quiet`` turns progress off.
    Bad input raises :class:`InputError` naming the file and the row or column."""
    from shapeshift.advisor import measure_columns, measure_query, measure_records, measure_rows
    from shapeshift.advisor.recommend import all_recommendations
    from shapeshift.lab.machine_load import LoadProbe, describe, summarize_loads
    from shapeshift.lab.study import LabContext

    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown sections {unknown}: choose from {', '.join(SECTIONS)}")
    if access not in measure_records.ACCESS:
        raise ValueError(f"access is one of {', '.join(measure_records.ACCESS)}, not {access!r}")
    if budget <= 0:
        raise ValueError("budget is a number of seconds above 0")
    started = time.monotonic()
    probe = LoadProbe()
    data: Input = load(path_or_table, schema)
    scratch = None
    if ctx is None:  # timing and progress only: charts are drawn where a page is written
        import tempfile

        scratch = tempfile.TemporaryDirectory(prefix="shapeshift-advise-")
        ctx = LabContext(Path(scratch.name), quiet=quiet)
    advice = Advice(data.source, data.reader, data.table.num_rows, data.table.num_columns, data.schema,
                    data.schema_origin, budget, access, skipped=list(data.dropped), notes=list(data.notes))
    ctx.progress(f"advise: {data.source}: {data.table.num_rows:,} rows x {data.table.num_columns} columns "
                 f"({data.reader}), budget {budget:g} s")
    chosen = [s for s in SECTIONS if s in sections and (s != "query" or query)]
    runners = {
        "rows": lambda seconds: measure_rows.measure(ctx, data.table, data.schema, seconds),
        "columns": lambda seconds: measure_columns.measure(ctx, data.table, seconds),
        "records": lambda seconds: measure_records.measure(ctx, data.table, data.schema, access, seconds),
        "query": lambda seconds: measure_query.measure(ctx, data.table, data.schema, query, seconds),
    }
    for index, name in enumerate(chosen):
        left = budget - (time.monotonic() - started)
        share = SECTIONS[name] / sum(SECTIONS[s] for s in chosen[index:])
        _run_section(name, advice, lambda: runners[name](max(0.0, left * share)))
    if scratch is not None:
        scratch.cleanup()
    advice.recommendations = all_recommendations(advice.figures)
    load_figures = probe.stop()
    advice.seconds = time.monotonic() - started
    advice.load = load_figures.as_dict() | {"description": describe(load_figures.others_share),
                                            "samples": summarize_loads(ctx.loads)}
    return advice
