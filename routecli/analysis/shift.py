"""Distribution shift (PE paper Appendix J, Table 8): models trained on uniform instances with
the Appendix F ("medium") capacity, evaluated without retraining on shifted instances.

Shifts (:data:`SHIFTS`): ``uniform`` is the training distribution, the baseline every other
shift is compared with; ``low-capacity`` halves the vehicle capacity (about twice as many,
half as long routes; the paper does not give its value); ``clustered``, ``mixed`` and
``explosion`` move the customers (:mod:`routecli.generate`). Two kinds of model:

- the NDS search (:func:`search_rows`): the shipped learned removal policy (IPE+XPE), and the
  same search with non-neural removals (``strings``: SISR-style, ``random``), each on the same
  iteration budget and seed, against PyVRP references;
- the improvement backbones trained by ``routecli compare-pe`` (:func:`compare_pe_rows`): every
  (PE, seed) model kept in the run folder's ``models/``, improving shifted test sets with the
  protocol's step budget, against PyVRP references.

The question of Table 8 is whether IPE+XPE degrades less: :func:`degradation` gives each
method's gap on a shift minus its gap on ``uniform`` (per seed for compare-pe models, so the
spread over seeds sits beside every difference).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from routecli.errors import OptionError

LOW_CAPACITY_SHARE = 0.5  # of the training capacity (PE Appendix F rule)


@dataclass(frozen=True)
class Shift:
    """A test distribution: customer locations and the capacity as a share of training's."""

    distribution: str  # a routecli.generate location distribution
    capacity_share: float = 1.0


SHIFTS: dict[str, Shift] = {
    "uniform": Shift("uniform"),
    "low-capacity": Shift("uniform", LOW_CAPACITY_SHARE),
    "clustered": Shift("clustered"),
    "mixed": Shift("mixed"),
    "explosion": Shift("explosion"),
}
PROBLEMS = ("cvrp", "vrptw", "pcvrp")  # problems with a capacity and a location distribution
METHODS = ("learned", "strings", "random")  # removal policies of the NDS search

# PE paper Table 8 (CVRP-500, NDS backbone): method -> shift -> (Obj., Gap % to HGS)
PAPER_TABLE8: dict[str, dict[str, tuple[float, float | None]]] = {
    "HGS": {"low-capacity": (91.73, None), "clustered": (44.53, None)},
    "SISRs": {"low-capacity": (91.34, -0.38), "clustered": (44.31, -0.49)},
    "NDS": {"low-capacity": (91.15, -0.59), "clustered": (44.29, -0.54)},
    "SIN": {"low-capacity": (91.08, -0.70), "clustered": (44.25, -0.63)},
    "IPE+XPE": {"low-capacity": (91.04, -0.76), "clustered": (44.22, -0.70)},
}
# our rows that stand for a paper row: the shipped NDS policy is IPE+XPE; string removal in
# the same search is the SISR control
PAPER_ROW = {"reference": "HGS", "strings": "SISRs", "learned": "IPE+XPE"}


def parse_shifts(text: str) -> list[str]:
    """``all`` or comma-separated shift names, ``uniform`` first (the baseline)."""
    names = list(SHIFTS) if text.strip().lower() == "all" else \
        [s.strip().lower() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in SHIFTS]
    if unknown or not names:
        raise OptionError(f"unknown shift {unknown[0] if unknown else text!r}; choose 'all' or "
                          f"from {', '.join(SHIFTS)}")
    return ["uniform"] + [s for s in dict.fromkeys(names) if s != "uniform"]


def shifted_batch(problem: str, size: int, num: int, seed: int,
                  shift: str) -> dict[str, np.ndarray]:
    """``num`` instances of ``problem`` with ``size`` customers under ``shift``; ``uniform`` is
    exactly the training distribution (the Appendix F capacity)."""
    from routecli.generate import cvrp, pcvrp, pe_capacity, vrptw

    if problem not in PROBLEMS:
        raise OptionError(f"distribution shift needs a capacitated problem "
                          f"({', '.join(PROBLEMS)}), not {problem!r}")
    spec = SHIFTS[shift]
    capacity = None if spec.capacity_share == 1.0 else \
        max(1.0, math.floor(pe_capacity(size) * spec.capacity_share))
    generator = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}[problem]
    return generator(num, size, seed, capacity=capacity, distribution=spec.distribution)


