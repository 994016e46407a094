"""Does ``advise`` on its default budget recommend what a full-size measurement recommends?

    .venv/bin/python python/tools/advise_agreement.py TABLE [--budget 60] [--full-budget 100000]
    .venv/bin/python python/tools/advise_agreement.py --synthetic 1000000 [--out agree.json]

Runs ``shapeshift.advise`` twice on the same table: once with the default budget (sampled),
once with a budget large enough that every section measures all rows ("full size"). Per use,
the two agree when they name the same winner, or when one finds no clear winner and the
other's winner is among the candidates it could not tell apart. Prints one line per use and
the wall time of each run; ``--out`` keeps both runs' recommendations as JSON.

``--synthetic ROWS`` writes a seeded table of 20 columns (8 integer, 8 float, 1 boolean,
3 string columns, one of them two-thirds null) to a temporary Parquet file and uses it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def synthetic_table(rows: int, seed: int = 7):
    """20 columns of mixed shape: sorted and random integers, small domains, money-like
    decimals, noisy floats, a boolean, short strings from a vocabulary, ids, sparse text."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    columns = {
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "ts": pa.array(1_700_000_000 + np.sort(rng.integers(0, 86_400 * 30, rows)).astype(np.int64)),
        "user": pa.array(rng.integers(0, 50_000, rows, dtype=np.int64)),
        "count": pa.array(rng.poisson(3, rows).astype(np.int32)),
        "code": pa.array(rng.integers(0, 12, rows).astype(np.int8)),
        "year": pa.array(rng.integers(1990, 2025, rows).astype(np.int32)),
        "bytes_sent": pa.array(rng.lognormal(8, 2, rows).astype(np.int64)),
        "delta": pa.array(rng.integers(-1000, 1000, rows, dtype=np.int64)),
        "price": pa.array(np.round(rng.uniform(1, 500, rows), 2)),
        "ratio": pa.array(rng.random(rows)),
        "temp": pa.array(np.round(rng.normal(15, 8, rows), 1)),
        "lat": pa.array(np.round(rng.uniform(-90, 90, rows), 5)),
        "lon": pa.array(np.round(rng.uniform(-180, 180, rows), 5)),
        "score": pa.array(rng.normal(0, 1, rows)),
        "discount": pa.array(rng.choice([0.0, 0.05, 0.1, 0.2], rows)),
        "weight": pa.array(np.round(rng.gamma(2, 3, rows), 3)),
        "active": pa.array(rng.random(rows) < 0.7),
        "label": pa.array(words[rng.integers(0, len(words), rows)]),
        "sku": pa.array([f"SKU-{v:06d}" for v in rng.integers(0, 200_000, rows)]),
        "note": pa.array([None if v % 3 else f"note {v}" for v in rng.integers(0, 10**6, rows)]),
    }
    return pa.table(columns)


def agreement(sampled: dict, full: dict) -> bool:
    """Same winner, or one side's "no clear winner" set holds the other's winner."""
    if sampled["winner"] == full["winner"]:
        return True
    if not sampled["clear"] and full["winner"] in sampled["no_clear_winner_with"]:
        return True
    return not full["clear"] and sampled["winner"] in full["no_clear_winner_with"]


def _describe(rec: dict) -> str:
    if rec["winner"] is None:
        return "nothing measured"
    if rec["clear"]:
        return f"{rec['winner']} (clear)"
    return f"no clear winner: {rec['winner']} ~ {', '.join(rec['no_clear_winner_with'])}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", nargs="?", help="a table advise reads (Parquet, CSV, ...)")
    parser.add_argument("--synthetic", type=int, metavar="ROWS", help="use a seeded 20-column table of ROWS rows")
    parser.add_argument("--budget", type=float, default=60.0, help="the sampled run's budget (default 60 s)")
    parser.add_argument("--full-budget", type=float, default=100_000.0,
                        help="the full run's budget, large enough for every section to take all rows")
    parser.add_argument("--access", default="random")
    parser.add_argument("--out", help="write both runs' recommendations here (JSON)")
    args = parser.parse_args(argv)
    if (args.table is None) == (args.synthetic is None):
        parser.error("give a TABLE or --synthetic ROWS")

    import pyarrow.parquet as pq

    import shapeshift

    scratch = tempfile.TemporaryDirectory(prefix="advise-agreement-")
    path = args.table
    if args.synthetic:
        path = str(Path(scratch.name) / "synthetic.parquet")
        pq.write_table(synthetic_table(args.synthetic), path, compression="zstd")
    runs = {}
    for label, budget in (("sampled", args.budget), ("full", args.full_budget)):
        started = time.monotonic()
        advice = shapeshift.advise(path, budget=budget, access=args.access, quiet=False)
        runs[label] = {"budget_s": budget, "wall_s": time.monotonic() - started, **advice.as_dict()}
        print(f"{label}: {runs[label]['wall_s']:.1f} s", file=sys.stderr)
    sampled = {r["use"]: r for r in runs["sampled"]["recommendations"]}
    full = {r["use"]: r for r in runs["full"]["recommendations"]}
    agreed = 0
    print(f"{'use':42} {'sampled':48} {'full size':48} agree")
    for use, rec in sampled.items():
        ok = use in full and agreement(rec, full[use])
        agreed += ok
        print(f"{use:42} {_describe(rec):48} {_describe(full.get(use, {'winner': None})):48} {'yes' if ok else 'NO'}")
    print(f"{agreed}/{len(sampled)} uses agree; sampled run {runs['sampled']['wall_s']:.1f} s, "
          f"full run {runs['full']['wall_s']:.1f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1, default=str))
    return 0 if agreed == len(sampled) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
