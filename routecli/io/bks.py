"""Best-known solution values: a packaged registry of TSPLIB optima and CVRPLIB X/AGS values.

``bks.csv`` holds only the published values (set, instance, n, value), as verified against
the public solution files; CVRPLIB values as of May 2024. TSPLIB ``CEIL_2D`` optima (dsj1000,
pla7397, pla33810, pla85900) are for the ceiling rule.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources
from pathlib import Path

from routecli.problems import Instance


@lru_cache(maxsize=1)
def registry() -> dict[str, tuple[str, int, float]]:
    """``instance name -> (set, n, best-known value)``."""
    text = resources.files("routecli.io").joinpath("bks.csv").read_text()
    return {row["instance"]: (row["set"], int(row["n"]), float(row["bks"]))
            for row in csv.DictReader(text.splitlines())}


def sibling_solution(path: str | Path, problem: str) -> Path | None:
    """``X.opt.tour`` / ``X.tour`` (TSP, PDTSP) or ``X.sol`` next to instance file ``X.*``."""
    p = Path(path)
    suffixes = (".opt.tour", ".tour") if problem in ("tsp", "pdtsp") else (".sol",)
    for candidate in (p.with_suffix(s) for s in suffixes):
        if candidate.is_file():
            return candidate
    return None


def best_known(instance: Instance, path: str | Path | None = None,
               given: float | None = None) -> tuple[float | None, str]:
    """Best-known value and where it came from: ``given``, a sibling solution file re-costed
    under the instance's own rule, or the registry (matched by instance name)."""
    if given is not None:
        return given, "--bks"
    if path is not None:
        sibling = sibling_solution(path, instance.problem)
        if sibling is not None:
            from routecli.io.solutions import read_solution
            from routecli.problems import validate

            solution = read_solution(sibling, instance)
            if not validate(instance, solution):
                return instance.cost(solution), sibling.name  # type: ignore[arg-type]
    entry = registry().get(instance.name)
    if entry is not None and entry[1] == instance.size:
        return entry[2], "registry"
    return None, ""
