"""Benchmark reports: averages by size bucket (MiLoop Table 2 layout), markdown and a PNG."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from routecli.bench.runner import BenchRow
from routecli.plots.figure import save_png

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
    mean_seconds: float


def _summary(label: str, rows: list[BenchRow]) -> Summary:
    gaps = [r.gap_pct for r in rows if r.feasible and r.gap_pct is not None]
    return Summary(label, len(rows), sum(r.feasible for r in rows),
                   sum(gaps) / len(gaps) if gaps else None,
                   sum(r.seconds for r in rows) / len(rows) if rows else 0.0)


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


def markdown(rows: list[BenchRow], title: str, compare: list[BenchRow] | None = None,
             compare_name: str = "compare", command: str | None = None) -> str:
    lines = [f"# {title}", ""]
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
            lines.append(f"| {compare_name} | " + " | ".join(_gap(s.mean_gap) for s in other)
                         + f" | {osolved} |")
        lines.append("| mean time (s) | " + " | ".join(f"{s.mean_seconds:.2f}" for s in summaries)
                     + " | |")
        lines.append("")
    total = sum(r.seconds for r in rows)
    lines += [f"Instances: {len(rows)}; solved (feasible): {sum(r.feasible for r in rows)}; "
              f"total solve time: {total:.1f} s.", "", "## Per instance", "",
              "| instance | n | cost | BKS | gap | time (s) | feasible |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.problem, r.n, r.instance)):
        lines.append(f"| {r.instance} | {r.n} | {r.cost:g} | "
                     f"{'-' if r.reference is None else f'{r.reference:g}'} | {_gap(r.gap_pct)} | "
                     f"{r.seconds:.2f} | {'yes' if r.feasible else 'NO: ' + r.problems} |")
    return "\n".join(lines) + "\n"


def plot_gaps(rows: list[BenchRow], path: Path, title: str,
              compare: list[BenchRow] | None = None, compare_name: str = "compare") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for data, name, marker in ((rows, None, "o"), (compare, compare_name, "x")):
        if not data:
            continue
        shown = [(r.n, r.gap_pct) for r in data if r.feasible and r.gap_pct is not None]
        if shown:
            label = name or ", ".join(sorted({r.solver for r in data}))
            ax.scatter([n for n, _ in shown], [g for _, g in shown], s=14, marker=marker,
                       label=label, alpha=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("instance size n")
    ax.set_ylabel("gap to best-known (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    save_png(fig, path)


def write_report(rows: list[BenchRow], out: Path, title: str,
                 compare: list[BenchRow] | None = None, compare_name: str = "compare",
                 command: str | None = None) -> Path:
    """Write ``out/report.md`` and ``out/gap_vs_size.png``; returns the markdown path."""
    report = out / "report.md"
    report.write_text(markdown(rows, title, compare, compare_name, command))
    if any(r.feasible and r.gap_pct is not None for r in rows):
        plot_gaps(rows, out / "gap_vs_size.png", title, compare, compare_name)
    return report
