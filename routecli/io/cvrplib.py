"""CVRPLIB / VRPLIB instances (``.vrp``) and Solomon files (``.txt``): CVRP, VRPTW or PCVRP.

The files are split by :mod:`routecli.io.text` (the TSPLIB layout VRPLIB extends) rather than
by the ``vrplib`` package, whose parser loses line numbers, ends a file at any line containing
``EOF``, turns garbage into ``-1`` in Solomon files and raises multi-line messages. Every number
is checked (finite, within :func:`~routecli.io.text.magnitude_bound`, demands, capacity, times
and prizes non-negative) and an error names its line and field. Edge weights are never
materialised for coordinate files: the instance's :class:`~routecli.problems.Metric` computes
them under the file's rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.errors import InstanceFormatError, excerpt
from routecli.io.text import (
    EXACT,
    Section,
    Spec,
    check_single_depot,
    check_values,
    coordinate_metric,
    dimension,
    first_row,
    magnitude_bound,
    node_table,
    parse,
    parse_number,
)
from routecli.io.tsplib import edge_weight_rule, instance_metric
from routecli.problems import CVRPInstance, Instance, PCVRPInstance, VRPTWInstance

SPEC_KEYS = {
    "NAME", "COMMENT", "TYPE", "DIMENSION", "CAPACITY", "EDGE_WEIGHT_TYPE", "EDGE_WEIGHT_FORMAT",
    "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE", "VEHICLES", "DISTANCE",
    "SERVICE_TIME", "NUM_VEHICLES",
}
SECTION_KEYS = {
    "NODE_COORD_SECTION", "DEMAND_SECTION", "DEPOT_SECTION", "EDGE_WEIGHT_SECTION",
    "TIME_WINDOW_SECTION", "SERVICE_TIME_SECTION", "PRIZE_SECTION", "DISPLAY_DATA_SECTION",
}
# TYPE values this reader solves, and the section each needs; anything else is refused rather
# than solved as a CVRP.
TYPES = {"CVRP": None, "VRPTW": "TIME_WINDOW_SECTION", "CVRPTW": "TIME_WINDOW_SECTION",
         "PCVRP": "PRIZE_SECTION"}
SOLVED = "TSP, CVRP, VRPTW, PCVRP, PDTSP and KP"  # every problem read_instance reads
SOLOMON_COLUMNS = ("x", "y", "demand", "ready time", "due time", "service time")
SOLOMON_HEADER = (("VEHICLE", 1), ("NUMBER", 2), ("CUSTOMER", 4), ("CUST", 5))  # word, line index


def is_solomon(text: str) -> bool:
    """Solomon files have no ``KEY : value`` header; they name a VEHICLE block instead."""
    head = text.lstrip().splitlines()[:6]
    return any(line.strip().upper().startswith("VEHICLE") for line in head) and not any(
        ":" in line for line in head)


def vrplib_from_text(text: str, source: str, round_rule: str | None = None) -> Instance:
    if is_solomon(text):
        return solomon_from_text(text, source, round_rule)
    spec, sections = parse(text, source, SPEC_KEYS, SECTION_KEYS)
    if "DISTANCE" in spec:  # a route-length limit no solver here respects: refuse, never ignore
        raise InstanceFormatError(f"{source}: line {spec['DISTANCE'].line}: DISTANCE (a route "
                                  "length limit) is not supported")
    _check_type(spec, sections, source)
    n = dimension(spec, source)
    ewt = edge_weight_rule(spec, source, extra=("EXACT_2D",))
    metric = instance_metric(spec, sections, n, ewt, round_rule, source)
    if "CAPACITY" not in spec:
        raise InstanceFormatError(f"{source}: missing CAPACITY")
    capacity = _capacity(spec["CAPACITY"].value, f"line {spec['CAPACITY'].line}: CAPACITY", n, source)
    demands = _node_values(sections, "DEMAND_SECTION", n, ("demand",), source)
    check_single_depot(sections, source)
    _check_depot_demand(demands, "DEMAND_SECTION", source)
    _check_fits(demands, capacity, "DEMAND_SECTION", source)
    vehicles = _fleet(spec, source)
    # Every section present is checked, also one the problem does not use (service times of
    # a CVRP, prizes of a VRPTW): a number routecli reads is never taken unchecked.
    service = _service_times(spec, sections, n, source)
    prizes = (_node_values(sections, "PRIZE_SECTION", n, ("prize",), source)[0][:, 0]
              if "PRIZE_SECTION" in sections else None)
    name = spec["NAME"].value if "NAME" in spec and spec["NAME"].value else Path(source).stem
    if "TIME_WINDOW_SECTION" in sections:
        windows = _node_values(sections, "TIME_WINDOW_SECTION", n, ("ready time", "due time"),
                               source)
        _check_windows(windows, "TIME_WINDOW_SECTION", source)
        return VRPTWInstance(name, metric, demands[0][:, 0], capacity, windows[0][:, 0],
                             windows[0][:, 1], service, vehicles=vehicles)
    if prizes is not None:
        return PCVRPInstance(name, metric, demands[0][:, 0], capacity, prizes, vehicles=vehicles)
    return CVRPInstance(name, metric, demands[0][:, 0], capacity, vehicles=vehicles)


def _check_type(spec: dict[str, Spec], sections: dict[str, Section], source: str) -> None:
    """A TYPE this reader solves, with the section it needs."""
    if "TYPE" not in spec:
        return
    entry = spec["TYPE"]
    kind = entry.value.split()[0].upper() if entry.value.split() else ""
    if kind not in TYPES:
        raise InstanceFormatError(f"{source}: line {entry.line}: TYPE {excerpt(entry.value)} is "
                                  f"not a problem routecli solves ({SOLVED})")
    needed = TYPES[kind]
    if needed is not None and needed not in sections:
        raise InstanceFormatError(f"{source}: line {entry.line}: TYPE {kind} needs a {needed}")


def _fleet(spec: dict[str, Spec], source: str) -> int | None:
    """The fleet limit of ``VEHICLES`` / ``NUM_VEHICLES`` (one of them), a positive integer."""
    given = [key for key in ("VEHICLES", "NUM_VEHICLES") if key in spec]
    if not given:
        return None
    if len(given) > 1:
        raise InstanceFormatError(f"{source}: line {spec[given[1]].line}: {given[1]} repeats "
                                  f"{given[0]} (line {spec[given[0]].line})")
    entry = spec[given[0]]
    count = _number(entry.value, f"line {entry.line}: {given[0]}", source)
    if not (np.isfinite(count) and count >= 1 and count == np.floor(count) and count <= 2**31):
        raise InstanceFormatError(f"{source}: line {entry.line}: {given[0]} is "
                                  f"{excerpt(entry.value)}; it must be a positive integer")
    return int(count)


def _check_depot_demand(demands: tuple[np.ndarray, np.ndarray], section: str, source: str,
                        first_id: int = 1) -> None:
    """The depot (node ``first_id``) has no demand: no route serves it."""
    values, lines = demands
    if values[0, 0] != 0:
        raise InstanceFormatError(f"{source}: line {lines[0]}: {section}: the depot (node "
                                  f"{first_id}) has demand {values[0, 0]:g}; it must be 0")


def _number(text: str, where: str, source: str) -> float:
    return parse_number(text.strip(), where, source)


def _capacity(text: str, where: str, n: int, source: str) -> float:
    """A finite capacity in (0, bound]; ``where`` is ``line L: FIELD``."""
    value = _number(text, where, source)
    bound = magnitude_bound(n)
    if not 0 < value <= bound:
        raise InstanceFormatError(f"{source}: {where} is {value:g}; it must be > 0 and <= "
                                  f"{bound:g} {EXACT}")
    return value


def _node_values(sections: dict[str, Section], key: str, n: int, columns: tuple[str, ...],
                 source: str) -> tuple[np.ndarray, np.ndarray]:
    """Checked non-negative ``[n, k]`` values of a per-node section and each node's line."""
    if key not in sections:
        raise InstanceFormatError(f"{source}: missing {key}")
    values, lines = node_table(sections[key], n, columns, source)
    check_values(values, lines, key, columns, source)
    return values, lines


