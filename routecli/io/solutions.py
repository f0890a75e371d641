"""Solution files: CVRPLIB ``.sol`` (``Route #k: ...`` lines and ``Cost``), TSPLIB ``.tour``,
and knapsack ``.sol`` (an ``Items:`` line with the chosen item ids, 1-based in file order, then
``Value`` and ``Weight``).

Writes are atomic: text goes to a temporary file in the same folder, then is renamed, so a
failed run never leaves a half-written solution behind. Every file routecli writes carries
:data:`~routecli.io.tsplib.WRITER_MARK` (a ``#`` comment line in a ``.sol``, which ``vrplib``
skips; the COMMENT of a ``.tour``), so it is never mistaken for a published best-known solution.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.errors import InstanceFormatError, excerpt
from routecli.io.text import read_text
from routecli.io.tsplib import WRITER_MARK, format_tour, read_tour
from routecli.problems import Instance, KPInstance, Routes, Selection, Solution, Tour


def format_sol(solution: Routes, cost: float) -> str:
    lines = [f"Route #{k + 1}: " + " ".join(str(int(c)) for c in route)
             for k, route in enumerate(solution.routes)]
    cost_text = f"{cost:.0f}" if float(cost).is_integer() else f"{cost:.6f}"
    return "\n".join([f"# {WRITER_MARK}", *lines, f"Cost {cost_text}"]) + "\n"


# The exact lines routecli writes at the head of a solution: the first line of a .sol, the
# COMMENT of a .tour (and the COMMENT of tours written before the mark existed). A line that
# merely contains the words (a user's "# NOT written by routecli") is not the mark.
_ROUTECLI_LINES = (re.compile(rf"# {WRITER_MARK}"),
                   re.compile(rf"COMMENT : Length [0-9.e+-]+, {WRITER_MARK}"),
                   re.compile(r"COMMENT\s*:.*\(routecli\)\s*"))


def written_by_routecli(path: str | Path) -> bool:
    """Whether ``path`` is a solution file routecli wrote (one of its first lines is exactly
    the mark routecli writes)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024).decode("latin-1")
    except OSError:
        return False
    return any(pattern.fullmatch(line.rstrip("\r")) for line in head.split("\n")[:5]
               for pattern in _ROUTECLI_LINES)


def parse_sol(path: str | Path) -> tuple[Routes, float | None]:
    """Routes (customer ids as written: depot 0 omitted) and the stated cost, if any."""
    source = str(path)
    routes: list[list[int]] = []
    cost: float | None = None
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        head, _, rest = line.partition(":")
        try:
            if head.lower().startswith("route"):
                routes.append([int(tok) for tok in rest.split()])
            elif head.lower().startswith("cost"):
                cost = float(line.split()[1] if not rest else rest.split()[0])
        except (ValueError, IndexError):
            raise InstanceFormatError(f"{source}: line {number}: cannot read {excerpt(line)}") from None
    if not routes:
        raise InstanceFormatError(f"{source}: no 'Route #k:' lines")
    return Routes(routes), cost


def format_selection(instance: KPInstance, solution: Selection) -> str:
    items = np.sort(solution.items)
    weight = float(instance.weights[items].sum())
    return "\n".join([f"# {WRITER_MARK}", "Items: " + " ".join(str(int(i) + 1) for i in items),
                      f"Value {instance.cost(solution):.12g}", f"Weight {weight:.12g}"]) + "\n"


def parse_selection(path: str | Path, items: int) -> tuple[Selection, float | None]:
    """Chosen items (0-based) of a knapsack ``.sol`` and its stated ``Value``, if any; ids
    outside 1..``items`` are an error."""
    source = str(path)
    chosen: list[int] = []
    value: float | None = None
    found = False
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition(":")
        word = line.split()[0].lower()
        try:
            if head.strip().lower() == "items":
                chosen += [int(tok) for tok in rest.split()]
                found = True
            elif word == "value":
                value = float(line.split()[1])
        except (ValueError, IndexError):
            raise InstanceFormatError(f"{source}: line {number}: cannot read {excerpt(line)}") from None
    if not found:
        raise InstanceFormatError(f"{source}: no 'Items:' line")
    ids = np.asarray(chosen, np.int64)
    outside = ids[(ids < 1) | (ids > items)]
    if outside.size:
        raise InstanceFormatError(f"{source}: item {outside[0]} does not exist; the instance has "
                                  f"items 1..{items}")
    return Selection(ids - 1), value


def format_solution(instance: Instance, solution: Solution) -> str:
    if isinstance(instance, KPInstance) and isinstance(solution, Selection):
        return format_selection(instance, solution)
    cost = instance.cost(solution)  # type: ignore[arg-type]
    if isinstance(solution, Tour):
        return format_tour(instance.name, solution.order, cost)
    if isinstance(solution, Routes):
        return format_sol(solution, cost)
    raise InstanceFormatError(f"cannot write a {type(solution).__name__} solution")


def solution_suffix(solution: Solution) -> str:
    return ".tour" if isinstance(solution, Tour) else ".sol"


def write_solution(path: str | Path, instance: Instance, solution: Solution) -> Path:
    """Write ``solution`` atomically; returns the path written."""
    path = Path(path)
    atomic_write_text(path, format_solution(instance, solution))
    return path


def read_solution(path: str | Path, instance: Instance) -> Solution:
    """Read a ``.tour`` (TSP, PDTSP) or ``.sol`` (routing problems with a depot, knapsacks)
    file."""
    return read_solution_and_cost(path, instance)[0]


def read_solution_and_cost(path: str | Path, instance: Instance) -> tuple[Solution, float | None]:
    """The solution in ``path`` and the cost the file states (a ``.sol``'s ``Cost`` line;
    ``None`` for tours and for files without one). Customer ids outside the instance are an
    error here, before anything indexes by them. A knapsack's stated cost is its ``Value``."""
    if isinstance(instance, KPInstance):
        return parse_selection(path, instance.size)
    if instance.problem in ("tsp", "pdtsp"):
        if not str(path).endswith(".tour"):
            raise InstanceFormatError(f"{path}: a {instance.problem.upper()} solution is a .tour file")
        return Tour(read_tour(path, instance.metric.size)), None
    routes, stated = parse_sol(path)
    customers = instance.metric.size - 1
    for k, route in enumerate(routes.routes):
        outside = route[(route < 1) | (route > customers)]
        if outside.size:
            raise InstanceFormatError(f"{path}: route {k + 1} visits customer {outside[0]}; the "
                                      f"instance has customers 1..{customers}")
    return routes, stated
