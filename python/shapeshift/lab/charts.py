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


def scatter_panels(
    path: Path,
    title: str,
    panels: dict[str, dict[str, tuple[float, float]]],
    xlabel: str,
    highlight: set[str] = frozenset(),
) -> None:
    """Side-by-side scatter plots, one per panel title, of labelled (x, y) points (both axes
    on a log scale); labels in ``highlight`` are drawn in another colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 5.0), squeeze=False)
    for ax, (ylabel, points) in zip(axes[0], panels.items()):
        for label, (x, y) in points.items():
            colour = "tab:red" if label in highlight else "tab:blue"
            ax.scatter([x], [y], color=colour, s=18)
            ax.annotate(label, (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)


def line_panels(
    path: Path,
    title: str,
    panels: dict[str, dict[str, list[tuple[float, float]]]],
    xlabel: str,
    ylabel: str,
) -> None:
    """Side-by-side line charts, one per panel title, of labelled (x, y) series (x on a log
    scale: client counts, sizes), the legend under the last panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.0 * len(panels), 4.5), squeeze=False)
    for ax, (panel, series) in zip(axes[0], panels.items()):
        for label, points in series.items():
            points = sorted(points)
            ax.plot([x for x, _ in points], [y for _, y in points], marker="o", markersize=3, label=label)
        ax.set_title(panel)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize="x-small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
