"""Reading instances and solutions, writing solutions, best-known values.

``read_instance`` picks the reader from the file: TSPLIB (``TYPE : TSP``, ``.tsp``) through
:mod:`routecli.io.tsplib`, everything else (CVRPLIB/VRPLIB ``.vrp``, Solomon ``.txt``)
through :mod:`routecli.io.cvrplib`.
"""

from __future__ import annotations

import re
from pathlib import Path

from routecli.errors import InstanceFormatError
from routecli.io.bks import best_known, registry
from routecli.io.cvrplib import read_vrplib
from routecli.io.solutions import read_solution, solution_suffix, write_solution
from routecli.io.tsplib import read_text, read_tsp
from routecli.kernels.distance import RULES
from routecli.problems import Instance

ROUND_CHOICES = ("file", "none", *RULES)
_TSP_TYPE = re.compile(r"^\s*TYPE\s*:\s*TSP\b", re.IGNORECASE | re.MULTILINE)


def round_rule(option: str | None) -> str | None:
    """Map the CLI's ``--round`` value onto a distance rule (``None`` = the file's own)."""
    if option in (None, "file"):
        return None
    if option == "none":
        return "exact"
    if option not in RULES:
        raise InstanceFormatError(
            f"--round must be one of {', '.join(ROUND_CHOICES)}, got {option!r}")
    return option


def read_instance(path: str | Path, rounding: str | None = None) -> Instance:
    """Read any supported instance file; ``rounding`` as the CLI's ``--round``."""
    rule = round_rule(rounding)
    p = Path(path)
    if p.suffix.lower() == ".tsp" or (p.is_file() and _TSP_TYPE.search(read_text(p)[:2000])):
        return read_tsp(p, rule)
    return read_vrplib(p, rule)


__all__ = [
    "ROUND_CHOICES", "best_known", "read_instance", "read_solution", "registry",
    "solution_suffix", "write_solution",
]
