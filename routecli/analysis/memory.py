"""What MiLoop's memory holds as decoding proceeds (MiLoop Appendix D: Table 8, Figures 3-4).

During a greedy rollout we record, at every construction step ``t = 2..N``, the representation
``z_{t,i}`` of every unvisited node ``i`` just before action scoring: the gated memory row
``M~_t`` for a model with memory, the last attention layer's output ``H_t^(L)`` for one
without (a dynamic embedding recomputed at every step). Two cosine similarities follow:

- adjacent steps, Eq. 31-32: ``C_{t,i} = cos(z~_{t-1,i}, z~_{t,i})`` over the nodes
  ``I_t = A_{t-1} & A_t`` present at both steps, each step's vectors centred on their mean
  over ``I_t`` (removing the component all remaining nodes share);
- first recorded step, Eq. 32: ``A_{t,i} = cos(z_{t,i}, z_{2,i})``, uncentred, for
  ``t = 3..N`` (at ``t = 2`` it is 1 by definition).

Means are over all (instance, step, node) triples; the per-step means draw Figure 3. CVRP
counts the customers only (the depot is a candidate whenever the vehicle is away).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from routecli.errors import OptionError
from routecli.miloop.decode import make_env
from routecli.miloop.model import MiLoop
from routecli.resources import require_memory

# MiLoop Table 8 (TSP-100, greedy): mean cosine similarity per measure and model
PAPER_TABLE8 = {"adjacent": {"dynamic": 0.8480, "miloop": 0.9159},
                "first": {"dynamic": 0.7655, "miloop": 0.4497}}
PROBLEMS = ("tsp", "cvrp")


@dataclass(frozen=True)
class StepSimilarity:
    """Mean similarities at construction step ``step`` (``t``), over instances and nodes."""

    step: int
    adjacent: float  # mean C_{t,i} (NaN at t = 2)
    first: float  # mean A_{t,i} (NaN at t = 2)
    nodes: int  # (instance, node) pairs behind ``adjacent``


@dataclass(frozen=True)
class MemoryDynamics:
    """One model's Table 8 column and its per-step curve."""

    label: str
    adjacent: float  # mean C_{t,i} over every (instance, step, node)
    first: float  # mean A_{t,i} over every (instance, step, node)
    cost: float  # mean greedy objective of the rollouts measured
    steps: list[StepSimilarity]


def without_memory(model: MiLoop) -> MiLoop:
    """The same weights run as a plain dynamic embedding (``memory=False``): what the memory
    contributes to a trained policy, not a trained baseline."""
    plain = MiLoop(replace(model.config, memory=False))
    plain.load_state_dict(model.state_dict())
    return plain.eval()


def _cosine(a: Tensor, b: Tensor) -> Tensor:
    return F.cosine_similarity(a, b, dim=-1, eps=1e-12)


@torch.inference_mode()
def memory_dynamics(model: MiLoop, batch: dict[str, Tensor], label: str) -> MemoryDynamics:
    """Greedy rollouts of ``batch`` (``locs`` ``[B, N, 2]``, CVRP ``demand`` and
    ``capacity``) with ``model``, measured as the module docstring says."""
    problem = model.config.problem
    if problem not in PROBLEMS:
        raise ValueError(f"memory dynamics are measured on {', '.join(PROBLEMS)}, "
                         f"not {problem!r}")
    model.eval()
    locs = batch["locs"].float()
    num, nodes = locs.shape[:2]
    # each step's pairwise tensors (attention and bias of every node pair, float32, with
    # their temporaries) dominate: about 64 bytes per pair and instance
    require_memory(64 * num * (nodes + 1) ** 2, f"greedy rollouts of {num:,} instance"
                   f"{'s' * (num != 1)} of {nodes:,} nodes")
    rows = torch.arange(num)
    start = torch.zeros(num, dtype=torch.long)
    env = make_env(problem, batch, rows, locs, start if problem == "tsp" else None)
    last_layer: list[Tensor] = []
    hook = None
    if not model.config.memory:
        hook = model.blocks[-1].register_forward_hook(
            lambda _module, _inputs, output: last_layer.append(output))
    memory = model.new_memory(num, nodes, locs.device)
    first: tuple[Tensor, Tensor] | None = None  # z at t = 2 [B, N+1, D] and presence [B, N+1]
    previous: tuple[Tensor, Tensor] | None = None
    steps: list[StepSimilarity] = []
    totals = {"adjacent": [0.0, 0], "first": [0.0, 0]}
    first_call = True
    try:
        while not bool(env.done.all()):
            obs = env.observe()
            logits, memory = model.step(obs, memory, first_call)
            cand = obs.nodes[:, 2:]  # [B, K]
            if model.config.memory:
                z_rows = memory.gather(1, cand[..., None].expand(-1, -1, memory.shape[-1]))
            else:
                z_rows = last_layer.pop()[:, 2:]  # [B, K, D]
            present_rows = obs.valid[:, 2:]
            if problem == "cvrp":
                present_rows = present_rows & (cand != 0)
            z = torch.zeros(num, nodes + 1, z_rows.shape[-1])
            present = torch.zeros(num, nodes + 1, dtype=torch.bool)
            z[rows[:, None], cand] = z_rows.float()
            present[rows[:, None], cand] = present_rows
            present[:, nodes] = False  # the padding id
            adjacent_mean = first_mean = float("nan")
            pairs = 0
            if previous is not None and first is not None:
                adjacent_sum, pairs = _adjacent(previous, (z, present))
                first_sum, first_pairs = _first(first, (z, present))
                totals["adjacent"][0] += adjacent_sum
                totals["adjacent"][1] += pairs
                totals["first"][0] += first_sum
                totals["first"][1] += first_pairs
                adjacent_mean = adjacent_sum / pairs if pairs else float("nan")
                first_mean = first_sum / first_pairs if first_pairs else float("nan")
            else:
                first = (z, present)
            steps.append(StepSimilarity(len(steps) + 2, adjacent_mean, first_mean, pairs))
            previous = (z, present)
            env.step(cand.gather(1, logits.argmax(1, keepdim=True)).squeeze(1))
            first_call = False
    finally:
        if hook is not None:
            hook.remove()
    return MemoryDynamics(label, _mean(*totals["adjacent"]), _mean(*totals["first"]),
                          float(env.cost().mean()), steps)


