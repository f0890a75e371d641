"""Instance files for generated instances: VRPLIB ``.vrp`` (CVRP, VRPTW, PCVRP) and TSPLIB
``.tsp``. Coordinates in the unit square are scaled and rounded to integers so the files follow
the CVRPLIB convention (``EUC_2D``: every edge rounded to the nearest integer); time windows,
service times and prizes are scaled by the same factor. Window openings round up and closings
round down, so a generated VRPTW instance stays feasible after rounding."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from routecli.errors import OptionError


def _rows(values: np.ndarray) -> str:
    return "\n".join(f"{i + 1}\t" + "\t".join(str(int(v)) for v in np.atleast_1d(row))
                     for i, row in enumerate(values))


def format_vrplib(name: str, comment: str, kind: str, coords: np.ndarray, demand: np.ndarray,
                  capacity: int, windows: np.ndarray | None = None,
                  service: np.ndarray | None = None, prize: np.ndarray | None = None) -> str:
    parts = [f"NAME : {name}", f"COMMENT : {comment}", f"TYPE : {kind}",
             f"DIMENSION : {len(coords)}", "EDGE_WEIGHT_TYPE : EUC_2D", f"CAPACITY : {capacity}",
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


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_instance_file(folder: Path, problem: str, batch: dict[str, np.ndarray], row: int,
                        seed: int, scale: int) -> Path:
    """Write row ``row`` of a generated batch as one instance file in ``folder``."""
    if problem not in ("tsp", "cvrp", "vrptw", "pcvrp"):
        raise OptionError(f"{problem.upper()} has no standard instance file format; "
                          "use --format npz")
    coords = np.rint(batch["locs"][row] * scale).astype(np.int64)
    n = len(coords) - (problem != "tsp")
    name = f"{problem}-{n}-s{seed}-{row}"
    comment = f"routecli generate {problem} --n {n} --seed {seed} (row {row}, scale {scale})"
    if problem == "tsp":
        path = folder / f"{name}.tsp"
        write_text_atomic(path, format_tsplib(name, comment, coords))
        return path
    demand = batch["demand"][row].astype(np.int64)
    capacity = int(batch["capacity"][row])
    windows = service = prize = None
    if problem == "vrptw":
        windows = np.stack([np.ceil(batch["ready"][row] * scale),
                            np.floor(batch["due"][row] * scale)], axis=1)
        service = np.rint(batch["service"][row] * scale)
    if problem == "pcvrp":
        prize = np.rint(batch["prize"][row] * scale)
    path = folder / f"{name}.vrp"
    write_text_atomic(path, format_vrplib(name, comment, problem.upper(), coords, demand,
                                          capacity, windows, service, prize))
    return path
