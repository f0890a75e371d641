"""The route picture of MiLoop's Figure 8: depot marked, one colour per route, gap in the title."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.plots.figure import save_png
from routecli.problems import Instance, Routes, Solution, Tour, gap


def plot_solution(instance: Instance, solution: Solution, path: str | Path,
                  bks: float | None = None, title: str | None = None) -> Path:
    """Draw ``solution`` over the instance's coordinates and save a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    coords = instance.metric.coords  # type: ignore[union-attr]
    if coords is None:
        raise ValueError(f"{instance.name} has no coordinates to draw (explicit matrix only)")
    xy = np.asarray(coords, np.float64)
    n = len(xy)
    # Big instances: thinner lines and no customer markers, or the picture turns into ink.
    width = 1.2 if n <= 300 else 0.6 if n <= 3000 else 0.25
    fig, ax = plt.subplots(figsize=(7, 7))
    if isinstance(solution, Tour):
        order = np.append(solution.order, solution.order[0])
        ax.plot(xy[order, 0], xy[order, 1], lw=width, color="tab:blue")
    elif isinstance(solution, Routes):
        cmap = plt.get_cmap("tab20")
        for k, route in enumerate(solution.routes):
            path_nodes = np.concatenate([[0], route, [0]])
            ax.plot(xy[path_nodes, 0], xy[path_nodes, 1], lw=width, color=cmap(k % 20))
    if n <= 3000:
        ax.scatter(xy[1:, 0], xy[1:, 1], s=max(1.0, 12.0 - n / 100), color="black", zorder=3)
    if instance.problem != "tsp":
        ax.scatter(xy[0, 0], xy[0, 1], s=90, marker="s", color="red", zorder=4, label="depot")
        ax.legend(loc="upper right")
    cost = instance.cost(solution)  # type: ignore[arg-type]
    heading = title or f"{instance.name} ({instance.problem.upper()}, n={instance.size})"
    detail = f"cost {cost:,.0f}" if float(cost).is_integer() else f"cost {cost:,.4f}"
    if bks is not None:
        detail += f", gap {gap(cost, bks):.2f}%"
    if isinstance(solution, Routes):
        detail += f", {len(solution)} routes"
    ax.set_title(f"{heading}\n{detail}")
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    return save_png(fig, path, dpi=130)
