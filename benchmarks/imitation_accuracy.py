"""How close an imitation-trained improvement policy is to its teacher, on a PE curve's
validation set or a ``compare-pe`` folder's test set.

    .venv/bin/python benchmarks/imitation_accuracy.py data/runs/pe_curve/cvrp20-imitation-c300 \
        --pe ipe_inv_xpe --seed 0 --out benchmarks/results/imitation_accuracy.md
    .venv/bin/python benchmarks/imitation_accuracy.py \
        benchmarks/results/compare_pe/cvrp10-dact-imitation --pe ipe_inv,ipe_xpe --seed 2 \
        --out benchmarks/results/compare_pe/cvrp10-dact-imitation/teacher_agreement.md

``benchmarks/pe_curve.py --budget cpu:...,imitation=K`` and ``routecli compare-pe --budget
imitation`` teach DACT the best-improvement move (``routecli.improve.moves.best_pairwise``) of
the states they label. This script loads the trained weights of each (PE, seed) of such a
folder (``state/`` or ``models/``, its ``test.npz`` and ``reference.csv``) and improves the
test instances from the folder's seeded random tours for ``--steps`` moves three ways: the
policy's sampled moves (what the folder measures), its most likely move (argmax), and the
teacher's own move. For the argmax run it also gives the share of states where the policy's
most likely move is the teacher's. A policy close to its teacher scores near the teacher; one
that is not says that what it lacks is accuracy, not the target's form or the decoding. One
thread; appends one markdown table per PE, with the commit, to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from routecli.atomic import atomic_write_text
from routecli.experiments.pe.pairs import slug
from routecli.generate.batch import load_batch
from routecli.improve.env import initial_orders, make_instances
from routecli.improve.model import load_model
from routecli.improve.moves import (
    OPERATORS,
    as_good_as_best,
    best_pairwise,
    pairwise_tour_costs,
    unflatten_move,
)
from routecli.improve.train import evaluate, make_env
from routecli.nn.device import generator as seeded_generator
from routecli.problems import gap
from routecli.results import Provenance, read_csv


@torch.no_grad()
def deterministic_run(model: torch.nn.Module, problem: str, batch: dict, steps: int, seed: int,
                      teacher: bool) -> tuple[torch.Tensor, dict[str, list[float]]]:
    """Best costs after ``steps`` argmax (or, with ``teacher``, best-improvement) moves from
    the seeded random tours, and per step the shares of states where argmax is the teacher's
    move, is as good as it (ties: CVRP's depot copies make several moves equal), and improves
    the tour."""
    data = make_instances(problem, batch)
    env = make_env(model, data, initial_orders(data, seeded_generator("cpu", seed)), OPERATORS)
    shares: dict[str, list[float]] = {"teacher": [], "tie": [], "improves": []}
    for _ in range(steps):
        obs = env.observe()
        assert obs.allowed is not None  # pairwise moves
        costs = pairwise_tour_costs(env.order, env.data.coords, obs.allowed)  # [B, 3, V, V]
        best = best_pairwise(costs)  # [B, 3]
        if teacher:
            action = best
        else:
            logits = model.move_logits(obs).float().flatten(1)
            index = logits.masked_fill(~obs.allowed.flatten(1), -torch.inf).argmax(1)
            action = unflatten_move(index, costs.shape[-1])
            flat = costs.flatten(1)
            chosen = flat.gather(1, index[:, None])[:, 0]
            tie = as_good_as_best(flat).gather(1, index[:, None])[:, 0]
            shares["teacher"].append((action == best).all(1).float().mean().item())
            shares["tie"].append(tie.float().mean().item())
            shares["improves"].append((chosen < env.cost - 1e-6).float().mean().item())
        env.step(action)
    return env.best, shares


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path,
                        help="a benchmarks/pe_curve.py or routecli compare-pe --out folder")
    parser.add_argument("--pe", default="ipe_inv_xpe", help="one PE spec or a comma list")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None,
                        help="improvement steps (default: the folder's evaluation steps)")
    parser.add_argument("--out", type=Path, default=None, help="append the tables to this file")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    protocol = json.loads((args.folder / "protocol.json").read_text())
    weights = {}
    for pe in filter(None, (p.strip() for p in args.pe.split(","))):
        found = [args.folder / sub / f"{slug(pe)}-s{args.seed}.pt" for sub in ("state", "models")]
        weights[pe] = next((path for path in found if path.is_file()), None)
        if weights[pe] is None:
            raise SystemExit(f"error: no trained weights for {pe} seed {args.seed} in "
                             f"{args.folder}/state or {args.folder}/models")
    problem, batch = load_batch(args.folder / "test.npz")
    reference = np.array([float(r["cost"]) for r in read_csv(args.folder / "reference.csv")])
    steps = args.steps or int(protocol["eval_steps"])
    seed = int(protocol["test_seed"])

    def mean_gap(costs: torch.Tensor) -> float:
        return float(gap(costs.double().numpy(), reference).mean())

    teacher: torch.Tensor | None = None
    for pe, path in weights.items():
        model = load_model(path).eval()
        if teacher is None:  # the teacher's run needs a model only for the env's kind
            teacher, _ = deterministic_run(model, problem, batch, steps, seed, teacher=True)
        sampled, _ = evaluate(model, problem, batch, steps, seed=seed)
        argmax, shares = deterministic_run(model, problem, batch, steps, seed, teacher=False)
        text = table(f"{args.folder} {pe} seed {args.seed}", steps, len(reference),
                     mean_gap(sampled), mean_gap(argmax), mean_gap(teacher), shares)
        print(text)
        if args.out is not None:
            previous = args.out.read_text() if args.out.is_file() else \
                "# Imitation-trained improvement policies against their teacher\n"
            atomic_write_text(args.out, previous + text)


def table(title: str, steps: int, instances: int, sampled: float, argmax: float,
          teacher: float, shares: dict[str, list[float]]) -> str:
    tenth = max(steps // 10, 1)

    def cells(key: str) -> str:
        share = shares[key]
        return f"{np.mean(share):.3f} ({np.mean(share[:tenth]):.3f} / {np.mean(share[-tenth:]):.3f})"

    provenance = Provenance.current()
    return (
        f"\n## {title}: {steps} steps on {instances} validation instances\n\n"
        "Shares of the argmax run's states, over all steps (first tenth / last tenth).\n\n"
        "| moves | gap to PyVRP | argmax = teacher's move | argmax as good as the teacher's "
        "| argmax improves the tour |\n"
        "|---|---:|---:|---:|---:|\n"
        f"| policy, sampled | {sampled:.2f}% | | | |\n"
        f"| policy, argmax | {argmax:.2f}% | {cells('teacher')} | {cells('tie')} | "
        f"{cells('improves')} |\n"
        f"| teacher (best improvement) | {teacher:.2f}% | 1 | 1 | |\n\n"
        f"commit {provenance.commit}, {provenance.date}, `{provenance.command}`\n")


if __name__ == "__main__":
    sys.exit(main())
