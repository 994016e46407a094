"""``python -m shapeshift.lab``: run the studies and write the report."""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
import traceback
from dataclasses import asdict
from pathlib import Path

from shapeshift.lab.report import write_report
from shapeshift.lab.study import LabContext
from shapeshift.lab.studies import STUDIES


def machine_description() -> dict:
    import os

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shapeshift.lab", description=__doc__)
    parser.add_argument("--out", default="report", help="report directory (default: report)")
    parser.add_argument("--scale", type=float, default=1.0, help="row-count multiplier (default 1)")
    parser.add_argument(
        "--only", action="append", choices=STUDIES, help="run only this study (repeatable)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)

    ctx = LabContext(Path(args.out), scale=args.scale, quiet=args.quiet)
    chosen = args.only or STUDIES
    results, failures = [], []
    started = time.monotonic()
    for index, name in enumerate(chosen, 1):
        module = importlib.import_module(f"shapeshift.lab.studies.{name}")
        ctx.progress(f"study {index}/{len(chosen)}: {module.TITLE}")
        study_started = time.monotonic()
        try:
            result = module.run(ctx)
        except Exception:  # a failed study is reported, and the others still run
            failures.append({"study": name, "error": traceback.format_exc()})
            ctx.progress(f"study {name} FAILED:\n{traceback.format_exc()}")
            continue
        seconds = time.monotonic() - study_started
        (ctx.out_dir / f"{result.name}.json").write_text(
            json.dumps(result.data, indent=1, default=float)
        )
        results.append((result, seconds))
        ctx.progress(f"study {name} done in {seconds:.1f}s")

    meta = {
        "machine": machine_description(),
        "scale": args.scale,
        "seconds": time.monotonic() - started,
        "studies": [
            {"name": r.name, "seconds": s, "targets": [asdict(t) | {"met": t.met} for t in r.targets]}
            for r, s in results
        ],
        "failures": failures,
    }
    (ctx.out_dir / "lab.json").write_text(json.dumps(meta, indent=1))
    index = write_report(ctx.out_dir, [r for r, _ in results], meta)
    ctx.progress(f"report written to {index}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
