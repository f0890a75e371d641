"""PNG pictures of instances, solutions and learning curves (matplotlib, Agg backend)."""

from routecli.plots.curves import plot_curves
from routecli.plots.solution import plot_solution

__all__ = ["plot_curves", "plot_solution"]
