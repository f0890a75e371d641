"""Solve every instance of a benchmark with every seed, one CSV row per (instance, seed),
resumable, on any executor (:mod:`routecli.tasks`).

Each (instance file, seed) is a task: a worker reads the file, solves, validates and returns
the row and the solution's text; this process writes the solution and appends the row as each
task finishes, so a worker lost mid-run costs only its own task and a rerun solves only what
is missing. ``out/run.json`` records what produced the rows (model, its settings, seeds,
stopping criterion or protocol, distance rule); resuming into a folder made by another
configuration is refused, so a report never mixes two runs under one title.
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from routecli.atomic import LockHeld, atomic_write_text, sole_writer
from routecli.bench.protocol import (
    Protocol,
    markdown,
    measure_machine,
    primal_integral,
    time_to_within,
)
from routecli.bench.report import PLOT_FILE, PLOT_SOFTWARE, REPORT_FILE, REPORT_MARK
from routecli.errors import OptionError, RoutecliError
from routecli.io import best_known, read_instance, solution_suffix, written_by_routecli
from routecli.io.solutions import format_solution
from routecli.plots.figure import png_made_by
from routecli.results import Provenance, ResultLog, ResultRow, ResultStoreError, portable_path
from routecli.solvers import Solver, make_solver, ran_with, require_problem, run
from routecli.stop import Criterion, describe
from routecli.tasks import Executor, Inline, Task, run_tasks, task_key

BenchRow = ResultRow  # one row of results.csv: the shared schema of routecli.results
# results.csv's columns beyond the shared row: the anytime measures of a search with a
# reference (routecli.bench.protocol); files written before them read with these empty
ANYTIME = ["primal_integral", "to_1pct_seconds"]
MACHINE_FILE = "machine.json"  # the CPU and speed of a protocol run's workers

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


def bench_log(csv_path: Path) -> ResultLog:
    """The store of a bench run's ``results.csv`` (one written before the anytime columns
    reads as it is)."""
    return ResultLog(csv_path, extra=ANYTIME)


def read_rows(csv_path: Path) -> list[BenchRow]:
    """Rows of a results CSV; an ``OptionError`` naming the file when it is not one (another
    layout, or a row that does not read)."""
    try:
        return bench_log(csv_path).results()
    except (ResultStoreError, KeyError, ValueError, TypeError, UnicodeDecodeError, csv.Error):
        raise OptionError(f"{csv_path} is not a routecli results file") from None


def read_rows_for(csv_path: Path) -> list[BenchRow]:
    """Rows of another run's ``results.csv`` (``--compare``); an error if there are none."""
    if not csv_path.is_file():
        raise OptionError(f"--compare {csv_path}: " + ("a folder, not a results.csv"
                                                       if csv_path.is_dir() else "no such file"))
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


def completed(csv_path: Path) -> set[tuple[str, int]]:
    """(instance file, seed) pairs already in the CSV (files as :func:`portable_path` writes
    them)."""
    return {(r.file, r.seed) for r in read_rows(csv_path)}


@dataclass(frozen=True)
class Job:
    """What every task of a bench run shares: the model and its settings, the stopping
    criterion or the protocol that sets one per instance, the distance rule, and the
    provenance of the run's rows."""

    model: str
    settings: Any
    stop: Criterion | None
    protocol: Protocol | None
    rounding: str | None
    provenance: Provenance


@dataclass(frozen=True)
class Solved:
    """What a task returns to the driver: the row, the solution as its file's text (None when
    infeasible) with the file's suffix, and the anytime columns."""

    row: BenchRow
    suffix: str
    text: str | None
    anytime: dict[str, float | None]


_solvers: dict[tuple[str, str], Solver] = {}


def _solver(model: str, settings: Any) -> Solver:
    """One solver per worker process and configuration (a model loads its checkpoint once,
    not per instance)."""
    key = (model, repr(settings))
    if key not in _solvers:
        _solvers[key] = make_solver(model, settings)
    return _solvers[key]


def solve_task(path: Path, seed: int, job: Job) -> Solved:
    """Read, solve and validate one instance file with one seed (a task, in any process)."""
    solver = _solver(job.model, job.settings)
    instance = read_instance(path, job.rounding)
    reference, _ = best_known(instance, path)
    stop = job.protocol.stop(instance) if job.protocol is not None else job.stop
    result = run(solver, instance, seed=seed, stop=stop, bks=reference)
    row = BenchRow.of(result, set_name=path.parent.name, file=path, solver=solver.name,
                      settings=job.settings, seed=seed, stop=stop, provenance=job.provenance)
    limit = row.time_limit if row.time_limit is not None else result.seconds
    anytime = {"primal_integral": primal_integral(result.trajectory, reference, limit),
               "to_1pct_seconds": time_to_within(result.trajectory, reference)}
    text = format_solution(instance, result.solution) if result.feasible else None
    return Solved(row, solution_suffix(result.solution), text, anytime)


