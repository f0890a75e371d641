"""The packaged registry of best-known values, ``bks.csv``: per TSPLIB and CVRPLIB instance
name its set, size, distance rule, :func:`~routecli.problems.fingerprint.fingerprint` and
published value (when :mod:`routecli.io.bks` trusts one, and what :mod:`routecli.io.sources`
names as a public set's instance)."""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources
from typing import NamedTuple


class Entry(NamedTuple):
    """One registry row."""

    set: str
    n: int
    rule: str
    fingerprint: str
    value: float


@lru_cache(maxsize=1)
def registry() -> dict[str, Entry]:
    """``instance name -> Entry``."""
    text = resources.files("routecli.io").joinpath("bks.csv").read_text()
    return {row["instance"]: Entry(row["set"], int(row["n"]), row["rule"], row["fingerprint"],
                                   float(row["bks"]))
            for row in csv.DictReader(text.splitlines())}
