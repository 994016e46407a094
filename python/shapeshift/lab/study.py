"""What a study produces and what the lab gives it to work with.

A study is a module under ``shapeshift.lab.studies`` with a ``TITLE`` and a
``run(ctx: LabContext) -> StudyResult``. The runner calls every study, writes each result's
figures to ``report/<name>.json`` and renders all of them into ``report/index.html``.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from shapeshift.lab.machine_load import Load, LoadProbe, describe, is_loaded, summarize_loads
from shapeshift.lab.stats import (
    Summary, geometric_mean, paired_ratio, ratio_interval, straddles, summarize,
)


T = TypeVar("T")


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""


@dataclass
class Target:
    """A goal a study checks against its own measurements (for example "2x array_record").

    ``met`` compares the figure with the goal. ``verdict`` is what the report says: "met",
    "not met", or "unresolved" when the figure's 95% CI straddles the goal, or when a timed
    target was missed while other processes held the machine (load slows us, so a miss then
    says nothing about the code).
    """

    name: str
    measured: float
    goal: float
    unit: str = "x"
    lower_is_better: bool = False
    ci: tuple[float, float] | None = None  # 95% CI of ``measured`` where it has one
    timed: bool = True  # False for sizes and correctness checks, which load cannot change
    basis: str = ""  # what ``measured`` is a ratio of when that matters ("CPU time")
    others_share: float | None = None  # set by the runner: other processes' share of the machine

    @property
    def met(self) -> bool:
        if self.lower_is_better:
            return self.measured <= self.goal
        return self.measured >= self.goal

    @property
    def under_load(self) -> bool:
        return self.timed and is_loaded(self.others_share)

    @property
    def unresolved_because(self) -> str:
        """Why no verdict can be given on this machine ("" when one can)."""
        if straddles(self.ci, self.goal):
            return f"95% CI {self.ci[0]:.3g} to {self.ci[1]:.3g} {self.unit} straddles the goal".replace("  ", " ")
        if self.under_load and not self.met:
            return "not met, " + describe(self.others_share)
        return ""

    @property
    def verdict(self) -> str:
        if self.unresolved_because:
            return "unresolved"
        return "met" if self.met else "not met"

    def as_dict(self) -> dict:
        return asdict(self) | {
            "met": self.met,
            "verdict": self.verdict,
            "unresolved_because": self.unresolved_because,
            "under_load": self.under_load,
        }


def worst_of(name: str, comparisons: list["Comparison"], goal: float, unit: str = "x") -> Target:
    """A target on the slowest of several comparisons (each a speedup of side a over side b),
    each comparison's figure the geometric mean of its paired ratios.

    Its CI runs from the lowest low to the lowest high: met only when every comparison is
    surely above the goal, not met when one is surely below it."""
    ratios = [c.ratio for c in comparisons]
    intervals = [ratio_interval(r) for r in ratios]
    ci = None
    if all(i is not None for i in intervals):
        ci = (min(i[0] for i in intervals), min(i[1] for i in intervals))
    cpu_based = [c for c in comparisons if c.believe[0] == "cpu"]
    return Target(
        name,
        min(geometric_mean(r) for r in ratios),
        goal,
        unit,
        ci=ci,
        basis=f"CPU time for {len(cpu_based)} of {len(comparisons)} (measured under load)" if cpu_based else "",
    )


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


# A side whose CPU time exceeds its wall time by this factor ran on more than one core.
MULTITHREADED = 1.3


@dataclass
class Comparison:
    """Sides ``a`` and ``b`` timed in alternation, round by round. Ratios are ``b``'s time over
    ``a``'s in the same round: how many times faster ``a`` is (above 1: ``a`` wins)."""

    a: str
    b: str
    sides: dict[str, Summary]  # wall seconds, with CPU seconds and loads
    wall: Summary  # paired ratios of wall time
    cpu: Summary  # paired ratios of CPU time (ours: this process and its children)
    extra_rounds: int = 0  # rounds added because the first ones could not rank the sides

    @property
    def threads(self) -> dict[str, float]:
        """CPU seconds per wall second of each side (median): ~1 for single-threaded work."""
        return {
            side: statistics.median(c / w for c, w in zip(s.cpu_samples, s.samples) if w > 0)
            for side, s in self.sides.items()
        }

    @property
    def others_share(self) -> float | None:
        return summarize_loads([l for s in self.sides.values() for l in s.loads])["others_share"]

    @property
    def disagree(self) -> bool:
        """The wall and CPU ratios' CIs do not overlap."""
        wall, cpu = ratio_interval(self.wall), ratio_interval(self.cpu)
        return wall is not None and cpu is not None and (wall[1] < cpu[0] or cpu[1] < wall[0])

    @property
    def believe(self) -> tuple[str, str]:
        """Which ratio to believe ("wall" or "cpu") and why."""
        if not self.disagree:
            return "wall", "wall and CPU ratios agree within their CIs; wall time is what a user waits for"
        load = describe(self.others_share)
        if max(self.threads.values()) > MULTITHREADED:
            return "wall", (
                "multi-threaded work: the CPU ratio counts work spread over cores, not the waiting "
                "it saves, so only the wall ratio says what a user waits for, and only on a quiet "
                f"machine ({load})"
            )
        if is_loaded(self.others_share):
            return "cpu", (
                "single-threaded work " + load + ": wall time includes waiting for a core "
                "another process held, CPU time does not, so the CPU ratio survives the contention"
            )
        return "wall", (
            "quiet machine: wall time is what a user waits for; the CPU ratio leaves out time "
            "spent waiting (I/O, page faults, other threads)"
        )

    @property
    def ratio(self) -> Summary:
        return self.cpu if self.believe[0] == "cpu" else self.wall

    def ranks(self, goal: float | None = None) -> bool:
        """Whether the believed ratio's CI clears 1 (and ``goal``): the sides are ranked."""
        ci = ratio_interval(self.ratio)
        if ci is None:
            return False
        return not straddles(ci, 1.0) and (goal is None or not straddles(ci, goal))

    def as_dict(self) -> dict:
        believe, why = self.believe
        return {
            "a": self.a,
            "b": self.b,
            "sides": {side: s.as_dict() for side, s in self.sides.items()},
            "wall_ratio": self.wall.as_dict(),
            "cpu_ratio": self.cpu.as_dict(),
            "threads": self.threads,
            "others_share": self.others_share,
            "believe": believe,
            "why": why,
            "extra_rounds": self.extra_rounds,
        }


