"""Learning curves: validation gap against training effort, one line per run or recipe."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from routecli.plots.figure import save_png


def plot_curves(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path,
                xlabel: str, ylabel: str, baseline: float | None = None) -> None:
    """Write a PNG with one ``label -> (xs, gaps)`` line each; ``baseline`` (the gap of the
    starting weights) as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, "o-", label=label)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle="--", label="starting weights")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    save_png(fig, path)