def references(problem: str, batch: dict[str, np.ndarray], factor: float, jobs: int = 1,
               progress: bool = False) -> tuple[list[Any], np.ndarray]:
    """The batch's instances and their PyVRP reference costs (the gap-grade budget times
    ``factor``; cached)."""
    from routecli.baselines.reference import reference_budget, reference_solutions
    from routecli.generate import batch_instances
    from routecli.problems import cost

    instances = batch_instances(problem, batch)
    budget = reference_budget(problem, instances[0].size)
    budget = budget if factor == 1.0 else budget.scaled(factor)
    solutions = reference_solutions(instances, budget, jobs=jobs, progress=progress)
    return instances, np.array([cost(i, s) for i, s in zip(instances, solutions, strict=True)])


def search_rows(problem: str, size: int, num: int, seed: int, shifts: list[str],
                methods: list[str], iterations: int, ref_factor: float, jobs: int = 1,
                threads: int = 1, log: Callable[[str], None] = print,
                progress: bool = False) -> list[dict[str, Any]]:
    """Per (shift, method, instance): the NDS search with removal policy ``method`` on
    ``iterations`` iterations (seed ``seed``) against the PyVRP reference; ``reference`` rows
    hold PyVRP itself (gap 0)."""
    from routecli.solvers import make_solver, run
    from routecli.stop import MaxIterations

    solvers = {m: make_solver("nds", policy=m, threads=threads) for m in methods}
    rows: list[dict[str, Any]] = []
    for shift in shifts:
        instances, ref = references(problem, shifted_batch(problem, size, num, seed, shift),
                                    ref_factor, jobs, progress)
        for k, (instance, ref_cost) in enumerate(zip(instances, ref, strict=True)):
            rows.append({"shift": shift, "method": "reference", "instance": k,
                         "cost": float(ref_cost), "gap_pct": 0.0, "seconds": math.nan})
            for method in methods:
                result = run(solvers[method], instance, seed=seed,
                             stop=MaxIterations(iterations), bks=float(ref_cost))
                if not result.feasible:
                    raise RuntimeError(f"{method} returned an infeasible solution of {shift} "
                                       f"instance {k}: {result.problems[0]}")
                rows.append({"shift": shift, "method": method, "instance": k,
                             "cost": result.cost, "gap_pct": result.gap,
                             "seconds": round(result.seconds, 2)})
            log(f"{shift} instance {k}: reference {ref_cost:.3f}, "
                + ", ".join(f"{r['method']} {r['gap_pct']:+.2f}%" for r in rows[-len(methods):]))
    return rows


@dataclass(frozen=True)
class CompareRun:
    """A ``compare-pe`` run folder: its protocol and trained models."""

    folder: Path
    problem: str
    size: int
    eval_steps: int
    augment: int
    test_size: int
    test_seed: int
    models: list[tuple[str, int, Path]]  # (PE, seed, weights)

    @classmethod
    def read(cls, folder: Path) -> CompareRun:
        protocol_path = folder / "protocol.json"
        if not protocol_path.is_file():
            raise OptionError(f"--compare-pe {folder}: no protocol.json (not a compare-pe run "
                              "folder)")
        try:
            protocol = json.loads(protocol_path.read_text())
            problem, size = protocol["problem"], int(protocol["size"])
            backbone = protocol["backbone"]
        except (ValueError, KeyError, TypeError) as err:
            raise OptionError(f"{protocol_path}: not a compare-pe protocol ({err})") from None
        if backbone != "dact" or problem not in PROBLEMS:
            raise OptionError(f"--compare-pe {folder}: a {backbone.upper()} run on "
                              f"{problem.upper()}; shifts apply to DACT runs on "
                              f"{', '.join(p.upper() for p in PROBLEMS[:2])}")
        models = []
        for weights in sorted((folder / "models").glob("*.pt")):
            meta_path = weights.with_suffix(".json")
            try:
                meta = json.loads(meta_path.read_text())
                models.append((str(meta["pe"]), int(meta["seed"]), weights))
            except (OSError, ValueError, KeyError, TypeError):
                raise OptionError(f"{weights}: its {meta_path.name} (PE and seed) is missing or "
                                  "unreadable") from None
        if not models:
            raise OptionError(f"--compare-pe {folder}: no trained weights in models/ (they are "
                              "not committed; run compare-pe there first)")
        return cls(folder, problem, size, int(protocol["eval_steps"]),
                   int(protocol.get("augment", 1)), int(protocol["test_size"]),
                   int(protocol["test_seed"]), models)