def run_config(model: str, settings: Any, seeds: list[int], stop: Criterion | None,
               rounding: str | None, protocol: Protocol | None = None) -> dict[str, Any]:
    """What identifies a benchmark run (stored as ``run.json``): one seed as a number, several
    as a list; a protocol, when one sets the limits."""
    config = {"model": model, "settings": asdict(settings),
              "seed": seeds[0] if len(seeds) == 1 else seeds, "stop": describe(stop),
              "rounding": rounding or "file"}
    if protocol is not None:
        config["protocol"] = protocol.describe()
    return config


def solution_name(path: Path, seed: int, runs: int) -> str:
    """The stem of an instance's solution file in ``solutions/`` (with the seed when a run
    has several)."""
    return path.stem if runs == 1 else f"{path.stem}-s{seed}"


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


def _refuse_overwrites(out: Path, stems: list[str], force: bool) -> None:
    """The files this run will write that exist and were not written by routecli bench."""
    if force:
        return
    mine = [out / REPORT_FILE, out / PLOT_FILE,
            *(out / SOLUTIONS_DIR / f"{stem}{suffix}" for stem in stems
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
def bench_folder(out: Path, stems: list[str], config: dict[str, Any],
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
            _refuse_overwrites(out, stems, force)
            yield out
    except LockHeld:
        raise OptionError(f"--out {out}: another routecli bench is writing to it; wait for it "
                          "or use another folder") from None


def run_bench(files: list[Path], model: str, settings: Any, out: Path, *, seed: int = 0,
              runs: int = 1, stop: Criterion | None = None, protocol: Protocol | None = None,
              executor: Executor | None = None, rounding: str | None = None,
              force: bool = False, on_start: Callable[[int], None] | None = None,
              on_row: Callable[[BenchRow], None] | None = None,
              finish: Callable[[list[BenchRow]], object] | None = None) -> list[BenchRow]:
    """Solve every (file, seed ``seed``..``seed + runs - 1``) not yet in
    ``out/results.csv`` on ``executor`` (default: this process); returns all rows of these
    files (old and new).

    ``settings`` is the model's ``Settings``; a ``protocol`` sets the time limit per
    instance and the distance rule (``stop`` and ``rounding`` are then not given). The solver
    is built, every instance checked against it and the folder claimed (:func:`bench_folder`)
    before any work, so an unknown model, a bad option, an instance the model refuses
    (another problem, too large for the memory here) or another run's folder fails early.
    ``on_start`` gets the number of tasks already done; ``finish`` runs on the rows while the
    folder is still locked (the report)."""
    solver = make_solver(model, settings)
    settings = ran_with(solver, settings)
    if protocol is not None:
        if stop is not None or rounding not in (None, protocol.rounding):
            raise OptionError(f"--protocol {protocol.name} sets the time limit and the distance "
                              "rule; scale the limit with --time-scale")
        rounding = protocol.rounding
    for path in files:
        try:
            instance = read_instance(path, rounding)
        except RoutecliError:
            continue  # a file that does not read fails as its task, the others stored
        require_problem(solver, instance)
    seeds = list(range(seed, seed + runs))
    config = run_config(model, settings, seeds, stop, rounding, protocol)
    stems = [solution_name(p, s, runs) for p in files for s in seeds]
    with bench_folder(out, stems, config, force):
        csv_path = out / RESULTS_FILE
        log = bench_log(csv_path)
        job = Job(model, settings, stop, protocol, rounding, Provenance.current())
        where = {p: portable_path(p) for p in files}
        tasks = [Task(task_key("bench", f"{p.stem}-s{s}", file=where[p], task_seed=s, run=config),
                      solve_task, (p, s, job)) for p in files for s in seeds]
        done = completed(csv_path)
        if on_start is not None:
            on_start(sum((where[t.args[0]], t.args[1]) in done for t in tasks))
        solutions_dir = out / SOLUTIONS_DIR
        solutions_dir.mkdir(exist_ok=True)

        def record(task: Task, solved: Solved) -> None:
            path, task_seed = task.args[0], task.args[1]
            row = replace(solved.row, file=where[path])  # the driver's view of the data root
            if solved.text is not None:
                name = solution_name(path, task_seed, runs) + solved.suffix
                atomic_write_text(solutions_dir / name, solved.text)
            if log.add_row(row, **solved.anytime) and on_row is not None:
                on_row(row)

        with executor or Inline() as engine:
            todo = [t for t in tasks if (where[t.args[0]], t.args[1]) not in done]
            if protocol is not None and todo:
                def keep(task: Task, machine: dict[str, Any]) -> None:
                    atomic_write_text(out / MACHINE_FILE, json.dumps(machine, indent=1) + "\n")

                run_tasks([Task(task_key("machine", "cpu", run=str(out.resolve()),
                                         at=job.provenance.date), measure_machine)],
                          engine, keep)
            run_tasks(todo, engine, record)
        wanted = set(where.values())
        result = [r for r in read_rows(csv_path) if r.file in wanted]
        if finish is not None:
            finish(result)
    return result


def protocol_report(out: Path, protocol: Protocol) -> str:
    """The protocol section of the report of the run in ``out`` (its rows, its workers'
    measured CPU)."""
    machine_path = out / MACHINE_FILE
    machine = json.loads(machine_path.read_text()) if machine_path.is_file() else None
    return markdown(bench_log(out / RESULTS_FILE).rows, protocol, machine)
