"""Reference solutions by PyVRP (HGS), computed in parallel and cached on disk.

Analyses, the PE probe and validation gaps during training all need near-optimal solutions of
the same synthetic instances; each is solved once per (instance data, time limit, seed) and
stored as a small ``.npz`` under the cache directory (``$ROUTECLI_CACHE`` or
``~/.cache/routecli``, subfolder ``references``).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import Progress

from routecli.baselines.hgs import HGS
from routecli.problems import Instance, Routes, Solution, Tour, check, cost
from routecli.solvers import Stop


def default_cache_dir() -> Path:
    root = os.environ.get("ROUTECLI_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "routecli") / "references"


def fingerprint(instance: Instance) -> str:
    """Hash of everything that defines ``instance`` (name excluded)."""
    digest = hashlib.sha256(instance.problem.encode())
    for f in fields(instance):
        if f.name == "name":
            continue
        value = getattr(instance, f.name)
        if hasattr(value, "rule"):  # Metric
            digest.update(value.rule.encode())
            for arr in (value.coords, value.matrix):
                if arr is not None:
                    digest.update(np.ascontiguousarray(arr, np.float64).tobytes())
        else:
            digest.update(np.ascontiguousarray(value, np.float64).tobytes())
    return digest.hexdigest()[:32]


def _encode(solution: Solution) -> dict[str, np.ndarray]:
    if isinstance(solution, Tour):
        return {"tour": solution.order}
    assert isinstance(solution, Routes)
    sizes = np.array([len(r) for r in solution.routes], np.int64)
    return {"nodes": solution.visited, "sizes": sizes}


def _decode(data: dict[str, np.ndarray]) -> Tour | Routes:
    if "tour" in data:
        return Tour(data["tour"])
    return Routes(np.split(data["nodes"], np.cumsum(data["sizes"])[:-1]))


def _solve_one(args: tuple[Instance, float, int, str]) -> Tour | Routes:
    instance, time_limit, seed, path = args
    solution = HGS().solve(instance, seed=seed, stop=Stop(seconds=time_limit))
    check(instance, solution)
    tmp = Path(path + ".part")
    with open(tmp, "wb") as fh:
        # Any: numpy >= 2.1 types savez's allow_pickle as bool, which ** of arrays could bind
        arrays: dict[str, Any] = _encode(solution)
        np.savez(fh, cost=cost(instance, solution), **arrays)
    tmp.replace(path)
    return solution


def reference_solutions(instances: list[Instance], time_limit: float, jobs: int = 1,
                        cache_dir: str | Path | None = None, seed: int = 0,
                        progress: bool = True) -> list[Tour | Routes]:
    """PyVRP solutions of ``instances`` (``time_limit`` seconds each), from cache when present."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    paths = [str(cache / f"{fingerprint(inst)}-t{time_limit:g}-s{seed}.npz") for inst in instances]
    out: list[Tour | Routes | None] = [None] * len(instances)
    todo = []
    for i, path in enumerate(paths):
        if os.path.exists(path):
            with np.load(path) as data:
                out[i] = _decode(dict(data))
        else:
            todo.append(i)
    if todo:
        args = [(instances[i], time_limit, seed, paths[i]) for i in todo]
        with Progress(disable=not progress, transient=True) as bar:
            task = bar.add_task(f"PyVRP references ({time_limit:g} s each)", total=len(todo))
            if jobs <= 1:
                results = map(_solve_one, args)
                for i, sol in zip(todo, results, strict=False):
                    out[i] = sol
                    bar.advance(task)
            else:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    for i, sol in zip(todo, pool.map(_solve_one, args), strict=False):
                        out[i] = sol
                        bar.advance(task)
    return [s for s in out if s is not None]
