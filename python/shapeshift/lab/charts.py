"""Charts for the report, drawn with matplotlib as SVG."""

from __future__ import annotations

from pathlib import Path


def grouped_bars(
    path: Path,
    title: str,
    categories: list[str],
    series: dict[str, list[float]],
    ylabel: str,
    log: bool = False,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_series = max(1, len(series))
    width = 0.8 / n_series
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(categories) * max(1, n_series / 2)), 4.0))
    for i, (name, values) in enumerate(series.items()):
        xs = [c + (i - (n_series - 1) / 2) * width for c in range(len(categories))]
        ax.bar(xs, values, width=width, label=name)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(categories, rotation=20 if len(categories) > 6 else 0, ha="right" if len(categories) > 6 else "center")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
