"""Time budget, sampling and interleaved rounds shared by the advisor's three measurements."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from shapeshift.lab.stats import summarize
from shapeshift.lab.study import LabContext

SEED = 0
REPEAT = 5  # timed rounds wanted per measurement (after one warm-up round)
MIN_REPEAT = 3  # rounds always taken, even past the deadline (a CI needs several)


@dataclass
class Slice:
    """A section's share of the budget: seconds, measured from when it starts."""

    seconds: float

    def __post_init__(self):
        self.started = time.monotonic()

    @property
    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)


def rows_for(budget: Slice, pilot: Callable[[int], float], first: int, total: int, passes: float) -> int:
    """How many rows ``passes`` runs of a measurement fit in what is left of ``budget``, from
    two pilot runs (``pilot(rows)`` returns its seconds) at ``first`` and 4x ``first`` rows:
    a line through them (fixed cost + cost per row) extrapolates, where one small pilot alone
    would charge the fixed cost to every row. At least the larger pilot, at most ``total``."""
    small = min(first, total)
    small_s = pilot(small)
    if small >= total:
        return total
    large = min(total, 4 * small)
    large_s = pilot(large)
    per_row = max((large_s - small_s) / (large - small), large_s / large / 20, 1e-9)
    fixed = max(0.0, large_s - per_row * large)
    fit = int((budget.left / passes - fixed) / per_row)
    return max(large, min(total, fit))


def random_rows(total: int, count: int, seed: int = SEED) -> np.ndarray:
    """``count`` of ``total`` row indices drawn uniformly without replacement, sorted."""
    if count >= total:
        return np.arange(total)
    return np.sort(np.random.default_rng(seed).choice(total, count, replace=False))


def random_sample_text(count: int, total: int) -> str:
    """How ``random_rows`` drew the sample, for the output."""
    if count >= total:
        return f"all {total:,} rows"
    return (f"{count:,} of {total:,} rows drawn uniformly at random without replacement "
            f"(numpy seed {SEED}), kept in file order")


def contiguous_rows(total: int, count: int, seed: int = SEED) -> tuple[int, int]:
    """A window of ``count`` consecutive rows at a random start: (start, stop)."""
    if count >= total:
        return 0, total
    start = int(np.random.default_rng(seed).integers(0, total - count + 1))
    return start, start + count


def interleaved_rounds(ctx: LabContext, arms: dict[str, Callable[[], object]], budget: Slice,
                       progress=None, repeat: int = REPEAT) -> dict[str, list[float]]:
    """Wall seconds of every arm, one sample per round, the arms taking turns in each round
    (so the i-th samples of two arms saw the same machine and pair up). One warm-up round;
    then ``repeat`` rounds, fewer (not below ``MIN_REPEAT``) when ``budget`` runs out."""
    for fn in arms.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in arms}
    order = list(arms.items())
    for index in range(repeat):
        if index >= MIN_REPEAT and budget.left <= 0:
            break
        for name, fn in (order if index % 2 == 0 else order[::-1]):
            samples[name].append(ctx.sample(fn).wall_s)
        if progress is not None:
            progress.advance()
    return samples


def timing_figures(samples: list[float], units: float) -> dict:
    """Median seconds, mean with its 95% CI, and ``units`` per second (on the median)."""
    summary = summarize(samples)
    return {
        "median_s": summary.median,
        "mean_s": summary.mean,
        "ci95_s": None if math.isnan(summary.ci95) else summary.ci95,
        "per_s": units / summary.median if summary.median > 0 else math.inf,
        "samples_s": list(summary.samples),
    }
