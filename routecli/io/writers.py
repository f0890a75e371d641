"""Instance files for generated instances: VRPLIB ``.vrp`` (CVRP, VRPTW, PCVRP, and PDTSP
with a ``PICKUP_AND_DELIVERY_SECTION``, see :mod:`routecli.io.pdtsp`), TSPLIB ``.tsp`` and
knapsack ``.kp`` (:mod:`routecli.io.kp`, numbers written exactly). Coordinates in the unit
square are scaled and rounded to integers so the files follow the CVRPLIB convention
(``EUC_2D``: every edge rounded to the nearest integer); time windows, service times and prizes
are scaled by the same factor. Window openings round up and closings
round down, so a generated VRPTW instance stays feasible after rounding."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.io.kp import format_kp

# The COMMENT every generated file starts with (``portgen``: the DIMACS generator's files)
GENERATED_MARKS = ("COMMENT : routecli generate", "COMMENT : portgen N=")


def _rows(values: np.ndarray) -> str:
    return "\n".join(f"{i + 1}\t" + "\t".join(str(int(v)) for v in np.atleast_1d(row))
                     for i, row in enumerate(values))


def format_vrplib(name: str, comment: str, kind: str, coords: np.ndarray, demand: np.ndarray,
                  capacity: float, windows: np.ndarray | None = None,
                  service: np.ndarray | None = None, prize: np.ndarray | None = None) -> str:
    parts = [f"NAME : {name}", f"COMMENT : {comment}", f"TYPE : {kind}",
             f"DIMENSION : {len(coords)}", "EDGE_WEIGHT_TYPE : EUC_2D",
             f"CAPACITY : {int(capacity) if capacity.is_integer() else repr(capacity)}",
             "NODE_COORD_SECTION", _rows(coords), "DEMAND_SECTION", _rows(demand)]
    if windows is not None and service is not None:
        parts += ["TIME_WINDOW_SECTION", _rows(windows), "SERVICE_TIME_SECTION", _rows(service)]
    if prize is not None:
        parts += ["PRIZE_SECTION", _rows(prize)]
    parts += ["DEPOT_SECTION", "1", "-1", "EOF"]
    return "\n".join(parts) + "\n"


def format_tsplib(name: str, comment: str, coords: np.ndarray) -> str:
    return "\n".join([f"NAME : {name}", f"COMMENT : {comment}", "TYPE : TSP",
                      f"DIMENSION : {len(coords)}", "EDGE_WEIGHT_TYPE : EUC_2D",
                      "NODE_COORD_SECTION", _rows(coords), "EOF"]) + "\n"


def format_pdtsp(name: str, comment: str, coords: np.ndarray) -> str:
    """Depot first, pickups 2..r+1, delivery k + r for pickup k (``id pickup delivery`` rows)."""
    n = len(coords)
    r = (n - 1) // 2
    pairs = np.zeros((n, 2), np.int64)
    ids = np.arange(1, n + 1)
    pairs[1:r + 1, 1] = ids[1:r + 1] + r
    pairs[r + 1:, 0] = ids[r + 1:] - r
    return "\n".join([f"NAME : {name}", f"COMMENT : {comment}", "TYPE : PDTSP",
                      f"DIMENSION : {n}", "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION",
                      _rows(coords), "PICKUP_AND_DELIVERY_SECTION", _rows(pairs),
                      "DEPOT_SECTION", "1", "-1", "EOF"]) + "\n"


def instance_text(problem: str, batch: dict[str, np.ndarray], row: int, seed: int,
                  scale: int) -> tuple[str, str]:
    """File name and text of row ``row`` of a generated batch (``scale`` applies to
    coordinates, not to knapsack items)."""
    if problem == "kp":
        n = batch["weights"].shape[1]
        capacity = float(batch["capacity"][row])
        name = f"kp-{n}-c{capacity:g}-s{seed}-{row}"
        comment = (f"routecli generate kp --size {n} --capacity {capacity:g} --seed {seed} "
                   f"(row {row})")
        return f"{name}.kp", format_kp(name, comment, batch["weights"][row],
                                       batch["values"][row], capacity)
    coords = np.rint(batch["locs"][row] * scale).astype(np.int64)
    n = len(coords) - (problem != "tsp")
    name = f"{problem}-{n}-s{seed}-{row}"
    comment = f"routecli generate {problem} --size {n} --seed {seed} (row {row}, scale {scale})"
    if problem == "tsp":
        return f"{name}.tsp", format_tsplib(name, comment, coords)
    if problem == "pdtsp":
        return f"{name}.vrp", format_pdtsp(name, comment, coords)
    demand = batch["demand"][row].astype(np.int64)
    windows = service = prize = None
    if problem == "vrptw":
        windows = np.stack([np.ceil(batch["ready"][row] * scale),
                            np.floor(batch["due"][row] * scale)], axis=1)
        service = np.rint(batch["service"][row] * scale)
    if problem == "pcvrp":
        prize = np.rint(batch["prize"][row] * scale)
    return f"{name}.vrp", format_vrplib(name, comment, problem.upper(), coords, demand,
                                        float(batch["capacity"][row]), windows, service, prize)


def instance_files(problem: str, batch: dict[str, np.ndarray], seed: int,
                   scale: int) -> list[tuple[str, str]]:
    """File name and text of every row of a generated batch, each read back by routecli's own
    reader first: a file routecli would refuse (a number past the reader's bound, one node)
    raises that reader's :class:`~routecli.errors.InstanceFormatError`, so it is never
    written."""
    from routecli.io import instance_from_text

    rows = len(batch["weights" if problem == "kp" else "locs"])
    files = [instance_text(problem, batch, row, seed, scale) for row in range(rows)]
    for name, text in files:
        instance_from_text(text, name)
    return files


def generated_by_routecli(path: Path) -> bool:
    """Whether ``path`` is an instance file ``routecli generate`` wrote (its COMMENT says so)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("latin-1").split("\n")[:3]
    except OSError:
        return False
    return any(line.startswith(GENERATED_MARKS) for line in head)