def compare_pe_rows(run: CompareRun, shifts: list[str], pes: list[str] | None,
                    test_size: int | None, eval_steps: int | None, ref_factor: float,
                    jobs: int = 1, log: Callable[[str], None] = print,
                    progress: bool = False) -> list[dict[str, Any]]:
    """Per (shift, PE, seed): the mean objective and gap of the trained model improving the
    shifted test set (the protocol's test seed, size and step budget unless overridden)."""
    import torch

    from routecli.improve.env import depot_slots
    from routecli.improve.model import load_model
    from routecli.improve.train import evaluate
    from routecli.problems import gap

    models = [m for m in run.models if pes is None or m[0] in pes]
    if not models:
        raise OptionError(f"--pe {','.join(pes or [])}: no such model in {run.folder}/models "
                          f"(it has {', '.join(sorted({m[0] for m in run.models}))})")
    num = test_size or run.test_size
    steps = eval_steps or run.eval_steps
    rows: list[dict[str, Any]] = []
    for shift in shifts:
        batch = shifted_batch(run.problem, run.size, num, run.test_seed, shift)
        _, ref = references(run.problem, batch, ref_factor, jobs, progress)
        for pe, seed, weights in models:
            with torch.inference_mode():
                best, _ = evaluate(load_model(weights), run.problem, batch, steps,
                                   seed=run.test_seed, augment=run.augment,
                                   depots=depot_slots(run.problem, batch))
            costs = best.double().numpy()
            mean_gap = float(gap(costs, ref).mean())
            rows.append({"shift": shift, "pe": pe, "seed": seed, "obj": float(costs.mean()),
                         "gap_pct": mean_gap, "reference": float(ref.mean())})
            log(f"{shift} {pe} seed {seed}: obj {costs.mean():.4f}, gap {mean_gap:.2f}%")
    return rows


@dataclass(frozen=True)
class Cell:
    """One method on one shift: mean objective and gap (%), the gap's change from
    ``uniform``, and the spread of each: the standard error over instances for the search (one
    seed; shifts have different instances, so the change's error combines both), the sample
    standard deviation over seeds for compare-pe models (the change taken seed by seed)."""

    obj: float
    gap: float
    gap_spread: float
    change: float
    change_spread: float


def _sd(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) if len(values) > 1 else math.nan


def degradation(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Cell]]:
    """``{method: {shift: Cell}}`` from :func:`search_rows` (``key="method"``) or
    :func:`compare_pe_rows` (``key="pe"``)."""
    out: dict[str, dict[str, Cell]] = {}
    per_seed = key == "pe"
    objective = "obj" if per_seed else "cost"
    for method in dict.fromkeys(r[key] for r in rows):
        mine = [r for r in rows if r[key] == method]
        base = [r for r in mine if r["shift"] == "uniform"]
        base_gaps = np.array([r["gap_pct"] for r in base])
        cells = {}
        for shift in dict.fromkeys(r["shift"] for r in mine):
            here = [r for r in mine if r["shift"] == shift]
            gaps = np.array([r["gap_pct"] for r in here])
            if per_seed:
                by_seed = {r["seed"]: r["gap_pct"] for r in base}
                changes = np.array([r["gap_pct"] - by_seed[r["seed"]] for r in here
                                    if r["seed"] in by_seed])
                change = float(changes.mean()) if len(changes) else math.nan
                spread, change_spread = _sd(gaps), _sd(changes)
            else:
                change = float(gaps.mean() - base_gaps.mean()) if len(base) else math.nan
                spread = _sd(gaps) / math.sqrt(len(gaps))
                change_spread = math.hypot(spread, _sd(base_gaps) / math.sqrt(len(base_gaps))) \
                    if len(base) else math.nan
            cells[shift] = Cell(float(np.mean([r[objective] for r in here])),
                                float(gaps.mean()), spread, change, change_spread)
        out[method] = cells
    return out


