"""Statistics of repeated measurements: medians, means with 95% confidence intervals, and
ratios computed pair by pair (run i of A against run i of B, both measured in the same round).

Every figure the lab reports goes through here, so all studies summarize the same way.
"""

from __future__ import annotations

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

    @property
    def n(self) -> int:
        return len(self.samples)

    def as_dict(self) -> dict:
        return {
            "median": self.median,
            "mean": self.mean,
            "ci95": self.ci95,
            "n": self.n,
            "samples": list(self.samples),
        }


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
