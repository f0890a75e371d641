"""Solve every instance of a benchmark, one CSV row per instance, resumable, in parallel.

``out/run.json`` records what produced the rows (model, its settings, seed, stopping
criterion, distance rule); resuming into a folder made by another configuration is refused,
so a report never mixes two runs under one title.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from routecli.atomic import atomic_write_text
from routecli.bench.results import Provenance, ResultLog, ResultRow, portable_path
from routecli.errors import OptionError
from routecli.io import best_known, read_instance, solution_suffix, write_solution
from routecli.solvers import Solver, make_solver, run
from routecli.stop import Criterion, describe

BenchRow = ResultRow  # one row of results.csv: the shared schema of routecli.bench.results


def read_rows(csv_path: Path) -> list[BenchRow]:
    """Rows of a results CSV (this schema or round 1's)."""
    if not csv_path.exists():
        return []
    with open(csv_path, newline="") as fh:
        return [BenchRow.from_csv(r) for r in csv.DictReader(fh)]


def read_rows_for(csv_path: Path) -> list[BenchRow]:
    """Rows of another run's ``results.csv`` (``--compare``); an error if there are none."""
    rows = read_rows(csv_path)
    if not rows:
        raise OptionError(f"--compare: {csv_path} has no benchmark rows")
    return rows


def completed(csv_path: Path) -> set[str]:
    """Instance files already in the CSV (as :func:`portable_path` writes them)."""
    return {r.file for r in read_rows(csv_path)}


def solve_file(path: Path, solver: Solver, settings: Any, seed: int, stop: Criterion | None,
               solutions_dir: Path | None, rounding: str | None,
               provenance: Provenance) -> BenchRow:
    """Read, solve, validate and (if feasible) write the solution of one instance file."""
    instance = read_instance(path, rounding)
    reference, _ = best_known(instance, path)
    result = run(solver, instance, seed=seed, stop=stop, bks=reference)
    if result.feasible and solutions_dir is not None:
        write_solution(solutions_dir / f"{path.stem}{solution_suffix(result.solution)}",
                       instance, result.solution)
    return BenchRow.of(result, set_name=path.parent.name, file=path, solver=solver.name,
                       settings=settings, seed=seed, stop=stop, provenance=provenance)


_worker_solver: Solver | None = None


def _init_worker(model: str, settings: Any) -> None:
    """One solver per worker process (a model loads its checkpoint once, not per instance);
    J workers share the cores, so each torch/OpenMP pool gets one thread."""
    global _worker_solver
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    _worker_solver = make_solver(model, settings)


def _solve_job(args: tuple) -> BenchRow:
    assert _worker_solver is not None
    return solve_file(args[0], _worker_solver, *args[1:])


def run_config(model: str, settings: Any, seed: int, stop: Criterion | None,
               rounding: str | None) -> dict[str, Any]:
    """What identifies a benchmark run (stored as ``run.json``)."""
    return {"model": model, "settings": asdict(settings), "seed": seed, "stop": describe(stop),
            "rounding": rounding or "file"}


def claim_folder(out: Path, config: dict[str, Any]) -> None:
    """Record ``config`` in ``out/run.json``, or refuse when the folder holds another run."""
    path = out / "run.json"
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            raise OptionError(f"{path} is unreadable; use a new --out folder") from None
        if stored != config:
            changed = sorted(k for k in config if stored.get(k) != config[k])
            raise OptionError(f"{out} holds a run with other settings ({', '.join(changed)} "
                              f"differ); use a new --out folder to keep both")
        return
    if (out / "results.csv").exists():
        raise OptionError(f"{out} holds results of an unrecorded run; use a new --out folder")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(config, indent=1) + "\n")


def run_bench(files: list[Path], model: str, settings: Any, out: Path, *, seed: int = 0,
              stop: Criterion | None = None, jobs: int = 1, rounding: str | None = None,
              on_row: Callable[[BenchRow], None] | None = None) -> list[BenchRow]:
    """Solve ``files`` not yet in ``out/results.csv``; returns all rows (old and new).

    ``settings`` is the model's ``Settings``. The solver is built and the folder claimed
    before any work, so an unknown model, a bad option or another run's folder fails early."""
    solver = make_solver(model, settings)
    claim_folder(out, run_config(model, settings, seed, stop, rounding))
    csv_path = out / "results.csv"
    log = ResultLog(csv_path)
    done = completed(csv_path)
    todo = [p for p in files if portable_path(p) not in done]
    solutions_dir = out / "solutions"
    solutions_dir.mkdir(exist_ok=True)
    provenance = Provenance.current()
    args = [(p, settings, seed, stop, solutions_dir, rounding, provenance) for p in todo]
    rows = ((solve_file(a[0], solver, *a[1:]) for a in args) if jobs <= 1
            else _parallel(args, jobs, model, settings))
    for row in rows:
        log.add(row)
        if on_row is not None:
            on_row(row)
    wanted = {portable_path(p) for p in files}
    return [r for r in read_rows(csv_path) if r.file in wanted]


def _parallel(args: list[tuple], jobs: int, model: str,
              settings: Any) -> Iterator[BenchRow]:
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                             initargs=(model, settings)) as pool:
        yield from pool.map(_solve_job, args)
