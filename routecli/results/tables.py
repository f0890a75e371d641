"""Tables written whole, not row by row, atomically (the file is the old one or the new one,
never a part): ``solve --csv`` (:func:`write_table`), compare-pe's reference costs, and the
tables of ``routecli analyze`` and ``routecli probe`` (:func:`write_rows`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from routecli.atomic import atomic_write_text
from routecli.results.provenance import git_commit
from routecli.results.store import text
from routecli.results.strict_json import finite_or_null, plain_number


def write_table(path: str | Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> None:
    """A whole CSV of ``columns`` (values as :func:`text` gives them), written atomically: the
    file is the old one or the new one, never a part."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows({c: text(row[c]) for c in columns} for row in rows)
    atomic_write_text(path, buffer.getvalue())


def write_rows(path: str | Path, rows: list[dict[str, Any]], meta: dict[str, Any],
               columns: Sequence[str] | None = None) -> None:
    """A table of ``rows`` (``columns``, default the first row's keys) as CSV (``.csv``: one
    line each) or as JSON (``meta`` with routecli's version and commit, then the rows; an
    undefined number is null); :func:`written_table` tells such a file."""
    path = Path(path)
    if path.suffix == ".json":
        meta = {"routecli": version("routecli"), "commit": git_commit(), **meta}
        content = json.dumps(finite_or_null({**meta, "rows": rows}), indent=2,
                             default=plain_number)
    else:
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=list(columns or rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        content = buffer.getvalue()
    atomic_write_text(path, content)


def written_table(path: Path, columns: Sequence[str]) -> bool:
    """Whether ``path`` is a table :func:`write_rows` wrote with ``columns`` (a CSV with that
    header; a JSON with routecli's version, the command and rows), so replacing it loses
    nothing of the user's."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            if path.suffix == ".csv":
                return fh.readline().rstrip("\r\n") == ",".join(columns)
            stored = json.load(fh)
    except (OSError, ValueError):
        return False
    return isinstance(stored, dict) and {"routecli", "command", "rows"} <= set(stored)
