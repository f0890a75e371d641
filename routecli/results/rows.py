"""The row of one solved instance, for ``routecli bench`` and the solver benchmarks.

A row says what was solved (set, instance, file relative to the data root), by what (solver
label, its settings as JSON, seed, time and iteration limits), what came out (cost, reference
value, gap in percent, seconds, feasibility and the first violations) and where the number
comes from (git commit, UTC date, the command line). :class:`ResultLog` is the
:class:`routecli.results.store.ResultStore` of such rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from routecli.io.files import data_root
from routecli.results.provenance import Provenance
from routecli.results.store import ResultStore
from routecli.solvers import SolveResult
from routecli.stop import Criterion, describe


def portable_path(path: str | Path) -> str:
    """``path`` relative to the benchmark data root (``../shared/benchdata`` by the rule of
    :func:`routecli.io.files.data_root`) or to the working folder when inside either; results
    never record a machine's absolute paths for those files."""
    resolved = Path(path).resolve()
    for base in (data_root(), Path.cwd()):
        if base is not None:
            try:
                return str(resolved.relative_to(Path(base).resolve()))
            except ValueError:
                continue
    return str(resolved)


@dataclass(frozen=True)
class ResultRow:
    """One solved instance (see the module docstring); ``gap_pct`` is in percent."""

    commit: str
    date: str
    command: str
    set: str
    instance: str
    file: str
    problem: str
    n: int
    solver: str
    settings: str
    seed: int
    time_limit: float | None
    iterations: int | None
    cost: float
    reference: float | None
    gap_pct: float | None
    seconds: float
    feasible: bool
    problems: str

    @classmethod
    def of(cls, result: SolveResult, *, set_name: str, file: str | Path | None, solver: str,
           settings: Any, seed: int, stop: Criterion | None,
           provenance: Provenance) -> ResultRow:
        """The row of one :class:`routecli.solvers.SolveResult`; ``settings`` a dataclass
        (or None), stored as JSON."""
        text = json.dumps(asdict(settings), sort_keys=True) if settings is not None else "{}"
        limits = describe(stop)
        return cls(provenance.commit, provenance.date, provenance.command, set_name,
                   result.instance, portable_path(file) if file is not None else "",
                   result.problem, result.size, solver, text, seed, limits["seconds"],
                   limits["iterations"],
                   result.cost, result.bks, result.gap, result.seconds, result.feasible,
                   "; ".join(result.problems[:3]))

    @classmethod
    def from_csv(cls, row: dict[str, str]) -> ResultRow:
        """A row of a results CSV."""

        def number(key: str) -> float | None:
            return float(row[key]) if row[key] not in ("", "None") else None

        limit, its = number("time_limit"), number("iterations")
        return cls(row["commit"], row["date"], row["command"], row["set"], row["instance"],
                   row["file"], row["problem"], int(row["n"]), row["solver"], row["settings"],
                   int(row["seed"] or 0), limit, None if its is None else int(its),
                   float(row["cost"]), number("reference"), number("gap_pct"),
                   float(row["seconds"]), row["feasible"] == "True", row["problems"])


COLUMNS = [f.name for f in fields(ResultRow)]


class ResultLog(ResultStore):
    """The store of :class:`ResultRow` rows, plus ``extra`` columns a script needs (e.g. a PCVRP
    prize offset); keyed by solver, settings, seed, limits and instance file."""

    KEY = ("solver", "settings", "seed", "time_limit", "iterations", "set", "instance", "file")

    def __init__(self, path: str | Path, extra: Iterable[str] = ()):
        super().__init__(path, [*COLUMNS, *extra], self.KEY)

    def add_row(self, row: ResultRow, **extra: Any) -> dict[str, str]:
        """Append ``row`` (its own provenance) and the ``extra`` columns."""
        return self.add(**{**asdict(row), **extra})

    def results(self) -> list[ResultRow]:
        return [ResultRow.from_csv(r) for r in self.rows]
