"""The record of one solved instance: the ``solve --json`` object and ``solve --csv`` row
(:data:`SOLVE_FIELDS`, :func:`solve_record`), and the row of ``routecli bench`` and the solver
benchmarks (:class:`ResultRow`).

A bench row says what was solved (set, instance, file relative to the data root), by what (solver
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

from routecli.io.datasets import data_root
from routecli.results import strict_json
from routecli.results.provenance import Provenance
from routecli.results.store import ResultStore
from routecli.results.tables import write_table
from routecli.solvers import SolveResult
from routecli.stop import Criterion, describe


def portable_path(path: str | Path) -> str:
    """``path`` relative to the benchmark data folder (:func:`routecli.io.datasets.data_root`)
    or to the working folder when inside either; results
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

    def add_row(self, row: ResultRow, **extra: Any) -> dict[str, str] | None:
        """Append ``row`` (its own provenance) and the ``extra`` columns, unless a row of its
        key is stored (:meth:`~routecli.results.ResultStore.add_new`; then None)."""
        return self.add_new(**{**asdict(row), **extra})

    def results(self) -> list[ResultRow]:
        return [ResultRow.from_csv(r) for r in self.rows]


# The columns of ``solve --csv`` and the keys of each ``solve --json`` object, in order: what
# was solved, how (model, seed, its settings, the weights' digest, the routecli version), and
# what came out. Times: ``seconds`` is the instance's share of the command's wall clock
# (start-up and reading for the first, then each instance from the end of the one before),
# ``solve_seconds`` the solve (loading weights included), ``search_seconds`` the part
# --time-limit bounds; ``work_*``, ``stopped_by`` and ``note`` say how much of its plan the
# model ran (:class:`routecli.solvers.Effort`).
SOLVE_FIELDS = ("instance", "file", "problem", "size", "model", "seed", "settings",
                "checkpoint_sha256", "routecli_version", "objective", "cost", "bks",
                "bks_source", "gap_pct", "seconds", "solve_seconds", "search_seconds",
                "work_unit", "work_done", "work_planned", "stopped_by", "note", "feasible",
                "violations", "solution_file")
# What ``cost`` measures, per problem (routing problems not named: the route length).
OBJECTIVES = {"kp": "value of the chosen items (maximised)",
              "pcvrp": "length minus collected prizes"}


def solve_record(path: Path, result: SolveResult, source: str, written: Path | None,
                 seed: int, made: dict[str, Any], seconds: float) -> dict[str, Any]:
    """One instance's result with plain numbers (:data:`SOLVE_FIELDS`): the object ``--json``
    prints; ``made`` the settings, weights digest and version, ``seconds`` the instance's share
    of the command's wall clock."""
    effort = result.effort
    return {"instance": result.instance, "file": str(path), "problem": result.problem,
            "size": result.size, "model": result.model, "seed": seed, **made,
            "objective": OBJECTIVES.get(result.problem, "length"), "cost": result.cost,
            "bks": result.bks, "bks_source": source or None, "gap_pct": result.gap,
            "seconds": round(seconds, 4), "solve_seconds": round(result.seconds, 4),
            "search_seconds": None if effort is None else round(effort.seconds, 4),
            "work_unit": None if effort is None else effort.unit,
            "work_done": None if effort is None else effort.done,
            "work_planned": None if effort is None else effort.planned,
            "stopped_by": None if effort is None else effort.stopped_by,
            "note": None if effort is None else effort.note,
            "feasible": result.feasible,
            "violations": result.problems, "solution_file": None if written is None
            else str(written)}


def write_solve_csv(path: str | Path, records: list[dict[str, Any]]) -> None:
    """``solve --csv``: one row per :func:`solve_record`, the settings as strict JSON and the
    violations joined by ``; ``."""
    write_table(path, SOLVE_FIELDS,
                [{**record, "settings": strict_json.dumps(record["settings"], sort_keys=True),
                  "violations": "; ".join(record["violations"])} for record in records])
