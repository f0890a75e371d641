"""Reference solutions shipped with routecli for the default analysis sets.

The instances regenerate from their seed, so a file stores only the solutions, as one int16
sequence per instance (a tour, or the routes joined by depot visits), with what they depend on:
the set, the generator seed, the reference budget's key (solver, PyVRP version, criterion,
seed) and a fingerprint of every instance. A file is used only for the budget it was computed
on, and only where the fingerprints equal those of the freshly generated instances and every
solution validates; anything else is reported and the references are computed instead.
Files live in the package (``routecli/analysis/references``); ``benchmarks/build_references.py``
writes them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from routecli.atomic import atomic_write
from routecli.baselines.reference import ReferenceBudget
from routecli.problems import Instance, Routes, Tour, cost, validate
from routecli.problems.fingerprint import fingerprint

FORMAT = 1


def shipped_path(name: str, seed: int) -> Path:
    """The shipped file of set ``name`` with generator ``seed`` (it may not exist)."""
    return Path(str(resources.files("routecli.analysis") / "references" / f"{name}-s{seed}.npz"))


def _sequence(solution: Tour | Routes) -> np.ndarray:
    if isinstance(solution, Tour):
        return solution.order
    return np.concatenate([np.append(route, 0) for route in solution.routes])[:-1]


def _solution(sequence: np.ndarray, instance: Instance) -> Tour | Routes:
    if instance.problem in ("tsp", "pdtsp"):
        return Tour(sequence)
    pieces = np.split(sequence, np.flatnonzero(sequence == 0))
    return Routes(piece[piece != 0] for piece in pieces)


def write_shipped(path: str | Path, name: str, seed: int, budget: ReferenceBudget,
                  instances: list[Instance], solutions: list[Tour | Routes]) -> Path:
    """Store ``solutions`` of set ``name`` (generator ``seed``) computed on ``budget``."""
    sequences = [_sequence(s) for s in solutions]
    if max(int(s.max()) for s in sequences) > np.iinfo(np.int16).max:
        raise ValueError("instances too large for int16 node indices")
    # Any: numpy >= 2.1 types savez's allow_pickle as bool, which ** of arrays could bind
    arrays: dict[str, Any] = {
        "format": np.array(FORMAT), "set": np.array(name), "seed": np.array(seed),
        "budget": np.array(budget.key),
        "fingerprints": np.array([bytearray.fromhex(fingerprint(i)) for i in instances],
                                 np.uint8),
        "lengths": np.array([len(s) for s in sequences], np.int32),
        "sequence": np.concatenate(sequences).astype(np.int16),
        "costs": np.array([cost(i, s) for i, s in zip(instances, solutions, strict=True)]),
    }
    return atomic_write(path, lambda fh: np.savez_compressed(fh, **arrays))


def read_shipped(path: str | Path, name: str, seed: int, budget: ReferenceBudget,
                 instances: list[Instance]) -> tuple[list[Tour | Routes], str | None]:
    """The shipped solutions of ``instances``, or none and why not where the file exists but
    does not fit: another format or set, instances that differ from the generated ones, or a
    solution that does not validate. A file of another budget or number of instances is
    silently not used (another ``--ref-budget`` or ``--num``: the generators draw a whole set
    at once, so 32 instances of a seed are not the first 32 of 1,000)."""
    path = Path(path)
    if not path.is_file():
        return [], None
    with np.load(path) as data:
        if int(data["format"]) != FORMAT or str(data["set"]) != name \
                or int(data["seed"]) != seed:
            return [], f"{path} is not a format-{FORMAT} file of {name} with seed {seed}"
        if str(data["budget"]) != budget.key or len(data["lengths"]) != len(instances):
            return [], None
        stored = [bytes(f).hex() for f in data["fingerprints"]]
        ends = np.cumsum(data["lengths"])
        sequences = np.split(data["sequence"].astype(np.int64), ends[:-1])
    if stored != [fingerprint(i) for i in instances]:
        return [], (f"{path} belongs to other instances than those generated now (the "
                    "generator changed?)")
    solutions = [_solution(s, i) for s, i in zip(sequences, instances, strict=True)]
    for index, (instance, solution) in enumerate(zip(instances, solutions, strict=True)):
        problems = validate(instance, solution)
        if problems:
            return [], f"{path}: the solution of instance {index} is invalid: {problems[0]}"
    return solutions, None
