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
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from routecli.atomic import LockHeld, atomic_write_text, sole_writer
from routecli.bench.report import PLOT_FILE, PLOT_SOFTWARE, REPORT_FILE, REPORT_MARK
from routecli.errors import OptionError
from routecli.io import best_known, read_instance, solution_suffix, write_solution, written_by_routecli
from routecli.plots.figure import png_made_by
from routecli.results import Provenance, ResultLog, ResultRow, ResultStoreError, portable_path
from routecli.solvers import Solver, make_solver, ran_with, run
from routecli.stop import Criterion, describe

BenchRow = ResultRow  # one row of results.csv: the shared schema of routecli.results

# The files of a bench run folder; run.json (carrying RUN_MARK) is what makes one.
RUN_FILE = "run.json"
RESULTS_FILE = "results.csv"
SOLUTIONS_DIR = "solutions"
LOCK_FILE = ".routecli-bench.lock"
PROBE_PREFIX = ".routecli-bench-probe"  # the writability check's temporary file
SOLUTION_SUFFIXES = (".sol", ".tour")
RUN_MARK_KEY = "written_by"
RUN_MARK = "routecli bench"
CONFIG_KEYS = {"model", "settings", "seed", "stop", "rounding"}


def read_rows(csv_path: Path) -> list[BenchRow]:
    """Rows of a results CSV; an ``OptionError`` naming the file when it is not one (another
    layout, or a row that does not read)."""
    try:
        return ResultLog(csv_path).results()
    except (ResultStoreError, KeyError, ValueError, TypeError, UnicodeDecodeError, csv.Error):
        raise OptionError(f"{csv_path} is not a routecli results file") from None


def read_rows_for(csv_path: Path) -> list[BenchRow]:
    """Rows of another run's ``results.csv`` (``--compare``); an error if there are none."""
    try:
        rows = read_rows(csv_path)
    except OptionError as exc:
        raise OptionError(f"--compare: {exc}") from None
    except OSError as exc:
        raise OptionError(f"--compare {csv_path}: cannot read "
                          f"({exc.strerror or type(exc).__name__})") from None
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


def _stored_config(path: Path) -> dict[str, Any] | None:
    """The configuration in a bench run's ``run.json``: one carrying :data:`RUN_MARK`, or
    exactly the keys of :func:`run_config` (folders made before the mark); ``None`` for any
    other file."""
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(stored, dict):
        return None
    if stored.get(RUN_MARK_KEY) == RUN_MARK:
        return {k: v for k, v in stored.items() if k != RUN_MARK_KEY}
    return stored if set(stored) == CONFIG_KEYS else None


def _refuse_foreign_folder(out: Path, force: bool) -> None:
    """Create ``out`` if missing; refuse one that cannot be written, and one that holds files
    but is no bench run folder (the user's) unless ``force``."""
    if out.exists() and not out.is_dir():
        raise OptionError(f"--out {out} is a file, not a folder")
    fresh = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out, prefix=PROBE_PREFIX):
            pass
    except OSError as exc:
        raise OptionError(f"--out {out}: cannot write in it "
                          f"({exc.strerror or type(exc).__name__})") from None
    # One listing, as another run may be creating files meanwhile. The lock (only routecli
    # bench makes it, before any other file): a run that has just created the folder, or one
    # that died there; the lock itself then decides. Another run's writability probe may show
    # up too (a named file where O_TMPFILE is missing).
    names = {p.name for p in out.iterdir()}
    if fresh or force or RUN_FILE in names or LOCK_FILE in names or \
            all(name.startswith(PROBE_PREFIX) for name in names):
        return
    raise OptionError(f"--out {out} holds files and is not a routecli bench run folder; "
                      "refusing to write into it (--force writes into it)")


def claim_folder(out: Path, config: dict[str, Any], force: bool = False) -> None:
    """Record ``config`` in ``out/run.json``, or refuse when the folder holds another run or
    is not a bench run folder."""
    path = out / RUN_FILE
    if path.exists():
        stored = _stored_config(path)
        if stored is None:
            raise OptionError(f"{path} was not written by routecli bench; use a new --out folder")
        if stored != config:
            changed = sorted(k for k in config if stored.get(k) != config[k])
            raise OptionError(f"{out} holds a run with other settings ({', '.join(changed)} "
                              f"differ); use a new --out folder to keep both")
        return
    if (out / RESULTS_FILE).exists() and not force:
        raise OptionError(f"{out} holds results of an unrecorded run; use a new --out folder")
    atomic_write_text(path, json.dumps({RUN_MARK_KEY: RUN_MARK, **config}, indent=1) + "\n")


