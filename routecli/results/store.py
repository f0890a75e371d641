"""The one result store: an append-only CSV of keyed rows, each with its provenance.

The results files that grow as work finishes are :class:`ResultStore` files: ``routecli
bench``'s ``results.csv`` (:class:`routecli.results.ResultLog`), ``routecli
compare-pe``'s ``rows.csv`` and ``untrained.csv`` (:mod:`routecli.experiments.pe.pairs`), the PE
learning curves' ``curve.csv`` (:mod:`routecli.experiments.pe.curve`) and the row files of the
scripts under ``benchmarks/`` (``ResultLog`` or ``ResultStore``; ``learning_curve.py`` and
``fuzz_inputs.py`` among them). Rows are keyed by what
ran, its settings and the instance (its :func:`~routecli.problems.fingerprint.fingerprint`
or file), each appended under an exclusive
file lock and fsync-ed with the git commit, the UTC date and the command line
(:class:`Provenance`). A rerun skips the keys already there, so a run killed at any point
resumes without losing or repeating a row (a row torn by the kill is dropped). A file of an
earlier layout (some columns the store has since gained missing, the key columns there) reads
as it is and is rewritten in the store's columns, atomically, at its next row: a new result
field is one column more in the code that writes it. :meth:`ResultStore.add_new` checks the
key under the file lock, so a key is written once even when two processes finish the same
work. Long work is a list of tasks (:mod:`routecli.tasks`) whose rows the driving process
appends as each task finishes; ``routecli bench`` gives its folder one writer with a lock
(:func:`routecli.atomic.sole_writer`), and the PE learning curves divide their (PE, seed)
pairs among processes with :func:`routecli.atomic.claim`, a lock the kernel releases when its
holder dies.

compare-pe's per-instance ``costs.csv`` is a store without provenance columns
(``provenance=False``): its rows are keyed by (PE, seed, instance) and their ``rows.csv`` row
holds where they come from. A table written once, not row by row (``solve --csv``, a run's
reference costs, an analysis table) is :mod:`routecli.results.tables`.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from routecli.atomic import append_csv_rows
from routecli.errors import RoutecliError
from routecli.results.provenance import PROVENANCE, Provenance


class ResultStoreError(RoutecliError):
    """A results file that another layout or run wrote."""


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV written row by row (none when it is missing), a last line torn by a
    killed writer left out."""
    return _parse(Path(path))[1]


def _parse(path: Path, text: str | None = None) -> tuple[list[str] | None, list[dict[str, str]]]:
    """The header and the complete rows of ``text`` (default: the file's)."""
    if text is None:
        if not path.exists():
            return None, []
        with open(path, newline="") as fh:
            text = fh.read()
    reader = csv.DictReader(io.StringIO(text[: text.rfind("\n") + 1]))
    rows = list(reader)
    return (None if reader.fieldnames is None else list(reader.fieldnames)), rows


class ResultStore:
    """An append-only results CSV: ``columns`` after the provenance columns, rows keyed by the
    ``key`` columns (what ran, its settings, the instance). Opening it reads what an earlier
    run stored; :meth:`add` appends one row under a file lock, flushed and fsync-ed, so
    processes may share the file and a killed run resumes by skipping :meth:`done` keys.

    A file of an earlier layout, whose header is some of the columns (all the key columns
    among them), in any order (before the provenance or a newer field was recorded), reads as
    it is, the absent columns empty, and the first :meth:`add` rewrites it in the columns,
    atomically, saying so on stderr; any other header is refused.

    ``provenance``: the :class:`Provenance` its rows record (default: this run's, taken at the
    first row), or ``False`` for a file of ``columns`` alone whose rows another store's row
    vouches for."""

    def __init__(self, path: str | Path, columns: Iterable[str], key: Iterable[str],
                 provenance: Provenance | bool | None = None):
        self.path = Path(path)
        self.recorded = PROVENANCE if provenance is not False else []
        self.columns = self.recorded + [c for c in dict.fromkeys(columns) if c not in PROVENANCE]
        self.key = list(key)
        if unknown := [c for c in self.key if c not in self.columns]:
            raise ValueError(f"key columns {unknown} are not columns of {self.path}")
        self.provenance = provenance if isinstance(provenance, Provenance) else None
        self.rows: list[dict[str, str]] = []
        self.reload()

    def reload(self) -> None:
        """Read the rows other processes have stored since (a torn last line is left out)."""
        self.rows = self._rows(*_parse(self.path))

    def _rows(self, header: list[str] | None,
              rows: list[dict[str, str]]) -> list[dict[str, str]]:
        """``rows`` read under ``header``, in the columns."""
        if header is None or header == self.columns:
            return rows
        if not (set(self.key) <= set(header) <= set(self.columns)) or len(set(header)) < len(header):
            raise ResultStoreError(f"{self.path} has the columns {','.join(header)}, "
                                   f"not {','.join(self.columns)}; write to a new file")
        return [{c: r.get(c, "") for c in self.columns} for r in rows]

    def _migrate(self, text: str) -> str:
        """``text``, a file of an earlier layout, in the columns (for :meth:`add`)."""
        header, rows = _parse(self.path, text)
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=self.columns)
        writer.writeheader()
        writer.writerows(self._rows(header, rows))
        print(f"note: {self.path}: rewrote its {len(rows)} rows of columns "
              f"{','.join(header or [])} in the columns {','.join(self.columns)} "
              "(empty where not recorded)", file=sys.stderr)
        return buffer.getvalue()

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
        return self.add_rows([values])[0]

    def add_new(self, **values: Any) -> dict[str, str] | None:
        """:meth:`add` unless a row of the same key is stored (then None); see
        :meth:`add_rows`."""
        written = self.add_rows([values], new_only=True)
        return written[0] if written else None

    def add_rows(self, rows: Iterable[dict[str, Any]],
                 new_only: bool = False) -> list[dict[str, str]]:
        """Append rows under one lock and one fsync (provenance as :meth:`add`); returns those
        written. ``new_only``: leave out the rows whose key the file holds, read under the
        lock (another process may have stored it since this one read the file), and read the
        rows again when any was left out."""
        if self.recorded:
            self.provenance = self.provenance or Provenance.current()
            made = asdict(self.provenance)
        else:
            made = {}
        records = [{**made, **values} for values in rows]
        for record in records:
            if missing := [c for c in self.columns if c not in record]:
                raise ValueError(f"row for {self.path} lacks {missing}")
        lines = [{c: record[c] for c in self.columns} for record in records]
        written = lines

        def unstored(content: str, given: list[dict[str, Any]]) -> list[dict[str, Any]]:
            nonlocal written
            header, present = _parse(self.path, content)
            have = {self._key_of(r) for r in self._rows(header, present)}
            written = [r for r in given if self._key_of(r) not in have]
            return written

        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_csv_rows(self.path, self.columns, lines, migrate=self._migrate,
                        keep=unstored if new_only else None)
        if len(written) < len(lines):
            self.reload()
            return [{c: text(r[c]) for c in self.columns} for r in written]
        stored = [{c: text(r[c]) for c in self.columns} for r in written]
        self.rows.extend(stored)
        return stored


def text(value: Any) -> str:
    """A value as the CSV stores it (None as empty)."""
    return "" if value is None else str(value)
