"""``routecli analyze anisometry|entropy``: route statistics of PyVRP reference solutions, printed
beside the PE paper's values (Table 1; Section 3.1)."""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from routecli.analysis.budget import describe_factors
from routecli.cli import choices
from routecli.cli.common import JOBS_HELP, console, new_app
from routecli.cli.outputs import check_replaceable, output_path
from routecli.errors import OptionError, RoutecliError
from routecli.limits import MAX_FACTOR, MAX_INSTANCES, MAX_JOBS, MIN_FACTOR
from routecli.resources import SEED_MAX

if TYPE_CHECKING:
    from routecli.problems import Instance, Routes, Tour

app = new_app("Measure the structure of near-optimal routes (PE paper Section 3.1).")

NUM_HELP = "Instances per set."
SEED_HELP = "Seed of the instance generator."
BUDGET_HELP = ("PyVRP budget of the reference solutions, times the gap-grade reference budget "
               "(iterations per problem and size, the same on a busy machine as on a quiet one; "
               "doubling it gains < 0.1% in cost). The default, " + describe_factors() + ", "
               "is enough for route statistics and ships with routecli for the default sets; "
               "1 gives gap-grade references. References are cached, so "
               "a rerun with the same settings is fast.")
SET_HELP = ("Instance set <problem>-<size>, problem one of " + ", ".join(choices.SET_PROBLEMS)
            + " (e.g. cvrp-100, pdtsp-51)")
SETS_HELP = SET_HELP + "; repeatable or comma-separated."
OUT_HELP = ("Also write the table to this .csv or .json file (an existing file only if "
            "routecli wrote it).")
ANISOMETRY_COLUMNS = ["set", "instances", "reference", "routes", "cv", "cv_paper", "max_min",
                      "max_min_paper", "mad", "mad_paper", "cv_median", "max_min_median",
                      "mad_median"]
MAX_BINS = 100_000  # angular sectors: far finer than any set's customers resolve


def parse_sets(values: list[str]) -> list[str]:
    """Set names from repeated and comma-separated ``--set`` values, validated
    (``OptionError`` on a bad one)."""
    from routecli.analysis.data import parse_set

    names = [s.strip().lower() for value in values for s in value.split(",") if s.strip()]
    if not names:
        raise OptionError("--set is empty")
    for name in names:
        try:
            parse_set(name)
        except ValueError as exc:
            raise OptionError(str(exc)) from None
    return names


def one_set(value: str) -> str:
    """The single set a command works on (``probe``, ``plot pe``)."""
    names = parse_sets([value])
    if len(names) > 1:
        raise OptionError(f"--set takes one set here, got {len(names)}: {', '.join(names)}")
    return names[0]


def check_out(out: Path | None, columns: list[str]) -> None:
    """Fail before any work if ``--out`` has a suffix we cannot write, or names a file that
    routecli did not write: a CSV whose header is not ``columns`` (this table's), a JSON
    without routecli's version in it (see :func:`write_rows`)."""
    if out is None:
        return
    if out.suffix not in (".csv", ".json"):
        raise OptionError(f"--out must end in .csv or .json, got {out}")
    from routecli.results.tables import written_table

    check_replaceable(out, None, "--out", lambda path: written_table(path, columns))


def load(name: str, num: int, seed: int, ref_budget: float | None,
         jobs: int) -> tuple[list[Instance], list[Routes | Tour]]:
    """Instances and reference solutions of set ``name``; the references still to compute are
    announced (and shown as a bar) by :func:`routecli.baselines.reference.reference_solutions`,
    cached ones are read without a word."""
    from routecli.analysis.data import default_budget, reference_set
    from routecli.problems import InfeasibleSolutionError

    budget = default_budget(name, ref_budget)
    console.print(f"[dim]{name}: {num} instances, PyVRP references on a budget of "
                  f"{budget.iterations:,} iterations ({budget.no_improvement:,} without "
                  f"improvement)[/dim]")
    try:
        return reference_set(name, num, seed=seed, budget=budget, jobs=jobs,
                             progress=sys.stderr.isatty())
    except InfeasibleSolutionError as exc:
        raise RoutecliError(f"{name}: a PyVRP reference solution failed validation: {exc}") \
            from None


