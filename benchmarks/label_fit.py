"""Does fitting PyVRP labels make greedy MiLoop better? Label likelihood against greedy gap.

    .venv/bin/python benchmarks/label_fit.py --problem tsp routecli/checkpoints/miloop-tsp.pt \
        runs/miloop-tsp-sup2/best.pt --out benchmarks/results/label_fit_tsp.md

On the fixed validation set of ``routecli train`` (``--problem``, default sizes and seed), for
each checkpoint: the mean negative log-likelihood per decision of the PyVRP reference
solutions under teacher forcing (the supervised recipe's loss, labels in one seeded random
order and direction), and the greedy gap to the same references, both in float32 and
bfloat16. A supervised run that lowers the first without the second is learning the labels,
not better tours (exposure bias: the memory sees label prefixes in training, its own at
inference). For CVRP the NLL is split by the kind of decision (a route start, a step inside a
route, a return to the depot), each against the label's action and against every action as
good as it (:func:`routecli.miloop.labels.equivalent_actions`: any end of a route the label has
not started), which shows how much of the loss is the labels' arbitrary route order. One
thread; appends a markdown table with the commit to ``--out``.
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
from routecli.miloop.labels import equivalent_actions, label_sequences
from routecli.miloop.model import load_policy, rollout
from routecli.miloop.train import TrainConfig, label_env, pyvrp_budget, validation_batch
from routecli.problems import gap
from routecli.results import git_commit
from routecli.train import checkpoint

KINDS = ("route start", "in route", "return")


def decision_split(model: torch.nn.Module, problem: str, data: dict[str, torch.Tensor],
                   labels: torch.Tensor, precision: str) -> dict[str, tuple[float, float, float]]:
    """Per kind of CVRP decision: (share of the decisions, NLL of the label's action, NLL of
    the set of equivalent actions), in nats per decision, under teacher forcing."""
    sets = equivalent_actions(problem, labels, data["locs"].shape[1])
    assert sets is not None
    previous = torch.nn.functional.pad(labels, (1, 0))[:, :-1]
    kind = torch.full_like(labels, -1)  # -1: depot padding after the last return
    kind[(labels != 0) & (previous == 0)] = 0
    kind[(labels != 0) & (previous != 0)] = 1
    kind[(labels == 0) & (previous != 0)] = 2
    sums = torch.zeros(3, 3, dtype=torch.float64)  # [kind, (count, label NLL, set NLL)]

    def trace(t, obs, log_p, choice, memory):  # noqa: ANN001, ARG001 - rollout's trace callback
        if t >= labels.shape[1]:
            return
        cand = obs.nodes[:, obs.nodes.shape[1] - log_p.shape[1]:]
        ids = sets[:, t]
        good = torch.nn.functional.pad(ids, (0, 1)).gather(1, cand.clamp_max(ids.shape[1]))
        good = good.scatter(1, choice[:, None], True)
        label_nll = -log_p.gather(1, choice[:, None]).squeeze(1).double()
        set_nll = -log_p.masked_fill(~good, float("-inf")).logsumexp(1).double()
        for k in range(3):
            rows = kind[:, t] == k
            sums[k] += torch.stack([rows.sum().double(), label_nll[rows].sum(),
                                    set_nll[rows].sum()])

    with torch.no_grad():
        rollout(model, label_env(problem, data, labels), replay=labels, precision=precision,
                trace=trace)
    total = float(sums[:, 0].sum())
    return {name: (float(sums[k, 0]) / total, float(sums[k, 1] / sums[k, 0]),
                   float(sums[k, 2] / sums[k, 0])) for k, name in enumerate(KINDS)}


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
    splits = ["", "Per kind of decision, share of the decisions: NLL of the label's action / of "
              "the set of equivalent actions (nats):", "",
              "| checkpoint | sha256 | precision | " + " | ".join(KINDS) + " |",
              "|---|---|---|---|---|---|"]
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
            if args.problem == "cvrp":
                split = decision_split(model, args.problem, data, labels, precision)
                splits.append(f"| {path} | {digest} | {precision} | " + " | ".join(
                    f"{share:.1%}: {label:.3f} / {ties:.3f}"
                    for share, label, ties in split.values()) + " |")
                print(splits[-1], flush=True)
    if args.out:
        commit = git_commit()
        command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
        header = (f"\n{args.problem.upper()}-{cfg.val_size}, {cfg.val_instances} validation "
                  f"instances (seed {cfg.val_seed}); commit {commit}; `{command}`\n\n")
        with open(args.out, "a") as fh:
            fh.write(header + "\n".join(lines + (splits if len(splits) > 5 else [])) + "\n")
    return lines


if __name__ == "__main__":
    main()
