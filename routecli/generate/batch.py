"""Batches on disk (``.npz`` with a ``problem`` entry) and their conversion to instances."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from routecli.problems import (
    CVRPInstance,
    Instance,
    KPInstance,
    Metric,
    PCVRPInstance,
    PDTSPInstance,
    TSPInstance,
    VRPTWInstance,
)


def save_batch(path: str | Path, problem: str, batch: dict[str, np.ndarray]) -> None:
    """Write ``batch`` atomically (a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as fh:
        # Any: numpy >= 2.1 types savez's allow_pickle as bool, which ** of arrays could bind
        arrays: dict[str, Any] = batch
        np.savez_compressed(fh, problem=np.array(problem), **arrays)
    tmp.replace(path)


def is_batch_file(path: str | Path) -> bool:
    """Whether ``path`` is a batch :func:`save_batch` wrote (an ``.npz`` with a ``problem``)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return "problem" in data.files
    except (OSError, ValueError, EOFError):
        return False


def load_batch(path: str | Path) -> tuple[str, dict[str, np.ndarray]]:
    with np.load(path, allow_pickle=False) as data:
        problem = str(data["problem"])
        return problem, {k: data[k] for k in data.files if k != "problem"}


def batch_instances(problem: str, batch: dict[str, np.ndarray], prefix: str = "",
                    rule: str = "exact") -> list[Instance]:
    """One instance per batch row, named ``{prefix}{problem}-{n}-{row}``."""
    out: list[Instance] = []
    size = len(batch["weights"][0]) if problem == "kp" else len(batch["locs"][0])
    size -= problem in ("cvrp", "vrptw", "pcvrp")  # named by customers, like CVRPLIB
    for i in range(len(next(iter(batch.values())))):
        name = f"{prefix}{problem}-{size}-{i}"
        if problem == "kp":
            out.append(KPInstance(name, batch["weights"][i], batch["values"][i],
                                  float(batch["capacity"][i])))
            continue
        metric = Metric(rule, coords=batch["locs"][i])
        if problem == "tsp":
            out.append(TSPInstance(name, metric))
        elif problem == "pdtsp":
            out.append(PDTSPInstance(name, metric))
        elif problem == "cvrp":
            out.append(CVRPInstance(name, metric, batch["demand"][i], float(batch["capacity"][i])))
        elif problem == "vrptw":
            out.append(VRPTWInstance(name, metric, batch["demand"][i], float(batch["capacity"][i]),
                                     batch["ready"][i], batch["due"][i], batch["service"][i]))
        elif problem == "pcvrp":
            out.append(PCVRPInstance(name, metric, batch["demand"][i], float(batch["capacity"][i]),
                                     batch["prize"][i]))
        else:
            raise ValueError(f"unknown problem {problem!r}")
    return out