def reference_settings(names: list[str], ref_budget: float | None) -> dict[str, dict[str, Any]]:
    """The reference settings of each set, as result files record them."""
    from routecli.analysis.data import default_budget

    return {name: default_budget(name, ref_budget).describe() for name in names}


def command_line() -> str:
    return "routecli " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def write_rows(out: Path | None, rows: list[dict], meta: dict, columns: list[str]) -> None:
    """Write ``rows`` (``columns`` each, as :func:`check_out` was told) to ``--out``
    (:func:`routecli.results.write_rows`) and say so."""
    if out is None:
        return
    from routecli.results import write_rows as write

    write(out, rows, meta, columns)
    console.print(f"wrote {out}")


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}"


@app.command()
def anisometry(
    sets: list[str] = typer.Option(list(choices.TABLE1_SETS), "--set", metavar="SET",
                                   help=SETS_HELP),
    num: int = typer.Option(1000, "--num", min=1, max=MAX_INSTANCES, metavar="N", help=NUM_HELP),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, metavar="N", help=SEED_HELP),
    ref_budget: float = typer.Option(None, "--ref-budget", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help=BUDGET_HELP),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, max=MAX_JOBS, metavar="N", help=JOBS_HELP),
    include_return: bool = typer.Option(False, "--include-return", help="Fit d_i against i "
                                        "over the whole closed route, the return to the depot "
                                        "included (default: departure and customers only)."),
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", parser=output_path,
                             help=OUT_HELP),
) -> None:
    """Anisometry of reference routes (PE paper Table 1).

    Per route: the CV of consecutive edge lengths, the max/min edge ratio, and the MAD of the
    residuals of a linear fit of cumulative distance d_i against the index i (in units of the
    mean edge length); averaged over all routes of the set."""
    from rich.table import Table

    from routecli.analysis.anisometry import PAPER_TABLE1
    from routecli.analysis.anisometry import anisometry as measure_anisometry
    from routecli.analysis.data import default_budget

    names = parse_sets(sets)
    check_out(out, ANISOMETRY_COLUMNS)
    rows: list[dict[str, Any]] = []
    for name in names:
        stats = measure_anisometry(*load(name, num, seed, ref_budget, jobs), include_return)
        paper = PAPER_TABLE1.get(name, (None, None, None))
        rows.append({"set": name, "instances": num,
                     "reference": default_budget(name, ref_budget).key,
                     "routes": int(stats["routes"]),
                     "cv": stats["cv"], "cv_paper": paper[0],
                     "max_min": stats["max_min"], "max_min_paper": paper[1],
                     "mad": stats["mad"], "mad_paper": paper[2],
                     "cv_median": stats["cv_median"], "max_min_median": stats["max_min_median"],
                     "mad_median": stats["mad_median"]})
    table = Table(title="Anisometry of PyVRP reference routes (ours | PE paper Table 1)")
    for col in ("set", "routes", "CV", "paper", "max/min", "paper", "MAD", "paper"):
        table.add_column(col, justify="left" if col == "set" else "right")
    for r in rows:
        table.add_row(r["set"], str(r["routes"]), fmt(r["cv"], 2), fmt(r["cv_paper"], 2),
                      fmt(r["max_min"], 1), fmt(r["max_min_paper"], 1), fmt(r["mad"], 2),
                      fmt(r["mad_paper"], 2))
    console.print(table)
    console.print(f"[dim]{command_line()}[/dim]")
    write_rows(out, rows, {"command": command_line(), "seed": seed,
                           "include_return": include_return,
                           "references": reference_settings(names, ref_budget)},
               ANISOMETRY_COLUMNS)


