"""Solution files: CVRPLIB ``.sol`` (``Route #k: ...`` lines and ``Cost``), TSPLIB ``.tour``,
and knapsack ``.sol`` (an ``Items:`` line with the chosen item ids, 1-based in file order, then
``Value`` and ``Weight``).

Writes are atomic: text goes to a temporary file in the same folder, then is renamed, so a
failed run never leaves a half-written solution behind. Every file routecli writes carries
:data:`~routecli.io.tsplib.WRITER_MARK` (a ``#`` comment line in a ``.sol``, which ``vrplib``
skips; the COMMENT of a ``.tour``), so it is never mistaken for a published best-known solution.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.errors import InstanceFormatError, display_path, excerpt
from routecli.io.text import is_number_token, text_lines
from routecli.io.tsplib import WRITER_MARK, format_tour, read_tour
from routecli.problems import (
    Instance,
    KPInstance,
    PDTSPInstance,
    Routes,
    Selection,
    Solution,
    Tour,
)


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


_IDS = re.compile(r"[0-9 \t\r\n]*")  # ids are ASCII digits: int() also reads "1_0" and "١٢"
_LONG_ID = re.compile(r"[0-9]{19,}")  # beyond int64 (the largest instance has 7-digit ids)


def parse_ids(text: str, where: str, source: str) -> np.ndarray:
    """The whitespace-separated node or item ids in ``text`` as int64, parsed without a Python
    object per id (a one-route solution of a large instance is one long line)."""
    if _IDS.fullmatch(text) is None:
        bad = next(tok for tok in text.split() if not (tok.isascii() and tok.isdigit()))
        raise InstanceFormatError(f"{source}: {where}: {excerpt(bad)} is not a node id "
                                  "(ids are written with the digits 0-9)")
    long = _LONG_ID.search(text)
    if long is not None:
        raise InstanceFormatError(f"{source}: {where}: id {excerpt(long.group())} is far beyond "
                                  "any instance")
    if not text or text.isspace():
        return np.zeros(0, np.int64)
    return np.fromstring(text, dtype=np.int64, sep=" ")


def stated_number(text: str, what: str, where: str, source: str) -> float:
    """The number a ``Cost`` / ``Value`` line states: finite, or the line is unreadable."""
    words = text.split()
    value = float(words[0]) if len(words) == 1 and is_number_token(words[0]) else math.nan
    if not math.isfinite(value):
        raise InstanceFormatError(f"{source}: {where}: {what} must be one finite number, got "
                                  f"{excerpt(text.strip())}")
    return value


def parse_sol(path: str | Path) -> tuple[Routes, float | None]:
    """Routes (customer ids as written: depot 0 omitted) and the stated cost, if any. Every
    line is a ``Route #k: ids`` line, a ``Cost`` line, a ``#`` comment or blank; any other
    line makes the file unreadable (a solution with a line dropped in is not the solution)."""
    source = display_path(path)
    routes: list[np.ndarray] = []
    cost: float | None = None
    for number, line in text_lines(path):
        # a route line may be hundreds of MB: split it once, strip only its short head
        head, colon, rest = line.partition(":")
        if head.lstrip().startswith("#") or not (head.strip() or colon):
            continue  # a comment or a blank line
        word = head.split(None, 1)[0].lower() if head.strip() else ""
        where = f"line {number}"
        if word == "route" and colon:
            routes.append(parse_ids(rest, where, source))
            continue
        line = line.strip()
        if word == "cost":
            if cost is not None:
                raise InstanceFormatError(f"{source}: {where}: a second Cost line; a solution "
                                          "states its cost once")
            cost = stated_number(line[len(line.split()[0]):].lstrip(" :\t"), "Cost", where, source)
        else:
            raise InstanceFormatError(f"{source}: {where}: cannot read {excerpt(line)} "
                                      "(expected 'Route #k: ids' or 'Cost value')")
    if not routes:
        raise InstanceFormatError(f"{source}: no 'Route #k:' lines")
    return Routes(routes), cost


def format_selection(instance: KPInstance, solution: Selection) -> str:
    items = np.sort(solution.items)
    weight = float(instance.weights[items].sum())
    return "\n".join([f"# {WRITER_MARK}", "Items: " + " ".join(str(int(i) + 1) for i in items),
                      f"Value {instance.cost(solution):.12g}", f"Weight {weight:.12g}"]) + "\n"


def parse_selection(path: str | Path, items: int) -> tuple[Selection, float | None]:
    """Chosen items (0-based) of a knapsack ``.sol`` and its stated ``Value``, if any; lines
    other than ``Items:``, ``Value``, ``Weight``, comments and blanks, and ids outside
    1..``items``, are errors."""
    source = display_path(path)
    chosen: list[np.ndarray] = []
    value: float | None = None
    stated: dict[str, int] = {}  # the line of each of Value and Weight
    found = False
    for number, line in text_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, colon, rest = line.partition(":")
        word = head.split()[0].lower()
        where = f"line {number}"
        if word == "items" and colon:
            chosen.append(parse_ids(rest, where, source))
            found = True
        elif word in ("value", "weight"):
            if word in stated:
                raise InstanceFormatError(f"{source}: {where}: a second {word.title()} line "
                                          f"(the first is line {stated[word]})")
            stated[word] = number
            number_stated = stated_number(line[len(line.split()[0]):].lstrip(" :\t"),
                                          word.title(), where, source)
            value = number_stated if word == "value" else value
        else:
            raise InstanceFormatError(f"{source}: {where}: cannot read {excerpt(line)} "
                                      "(expected 'Items: ids', 'Value v' or 'Weight w')")
    if not found:
        raise InstanceFormatError(f"{source}: no 'Items:' line")
    ids = np.concatenate(chosen)
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
        order = solution.order
        if isinstance(instance, PDTSPInstance):  # in the file's numbering
            order = instance.node_ids[order] - 1
        return format_tour(instance.name, order, cost)
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
            raise InstanceFormatError(f"{display_path(path)}: a {instance.problem.upper()} "
                                      "solution is a .tour file")
        order = read_tour(path, instance.metric.size)
        if isinstance(instance, PDTSPInstance):  # from the file's numbering
            node_of = np.empty(instance.size, np.int64)
            node_of[instance.node_ids - 1] = np.arange(instance.size)
            order = node_of[order]
        return Tour(order), None
    routes, stated = parse_sol(path)
    customers = instance.metric.size - 1
    for k, route in enumerate(routes.routes):
        outside = route[(route < 1) | (route > customers)]
        if outside.size:
            raise InstanceFormatError(f"{display_path(path)}: route {k + 1} visits customer "
                                      f"{outside[0]}; the instance has customers 1..{customers}")
    return routes, stated
