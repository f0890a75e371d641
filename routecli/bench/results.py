"""One result-row schema for ``routecli bench`` and every script under ``benchmarks/``.

A row says what was solved (set, instance, file relative to the data root), by what (solver
label, its settings as JSON, seed, time and iteration limits), what came out (cost, reference
value, gap in percent, seconds, feasibility and the first violations) and where the number
comes from (git commit, UTC date, the command line). :class:`ResultLog` appends rows to a
CSV one at a time (flushed and fsync-ed), so a rerun resumes where the last one stopped.
"""

from __future__ import annotations

import csv
import json
import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from routecli.atomic import append_csv_rows
from routecli.bench.sets import data_root
from routecli.solvers import SolveResult
from routecli.stop import Criterion, describe


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from: the commit (``-dirty`` with uncommitted tracked changes),
    the UTC date and the command line."""

    commit: str
    date: str
    command: str

    @classmethod
    def current(cls, argv: list[str] | None = None) -> Provenance:
        return cls(git_commit(), datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   command_line(sys.argv if argv is None else argv))


def git_commit(cwd: Path | None = None) -> str:
    """``git rev-parse --short HEAD`` of the checkout routecli runs from (``unknown``
    outside one), with ``-dirty`` when tracked files have uncommitted changes."""
    here = cwd or Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty.strip() else "")


def command_line(argv: list[str]) -> str:
    """The command as a user would retype it: the program's file name, not its full path."""
    if not argv:
        return ""
    program = Path(argv[0])
    shown = program.name if program.is_absolute() else argv[0]
    return shlex.join([shown, *argv[1:]])


def portable_path(path: str | Path) -> str:
    """``path`` relative to the benchmark data root (``../shared/benchdata`` by the rule of
    :func:`routecli.bench.sets.data_root`) or to the working folder when inside either; results
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
        """A row of a results CSV; also reads the round-1 layout of ``routecli bench``
        (``model``, ``bks``, ``gap``, no provenance)."""

        def number(key: str, *old: str) -> float | None:
            value = next((row[k] for k in (key, *old) if k in row), "")
            return float(value) if value not in ("", "None") else None

        limit, its = number("time_limit"), number("iterations")
        return cls(row.get("commit", ""), row.get("date", ""), row.get("command", ""),
                   row.get("set", ""), row["instance"], row.get("file", ""), row["problem"],
                   int(row["n"]), row.get("solver", row.get("model", "")),
                   row.get("settings", "{}"), int(row.get("seed") or 0), limit,
                   None if its is None else int(its), float(row["cost"]),
                   number("reference", "bks", "ref"), number("gap_pct", "gap"),
                   float(row["seconds"]), row["feasible"] == "True", row.get("problems", ""))


COLUMNS = [f.name for f in fields(ResultRow)]


class ResultLog:
    """An append-only results CSV in the :class:`ResultRow` schema, plus ``extra`` columns a
    script needs (e.g. a PCVRP prize offset). Rows are flushed and fsync-ed one by one."""

    def __init__(self, path: str | Path, extra: Iterable[str] = ()):
        self.path = Path(path)
        self.columns = COLUMNS + [c for c in extra if c not in COLUMNS]
        self.rows: list[dict[str, str]] = []
        if self.path.exists():
            with open(self.path, newline="") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames and "commit" not in reader.fieldnames:
                    raise ValueError(f"{self.path} has another layout; write to a new file")
                self.rows = list(reader)

    def find(self, **key: Any) -> dict[str, str] | None:
        """The first stored row whose columns equal ``key`` (compared as text)."""
        want = {k: "" if v is None else str(v) for k, v in key.items()}
        return next((r for r in self.rows if all(r.get(k) == v for k, v in want.items())), None)

    def add(self, row: ResultRow, **extra: Any) -> dict[str, str]:
        """Append one row (under a lock: processes may share the file, e.g. one solver per
        core)."""
        record = {**asdict(row), **extra}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_csv_rows(self.path, self.columns, [record])
        stored = {k: "" if v is None else str(v) for k, v in record.items()}
        self.rows.append(stored)
        return stored

    def results(self) -> list[ResultRow]:
        return [ResultRow.from_csv(r) for r in self.rows]
