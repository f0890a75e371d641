"""Shared CLI plumbing: consoles and the option values several commands accept."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from routecli.errors import OptionError
from routecli.solvers import DECODES, SolveOptions

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


def solve_options(decode: str, starts: int, augment: bool, checkpoint: Path | None,
                  candidates: int | None, pe: str | None, policy: str | None, polish: bool,
                  threads: int | None, device: str = "cpu") -> SolveOptions:
    """The solver options ``solve`` and ``bench`` share, checked."""
    if decode not in DECODES:
        raise OptionError(f"--decode must be one of {', '.join(DECODES)}, got {decode!r}")
    return SolveOptions(decode=decode, starts=starts, augment=augment,
                        checkpoint=str(checkpoint) if checkpoint else None,
                        candidates=candidates, pe=pe, policy=policy, polish=polish,
                        device=device, threads=threads)