class Progress:
    """Progress of a long step with an ETA: a tqdm bar when stderr is a terminal, else a plain
    line at most every ``every_s`` seconds (logs and CI stay readable)."""

    def __init__(self, ctx: "LabContext", total: int, label: str, every_s: float = 10.0):
        self.ctx, self.total, self.label, self.every_s = ctx, max(1, total), label, every_s
        self.done = 0
        self.started = self.last_line = time.monotonic()
        self.bar = None
        if not ctx.quiet and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = ctx.bar = tqdm(total=self.total, desc=label, file=sys.stderr, leave=False, unit="step")

    def advance(self, steps: int = 1, note: str = "") -> None:
        self.done += steps
        if self.bar is not None:
            self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(steps)
            return
        now = time.monotonic()
        if now - self.last_line >= self.every_s or self.done >= self.total:
            self.last_line = now
            elapsed = now - self.started
            eta = elapsed / self.done * (self.total - self.done) if self.done else math.nan
            self.ctx.progress(
                f"{self.label}: {self.done}/{self.total} ({100 * self.done / self.total:.0f}%), "
                f"ETA {eta:.0f}s" + (f", {note}" if note else "")
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = self.ctx.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LabContext:
    """Services for studies: output directory, scale, progress, timing, charts, the native CLI.

    Everything a study times goes through ``time``, ``compare`` or ``native``, which record
    our CPU time and the machine's load (``machine_load``) beside each wall-time sample;
    ``record`` stores samples for ``python -m shapeshift.lab compare`` under a stable name."""

    def __init__(self, out_dir: Path, scale: float = 1.0, quiet: bool = False):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.scale = scale
        self.quiet = quiet
        self._started = time.monotonic()
        self.measurements: dict[str, dict] = {}
        self.loads: list[Load] = []  # every sample's load since begin_study
        self.rerun_budget_s = 0.0
        self.rerun_spent_s = 0.0
        self.bar = None  # the open tqdm bar, if any
        # CPU seconds of processes a study ran but this process will not reap (an engine's
        # JVM under a worker): the runner counts them as ours, not as other processes' load.
        self.unreaped_cpu_s = 0.0

    def begin_study(self, rerun_budget_s: float = 0.0) -> None:
        """Fresh measurements, loads and re-run budget for the next study."""
        self.measurements, self.loads = {}, []
        self.unreaped_cpu_s = 0.0
        self.rerun_budget_s, self.rerun_spent_s = rerun_budget_s, 0.0

    def rows(self, base: int, minimum: int = 1) -> int:
        """``base`` scaled by ``--scale``."""
        return max(minimum, int(base * self.scale))

    def progress(self, message: str) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self._started
        line = f"[{elapsed:7.1f}s] {message}"
        if self.bar is not None:  # above the progress bar, not through it
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def steps(self, total: int, label: str) -> Progress:
        """Progress over ``total`` steps, with an ETA: ``with ctx.steps(n, "x") as p: p.advance()``."""
        return Progress(self, total, label)

    def record(self, name: str, wall_s: list[float], cpu_s: list[float] | None = None,
               loads: list[Load] | None = None, unit: str = "s") -> None:
        """Keeps samples of one measured thing for ``lab.json`` (what ``compare`` reads)."""
        self.measurements[name] = {
            "unit": unit,
            "wall_s": list(wall_s),
            "cpu_s": list(cpu_s) if cpu_s is not None else None,
            "others_share": [l.others_share for l in loads] if loads else None,
        }

    def measure(self, fn: Callable[[], T]) -> tuple[T, Load]:
        """``fn()``'s result, and its wall and CPU seconds and the machine's load meanwhile."""
        probe = LoadProbe()
        result = fn()
        load = probe.stop()
        self.loads.append(load)
        return result, load

    def sample(self, fn: Callable[[], object]) -> Load:
        """One timed run of ``fn``: its wall and CPU seconds and the machine's load meanwhile."""
        return self.measure(fn)[1]

    def time(
        self,
        fn: Callable[[], object],
        repeat: int = 5,
        warmup: int = 1,
        collect_garbage: bool = False,
        name: str | None = None,
    ) -> Summary:
        """Wall-clock seconds of ``fn()`` over ``repeat`` runs after ``warmup`` runs, with the
        CPU seconds and load of each run; recorded as ``name`` when given.

        The garbage collector is off while a run is timed unless ``collect_garbage`` is set;
        set it where the collector's work is part of what a caller pays (building many
        Python objects), so that cost is measured rather than hidden.
        """
        for _ in range(warmup):
            fn()
        with _collector(collect_garbage):
            loads = [self.sample(fn) for _ in range(repeat)]
        summary = _summary(loads)
        if name is not None:
            self.record(name, summary.samples, summary.cpu_samples, loads)
        return summary

    def compare(
        self,
        name: str,
        sides: dict[str, Callable[[], object]],
        repeat: int = 5,
        warmup: int = 1,
        collect_garbage: bool = False,
        goal: float | None = None,
        max_repeat: int | None = None,
    ) -> Comparison:
        """Times two sides in alternation (a, b, then b, a, ...) after ``warmup`` runs each.

        When the ratio's 95% CI cannot rank the sides (it straddles 1, or ``goal``), further
        rounds run, up to ``max_repeat`` (default 3 x ``repeat``) and while the study's re-run
        budget lasts; whatever is left unranked is reported as unresolved."""
        (a, fa), (b, fb) = sides.items()
        for _ in range(warmup):
            fa(), fb()
        loads: dict[str, list[Load]] = {a: [], b: []}

        def one_round(index: int) -> None:
            order = [(a, fa), (b, fb)] if index % 2 == 0 else [(b, fb), (a, fa)]
            with _collector(collect_garbage):
                for side, fn in order:
                    loads[side].append(self.sample(fn))

        for index in range(repeat):
            one_round(index)
        result = paired_comparison(a, b, loads)
        rounds, limit = repeat, max_repeat or 3 * repeat
        while not result.ranks(goal) and rounds < limit:
            round_s = sum(l[-1].wall_s for l in loads.values())
            if self.rerun_spent_s + round_s > self.rerun_budget_s:
                break
            started = time.perf_counter()
            one_round(rounds)
            self.rerun_spent_s += time.perf_counter() - started
            rounds += 1
            result = paired_comparison(a, b, loads, rounds - repeat)
        for side in (a, b):
            s = result.sides[side]
            self.record(f"{name}/{side}", s.samples, s.cpu_samples, loads[side])
        return result

    def native(self, *args: str) -> tuple[dict | list, Load]:
        """Run the ``shapeshift`` CLI (``operation.find_cli``: ``$SHAPESHIFT_CLI``, else the
        venv's) with ``args``; its parsed JSON standard output, and the load while it ran (its
        CPU time included, as it is a child of this process)."""
        from shapeshift.lab.operation import find_cli

        probe = LoadProbe()
        done = subprocess.run([find_cli(), *args], check=True, stdout=subprocess.PIPE)
        load = probe.stop()
        self.loads.append(load)
        return json.loads(done.stdout), load

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


class _collector:
    """The garbage collector off inside the block unless ``collect_garbage``."""

    def __init__(self, collect_garbage: bool):
        self.collect_garbage = collect_garbage

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        if not self.collect_garbage:
            gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def _summary(loads: list[Load]) -> Summary:
    summary = summarize([l.wall_s for l in loads])
    summary.cpu_samples = [l.cpu_s for l in loads]
    summary.loads = list(loads)
    return summary


def paired_comparison(a: str, b: str, loads: dict[str, list[Load]], extra_rounds: int = 0) -> Comparison:
    """The comparison of two sides from their samples, taken round by round in alternation."""
    sa, sb = _summary(loads[a]), _summary(loads[b])
    return Comparison(
        a, b, {a: sa, b: sb},
        wall=paired_ratio(sb.samples, sa.samples),
        cpu=_cpu_ratio(sb.cpu_samples, sa.cpu_samples),
        extra_rounds=extra_rounds,
    )


def _cpu_ratio(numerators: list[float], denominators: list[float]) -> Summary:
    """Paired CPU-time ratios; a round whose denominator took no measurable CPU time (below
    the clock's resolution) gives none."""
    pairs = [(n, d) for n, d in zip(numerators, denominators) if d > 0]
    if not pairs:
        return summarize([math.nan])
    return paired_ratio([n for n, _ in pairs], [d for _, d in pairs])
