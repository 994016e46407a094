"""Renders study results into ``index.html`` (and ``report.md``) in the report directory."""

from __future__ import annotations

import html
from pathlib import Path

from shapeshift.lab.machine_load import LOADED_SHARE, describe, is_loaded
from shapeshift.lab.study import StudyResult, Table, Target


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
.met { color: #0a7a2f; } .missed { color: #b00020; } .unresolved { color: #a06000; }
.note { color: #555; font-size: 0.9em; } .loaded { background: #fff3d6; padding: 4px 8px; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
"""


_CLASS = {"met": "met", "not met": "missed", "unresolved": "unresolved"}


def _goal(t: Target) -> str:
    return f"{'≤' if t.lower_is_better else '≥'} {_cell(t.goal)} {t.unit}"


def _ci(t: Target) -> str:
    return f"{_cell(t.ci[0])} to {_cell(t.ci[1])}" if t.ci else "–"


def _verdict(t: Target) -> str:
    text = t.verdict + (f" ({t.unresolved_because})" if t.unresolved_because else "")
    if t.under_load and t.verdict != "unresolved":
        text += " [under load]"
    return text + (f"; by {t.basis}" if t.basis else "")


def _load_sentence(study: dict) -> str:
    load, samples = study["load"], study["load"]["samples"]
    parts = [describe(load["others_share"]).capitalize()]
    if samples.get("others_share_max") is not None:
        parts.append(f"at most {100 * samples['others_share_max']:.0f}% during one timed sample")
    if load.get("loadavg") is not None:
        parts.append(f"load average {load['loadavg']:.1f} at the end")
    if samples.get("cpu_mhz_min") is not None:
        parts.append(f"CPU {samples['cpu_mhz_min']:.0f}-{samples['cpu_mhz_max']:.0f} MHz")
    parts.append(f"our CPU time {load['cpu_s']:.0f} s over {load['wall_s']:.0f} s of wall time")
    if study.get("rerun_seconds"):
        parts.append(
            f"{study['rerun_seconds']:.0f} s of its {study['rerun_budget_seconds']:.0f} s budget "
            "spent re-running comparisons the first rounds could not rank"
        )
    text = "; ".join(parts) + "."
    if is_loaded(load["others_share"]):
        text += " Figures of this study were taken under load: a missed timed target is unresolved."
    return text


def summary_lines(results: list[StudyResult], studies: list[dict]) -> list[str]:
    """What a run comes to: target counts, the studies measured under load, and every
    unresolved target with its cause (printed by ``make lab`` and atop the report)."""
    targets = [t for r in results for t in r.targets]
    counts = {v: sum(t.verdict == v for t in targets) for v in _CLASS}
    lines = [f"Targets: {counts['met']} met, {counts['not met']} not met, {counts['unresolved']} unresolved."]
    loaded = [s for s in studies if is_loaded(s["load"]["others_share"])]
    if loaded:
        lines.append(
            "Measured under load: "
            + "; ".join(f"{s['name']} {describe(s['load']['others_share'])}" for s in loaded)
            + ". Timed figures of these studies are slower than on a quiet machine."
        )
    else:
        lines.append(
            f"No study was measured under load (other processes below {100 * LOADED_SHARE:.0f}% of the machine)."
        )
    unresolved = [(r.name, t) for r in results for t in r.targets if t.verdict == "unresolved"]
    for heading, group in (
        ("Unresolved because of load (run again on a quiet machine):", [u for u in unresolved if u[1].under_load]),
        ("Unresolved because the figures were too noisy to rank:", [u for u in unresolved if not u[1].under_load]),
    ):
        if group:
            lines.append(heading)
            lines += [f"- {study}: {t.name} ({t.unresolved_because})" for study, t in group]
    return lines


def write_report(out_dir: Path, results: list[StudyResult], meta: dict, index_name: str = "index.html",
                 title: str = "shapeshift lab report") -> Path:
    """The report as ``out_dir/index_name`` and the same name with ``.md``."""
    machine = meta["fingerprint"]
    build = machine.get("build") or {}
    studies = {s["name"]: s for s in meta["studies"]}
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        "<p>Measured on this machine: "
        + html.escape(
            f"{machine['cpu_model']}, {machine['cores']} CPUs, {machine['memory_gib']} GiB, "
            f"{machine['platform']}, Python {machine['python']}; build "
            f"{(build.get('git_commit') or 'unknown')[:12]}"
            f"{' (uncommitted changes)' if build.get('git_dirty') else ''}; scale {meta['scale']}; "
            f"{meta['seconds']:.0f}s in all."
        )
        + "</p>",
    ]
    summary = summary_lines(results, meta["studies"])
    parts.append("<div class='loaded'>" + "".join(f"<p>{html.escape(l)}</p>" for l in summary) + "</div>")
    markdown = [f"# {title}", ""] + [f"{l}  " for l in summary] + [""]
    for failure in meta.get("failures", []):
        parts.append(f"<p class='missed'>Study {html.escape(failure['study'])} failed:</p>")
        parts.append(f"<pre>{html.escape(failure['error'])}</pre>")
    parts.append("<ul>" + "".join(f"<li><a href='#{r.name}'>{html.escape(r.title)}</a></li>" for r in results) + "</ul>")
    for result in results:
        parts.append(f"<h2 id='{result.name}'>{html.escape(result.title)}</h2>")
        study = studies.get(result.name)
        if study is not None:
            load_text = _load_sentence(study)
            css = "loaded" if is_loaded(study["load"]["others_share"]) else "note"
            parts.append(f"<p class='{css}'>{html.escape(load_text)}</p>")
            markdown += [f"## {result.title}", "", f"*{load_text}*", ""]
        else:
            markdown += [f"## {result.title}", ""]
        parts.append(f"<p>{html.escape(result.summary)}</p>")
        markdown += [result.summary, ""]
        if result.targets:
            rows = "".join(
                f"<tr><td>{html.escape(t.name)}</td><td>{_cell(t.measured)} {html.escape(t.unit)}</td>"
                f"<td>{html.escape(_ci(t))}</td><td>{html.escape(_goal(t))}</td>"
                f"<td class='{_CLASS[t.verdict]}'>{html.escape(_verdict(t))}</td></tr>"
                for t in result.targets
            )
            parts.append(
                "<h3>Targets</h3><table><tr><th>target</th><th>measured</th><th>95% CI</th>"
                "<th>goal</th><th>verdict</th></tr>" + rows + "</table>"
            )
            markdown += ["### Targets", "", "| target | measured | 95% CI | goal | verdict |",
                         "|---|---|---|---|---|"]
            markdown += [
                f"| {t.name} | {_cell(t.measured)} {t.unit} | {_ci(t)} | {_goal(t)} | {_verdict(t)} |"
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
    index = out_dir / index_name
    index.write_text("\n".join(parts))
    (out_dir / ("report.md" if index_name == "index.html" else Path(index_name).with_suffix(".md").name)).write_text(
        "\n".join(markdown))
    return index
