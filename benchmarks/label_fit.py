"""Does fitting PyVRP labels make greedy MiLoop better? Label likelihood against greedy gap.

    .venv/bin/python benchmarks/label_fit.py --problem tsp routecli/checkpoints/miloop-tsp.pt \
        runs/miloop-tsp-sup2/best.pt --out benchmarks/results/label_fit_tsp.md

On the fixed validation set of ``routecli train`` (``--problem``, default sizes and seed), for
each checkpoint: the mean negative log-likelihood per decision of the PyVRP reference
solutions under teacher forcing (the supervised recipe's loss, labels in one seeded random
order and direction), and the greedy gap to the same references, both in float32 and
bfloat16. A supervised run that lowers the first without the second is learning the labels,
not better tours (exposure bias: the memory sees label prefixes in training, its own at
inference). One thread; appends a markdown table with the commit to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from routecli.baselines.reference import reference_solutions
from routecli.generate import batch_instances
from routecli.miloop.decode import decode
from routecli.miloop.labels import label_sequences
from routecli.miloop.model import load_policy, rollout
from routecli.miloop.train import TrainConfig, label_env, pyvrp_budget, validation_batch
from routecli.problems import gap
from routecli.results import git_commit
from routecli.train import checkpoint


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="tsp", choices=("tsp", "cvrp", "pdtsp"))
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--val-size", type=int, default=TrainConfig.val_size)
    parser.add_argument("--val-instances", type=int, default=TrainConfig.val_instances)
    parser.add_argument("--val-time-limit", type=float, default=TrainConfig.val_time_limit)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    cfg = TrainConfig(problem=args.problem, run_dir="unused", val_size=args.val_size,
                      val_instances=args.val_instances, val_time_limit=args.val_time_limit)
    raw = validation_batch(cfg)
    instances = batch_instances(args.problem, raw)
    solutions = reference_solutions(instances, pyvrp_budget(cfg.val_time_limit), progress=False)
    reference = np.array([inst.cost(sol) for inst, sol in zip(instances, solutions, strict=True)])
    labels = label_sequences(args.problem, list(solutions), np.random.default_rng(0))
    data = {k: torch.as_tensor(v, dtype=torch.long if k == "demand" else torch.float32)
            for k, v in raw.items()}
    lines = ["| checkpoint | sha256 | precision | label NLL / decision | greedy gap % |",
             "|---|---|---|---|---|"]
    for path in args.checkpoints:
        model = load_policy(path).eval()
        digest = checkpoint.load(path)["sha256"][:8]
        for precision in ("fp32", "bf16"):
            with torch.no_grad():
                forced = rollout(model, label_env(args.problem, data, labels), replay=labels,
                                 precision=precision)
                greedy = decode(model, data, "greedy", precision=precision).cost.numpy()
            nll = float(-forced.log_prob.sum() / forced.decisions.sum())
            greedy_gap = float(gap(greedy, reference).mean())
            lines.append(f"| {path} | {digest} | {precision} | {nll:.4f} | {greedy_gap:.2f} |")
            print(lines[-1], flush=True)
    if args.out:
        commit = git_commit()
        command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
        header = (f"\n{args.problem.upper()}-{cfg.val_size}, {cfg.val_instances} validation "
                  f"instances (seed {cfg.val_seed}); commit {commit}; `{command}`\n\n")
        with open(args.out, "a") as fh:
            fh.write(header + "\n".join(lines) + "\n")
    return lines


if __name__ == "__main__":
    main()
