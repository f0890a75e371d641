"""Why a lower label NLL need not give better greedy tours: teacher forcing against free running.

    .venv/bin/python benchmarks/exposure_bias.py --problem tsp routecli/checkpoints/miloop-tsp.pt \
        --out benchmarks/results/exposure_bias.md

On the fixed validation set of ``routecli train`` (PyVRP references on the deterministic
budget), for each checkpoint and the same instances, starts and references:

- teacher forcing (the supervised loss): the label's NLL per decision and the top-1 accuracy
  of the next label node, by tenth of the rollout;
- free running (greedy from the label's start): the gap, the share of chosen edges that are
  edges of the reference, the first step that leaves the reference, and the share of steps
  where the current node has no unvisited reference neighbour left ("stranded": every move is
  then off the reference, whatever the policy);
- labelled prefixes completed greedily: the gap after following the reference for the first
  p% of the decisions, which says where in the rollout the free-running gap is made;
- the memory: cosine similarity between the memory rows of the still-unvisited nodes under
  teacher forcing and under free running at the same step, and their mean norms.

One thread; appends markdown tables with the commit to ``--out`` and a PNG of the per-step
curves beside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from routecli.baselines.reference import reference_solutions
from routecli.generate import batch_instances
from routecli.miloop.labels import label_sequences
from routecli.miloop.model import load_policy, rollout
from routecli.miloop.train import TrainConfig, label_env, pyvrp_budget, validation_batch
from routecli.problems import gap
from routecli.results import git_commit
from routecli.train import checkpoint

PREFIXES = (0, 10, 25, 50, 75, 90)  # percent of the decisions taken from the label
MEMORY_STEPS = (0.1, 0.3, 0.5, 0.7, 0.9)  # where in the rollout the memories are compared


def reference_edges(labels: torch.Tensor, nodes: int, cyclic: bool) -> torch.Tensor:
    """``[B, N+1, N+1]`` bool: the undirected edges of each labelled sequence (a TSP tour closes)."""
    a, b = labels[:, :-1], labels[:, 1:]
    if cyclic:
        a, b = torch.cat([a, labels[:, -1:]], 1), torch.cat([b, labels[:, :1]], 1)
    adj = torch.zeros(labels.shape[0], nodes + 1, nodes + 1, dtype=torch.bool)  # + padding id
    rows = torch.arange(labels.shape[0])[:, None].expand_as(a)
    adj[rows, a, b] = True
    adj[rows, b, a] = True
    adj[:, 0, 0] = False  # CVRP depot padding is no edge
    return adj


class Recorder:
    """Per-step records of one rollout (a ``trace`` callback of :func:`rollout`)."""

    def __init__(self, adj: torch.Tensor, memory_at: set[int]):
        self.adj = adj
        self.memory_at = memory_at
        self.picked: list[torch.Tensor] = []  # [B] log-probability of the chosen node
        self.top1: list[torch.Tensor] = []  # [B] chosen node is the policy's argmax
        self.on_ref: list[torch.Tensor] = []  # [B] chosen edge is a reference edge
        self.stranded: list[torch.Tensor] = []  # [B] no unvisited reference neighbour
        self.memories: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # t -> (memory, unvisited)

    def __call__(self, t: int, obs, log_p: torch.Tensor, choice: torch.Tensor,
                 memory: torch.Tensor) -> None:
        batch = torch.arange(log_p.shape[0])
        cand = obs.nodes[:, obs.nodes.shape[1] - log_p.shape[1]:]  # [B, K]
        current = obs.nodes[:, 1]
        chosen = cand[batch, choice]
        self.picked.append(log_p[batch, choice].float())
        self.top1.append(log_p.argmax(1) == choice)
        self.on_ref.append(self.adj[batch, current, chosen])
        open_ref = self.adj[batch[:, None], current[:, None], cand] & obs.feasible  # [B, K]
        self.stranded.append(~open_ref.any(1))
        if t in self.memory_at:
            unvisited = torch.zeros(memory.shape[:2], dtype=torch.bool)
            unvisited[batch[:, None], cand] = obs.feasible
            self.memories[t] = (memory.float().clone(), unvisited)

    def stacked(self, name: str) -> np.ndarray:
        return torch.stack(getattr(self, name), 1).float().numpy()  # [B, T]


def by_tenth(values: np.ndarray) -> list[float]:
    """Mean of ``[B, T]`` per tenth of the steps."""
    parts = np.array_split(np.arange(values.shape[1]), 10)
    return [float(values[:, p].mean()) for p in parts]


def analyse(model, problem: str, data, labels, adj, reference, nodes) -> dict:
    steps = labels.shape[1] - 1
    memory_at = {max(1, round(f * steps)) for f in MEMORY_STEPS}
    with torch.no_grad():
        forced = Recorder(adj, memory_at)
        tf = rollout(model, label_env(problem, data, labels), replay=labels, trace=forced)
        free_replay = torch.full_like(labels, -1)
        keep = 1 if problem == "tsp" else 2  # the start (TSP) or depot and first customer
        free_replay[:, :keep] = labels[:, :keep]
        free = Recorder(adj, memory_at)
        fr = rollout(model, label_env(problem, data, labels), "greedy", replay=free_replay,
                     trace=free)
        prefix_gaps = {}
        for pct in PREFIXES:
            replay = labels.clone()
            replay[:, max(keep, 1 + round(pct / 100 * steps)):] = -1
            out = rollout(model, label_env(problem, data, labels), "greedy", replay=replay)
            prefix_gaps[pct] = float(gap(out.cost.numpy(), reference).mean())
    decisions = tf.decisions.numpy()
    on_ref = free.stacked("on_ref")
    first_off = np.where(on_ref.min(1) > 0, on_ref.shape[1], on_ref.argmin(1))
    memory_rows = []
    for t in sorted(memory_at):
        if t not in forced.memories or t not in free.memories:
            continue
        (m_tf, open_tf), (m_fr, open_fr) = forced.memories[t], free.memories[t]
        both = open_tf & open_fr
        cos = torch.nn.functional.cosine_similarity(m_tf, m_fr, dim=-1)[both]
        memory_rows.append((t, float(cos.mean()), float(m_tf.norm(dim=-1)[open_tf].mean()),
                            float(m_fr.norm(dim=-1)[open_fr].mean())))
    return {
        "nll": float(-tf.log_prob.sum() / decisions.sum()),
        "tf_top1": float(forced.stacked("top1").mean()),
        "tf_top1_tenths": by_tenth(forced.stacked("top1")),
        "tf_nll_tenths": by_tenth(-forced.stacked("picked")),
        "fr_gap": float(gap(fr.cost.numpy(), reference).mean()),
        "fr_on_ref": float(on_ref.mean()),
        "fr_on_ref_tenths": by_tenth(on_ref),
        "fr_stranded": float(free.stacked("stranded").mean()),
        "fr_stranded_tenths": by_tenth(free.stacked("stranded")),
        "first_off_median": float(np.median(first_off)),
        "prefix_gaps": prefix_gaps,
        "memory": memory_rows,
        "tf_top1_curve": forced.stacked("top1").mean(0).tolist(),
        "fr_on_ref_curve": on_ref.mean(0).tolist(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="tsp", choices=("tsp", "cvrp"))
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--val-size", type=int, default=TrainConfig.val_size)
    parser.add_argument("--val-instances", type=int, default=TrainConfig.val_instances)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    cfg = TrainConfig(problem=args.problem, run_dir="unused", val_size=args.val_size,
                      val_instances=args.val_instances)
    raw = validation_batch(cfg)
    instances = batch_instances(args.problem, raw)
    solutions = reference_solutions(instances, pyvrp_budget(cfg.val_time_limit), progress=False)
    reference = np.array([inst.cost(sol) for inst, sol in zip(instances, solutions, strict=True)])
    labels = label_sequences(args.problem, list(solutions), np.random.default_rng(0))
    nodes = raw["locs"].shape[1]
    adj = reference_edges(labels, nodes, cyclic=args.problem == "tsp")
    data = {k: torch.as_tensor(v, dtype=torch.long if k == "demand" else torch.float32)
            for k, v in raw.items()}
    summary = ["| checkpoint | sha256 | label NLL / decision | TF top-1 % | free greedy gap % "
               "| free edges on reference % | stranded steps % | median first step off |",
               "|---|---|---|---|---|---|---|---|"]
    tenths = ["| checkpoint | measure | " + " | ".join(f"{10 * i}-{10 * i + 10}%" for i in range(10))
              + " |", "|---|---|" + "---|" * 10]
    prefixes = ["| checkpoint | " + " | ".join(f"{p}% labelled" for p in PREFIXES) + " |",
                "|---|" + "---|" * len(PREFIXES)]
    memory = ["| checkpoint | step | cosine TF vs free (unvisited rows) | norm TF | norm free |",
              "|---|---|---|---|---|"]
    curves = {}
    for path in args.checkpoints:
        model = load_policy(path).eval()
        digest = checkpoint.load(path)["sha256"][:8]
        r = analyse(model, args.problem, data, labels, adj, reference, nodes)
        name = Path(path).as_posix()
        summary.append(f"| {name} | {digest} | {r['nll']:.4f} | {100 * r['tf_top1']:.1f} | "
                       f"{r['fr_gap']:.2f} | {100 * r['fr_on_ref']:.1f} | "
                       f"{100 * r['fr_stranded']:.1f} | {r['first_off_median']:.0f} |")
        for key, label in (("tf_top1_tenths", "TF top-1 %"), ("tf_nll_tenths", "TF NLL"),
                           ("fr_on_ref_tenths", "free on reference %"),
                           ("fr_stranded_tenths", "free stranded %")):
            scale = 1 if key == "tf_nll_tenths" else 100
            tenths.append(f"| {name} | {label} | "
                          + " | ".join(f"{scale * v:.{3 if scale == 1 else 1}f}" for v in r[key])
                          + " |")
        prefixes.append(f"| {name} | " + " | ".join(f"{r['prefix_gaps'][p]:.2f}" for p in PREFIXES)
                        + " |")
        for t, cos, n_tf, n_fr in r["memory"]:
            memory.append(f"| {name} | {t} | {cos:.3f} | {n_tf:.2f} | {n_fr:.2f} |")
        curves[f"{digest} TF top-1"] = (list(range(1, len(r["tf_top1_curve"]) + 1)),
                                        r["tf_top1_curve"])
        curves[f"{digest} free on reference"] = (list(range(1, len(r["fr_on_ref_curve"]) + 1)),
                                                 r["fr_on_ref_curve"])
        print(summary[-1], flush=True)
    text = "\n\n".join("\n".join(t) for t in (summary, tenths, prefixes, memory))
    print(text)
    if args.out:
        from routecli.plots.curves import plot_curves

        command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
        header = (f"\n## {args.problem.upper()}-{cfg.val_size}, {cfg.val_instances} validation "
                  f"instances (seed {cfg.val_seed})\n\ncommit {git_commit()}; `{command}`\n\n")
        with open(args.out, "a") as fh:
            fh.write(header + text + "\n")
        plot_curves(curves, args.out.with_name(f"{args.out.stem}_{args.problem}.png"),
                    "decision", "share of steps")


if __name__ == "__main__":
    main()
