"""One result-row schema for ``routecli bench`` and every script under ``benchmarks/``.

A row says what was solved (set, instance, file relative to the data root), by what (solver
label, its settings as JSON, seed, time and iteration limits), what came out (cost, reference
value, gap in percent, seconds, feasibility and the first violations) and where the number
comes from (git commit, UTC date, the command line).

:class:`ResultStore` is the one way results are written: an append-only CSV whose rows are
keyed by what ran, its settings and the instance (its fingerprint or file), each row appended
under a file lock and fsync-ed with the commit, date and command; a rerun skips the keys
already there, so a run killed at any point resumes without losing or repeating a row (a row
torn by the kill is dropped). :class:`ResultLog` is the store of :class:`ResultRow` rows.
"""

from __future__ import annotations

import csv
import io
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
from routecli.errors import RoutecliError
from routecli.solvers import SolveResult, Stop


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
           settings: Any, seed: int, stop: Stop, provenance: Provenance) -> ResultRow:
        """The row of one :class:`routecli.solvers.SolveResult`; ``settings`` a dataclass
        (or None), stored as JSON."""
        text = json.dumps(asdict(settings), sort_keys=True) if settings is not None else "{}"
        return cls(provenance.commit, provenance.date, provenance.command, set_name,
                   result.instance, portable_path(file) if file is not None else "",
                   result.problem, result.size, solver, text, seed, stop.seconds, stop.iterations,
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


PROVENANCE = [f.name for f in fields(Provenance)]


class ResultStoreError(RoutecliError):
    """A results file that another layout or run wrote."""


class ResultStore:
    """An append-only results CSV: ``columns`` after the provenance columns, rows keyed by the
    ``key`` columns (what ran, its settings, the instance). Opening it reads what an earlier
    run stored; :meth:`add` appends one row under a file lock, flushed and fsync-ed, so
    processes may share the file and a killed run resumes by skipping :meth:`done` keys."""

    def __init__(self, path: str | Path, columns: Iterable[str], key: Iterable[str],
                 provenance: Provenance | None = None):
        self.path = Path(path)
        self.columns = PROVENANCE + [c for c in dict.fromkeys(columns) if c not in PROVENANCE]
        self.key = list(key)
        if unknown := [k for k in self.key if k not in self.columns]:
            raise ValueError(f"key columns {unknown} are not columns of {self.path}")
        self.provenance = provenance
        self.rows: list[dict[str, str]] = []
        self.reload()

    def reload(self) -> None:
        """Read the rows other processes have stored since (a torn last line is left out)."""
        if not self.path.exists():
            return
        with open(self.path, newline="") as fh:
            text = fh.read()
        reader = csv.DictReader(io.StringIO(text[: text.rfind("\n") + 1]))
        if reader.fieldnames is not None and list(reader.fieldnames) != self.columns:
            raise ResultStoreError(f"{self.path} has the columns {','.join(reader.fieldnames)}, "
                                   f"not {','.join(self.columns)}; write to a new file")
        self.rows = list(reader)

    def _key_of(self, values: dict[str, Any]) -> tuple[str, ...]:
        return tuple(text(values[k]) for k in self.key)

    def get(self, **key: Any) -> dict[str, str] | None:
        """The stored row of ``key`` (every key column given)."""
        want = self._key_of(key)
        return next((r for r in self.rows if self._key_of(r) == want), None)

    def done(self, **key: Any) -> bool:
        return self.get(**key) is not None

    def find(self, **match: Any) -> dict[str, str] | None:
        """The first stored row whose columns equal ``match`` (compared as text)."""
        want = {k: text(v) for k, v in match.items()}
        return next((r for r in self.rows if all(r.get(k) == v for k, v in want.items())), None)

    def add(self, **values: Any) -> dict[str, str]:
        """Append one row (provenance filled in from this run unless given)."""
        provenance = self.provenance = self.provenance or Provenance.current()
        record = {**asdict(provenance), **values}
        if missing := [c for c in self.columns if c not in record]:
            raise ValueError(f"row for {self.path} lacks {missing}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_csv_rows(self.path, self.columns, [{c: record[c] for c in self.columns}])
        stored = {c: text(record[c]) for c in self.columns}
        self.rows.append(stored)
        return stored


def text(value: Any) -> str:
    """A value as the CSV stores it (None as empty)."""
    return "" if value is None else str(value)


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
