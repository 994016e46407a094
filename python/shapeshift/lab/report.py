"""Renders study results into ``index.html`` (and ``report.md``) in the report directory."""

from __future__ import annotations

import html
from pathlib import Path

from shapeshift.lab.study import StudyResult, Table


def _cell(value) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "–"
        magnitude = abs(value)
        if magnitude >= 1000:
            return f"{value:,.0f}"
        if magnitude >= 10:
            return f"{value:.1f}"
        return f"{value:.3g}"
    return str(value)


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
        for row in table.rows
    )
    note = f"<p class='note'>{html.escape(table.note)}</p>" if table.note else ""
    return f"<h3>{html.escape(table.title)}</h3><table><tr>{head}</tr>{body}</table>{note}"


def _table_markdown(table: Table) -> str:
    lines = [f"### {table.title}", "", "| " + " | ".join(table.columns) + " |"]
    lines.append("|" + "---|" * len(table.columns))
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in table.rows]
    if table.note:
        lines += ["", table.note]
    return "\n".join(lines) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.met { color: #0a7a2f; } .missed { color: #b00020; } .note { color: #555; font-size: 0.9em; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
"""


def write_report(out_dir: Path, results: list[StudyResult], meta: dict) -> Path:
    machine = meta["machine"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>shapeshift lab report</title>",
        f"<style>{_STYLE}</style></head><body><h1>shapeshift lab report</h1>",
        "<p>Measured on this machine: "
        + html.escape(
            f"{machine['processor']}, {machine['cpus']} CPUs, {machine['platform']}, "
            f"Python {machine['python']}; scale {meta['scale']}; {meta['seconds']:.0f}s in all."
        )
        + "</p>",
    ]
    markdown = ["# shapeshift lab report", ""]
    for failure in meta.get("failures", []):
        parts.append(f"<p class='missed'>Study {html.escape(failure['study'])} failed:</p>")
        parts.append(f"<pre>{html.escape(failure['error'])}</pre>")
    parts.append("<ul>" + "".join(f"<li><a href='#{r.name}'>{html.escape(r.title)}</a></li>" for r in results) + "</ul>")
    for result in results:
        parts.append(f"<h2 id='{result.name}'>{html.escape(result.title)}</h2>")
        parts.append(f"<p>{html.escape(result.summary)}</p>")
        markdown += [f"## {result.title}", "", result.summary, ""]
        if result.targets:
            rows = "".join(
                f"<tr><td>{html.escape(t.name)}</td><td>{_cell(t.measured)} {html.escape(t.unit)}</td>"
                f"<td>{'≤' if t.lower_is_better else '≥'} {_cell(t.goal)} {html.escape(t.unit)}</td>"
                f"<td class='{'met' if t.met else 'missed'}'>{'met' if t.met else 'not met'}</td></tr>"
                for t in result.targets
            )
            parts.append(
                "<h3>Targets</h3><table><tr><th>target</th><th>measured</th><th>goal</th><th></th></tr>"
                + rows
                + "</table>"
            )
            markdown += ["### Targets", "", "| target | measured | goal | |", "|---|---|---|---|"]
            markdown += [
                f"| {t.name} | {_cell(t.measured)} {t.unit} | {'≤' if t.lower_is_better else '≥'} "
                f"{_cell(t.goal)} {t.unit} | {'met' if t.met else 'not met'} |"
                for t in result.targets
            ]
            markdown.append("")
        if result.recommendations:
            parts.append("<h3>Recommendations</h3><ul>")
            parts += [f"<li>{html.escape(r)}</li>" for r in result.recommendations]
            parts.append("</ul>")
            markdown += ["### Recommendations", ""] + [f"- {r}" for r in result.recommendations] + [""]
        for chart in result.charts:
            parts.append(f"<img src='{html.escape(chart)}' alt='{html.escape(chart)}'>")
            markdown.append(f"![{chart}]({chart})")
        for table in result.tables:
            parts.append(_table_html(table))
            markdown.append(_table_markdown(table))
        parts.append(f"<p class='note'>Figures: <a href='{result.name}.json'>{result.name}.json</a></p>")
    parts.append("</body></html>")
    index = out_dir / "index.html"
    index.write_text("\n".join(parts))
    (out_dir / "report.md").write_text("\n".join(markdown))
    return index