def _check_fits(demands: tuple[np.ndarray, np.ndarray], capacity: float, section: str,
                source: str, first_id: int = 1) -> None:
    """No demand above the capacity (no route could serve it); file ids start at ``first_id``."""
    values, lines = demands
    if (i := first_row(values[:, 0] > capacity)) is not None:
        raise InstanceFormatError(
            f"{source}: line {lines[i]}: {section}: infeasible: demand {values[i, 0]:g} of "
            f"node {i + first_id} exceeds capacity {capacity:g}")


def _service_times(spec: dict[str, Spec], sections: dict[str, Section], n: int,
                   source: str) -> np.ndarray:
    """SERVICE_TIME_SECTION, or one SERVICE_TIME for every customer (0 at the depot), else 0."""
    if "SERVICE_TIME_SECTION" in sections:
        if "SERVICE_TIME" in spec:
            raise InstanceFormatError(f"{source}: line {spec['SERVICE_TIME'].line}: SERVICE_TIME "
                                      "is given both as a field and as a section")
        return _node_values(sections, "SERVICE_TIME_SECTION", n, ("service time",), source)[0][:, 0]
    service = np.zeros(n)
    if "SERVICE_TIME" in spec:
        entry = spec["SERVICE_TIME"]
        value = _number(entry.value, f"line {entry.line}: SERVICE_TIME", source)
        bound = magnitude_bound(n)
        if not 0 <= value <= bound:
            raise InstanceFormatError(f"{source}: line {entry.line}: SERVICE_TIME is {value:g}; "
                                      f"it must be >= 0 and <= {bound:g} {EXACT}")
        service[1:] = value
    return service


