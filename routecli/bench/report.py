"""Benchmark reports: averages by size bucket (MiLoop Table 2 layout), markdown and a PNG."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from routecli.atomic import atomic_write_text
from routecli.plots.figure import save_png
from routecli.results import ResultRow as BenchRow

REPORT_FILE = "report.md"
PLOT_FILE = "gap_vs_size.png"
# The exact first line of every report.md and the Software text of every gap_vs_size.png that
# routecli bench writes: a rerun replaces only files carrying them.
REPORT_MARK = "<!-- written by routecli bench: a rerun replaces this file -->"
PLOT_SOFTWARE = "routecli bench"

# MiLoop Table 2's size groups: TSPLIB by nodes, CVRPLIB by customers.
BUCKETS: dict[str, list[tuple[float, float, str]]] = {
    "tsp": [(0, 1000, "(0,1K]"), (1000, 5000, "(1K,5K]"), (5000, math.inf, "(5K,100K)")],
    "cvrp": [(0, 1000, "(0,1K]"), (1000, 7000, "(1K,7K]"), (7000, math.inf, "(7K,30K]")],
}


def buckets_for(problem: str) -> list[tuple[float, float, str]]:
    return BUCKETS["tsp" if problem == "tsp" else "cvrp"]


def bucket_of(problem: str, n: int) -> str:
    for lo, hi, label in buckets_for(problem):
        if lo < n <= hi:
            return label
    raise ValueError(f"size {n} outside every bucket")


@dataclass(frozen=True)
class Summary:
    label: str
    count: int
    solved: int
    mean_gap: float | None
    mean_seconds: float | None


def _summary(label: str, rows: list[BenchRow]) -> Summary:
    gaps = [r.gap_pct for r in rows if r.feasible and r.gap_pct is not None]
    return Summary(label, len(rows), sum(r.feasible for r in rows),
                   sum(gaps) / len(gaps) if gaps else None,
                   sum(r.seconds for r in rows) / len(rows) if rows else None)


def summarise(rows: list[BenchRow]) -> dict[str, list[Summary]]:
    """Per problem: one summary per size bucket, then "All"."""
    out: dict[str, list[Summary]] = {}
    for problem in sorted({r.problem for r in rows}):
        mine = [r for r in rows if r.problem == problem]
        groups = [_summary(label, [r for r in mine if lo < r.n <= hi])
                  for lo, hi, label in buckets_for(problem)]
        out[problem] = [*groups, _summary("All", mine)]
    return out


def _gap(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}%"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def solver_label(rows: list[BenchRow]) -> str:
    """The solvers of a run's rows, as its column and legend name."""
    return ", ".join(sorted({r.solver for r in rows}))


def compare_label(rows: list[BenchRow], compare: list[BenchRow]) -> str:
    """The name of the compared run: its solvers, marked as the other run when they are the
    same as this run's."""
    name = solver_label(compare)
    return f"{name} (other run)" if name == solver_label(rows) else name


def markdown(rows: list[BenchRow], title: str, compare: list[BenchRow] | None = None,
             command: str | None = None, extra: str = "") -> str:
    """The report: mean gap by size bucket per problem, then ``extra`` (a protocol's
    section), then every row."""
    lines = [REPORT_MARK, f"# {title}", ""]
    if command:
        lines += ["Reproduce with:", "", f"    {command}", ""]
    for problem, summaries in summarise(rows).items():
        other = summarise(compare).get(problem) if compare else None
        head = [s.label for s in summaries]
        lines += [f"## {problem.upper()}: mean gap to BKS by size", "",
                  "| | " + " | ".join(head) + " | Solved # |",
                  "|---|" + "---|" * (len(head) + 1)]
        solved = f"{summaries[-1].solved}/{summaries[-1].count}"
        models = ", ".join(sorted({r.solver for r in rows if r.problem == problem}))
        lines.append(f"| {models} | " + " | ".join(_gap(s.mean_gap) for s in summaries)
                     + f" | {solved} |")
        if other is not None:
            osolved = f"{other[-1].solved}/{other[-1].count}"
            lines.append(f"| {compare_label(rows, compare or [])} | "
                         + " | ".join(_gap(s.mean_gap) for s in other) + f" | {osolved} |")
        lines.append("| mean time (s) | " + " | ".join(_seconds(s.mean_seconds) for s in summaries)
                     + " | |")
        lines.append("")
    if extra:
        lines += [extra, ""]
    total = sum(r.seconds for r in rows)
    lines += [f"Instances: {len(rows)}; solved (feasible): {sum(r.feasible for r in rows)}; "
              f"total solve time: {total:.1f} s.", "", "## Per instance", ""]
    seeds = len({r.seed for r in rows}) > 1  # a column of its own only when runs differ in it
    lines += ["| instance | " + ("seed | " if seeds else "") + "n | cost | BKS | gap | time (s) | "
              "feasible |", "|---|---|---|---|---|---|---|" + ("---|" if seeds else "")]
    for r in sorted(rows, key=lambda r: (r.problem, r.n, r.instance, r.seed)):
        lines.append(f"| {r.instance} | " + (f"{r.seed} | " if seeds else "") + f"{r.n} | {r.cost:g} | "
                     f"{'-' if r.reference is None else f'{r.reference:g}'} | {_gap(r.gap_pct)} | "
                     f"{r.seconds:.2f} | {'yes' if r.feasible else 'NO: ' + r.problems} |")
    return "\n".join(lines) + "\n"


def plot_gaps(rows: list[BenchRow], path: Path, title: str,
              compare: list[BenchRow] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for data, marker in ((rows, "o"), (compare, "x")):
        if not data:
            continue
        shown = [(r.n, r.gap_pct) for r in data if r.feasible and r.gap_pct is not None]
        if shown:
            label = solver_label(data) if data is rows else compare_label(rows, data)
            ax.scatter([n for n, _ in shown], [g for _, g in shown], s=14, marker=marker,
                       label=label, alpha=0.8)
    _size_axis(ax, [r.n for data in (rows, compare or []) for r in data])
    ax.set_xlabel("instance size n")
    ax.set_ylabel("gap to best-known (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    save_png(fig, path, software=PLOT_SOFTWARE)


def _size_axis(ax: Any, sizes: list[int]) -> None:
    """Instance sizes on x: a log axis labelled in plain integers when they span a decade or
    more, a linear one otherwise (a log axis over a narrow range gets labels like
    "1.02x10^2")."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

    if sizes and max(sizes) >= 10 * min(sizes):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def write_report(rows: list[BenchRow], out: Path, title: str,
                 compare: list[BenchRow] | None = None, command: str | None = None,
                 extra: str = "") -> Path:
    """Write ``out/report.md`` and ``out/gap_vs_size.png``; returns the markdown path."""
    report = out / REPORT_FILE
    atomic_write_text(report, markdown(rows, title, compare, command, extra))
    if any(r.feasible and r.gap_pct is not None for r in rows):
        plot_gaps(rows, out / PLOT_FILE, title, compare)
    return report
