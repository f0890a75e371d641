"""Pilot for the controlled PE comparison: which problem size, capacity and evaluation budget
can separate encodings (a protocol not at a ceiling).

    .venv/bin/python benchmarks/pe_pilot.py --out benchmarks/results/pe_pilot \
        --cases 20:30,20:20,20:15,50:40 --steps 100,300,1000

For every candidate ``SIZE:CAPACITY`` (CVRP, uniform, demands U{1..9}; capacity 0: the PE
paper's Appendix F rule) it generates the comparison's fixed test set (128 instances, the
comparison's test seed), solves it with PyVRP on routecli's reference budget, and improves it
from the comparison's seeded random tours with the step budgets of ``--steps`` by

- ``random``: a uniformly random allowed move per step (the floor of any policy),
- ``teacher``: best improvement (every allowed move measured, the best applied),
- ``epsilon-teacher``: the imitation labeller (best improvement, a random move with
  probability 0.25),
- ``untrained``: the DACT backbone with the paper's IPE+XPE (``ipe_inv_xpe:schedule=geometric``)
  at its seed-0 initial weights,

one row per (case, steps, row) in ``--out/baselines.csv`` (a :class:`routecli.store.ResultStore`:
commit, date, command; resumable): mean gap, share of instances at the reference (gap below
0.01%), the routes of the references. ``--report`` writes ``--out/pilot.md`` and
``--out/pilot.png`` from the rows. A protocol can answer when the teacher is measurably above
the reference (gap >= 1%, fewer than half of the instances at it) and references hold >= 5
routes (docs/pe-paper.md, the pilot).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from routecli import generate
from routecli.baselines.reference import reference_solutions
from routecli.experiments.pe.protocol import Protocol
from routecli.generate import batch_instances
from routecli.improve.env import capacity_depot_slots, make_instances
from routecli.improve.imitation import teacher_evaluate
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.train import evaluate
from routecli.plots.figure import save_png
from routecli.problems import cost, gap
from routecli.results import ResultStore

FIELDS = ["size", "capacity", "steps", "row", "gap_pct", "at_reference", "mean_routes",
          "instances", "seconds"]
PAPER_IPE_XPE = "ipe_inv_xpe:schedule=geometric"
AT_REFERENCE_PCT = 0.01
TEACHERS = {"random": 1.0, "teacher": 0.0, "epsilon-teacher": 0.25}


def test_set(size: int, capacity: float, num: int) -> tuple[dict, np.ndarray, float]:
    """The comparison's test instances at ``capacity``, their PyVRP reference costs and the mean
    number of routes of the references."""
    batch = generate.cvrp(num, size, Protocol.test_seed, capacity=capacity)
    instances = batch_instances("cvrp", batch)
    solutions = reference_solutions(instances, progress=True)
    reference = np.array([cost(i, s) for i, s in zip(instances, solutions, strict=True)])
    routes = float(np.mean([len(s.routes) for s in solutions]))
    return batch, reference, routes


def gap_row(costs: torch.Tensor, reference: np.ndarray) -> dict[str, float]:
    gaps = gap(costs.double().numpy(), reference)
    return {"gap_pct": float(gaps.mean()), "at_reference": float((gaps < AT_REFERENCE_PCT).mean())}


def run(out: Path, cases: list[tuple[int, float]], steps: list[int], num: int) -> None:
    import time

    store = ResultStore(out / "baselines.csv", FIELDS, ["size", "capacity", "steps", "row"])
    for size, capacity in cases:
        if all(store.done(size=size, capacity=capacity, steps=t, row=r)
               for t in steps for r in [*TEACHERS, "untrained"]):
            continue
        batch, reference, routes = test_set(size, capacity, num)
        depots = capacity_depot_slots("cvrp", batch, capacity)  # as compare-pe --capacity
        data = make_instances("cvrp", batch, depots)
        torch.manual_seed(0)
        untrained = DACT(DACTConfig(problem="cvrp", pe=PAPER_IPE_XPE))
        for t in steps:
            for row in [*TEACHERS, "untrained"]:
                if store.done(size=size, capacity=capacity, steps=t, row=row):
                    continue
                started = time.perf_counter()
                if row == "untrained":
                    costs, _ = evaluate(untrained, "cvrp", batch, t, seed=Protocol.test_seed,
                                        depots=depots)
                else:
                    costs = teacher_evaluate(data, t, TEACHERS[row], Protocol.test_seed)
                stats = gap_row(costs, reference)
                store.add(size=size, capacity=capacity, steps=t, row=row, **stats,
                          mean_routes=round(routes, 2), instances=num,
                          seconds=round(time.perf_counter() - started, 1))
                print(f"CVRP-{size} capacity {capacity:g} steps {t} {row}: gap "
                      f"{stats['gap_pct']:.2f}%, at reference {stats['at_reference']:.2f}",
                      flush=True)


def report(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = ResultStore(out / "baselines.csv", FIELDS, ["size", "capacity", "steps", "row"]).rows
    cases = list(dict.fromkeys((r["size"], r["capacity"]) for r in rows))
    lines = ["# PE comparison pilot: baselines per candidate protocol", "",
             "CVRP, 128 test instances (the comparison's test seed), gap to PyVRP references; "
             "'at ref.': share of instances within 0.01% of the reference. Rows: "
             f"`{out / 'baselines.csv'}` (commit and command in each row).", "",
             "| size | capacity | routes | steps | random | untrained | teacher | "
             "at ref. | epsilon-teacher | at ref. |", "|---|---|---|---|---|---|---|---|---|---|"]
    figure, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 3.5), squeeze=False)
    for axis, (size, capacity) in zip(axes[0], cases, strict=True):
        mine = [r for r in rows if (r["size"], r["capacity"]) == (size, capacity)]
        steps = sorted({int(r["steps"]) for r in mine})
        get = {(int(r["steps"]), r["row"]): r for r in mine}
        for t in steps:
            cell = [get.get((t, name)) for name in ("random", "untrained", "teacher",
                                                     "epsilon-teacher")]
            if None in cell:
                continue
            rnd, unt, tea, eps = cell
            lines.append(f"| {size} | {capacity} | {float(rnd['mean_routes']):.1f} | {t} | "
                         f"{float(rnd['gap_pct']):.2f}% | {float(unt['gap_pct']):.2f}% | "
                         f"{float(tea['gap_pct']):.2f}% | {float(tea['at_reference']):.2f} | "
                         f"{float(eps['gap_pct']):.2f}% | {float(eps['at_reference']):.2f} |")
        for name in ("random", "untrained", "teacher", "epsilon-teacher"):
            xs = [t for t in steps if (t, name) in get]
            axis.plot(xs, [float(get[(t, name)]["gap_pct"]) for t in xs], marker="o", label=name)
        axis.set(xscale="log", yscale="log", xlabel="evaluation steps", ylabel="gap %",
                 title=f"CVRP-{size}, capacity {capacity}")
        axis.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    save_png(figure, out / "pilot.png")
    (out / "pilot.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cases", default="20:30,20:20,20:15,50:0",
                        help="comma list of SIZE:CAPACITY (capacity 0: the paper's rule)")
    parser.add_argument("--steps", default="100,300,1000")
    parser.add_argument("--num", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--report", action="store_true", help="write pilot.md/png, run nothing")
    args = parser.parse_args(argv)
    if args.report:
        report(args.out)
        return 0
    torch.set_num_threads(args.threads)
    cases = [(int(a), float(b) or float(generate.pe_capacity(int(a))))
             for a, b in (c.split(":") for c in args.cases.split(","))]
    run(args.out, cases, [int(s) for s in args.steps.split(",")], args.num)
    return 0


if __name__ == "__main__":
    sys.exit(main())