def _check_results(csv_path: Path) -> None:
    try:
        read_rows(csv_path)
    except OptionError as exc:
        raise OptionError(f"{exc}; use a new --out folder") from None


def _refuse_overwrites(out: Path, files: list[Path], force: bool) -> None:
    """The files this run will write that exist and were not written by routecli bench."""
    if force:
        return
    mine = [out / REPORT_FILE, out / PLOT_FILE,
            *(out / SOLUTIONS_DIR / f"{f.stem}{suffix}" for f in files
              for suffix in SOLUTION_SUFFIXES)]
    for path in mine:
        if path.exists() and not _written_by_bench(path):
            raise OptionError(f"--out {out}: {path.relative_to(out)} was not written by "
                              "routecli; refusing to overwrite it (--force overwrites)")


def _written_by_bench(path: Path) -> bool:
    if path.is_dir():
        return False
    if path.name == REPORT_FILE:
        return path.read_text(errors="replace").startswith(REPORT_MARK + "\n")
    if path.name == PLOT_FILE:
        return png_made_by(path) == PLOT_SOFTWARE
    return written_by_routecli(path)


@contextmanager
def bench_folder(out: Path, files: list[Path], config: dict[str, Any],
                 force: bool = False) -> Iterator[Path]:
    """``out`` claimed for one run and locked against a second writer for the ``with``
    block: checked writable and a bench run folder (or empty, or ``force``), its ``run.json``
    matching ``config``, its results file one routecli wrote (a row torn by a killed run
    reads as missing and is solved again), and none of the files the run writes already there
    without routecli having written them. Another process writing the same folder is refused
    at once."""
    _refuse_foreign_folder(out, force)
    try:
        with sole_writer(out / LOCK_FILE):
            claim_folder(out, config, force)
            _check_results(out / RESULTS_FILE)
            _refuse_overwrites(out, files, force)
            yield out
    except LockHeld:
        raise OptionError(f"--out {out}: another routecli bench is writing to it; wait for it "
                          "or use another folder") from None


def run_bench(files: list[Path], model: str, settings: Any, out: Path, *, seed: int = 0,
              stop: Criterion | None = None, jobs: int = 1, rounding: str | None = None,
              force: bool = False, on_start: Callable[[int], None] | None = None,
              on_row: Callable[[BenchRow], None] | None = None,
              finish: Callable[[list[BenchRow]], object] | None = None) -> list[BenchRow]:
    """Solve ``files`` not yet in ``out/results.csv``; returns all rows (old and new).

    ``settings`` is the model's ``Settings``. The solver is built and the folder claimed
    (:func:`bench_folder`) before any work, so an unknown model, a bad option or another
    run's folder fails early. ``on_start`` gets the number of files already done; ``finish``
    runs on the rows while the folder is still locked (the report)."""
    solver = make_solver(model, settings)
    settings = ran_with(solver, settings)
    config = run_config(model, settings, seed, stop, rounding)
    with bench_folder(out, files, config, force):
        csv_path = out / RESULTS_FILE
        done = completed(csv_path)
        todo = [p for p in files if portable_path(p) not in done]
        if on_start is not None:
            on_start(len(files) - len(todo))
        log = ResultLog(csv_path)
        solutions_dir = out / SOLUTIONS_DIR
        solutions_dir.mkdir(exist_ok=True)
        provenance = Provenance.current()
        args = [(p, settings, seed, stop, solutions_dir, rounding, provenance) for p in todo]
        rows = ((solve_file(a[0], solver, *a[1:]) for a in args) if jobs <= 1
                else _parallel(args, jobs, model, settings))
        for row in rows:
            log.add_row(row)
            if on_row is not None:
                on_row(row)
        wanted = {portable_path(p) for p in files}
        result = [r for r in read_rows(csv_path) if r.file in wanted]
        if finish is not None:
            finish(result)
    return result


def _parallel(args: list[tuple], jobs: int, model: str,
              settings: Any) -> Iterator[BenchRow]:
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                             initargs=(model, settings)) as pool:
        yield from pool.map(_solve_job, args)
