"""CVRPLIB / VRPLIB instances (``.vrp``, Solomon ``.txt``) through the ``vrplib`` package.

``vrplib`` does the parsing; this module checks what it returns (dimension, sections, demands
against capacity, windows) so that a malformed file fails with one precise message, and maps
the data onto CVRP, VRPTW or PCVRP instances. Edge weights are never materialised here: the
instance's :class:`~routecli.problems.Metric` computes them under the file's rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from vrplib.parse import parse_solomon, parse_vrplib

from routecli.errors import InstanceFormatError
from routecli.io.tsplib import EDGE_WEIGHT_RULES, explicit_matrix, read_text
from routecli.problems import CVRPInstance, Instance, Metric, PCVRPInstance, VRPTWInstance

KNOWN_FIELDS = {
    "name", "comment", "type", "dimension", "capacity", "edge_weight_type", "edge_weight_format",
    "edge_data_format", "node_coord_type", "display_data_type", "vehicles", "distance",
    "node_coord", "demand", "depot", "edge_weight", "time_window", "service_time", "prize",
    "display_data", "num_vehicles",
}


def is_solomon(text: str) -> bool:
    """Solomon files have no ``KEY : value`` header; they name a VEHICLE block instead."""
    head = text.lstrip().splitlines()[:6]
    return any(line.strip().upper().startswith("VEHICLE") for line in head) and not any(
        ":" in line for line in head)


def read_vrplib(path: str | Path, round_rule: str | None = None) -> Instance:
    source = str(path)
    text = read_text(path)
    fmt = "solomon" if is_solomon(text) else "vrplib"
    try:
        data = parse_solomon(text, compute_edge_weights=False) if fmt == "solomon" \
            else parse_vrplib(text, compute_edge_weights=False)
    except Exception as exc:  # vrplib raises bare ValueError/IndexError on malformed text
        raise InstanceFormatError(f"{source}: cannot parse as {fmt.upper()} ({exc})") from None
    unknown = sorted(set(data) - KNOWN_FIELDS)
    if unknown:
        raise InstanceFormatError(f"{source}: unknown field {unknown[0].upper()!r}")
    name = str(data.get("name") or Path(path).stem)
    if fmt == "solomon":
        n = len(data.get("node_coord", []))
        rule = round_rule or "exact"
    else:
        n = _int_field(data, "dimension", source)
        ewt = str(data.get("edge_weight_type", "")).upper()
        if not ewt:
            raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_TYPE")
        if ewt not in EDGE_WEIGHT_RULES and ewt != "EXACT_2D":
            raise InstanceFormatError(f"{source}: unsupported EDGE_WEIGHT_TYPE {ewt!r}")
        rule = round_rule or ("exact" if ewt == "EXACT_2D" else EDGE_WEIGHT_RULES[ewt])
    metric = _metric(data, n, rule, source)
    if "capacity" not in data:
        raise InstanceFormatError(f"{source}: missing CAPACITY")
    capacity = _number(data["capacity"], "CAPACITY", source)
    demands = _per_node(data, "demand", n, source)
    depots = np.atleast_1d(np.asarray(data.get("depot", [0]))).astype(np.int64)
    if depots.size != 1 or depots[0] != 0:
        raise InstanceFormatError(f"{source}: only a single depot at node 1 is supported")
    over = np.flatnonzero(demands > capacity)
    if over.size:
        i = int(over[0])
        raise InstanceFormatError(
            f"{source}: infeasible: demand {demands[i]:g} of node {i + 1} exceeds capacity {capacity:g}")
    if "time_window" in data:
        tw = np.asarray(data["time_window"], np.float64)
        if tw.shape != (n, 2):
            raise InstanceFormatError(f"{source}: TIME_WINDOW_SECTION needs {n} rows of 2 values")
        service = (_per_node(data, "service_time", n, source) if np.ndim(data.get("service_time"))
                   else np.full(n, float(data.get("service_time", 0.0))))
        bad = np.flatnonzero(tw[:, 0] > tw[:, 1])
        if bad.size:
            raise InstanceFormatError(
                f"{source}: time window of node {bad[0] + 1} opens after it closes")
        return VRPTWInstance(name, metric, demands, capacity, tw[:, 0], tw[:, 1], service)
    if "prize" in data:
        return PCVRPInstance(name, metric, demands, capacity, _per_node(data, "prize", n, source))
    return CVRPInstance(name, metric, demands, capacity)


def _metric(data: dict, n: int, rule: str, source: str) -> Metric:
    if rule == "explicit":
        if "edge_weight" not in data:
            raise InstanceFormatError(f"{source}: missing EDGE_WEIGHT_SECTION")
        values = np.asarray(data["edge_weight"], np.float64)
        if values.shape == (n, n):  # vrplib already expanded FULL_MATRIX / LOWER_ROW
            return Metric("explicit", matrix=values)
        fmt = str(data.get("edge_weight_format", "FULL_MATRIX"))
        return Metric("explicit", matrix=explicit_matrix(values.ravel(), n, fmt, source))
    if "node_coord" not in data:
        raise InstanceFormatError(f"{source}: missing NODE_COORD_SECTION")
    coords = np.asarray(data["node_coord"], np.float64)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise InstanceFormatError(f"{source}: NODE_COORD_SECTION rows must be 'id x y'")
    if len(coords) != n:
        raise InstanceFormatError(
            f"{source}: NODE_COORD_SECTION has {len(coords)} nodes, DIMENSION says {n}")
    return Metric(rule, coords=coords)


def _int_field(data: dict, key: str, source: str) -> int:
    if key not in data:
        raise InstanceFormatError(f"{source}: missing {key.upper()}")
    value = data[key]
    if not isinstance(value, int | np.integer):
        raise InstanceFormatError(f"{source}: {key.upper()} must be an integer, got {value!r}")
    return int(value)


def _number(value: object, key: str, source: str) -> float:
    if not isinstance(value, int | float | np.integer | np.floating):
        raise InstanceFormatError(f"{source}: {key} must be a number, got {value!r}")
    return float(value)


def _per_node(data: dict, key: str, n: int, source: str) -> np.ndarray:
    section = f"{key.upper()}_SECTION"
    if key not in data:
        raise InstanceFormatError(f"{source}: missing {section}")
    try:
        values = np.asarray(data[key], np.float64).ravel()
    except (TypeError, ValueError):
        raise InstanceFormatError(f"{source}: non-numeric value in {section}") from None
    if values.size != n:
        raise InstanceFormatError(f"{source}: {section} has {values.size} values for {n} nodes")
    return values
