"""Shared CLI plumbing: consoles and the option values several commands accept."""

from __future__ import annotations

from rich.console import Console

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{gap:.2f}%"


def fmt_cost(cost: float | None) -> str:
    if cost is None:
        return "-"
    return f"{cost:,.0f}" if float(cost).is_integer() else f"{cost:,.4f}"
