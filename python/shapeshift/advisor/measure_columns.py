"""Columns at rest: every numeric column of the user's table through our adaptive encodings
(each target) and through Parquet+zstd, pcodec and Vortex, with the columns study's code
(``lab.studies.columns``): bytes, full decode, take of 1% of the rows.

Columns keep their order (runs and sorted stretches are what encodings feed on), so the
sample is a window of consecutive rows, not scattered rows."""

from __future__ import annotations

import time

import numpy as np

from shapeshift.advisor.timing import MIN_REPEAT, Slice, contiguous_rows, rows_for
from shapeshift.lab.studies.columns import OURS, Ours, Parquet, Pcodec, Vortex, _numeric_columns, measure_column
from shapeshift.lab.study import LabContext

PILOT_ROWS = 5_000
# Decodes and takes are cheap next to encoding: more runs buy a narrower CI for little time.
REPEAT = 10
TAKE_FRACTION = 0.01


def chosen_systems():
    return [Ours(t) for t in OURS] + [Parquet(), Pcodec(), Vortex()]


def numeric_columns(table) -> tuple[dict[str, np.ndarray], list[dict], list[str]]:
    """The numeric columns (integers without nulls as int64; floats, and integers with nulls,
    as float64 with NaN for null), the columns left out with why, and notes on conversions."""
    import pyarrow as pa

    columns = {name.split(".", 1)[1]: values for name, values in _numeric_columns(table, "t", None).items()}
    skipped, notes = [], []
    for field in table.schema:
        if field.name in columns:
            if pa.types.is_integer(field.type) and table[field.name].null_count:
                notes.append(f"{field.name}: {table[field.name].null_count:,} nulls in an integer column, "
                             "measured as float64 with NaN for null")
            continue
        skipped.append({"section": "columns", "what": field.name,
                        "why": f"type {field.type} is not numeric (this section measures numeric columns)"})
    return columns, skipped, notes


def measure(ctx: LabContext, table, budget_s: float) -> dict:
    budget = Slice(budget_s)
    columns, skipped, notes = numeric_columns(table)
    total = table.num_rows
    if not columns:
        return {"rows": 0, "of_rows": total, "columns": {}, "skipped": skipped, "notes": notes,
                "sample": "no numeric columns"}
    rng = np.random.default_rng(0)

    def pilot(count: int) -> float:
        started = time.perf_counter()
        for name, values in columns.items():
            measure_column(ctx, name, values[:count], rng, (TAKE_FRACTION,), 1, 1, chosen_systems())
        return time.perf_counter() - started

    # A full measurement is an encode, a check, and REPEAT decodes and takes: ~4 pilot runs.
    count = rows_for(budget, pilot, PILOT_ROWS, total, 4)
    start, stop = contiguous_rows(total, count)
    figures = {}
    with ctx.steps(len(columns), f"columns: {len(columns)} numeric columns of {stop - start:,} rows") as steps:
        for name, values in columns.items():
            repeat = REPEAT if budget.left > 0 else MIN_REPEAT
            figures[name] = measure_column(ctx, name, values[start:stop], rng, (TAKE_FRACTION,), repeat, repeat,
                                           chosen_systems())
            steps.advance(note=name)
    return {
        "rows": stop - start,
        "of_rows": total,
        "start": start,
        "stop": stop,
        "sample": (f"rows {start:,} to {stop:,} of {total:,} (one window of consecutive rows at a random start, "
                   "numpy seed 0)" if stop - start < total else f"all {total:,} rows"),
        "take_fraction": TAKE_FRACTION,
        "columns": figures,
        "skipped": skipped,
        "notes": notes,
    }
