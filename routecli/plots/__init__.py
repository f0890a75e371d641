"""PNG pictures of instances and solutions (matplotlib, Agg backend)."""

from routecli.plots.solution import plot_solution

__all__ = ["plot_solution"]
