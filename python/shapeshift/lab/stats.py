"""Statistics of repeated measurements: medians, means with 95% confidence intervals, and
ratios computed pair by pair (run i of A against run i of B, both measured in the same round).

Every figure the lab reports goes through here, so all studies summarize the same way.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, field

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom; beyond that, normal.
_T95 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t95(degrees_of_freedom: int) -> float:
    if degrees_of_freedom < 1:
        return math.inf
    if degrees_of_freedom <= len(_T95):
        return _T95[degrees_of_freedom - 1]
    return 1.960


@dataclass
class Summary:
    """Summary of a sample of measurements (seconds, or any unit)."""

    samples: list[float] = field(repr=False)
    median: float
    mean: float
    ci95: float  # half-width of the 95% confidence interval of the mean
    # Where the lab timed the samples itself (``LabContext.time``): our CPU seconds and the
    # machine's load (``machine_load.Load``) during each sample.
    cpu_samples: list[float] | None = field(default=None, repr=False)
    loads: list | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.samples)

    def as_dict(self) -> dict:
        out = {
            "median": self.median,
            "mean": self.mean,
            "ci95": self.ci95,
            "n": self.n,
            "samples": list(self.samples),
        }
        if self.cpu_samples is not None:
            out["cpu_samples"] = list(self.cpu_samples)
        if self.loads is not None:
            out["others_share"] = [load.others_share for load in self.loads]
            out["loadavg"] = [load.loadavg for load in self.loads]
            out["cpu_mhz"] = [load.cpu_mhz for load in self.loads]
        return out


def summarize(samples: list[float]) -> Summary:
    """Median, mean and 95% CI half-width of ``samples`` (at least one)."""
    if not samples:
        raise ValueError("summarize needs at least one sample")
    values = [float(s) for s in samples]
    mean = statistics.fmean(values)
    if len(values) > 1:
        half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    else:
        half = math.nan
    return Summary(samples=values, median=statistics.median(values), mean=mean, ci95=half)


def paired_ratio(numerators: list[float], denominators: list[float]) -> Summary:
    """Ratios a_i / b_i of runs measured in the same round, summarized.

    Pairing cancels drift that affects both sides of a round (frequency scaling, a noisy
    neighbour), which ratios of separately computed medians would not.
    """
    if len(numerators) != len(denominators):
        raise ValueError("paired_ratio needs samples of equal length")
    return summarize([a / b for a, b in zip(numerators, denominators)])


def format_ci(summary: Summary, scale: float = 1.0, digits: int = 3) -> str:
    """``mean ± ci`` with ``scale`` applied, for tables."""
    if math.isnan(summary.ci95):
        return f"{summary.mean * scale:.{digits}g}"
    return f"{summary.mean * scale:.{digits}g} ± {summary.ci95 * scale:.2g}"


def straddles(ci: tuple[float, float] | None, threshold: float) -> bool:
    """Whether ``threshold`` lies inside ``ci``: the measurement cannot tell which side it is on."""
    return ci is not None and ci[0] <= threshold <= ci[1]


def median_ci(samples: list[float]) -> tuple[float, float] | None:
    """Distribution-free 95% confidence interval of the median: the order statistics whose
    ranks a Binomial(n, 1/2) puts around the middle (normal approximation, as in Conover's
    *Practical Nonparametric Statistics*). ``None`` below 6 samples, where even (min, max)
    covers less than 95%."""
    values = sorted(samples)
    n = len(values)
    if n < 6:
        return None
    half_width = 1.96 * math.sqrt(n) / 2
    low_rank = max(1, math.floor(n / 2 - half_width + 0.5))  # 1-based ranks, rounded
    high_rank = min(n, math.floor(1 + n / 2 + half_width + 0.5))
    return values[low_rank - 1], values[high_rank - 1]


def ratio_of_medians(
    old: list[float], new: list[float], resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """``median(new) / median(old)`` and its 95% bootstrap (percentile) confidence interval,
    each side resampled on its own, as criterion.rs and asv compare two runs' samples."""
    import numpy as np

    old_a, new_a = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    rng = np.random.default_rng(seed)
    old_m = np.median(rng.choice(old_a, (resamples, old_a.size)), axis=1)
    new_m = np.median(rng.choice(new_a, (resamples, new_a.size)), axis=1)
    ratios = new_m / old_m
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(np.median(new_a) / np.median(old_a)), float(low), float(high)


def ratio_interval(ratios: Summary) -> tuple[float, float] | None:
    """95% confidence interval of the typical value of paired ratios, taken on their logarithms
    (Student's t) and mapped back: a ratio's interval stays positive, and a 2x speedup and a
    2x slowdown are equally far from 1. ``None`` from fewer than two finite positive ratios."""
    logs = [math.log(r) for r in ratios.samples if r > 0 and math.isfinite(r)]
    if len(logs) < 2:
        return None
    mean = statistics.fmean(logs)
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean - half), math.exp(mean + half)


def geometric_mean(ratios: Summary) -> float:
    """The centre of ``ratio_interval``: the geometric mean of the positive ratios."""
    logs = [math.log(r) for r in ratios.samples if r > 0 and math.isfinite(r)]
    return math.exp(statistics.fmean(logs)) if logs else math.nan


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test that ``a`` and ``b`` come from one
    distribution (asv's test for a change between runs). Exact for small samples without
    ties; otherwise the normal approximation with tie and continuity corrections. (Written
    here because the lab's pinned dependencies have no SciPy.)"""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return 1.0
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    pooled = sorted(list(a) + list(b))
    tie_sizes = [len(list(g)) for _, g in itertools.groupby(pooled)]
    if n + m <= 40 and all(t == 1 for t in tie_sizes):
        counts = _u_counts(n, m)
        total = sum(counts)
        low = sum(counts[: int(u) + 1]) / total
        high = sum(counts[int(math.ceil(u)) :]) / total
        return min(1.0, 2 * min(low, high))
    size = n + m
    tie_term = sum(t**3 - t for t in tie_sizes) / (size * (size - 1))
    sigma = math.sqrt(n * m / 12 * ((size + 1) - tie_term))
    if sigma == 0:
        return 1.0
    z = max(0.0, abs(u - n * m / 2) - 0.5) / sigma
    return min(1.0, math.erfc(z / math.sqrt(2)))


def _u_counts(n: int, m: int) -> list[int]:
    """How many orderings of ``n`` + ``m`` distinct values give each U from 0 to n*m: the
    largest value is one of ``a`` (adding ``m`` to U) or one of ``b``."""
    table = {(0, j): [1] for j in range(m + 1)}
    for i in range(1, n + 1):
        table[(i, 0)] = [1]
        for j in range(1, m + 1):
            with_a, with_b = table[(i - 1, j)], table[(i, j - 1)]
            counts = [0] * (i * j + 1)
            for k, c in enumerate(with_a):
                counts[k + j] += c
            for k, c in enumerate(with_b):
                counts[k] += c
            table[(i, j)] = counts
    return table[(n, m)]