# The columns of a table of ShiftStudy.rows (``--out`` CSV)
SHIFT_COLUMNS = ["method", "shift", "obj", "gap_pct", "gap_spread", "change_pct", "change_spread",
                 "paper_row", "paper_obj", "paper_gap_pct"]


@dataclass(frozen=True)
class ShiftStudy:
    """Table 8 measured: each method's (or model's) cell per shift, the paper's row each stands
    for, every run's row and what the run was (``meta``)."""

    title: str
    cells: dict[str, dict[str, Cell]]
    paper_rows: dict[str, str]
    runs: list[dict[str, Any]]
    meta: dict[str, Any]

    def rows(self) -> list[dict[str, Any]]:
        """One row per (method, shift), beside the paper's values where a row stands for one."""
        rows = []
        for method, per_shift in self.cells.items():
            paper = PAPER_TABLE8.get(self.paper_rows.get(method, ""), {})
            for name, cell in per_shift.items():
                paper_obj, paper_gap = paper.get(name, (None, None))
                rows.append({"method": method, "shift": name, "obj": cell.obj,
                             "gap_pct": cell.gap, "gap_spread": cell.gap_spread,
                             "change_pct": cell.change, "change_spread": cell.change_spread,
                             "paper_row": self.paper_rows.get(method), "paper_obj": paper_obj,
                             "paper_gap_pct": paper_gap})
        return rows


def shift_study(shifts: list[str], *, compare_pe: Path | None = None,
                pes: list[str] | None = None, test_size: int | None = None,
                eval_steps: int | None = None, problem: str = "cvrp", size: int = 100,
                num: int = 8, seed: int = 0, methods: Sequence[str] = METHODS,
                iterations: int = 100, ref_budget: float = 1.0, jobs: int = 1, threads: int = 1,
                log: Callable[[str], None] = print, progress: bool = False) -> ShiftStudy:
    """The models of a compare-pe folder (``compare_pe``: its DACT models, or only ``pes``),
    else the NDS search with each removal ``methods`` on ``num`` instances per shift."""
    if compare_pe is not None:
        run = CompareRun.read(compare_pe)
        runs = compare_pe_rows(run, shifts, pes, test_size, eval_steps, ref_budget, jobs, log)
        title = (f"compare-pe models of {compare_pe} ({run.problem.upper()}-{run.size}, DACT), "
                 f"{test_size or run.test_size} test instances per shift: gap % to PyVRP, "
                 "mean ± sd over seeds")
        meta = {"problem": run.problem, "size": run.size, "folder": str(compare_pe),
                "test_size": test_size or run.test_size,
                "eval_steps": eval_steps or run.eval_steps, "test_seed": run.test_seed}
        return ShiftStudy(title, degradation(runs, "pe"), {}, runs, meta)
    if problem not in PROBLEMS:
        raise OptionError(f"--problem must be one of {', '.join(PROBLEMS)}, got {problem!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise OptionError(f"unknown --method {unknown[0] if unknown else ','.join(methods)!r}; "
                          f"choose from {', '.join(METHODS)}")
    runs = search_rows(problem, size, num, seed, shifts, list(methods), iterations, ref_budget,
                       jobs, threads, log, progress=progress)
    title = (f"NDS search on {problem.upper()}-{size}, {num} instances per shift, "
             f"{iterations} iterations, seed {seed}: gap % to PyVRP ± standard error")
    meta = {"problem": problem, "size": size, "num": num, "iterations": iterations, "seed": seed}
    return ShiftStudy(title, degradation(runs, "method"), PAPER_ROW, runs, meta)