def _check_windows(windows: tuple[np.ndarray, np.ndarray], section: str, source: str,
                   first_id: int = 1) -> None:
    """Every window opens no later than it closes; file ids start at ``first_id``."""
    values, lines = windows
    if (i := first_row(values[:, 0] > values[:, 1])) is not None:
        raise InstanceFormatError(
            f"{source}: line {lines[i]}: {section}: time window of node {i + first_id} opens "
            f"after it closes ({values[i, 0]:g} > {values[i, 1]:g})")


def solomon_from_text(text: str, source: str, round_rule: str | None = None) -> VRPTWInstance:
    """A VRPTW from a Solomon file: a name, a VEHICLE block (``NUMBER CAPACITY`` then the two
    values), a CUSTOMER block (the column names, then rows ``id x y demand ready due service``
    with ids 0..n-1, 0 the depot); exact Euclidean distances unless ``round_rule`` says
    otherwise. Blank lines do not count."""
    lines = [(k, line.strip()) for k, line in enumerate(text.split("\n"), start=1) if line.strip()]
    for word, k in SOLOMON_HEADER:
        if len(lines) <= k:
            raise InstanceFormatError(f"{source}: the file ends before the {word} line (Solomon format)")
        if not lines[k][1].upper().startswith(word):
            raise InstanceFormatError(f"{source}: line {lines[k][0]}: expected a line starting with "
                                      f"{word!r} (Solomon format), got {excerpt(lines[k][1])}")
    vehicles = Section("VEHICLE", lines[2][0], [lines[3][0]], [lines[3][1].split()])
    count = vehicles.table(2, "NUMBER CAPACITY", source)[0, 0]
    if not (np.isfinite(count) and 1 <= count <= 2**31 and count == np.floor(count)):
        raise InstanceFormatError(f"{source}: {vehicles.where(0)}: the vehicle NUMBER is "
                                  f"{count:g}; it must be a positive integer")
    customers = Section("CUSTOMER", lines[5][0], [k for k, _ in lines[6:]],
                        [line.split() for _, line in lines[6:]])
    n = len(customers.rows)
    if n < 2:
        raise InstanceFormatError(f"{source}: {customers.where()}: needs a depot row and at least "
                                  f"one customer row, got {n} rows")
    values, node_lines = node_table(customers, n, SOLOMON_COLUMNS, source, first_id=0)
    check_values(values[:, :2], node_lines, "CUSTOMER", SOLOMON_COLUMNS[:2], source, first_id=0,
                 nonnegative=False)
    check_values(values[:, 2:], node_lines, "CUSTOMER", SOLOMON_COLUMNS[2:], source, first_id=0)
    _check_depot_demand((values[:, 2:3], node_lines), "CUSTOMER", source, first_id=0)
    capacity = _capacity(vehicles.rows[0][1], f"line {lines[3][0]}: CAPACITY", n, source)
    _check_fits((values[:, 2:3], node_lines), capacity, "CUSTOMER", source, first_id=0)
    _check_windows((values[:, 3:5], node_lines), "CUSTOMER", source, first_id=0)
    metric = coordinate_metric(round_rule or "exact", values[:, :2], node_lines, "CUSTOMER",
                               source, first_id=0)
    return VRPTWInstance(lines[0][1], metric, values[:, 2], capacity, values[:, 3], values[:, 4],
                         values[:, 5], vehicles=int(count))
