"""Shared CLI plumbing: consoles and the option values several commands accept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

CANDIDATES_HELP = ("MiLoop: attend only to the K nearest allowed nodes per step (default: 200 "
                   "for TSP, 400 for CVRP above 1000 nodes; 0 = always all nodes).")

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{gap:.2f}%"


def fmt_cost(cost: float | None) -> str:
    if cost is None:
        return "-"
    return f"{cost:,.0f}" if float(cost).is_integer() else f"{cost:,.4f}"


def model_options(**given: Any) -> dict[str, Any]:
    """The model options a user actually gave (None and unset flags dropped), for
    :func:`routecli.solvers.make_settings`, which refuses those the model does not take."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in given.items()
            if v is not None and v is not False}
