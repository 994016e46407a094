"""What a study produces and what the lab gives it to work with.

A study is a module under ``shapeshift.lab.studies`` with a ``TITLE`` and a
``run(ctx: LabContext) -> StudyResult``. The runner calls every study, writes each result's
figures to ``report/<name>.json`` and renders all of them into ``report/index.html``.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from shapeshift.lab.stats import Summary, summarize


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""


@dataclass
class Target:
    """A goal a study checks against its own measurements (for example "2x array_record")."""

    name: str
    measured: float
    goal: float
    unit: str = "x"
    lower_is_better: bool = False

    @property
    def met(self) -> bool:
        if self.lower_is_better:
            return self.measured <= self.goal
        return self.measured >= self.goal


@dataclass
class StudyResult:
    name: str  # file stem: report/<name>.json
    title: str
    summary: str  # a paragraph computed from the figures
    tables: list[Table] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)  # file names under the report directory
    targets: list[Target] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)  # computed from the figures
    data: dict | list = field(default_factory=dict)  # raw figures, written as JSON


class LabContext:
    """Services for studies: output directory, scale, progress, timing, charts, the native CLI."""

    def __init__(self, out_dir: Path, scale: float = 1.0, quiet: bool = False):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.scale = scale
        self.quiet = quiet
        self._started = time.monotonic()

    def rows(self, base: int, minimum: int = 1) -> int:
        """``base`` scaled by ``--scale``."""
        return max(minimum, int(base * self.scale))

    def progress(self, message: str) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self._started
        print(f"[{elapsed:7.1f}s] {message}", file=sys.stderr, flush=True)

    def time(
        self,
        fn: Callable[[], object],
        repeat: int = 5,
        warmup: int = 1,
        collect_garbage: bool = False,
    ) -> Summary:
        """Wall-clock seconds of ``fn()`` over ``repeat`` runs after ``warmup`` runs.

        The garbage collector is off while a run is timed unless ``collect_garbage`` is set;
        set it where the collector's work is part of what a caller pays (building many
        Python objects), so that cost is measured rather than hidden.
        """
        for _ in range(warmup):
            fn()
        samples = []
        gc_was_enabled = gc.isenabled()
        if not collect_garbage:
            gc.disable()
        try:
            for _ in range(repeat):
                start = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - start)
        finally:
            if gc_was_enabled:
                gc.enable()
        return summarize(samples)

    def native(self, *args: str) -> dict | list:
        """Run the ``shapeshift`` CLI (``operation.find_cli``: ``$SHAPESHIFT_CLI``, else the
        venv's) with ``args`` and parse its JSON standard output."""
        from shapeshift.lab.operation import find_cli

        done = subprocess.run([find_cli(), *args], check=True, stdout=subprocess.PIPE)
        return json.loads(done.stdout)

    def bar_chart(
        self,
        filename: str,
        title: str,
        categories: list[str],
        series: dict[str, list[float]],
        ylabel: str,
        log: bool = False,
    ) -> str:
        """A grouped bar chart as SVG under the report directory; returns its file name."""
        from shapeshift.lab.charts import grouped_bars

        grouped_bars(self.out_dir / filename, title, categories, series, ylabel, log)
        return filename
