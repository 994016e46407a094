"""``python -m shapeshift.lab``: run the studies and write the report.

``python -m shapeshift.lab compare OLD NEW`` compares two runs instead (see ``lab.compare``).
``--data PATH`` adds the advice on the user's own table (``shapeshift.advise``) to the report.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

from shapeshift.lab.machine_load import LoadProbe, describe, fingerprint, own_cpu_seconds, summarize_loads
from shapeshift.lab.report import summary_lines, write_report
from shapeshift.lab.study import LabContext
from shapeshift.lab.studies import STUDIES


def run_studies(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shapeshift.lab", description=__doc__)
    parser.add_argument("--out", default="report", help="report directory (default: report)")
    parser.add_argument("--scale", type=float, default=1.0, help="row-count multiplier (default 1)")
    parser.add_argument(
        "--only", action="append", choices=STUDIES + ["advise"],
        help="run only this study (repeatable; advise: only the --data sections)",
    )
    parser.add_argument("--data", action="append", default=[], metavar="PATH",
                        help="also advise on this file (repeatable): a section per file, as `shapeshift advise`")
    parser.add_argument("--data-budget", type=float, default=60.0, help="seconds per --data file (default 60)")
    parser.add_argument("--access", choices=("random", "batch", "sequential"), default="random",
                        help="access pattern of record files for --data (default random)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)

    ctx = LabContext(Path(args.out), scale=args.scale, quiet=args.quiet)
    machine = fingerprint()  # at the start: the build that runs is the one checked out now
    chosen = [s for s in (args.only or STUDIES) if s != "advise"]
    results, studies, failures, measurements = [], [], [], {}
    started = time.monotonic()
    for index, name in enumerate(chosen, 1):
        module = importlib.import_module(f"shapeshift.lab.studies.{name}")
        ctx.progress(f"study {index}/{len(chosen)}: {module.TITLE}")
        # Re-runs of unranked comparisons get a budget in proportion to the study's work.
        ctx.begin_study(rerun_budget_s=getattr(module, "RERUN_BUDGET_S", 0.0) * args.scale)
        probe = LoadProbe(own_cpu=lambda: own_cpu_seconds() + ctx.unreaped_cpu_s)
        try:
            result = module.run(ctx)
        except Exception:  # a failed study is reported, and the others still run
            failures.append({"study": name, "error": traceback.format_exc()})
            ctx.progress(f"study {name} FAILED:\n{traceback.format_exc()}")
            continue
        load = probe.stop()
        for target in result.targets:
            target.others_share = load.others_share
        (ctx.out_dir / f"{result.name}.json").write_text(
            json.dumps(result.data, indent=1, default=float)
        )
        results.append(result)
        measurements[result.name] = ctx.measurements
        studies.append({
            "name": result.name,
            "seconds": load.wall_s,
            "load": load.as_dict() | {"samples": summarize_loads(ctx.loads)},
            "rerun_seconds": ctx.rerun_spent_s,
            "rerun_budget_seconds": ctx.rerun_budget_s,
            "targets": [t.as_dict() for t in result.targets],
        })
        ctx.progress(
            f"study {name} done in {load.wall_s:.1f}s, " + describe(load.others_share)
        )

    for index, path in enumerate(args.data, 1):
        ctx.progress(f"advise {index}/{len(args.data)}: {path}")
        _advise_section(ctx, path, args, results, studies, failures, measurements)

    meta = {
        "fingerprint": machine,
        "scale": args.scale,
        "seconds": time.monotonic() - started,
        "studies": studies,
        "failures": failures,
        "measurements": measurements,
    }
    (ctx.out_dir / "lab.json").write_text(json.dumps(meta, indent=1))
    index = write_report(ctx.out_dir, results, meta)
    ctx.progress(f"report written to {index}")
    print("\n".join(summary_lines(results, studies)), file=sys.stderr)
    return 1 if failures else 0


def _advise_section(ctx, path, args, results, studies, failures, measurements) -> None:
    """The advice on ``path`` as one more section of the report (a failure is reported)."""
    from shapeshift.advisor import advise

    ctx.begin_study()
    probe = LoadProbe()
    try:
        advice = advise(path, budget=args.data_budget, access=args.access, ctx=ctx, quiet=args.quiet)
        result = advice.study_result(ctx, prefix=f"advise-{len(results) + 1}")
    except Exception:
        failures.append({"study": f"advise {path}", "error": traceback.format_exc()})
        ctx.progress(f"advise {path} FAILED:\n{traceback.format_exc()}")
        return
    load = probe.stop()
    (ctx.out_dir / f"{result.name}.json").write_text(json.dumps(result.data, indent=1, default=float))
    results.append(result)
    measurements[result.name] = ctx.measurements
    studies.append({
        "name": result.name, "seconds": load.wall_s,
        "load": load.as_dict() | {"samples": summarize_loads(ctx.loads)},
        "rerun_seconds": 0.0, "rerun_budget_seconds": 0.0, "targets": [],
    })


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        from shapeshift.lab.compare import main as compare_main

        return compare_main(argv[1:])
    return run_studies(argv)


if __name__ == "__main__":
    sys.exit(main())