@app.command()
def entropy(
    sets: list[str] = typer.Option(list(choices.ENTROPY_SETS), "--set", metavar="SET",
                                   help=SETS_HELP),
    bins: int = typer.Option(choices.ENTROPY_BINS, "--bins", min=2, max=MAX_BINS, metavar="N",
                             help="Angular sectors of the histogram (16 = the sectors XPE "
                             "resolves with K = 4)."),
    min_count: int = typer.Option(choices.ENTROPY_MIN_COUNT, "--min-count", min=1,
                                  max=MAX_INSTANCES, metavar="N",
                                  help="Leave (set, k) cells with fewer customers out of the "
                                  "grid mean and minimum (marked * in the table): small "
                                  "samples bias the entropy low."),
    num: int = typer.Option(1000, "--num", min=1, max=MAX_INSTANCES, metavar="N", help=NUM_HELP),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, metavar="N", help=SEED_HELP),
    ref_budget: float = typer.Option(None, "--ref-budget", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help=BUDGET_HELP),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, max=MAX_JOBS, metavar="N", help=JOBS_HELP),
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", parser=output_path,
                             help=OUT_HELP),
) -> None:
    """Angular entropy at each within-route position (PE paper Section 3.1).

    For each within-route position k = 2..15 (k = 2 is the first customer), the normalised
    entropy H / log(bins) of the depot-relative polar angles of the customers at position k,
    pooled over all routes of the set; then the mean and the minimum over the (set, k) grid
    (paper: 0.992 and 0.953)."""
    import warnings

    import numpy as np
    from rich.table import Table

    from routecli.analysis.entropy import PAPER_MEAN, PAPER_MIN, POSITIONS, angular_entropy

    names = parse_sets(sets)
    columns = ["k", *(f"{n}_count" for n in names), *names]
    check_out(out, columns)
    per_set = {name: angular_entropy(*load(name, num, seed, ref_budget, jobs), bins=bins)
               for name in names}
    rows: list[dict[str, Any]] = [{"k": k, **{f"{n}_count": per_set[n][k][0] for n in names},
                                   **{n: per_set[n][k][1] for n in names}} for k in POSITIONS]
    grid = np.array([[per_set[n][k][1] for n in names] for k in POSITIONS])
    counts = np.array([[per_set[n][k][0] for n in names] for k in POSITIONS])
    kept = np.where(counts >= min_count, grid, np.nan)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a set may have no cell kept
        mean, low = float(np.nanmean(kept)), float(np.nanmin(kept))
        set_mean, set_min = np.nanmean(kept, 0), np.nanmin(kept, 0)
    rows.append({"k": "mean", **dict.fromkeys(f"{n}_count" for n in names),
                 **dict(zip(names, set_mean.tolist(), strict=True))})
    rows.append({"k": "min", **dict.fromkeys(f"{n}_count" for n in names),
                 **dict(zip(names, set_min.tolist(), strict=True))})
    table = Table(title=f"Normalised angular entropy at within-route position k ({bins} sectors)")
    table.add_column("k", justify="right")
    for n in names:
        table.add_column(n, justify="right")
    for k, line, count in zip(POSITIONS, grid, counts, strict=True):
        table.add_row(str(k), *(fmt(v) + ("*" if c < min_count else " ")
                                for v, c in zip(line, count, strict=True)))
    table.add_section()
    table.add_row("mean", *(fmt(v) + " " for v in set_mean))
    table.add_row("min", *(fmt(v) + " " for v in set_min))
    console.print(table)
    console.print(f"grid mean {mean:.3f} (paper {PAPER_MEAN}), grid minimum {low:.3f} "
                  f"(paper {PAPER_MIN}); * = fewer than {min_count} customers, not counted")
    console.print(f"[dim]{command_line()}[/dim]")
    write_rows(out, rows, {"command": command_line(), "seed": seed, "bins": bins,
                           "min_count": min_count,
                           "mean": mean, "min": low, "paper_mean": PAPER_MEAN,
                           "paper_min": PAPER_MIN,
                           "references": reference_settings(names, ref_budget)}, columns)