def _mean(total: float, count: float) -> float:
    return total / count if count else float("nan")


def _adjacent(before: tuple[Tensor, Tensor], now: tuple[Tensor, Tensor]) -> tuple[float, int]:
    """Sum and count of the centred ``C_{t,i}`` (Eq. 31-32) over the nodes present at both
    steps, for instances where at least two are (one centred vector is zero)."""
    (z_prev, p_prev), (z_now, p_now) = before, now
    shared = p_prev & p_now  # [B, N+1] I_t
    count = shared.sum(1, keepdim=True)  # [B, 1]
    shared = shared & (count >= 2)
    weight = shared[..., None].float()
    denominator = count.clamp_min(1)[..., None].float()
    centred_prev = z_prev - (z_prev * weight).sum(1, keepdim=True) / denominator  # Eq. 31
    centred_now = z_now - (z_now * weight).sum(1, keepdim=True) / denominator
    similarity = _cosine(centred_prev, centred_now)  # [B, N+1]
    return float(similarity[shared].sum()), int(shared.sum())


def _first(first: tuple[Tensor, Tensor], now: tuple[Tensor, Tensor]) -> tuple[float, int]:
    """Sum and count of ``A_{t,i}`` (Eq. 32) over the nodes present now and at ``t = 2``."""
    (z_first, p_first), (z_now, p_now) = first, now
    shared = p_first & p_now
    return float(_cosine(z_first, z_now)[shared].sum()), int(shared.sum())


def plot_dynamics(results: list[MemoryDynamics], path: str, caption: str) -> None:
    """Figure 3: mean ``C_t`` and ``A_t`` per construction step, one line per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.plots.figure import save_png

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharex=True)
    for result in results:
        t = [s.step for s in result.steps]
        for ax, key in zip(axes, ("adjacent", "first"), strict=True):
            ax.plot(t, [getattr(s, key) for s in result.steps], lw=1.4,
                    label=f"{result.label} (mean {getattr(result, key):.3f})")
    axes[0].set_title("adjacent steps: centred cos(z[t-1,i], z[t,i])", fontsize=9)
    axes[1].set_title("first recorded step: cos(z[t,i], z[2,i])", fontsize=9)
    for ax in axes:
        ax.set_xlabel("construction step t")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("mean cosine similarity")
    fig.suptitle(caption, fontsize=9)
    save_png(fig, path, dpi=130)


def memory_study(problem: str, checkpoint: Path | None = None, baselines: Sequence[Path] = (),
                 size: int = 100, num: int = 16, seed: int = 0) -> list[MemoryDynamics]:
    """What the memory holds on ``num`` uniform instances of ``problem`` (MiLoop Table 8): the
    weights of ``checkpoint`` (default: the shipped ones), the same weights with the memory
    off, and every checkpoint of ``baselines``."""
    from routecli import generate
    from routecli.miloop.model import load_policy
    from routecli.train.checkpoint import shipped

    if problem not in PROBLEMS:
        raise OptionError(f"--problem must be one of {', '.join(PROBLEMS)}, got {problem!r}")
    path = checkpoint or shipped(f"miloop-{problem}.pt")
    model = load_policy(path, expect={"problem": problem})
    models = [(f"MiLoop ({path.name})", model),
              (f"{path.name}, memory off", without_memory(model))]
    models += [(extra.name, load_policy(extra, expect={"problem": problem}))
               for extra in baselines]
    raw = generate.GENERATORS[problem](num, size, seed)
    batch = {k: torch.as_tensor(v, dtype=torch.long if k == "demand" else torch.float32)
             for k, v in raw.items()}
    return [memory_dynamics(candidate, batch, label) for label, candidate in models]


# The columns of a table of memory_rows (``--out`` CSV)
MEMORY_COLUMNS = ["model", "adjacent", "first", "cost", "adjacent_paper_dynamic",
                  "adjacent_paper_miloop", "first_paper_dynamic", "first_paper_miloop"]


def memory_rows(results: list[MemoryDynamics]) -> list[dict[str, Any]]:
    """One table row per model, beside the paper's values."""
    return [{"model": r.label, "adjacent": r.adjacent, "first": r.first, "cost": r.cost,
             "adjacent_paper_dynamic": PAPER_TABLE8["adjacent"]["dynamic"],
             "adjacent_paper_miloop": PAPER_TABLE8["adjacent"]["miloop"],
             "first_paper_dynamic": PAPER_TABLE8["first"]["dynamic"],
             "first_paper_miloop": PAPER_TABLE8["first"]["miloop"]} for r in results]
