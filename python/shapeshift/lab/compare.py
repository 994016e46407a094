"""``python -m shapeshift.lab compare OLD NEW``: what got faster or slower between two runs.

OLD and NEW are report directories or their ``lab.json``. Every measurement both runs recorded
(the samples under ``measurements`` in ``lab.json``) is compared as criterion.rs and asv do: the
ratio of medians new/old with a 95% bootstrap confidence interval, and the Mann-Whitney U test
(as asv does). A change is reported when the test rejects "same distribution" with a false
discovery rate of 5% over all the measurements compared (Benjamini-Hochberg: a run holds
about a thousand), the interval excludes 1, and the ratio is beyond ``--threshold`` (5% by
default), so run-to-run noise is not reported as a change (three samples against three can
never show one).

Runs from different machines (CPU model, cores, memory, kernel, Python) are refused unless
``--force``: their figures differ for reasons that have nothing to do with the code.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from shapeshift.lab.machine_load import LOADED_SHARE, MACHINE_KEYS, is_loaded
from shapeshift.lab.stats import mann_whitney_p, ratio_of_medians

THRESHOLD = 0.05


class RunError(ValueError):
    """A run that cannot be compared (missing, or written by a lab without samples)."""


@dataclass
class Change:
    study: str
    name: str
    ratio: float  # median new / median old: above 1 is slower
    low: float
    high: float
    old_n: int
    new_n: int
    old_share: float | None  # other processes' share of the machine during the samples
    new_share: float | None
    p_value: float  # Mann-Whitney U, two-sided
    q_value: float = 1.0  # p_value adjusted for the number of measurements compared

    def status(self, threshold: float = THRESHOLD) -> str:
        if self.q_value >= 0.05:
            return "no change"
        if self.low > 1 and self.ratio > 1 + threshold:
            return "slower"
        if self.high < 1 and self.ratio < 1 - threshold:
            return "faster"
        return "no change"

    def line(self) -> str:
        loads = [
            f"{side} measured while other processes used {100 * share:.0f}% of the machine"
            for side, share in (("old", self.old_share), ("new", self.new_share))
            if share is not None and share >= LOADED_SHARE
        ]
        return (
            f"{self.study}: {self.name}: {self.ratio:.3f}x time (95% CI {self.low:.3f} to "
            f"{self.high:.3f}; p = {self.p_value:.2g}, adjusted {self.q_value:.2g}; {self.old_n} vs "
            f"{self.new_n} samples)"
            + (f" [{'; '.join(loads)}]" if loads else "")
        )


def load_run(path: str | Path) -> dict:
    """A run's ``lab.json``, from the report directory or the file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "lab.json"
    try:
        run = json.loads(path.read_text())
    except OSError as error:
        raise RunError(f"{path}: cannot read ({error.strerror})") from error
    except ValueError as error:
        raise RunError(f"{path}: not JSON ({error})") from error
    if not isinstance(run, dict) or "measurements" not in run or "fingerprint" not in run:
        raise RunError(
            f"{path}: no samples or machine fingerprint (written by an older lab); run the lab again"
        )
    return run


def machine_differences(old: dict, new: dict) -> list[str]:
    """``key: old -> new`` for each machine property that differs."""
    a, b = old["fingerprint"], new["fingerprint"]
    return [f"{key}: {a.get(key)!r} -> {b.get(key)!r}" for key in MACHINE_KEYS if a.get(key) != b.get(key)]


def _mean_share(shares: list | None) -> float | None:
    values = [s for s in shares or [] if s is not None]
    return sum(values) / len(values) if values else None


def compare_runs(old: dict, new: dict) -> tuple[list[Change], list[str]]:
    """Every measurement both runs hold, compared; and the names only one run holds."""
    changes, unmatched = [], []
    for study in sorted(set(old["measurements"]) | set(new["measurements"])):
        before, after = old["measurements"].get(study, {}), new["measurements"].get(study, {})
        for name in sorted(set(before) | set(after)):
            if name not in before or name not in after:
                unmatched.append(f"{study}: {name} ({'new' if name in after else 'old'} run only)")
                continue
            a, b = before[name]["wall_s"], after[name]["wall_s"]
            if len(a) < 2 or len(b) < 2 or min(a) <= 0 or min(b) <= 0:
                unmatched.append(f"{study}: {name} (too few samples to compare)")
                continue
            ratio, low, high = ratio_of_medians(a, b)
            changes.append(Change(
                study, name, ratio, low, high, len(a), len(b),
                _mean_share(before[name].get("others_share")),
                _mean_share(after[name].get("others_share")),
                mann_whitney_p(a, b),
            ))
    for change, q in zip(changes, benjamini_hochberg([c.p_value for c in changes])):
        change.q_value = q
    return changes, unmatched


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Adjusted p-values (q-values) controlling the false discovery rate over many tests."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 1.0
    for rank in range(len(order), 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * len(p_values) / rank)
        adjusted[i] = running
    return adjusted


def _build(run: dict) -> str:
    build = run["fingerprint"].get("build") or {}
    commit = (build.get("git_commit") or "unknown commit")[:12]
    return commit + (" (uncommitted changes)" if build.get("git_dirty") else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shapeshift.lab compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the earlier run: report directory or its lab.json")
    parser.add_argument("new", help="the later run: report directory or its lab.json")
    parser.add_argument("--force", action="store_true", help="compare runs from different machines")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help=f"smallest change reported, as a fraction (default {THRESHOLD})")
    parser.add_argument("--all", action="store_true", help="also list the unchanged measurements")
    args = parser.parse_args(argv)
    try:
        old, new = load_run(args.old), load_run(args.new)
    except RunError as error:
        print(f"compare: {error}", file=sys.stderr)
        return 2
    differences = machine_differences(old, new)
    if differences and not args.force:
        print("compare: refusing to compare runs from different machines (--force to compare anyway):",
              file=sys.stderr)
        for line in differences:
            print(f"  {line}", file=sys.stderr)
        return 2
    changes, unmatched = compare_runs(old, new)
    print(f"old: {args.old} (build {_build(old)}, scale {old.get('scale')})")
    print(f"new: {args.new} (build {_build(new)}, scale {new.get('scale')})")
    if differences:
        print("WARNING: different machines, compared because of --force: " + "; ".join(differences))
    for label, run in (("old", old), ("new", new)):
        loaded = [s["name"] for s in run.get("studies", []) if is_loaded((s.get("load") or {}).get("others_share"))]
        if loaded:
            print(f"WARNING: the {label} run was measured under load ({', '.join(loaded)}): "
                  "a change there may come from the load, not the code")
    if old.get("scale") != new.get("scale"):
        print("WARNING: different --scale: the studies timed different amounts of work")
    for status in ("slower", "faster"):
        found = sorted((c for c in changes if c.status(args.threshold) == status),
                       key=lambda c: -abs(c.ratio - 1))
        print(f"\n{status} beyond noise ({len(found)}):")
        for change in found:
            print(f"  {change.line()}")
    unchanged = [c for c in changes if c.status(args.threshold) == "no change"]
    print(f"\nno change beyond noise: {len(unchanged)} of {len(changes)} measurements")
    if args.all:
        for change in unchanged:
            print(f"  {change.line()}")
    if unmatched:
        print(f"not compared ({len(unmatched)}): " + "; ".join(unmatched[:20])
              + (" ..." if len(unmatched) > 20 else ""))
    return 0
