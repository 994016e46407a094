"""Recommendations computed from one run's figures, per use.

For each use the candidates are ranked by the time the use pays (median); the margin of the
runner-up and the cost of every loser are time ratios against the winner with their 95% CI
(paired round by round where the candidates were timed in the same rounds, else a bootstrap of
the ratio of medians), and bytes ratios (exact). When the runner-up's CI reaches 1 there is no
clear winner, and the sentence names every candidate the winner cannot be told from."""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapeshift.lab.stats import geometric_mean, paired_ratio, ratio_interval, ratio_of_medians, summarize


@dataclass
class Candidate:
    name: str
    seconds: list[float]  # one sample per round
    bytes: int


def _ratio(loser: Candidate, winner: Candidate, paired: bool) -> tuple[float, tuple[float, float] | None]:
    """How many times the winner's time the loser takes, and the ratio's 95% CI."""
    if paired and len(loser.seconds) == len(winner.seconds):
        ratios = paired_ratio(loser.seconds, winner.seconds)
        return geometric_mean(ratios), ratio_interval(ratios)
    if len(loser.seconds) < 2 or len(winner.seconds) < 2:
        return summarize(loser.seconds).median / summarize(winner.seconds).median, None
    middle, low, high = ratio_of_medians(winner.seconds, loser.seconds)
    return middle, (low, high)


def _interval(ci: tuple[float, float] | None) -> str:
    return f"95% CI {ci[0]:.2f}–{ci[1]:.2f}" if ci else "no CI: too few runs"


def _bytes_text(size: int, reference: int) -> str:
    if reference <= 0:
        return f"{size:,} B"
    return f"{size / reference:.2f}x the bytes ({size:,} B)"


def recommend(use: str, basis: str, candidates: list[Candidate], paired: bool, unit: str) -> dict:
    """The recommendation for ``use``: ``basis`` says what time is ranked ("write + read of
    the sample through the Arrow fast path"), ``unit`` what one second of it buys (for the
    winner's figure: "rows" gives rows/s)."""
    candidates = [c for c in candidates if c.seconds and all(s > 0 and math.isfinite(s) for s in c.seconds)]
    if not candidates:
        return {"use": use, "basis": basis, "winner": None, "clear": False,
                "text": f"{use}: nothing could be measured.", "losers": []}
    ranked = sorted(candidates, key=lambda c: summarize(c.seconds).median)
    winner = ranked[0]
    losers = []
    for loser in ranked[1:]:
        ratio, ci = _ratio(loser, winner, paired)
        losers.append({
            "name": loser.name, "time_ratio": ratio, "ci95": list(ci) if ci else None,
            "bytes": loser.bytes, "bytes_ratio": loser.bytes / winner.bytes if winner.bytes else None,
            "indistinguishable": ci is None or ci[0] <= 1.0,
        })
    tied = [l for l in losers if l["indistinguishable"]]
    median = summarize(winner.seconds).median
    smallest = min(candidates, key=lambda c: c.bytes)
    if not losers:
        text = (f"{use}: only {winner.name} could be measured ({basis}: {median * 1e3:.3g} ms, "
                f"{winner.bytes:,} B).")
    elif tied:
        names = ", ".join(f"{l['name']} ({l['time_ratio']:.2f}x, {_interval(l['ci95'] and tuple(l['ci95']))})"
                          for l in tied)
        text = (f"{use}: no clear winner by {basis}: {winner.name} is fastest ({median * 1e3:.3g} ms) but "
                f"cannot be told from {names}.")
        fewest = min([winner] + [c for c in candidates if c.name in {l['name'] for l in tied}], key=lambda c: c.bytes)
        text += f" Among these, {fewest.name} is smallest ({fewest.bytes:,} B)."
        winner = fewest  # the size comparison below is against the pick among the tied
    else:
        runner = losers[0]
        text = (f"{use}: {winner.name}, by {basis}: {median * 1e3:.3g} ms; the runner-up {runner['name']} "
                f"takes {runner['time_ratio']:.2f}x as long ({_interval(tuple(runner['ci95']))}).")
    if losers and smallest.name != winner.name:
        text += (f" The smallest of all, {smallest.name}, takes {smallest.bytes / max(1, winner.bytes):.2f}x "
                 f"the bytes of {winner.name} ({smallest.bytes:,} against {winner.bytes:,} B).")
    elif losers and not tied:
        text += f" {winner.name} is also the smallest of all ({winner.bytes:,} B)."
    winner = ranked[0]
    costs = [
        f"{l['name']}: {l['time_ratio']:.2f}x the time ({_interval(l['ci95'] and tuple(l['ci95']))}), "
        + _bytes_text(l["bytes"], winner.bytes)
        for l in losers
    ]
    return {
        "use": use, "basis": basis, "unit": unit, "winner": winner.name, "clear": bool(losers) and not tied,
        "winner_seconds": median, "winner_bytes": winner.bytes,
        "no_clear_winner_with": [l["name"] for l in tied],
        "text": text, "loser_costs": costs, "losers": losers,
    }


def _rows_candidates(rows: dict, path: str) -> list[Candidate]:
    return [
        Candidate(a["name"], [w + r for w, r in zip(a["write"]["samples_s"], a["read"]["samples_s"])], a["bytes"])
        for a in rows["arms"] if a["path"] == path
    ]


def all_recommendations(figures: dict) -> list[dict]:
    """One recommendation per use whose section was measured."""
    out = []
    rows = figures.get("rows")
    if rows and rows.get("arms"):
        out.append(recommend(
            "Map jobs and streaming between processes", f"write + read of {rows['rows']:,} rows, Arrow table in and out",
            _rows_candidates(rows, "arrow"), paired=True, unit="rows"))
        out.append(recommend(
            "RPC payloads", f"write + read of {rows['rows']:,} rows as Python dicts",
            _rows_candidates(rows, "dicts"), paired=True, unit="rows"))
    records = figures.get("records")
    if records and records.get("arms"):
        out.append(recommend(
            "Random-access training data",
            f"{records['access']} access, {records['reads_per_run']:,} records per run",
            [Candidate(a["name"], a["read"]["samples_s"], a["bytes"]) for a in records["arms"]],
            paired=True, unit="records"))
    query = figures.get("query")
    if query and query.get("arms"):
        out.append(recommend(
            "Your query", f"shapeshift sql of your query over {query['rows']:,} rows",
            [Candidate(a["name"], a["run"]["samples_s"], a["bytes"]) for a in query["arms"]],
            paired=True, unit="rows"))
    columns = figures.get("columns")
    if columns and columns.get("columns"):
        systems = list(next(iter(columns["columns"].values()))["systems"])
        candidates = []
        for system in systems:
            per_column = [c["systems"][system] for c in columns["columns"].values()]
            runs = min(len(c["decode_samples"]) for c in per_column)
            totals = [sum(c["decode_samples"][i] for c in per_column) for i in range(runs)]
            candidates.append(Candidate(system, totals, sum(c["bytes"] for c in per_column)))
        out.append(recommend(
            "Analytic scans", f"full decode of {len(columns['columns'])} numeric columns of {columns['rows']:,} rows",
            candidates, paired=False, unit="rows"))
    return out
