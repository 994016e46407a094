"""``shapeshift advise PATH...`` (the CLI runs this module with the venv's Python):
measure every format choice on each file and recommend per use."""

from __future__ import annotations

import argparse
import json
import sys

from shapeshift.advisor import SECTIONS, advise
from shapeshift.advisor.inputs import InputError, read_schema_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shapeshift advise", description=__doc__)
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="Parquet, Arrow IPC/Feather, CSV, JSON lines, rows of a shapeshift format "
                             "(with --schema), or an ArrayRecord file")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per file (default 60)")
    parser.add_argument("--access", choices=("random", "batch", "sequential"), default="random",
                        help="how record files will be read (default random)")
    parser.add_argument("--schema", help="YT schema file (JSON list or YSON) instead of the inferred one")
    parser.add_argument("--query", metavar="SQL", help="also time this SQL (the table is t) over each storage "
                        "choice with shapeshift's query engine")
    parser.add_argument("--only", action="append", choices=list(SECTIONS), help="measure only this section")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON on standard output")
    parser.add_argument("--html", metavar="FILE", help="write an HTML page with charts (one file: FILE; "
                        "several: FILE's stem with the file's index)")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    args = parser.parse_args(argv)
    if args.budget <= 0:
        parser.error("--budget is a number of seconds above 0")
    schema = None
    if args.schema:
        try:
            schema = read_schema_file(args.schema)
        except (InputError, OSError) as error:
            print(f"shapeshift advise: {error}", file=sys.stderr)
            return 2
    results, failures = [], 0
    for index, path in enumerate(args.paths):
        try:
            advice = advise(path, budget=args.budget, access=args.access, schema=schema,
                            sections=tuple(args.only or SECTIONS), quiet=args.quiet, query=args.query)
        except (InputError, OSError) as error:
            print(f"shapeshift advise: {error}", file=sys.stderr)
            results.append({"source": path, "error": str(error)})
            failures += 1
            continue
        results.append(advice.as_dict())
        if not args.json:
            print(advice.text(), end="\n\n")
        if args.html:
            from pathlib import Path

            html = Path(args.html)
            if len(args.paths) > 1:
                html = html.with_name(f"{html.stem}-{index + 1}{html.suffix or '.html'}")
            written = advice.write_html(html)
            print(f"shapeshift advise: wrote {written}", file=sys.stderr)
    if args.json:
        json.dump(results if len(results) > 1 else results[0], sys.stdout, indent=1, default=float)
        print()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
