"""Small instances and tours shared by the improvement tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from routecli.generate import batch_instances
from routecli.improve import moves
from routecli.improve.env import Env, Instances, initial_orders, make_instances
from routecli.improve.train import generate_instances
from routecli.problems import Instance


@pytest.fixture(autouse=True)
def one_thread():
    """Small tensors: one torch thread is faster, and much faster on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def instances(problem: str, size: int, num: int, seed: int = 0) -> tuple[Instances, list[Instance]]:
    """Slot-layout tensors and the matching :mod:`routecli.problems` instances."""
    raw = generate_instances(problem, size, num, seed)
    return make_instances(problem, raw), batch_instances(problem, raw)


def random_walk(data: Instances, steps: int, seed: int = 0) -> torch.Tensor:
    """Tours after ``steps`` uniformly random allowed pairwise moves from random tours."""
    generator = torch.Generator().manual_seed(seed)
    env = Env(data, initial_orders(data, generator))
    v = data.slots
    for _ in range(steps):
        index = torch.multinomial(env.allowed().flatten(1).float(), 1, generator=generator)[:, 0]
        env.step(torch.stack([index // (v * v), index // v % v, index % v], 1))
    return env.order


def all_pairwise_actions(slots: int) -> torch.Tensor:
    """Every ``(op, u, v)``, in the flattened order of a ``[3, V, V]`` mask. ``[3 V^2, 3]``."""
    return torch.cartesian_prod(torch.arange(len(moves.OPERATORS)), torch.arange(slots),
                                torch.arange(slots))


def comparison_folder(path: Path, gaps: dict[str, list[float]], instances: int = 4) -> None:
    """A compare-pe run folder whose (PE, seed) rows have these gaps, every instance costing
    ``1 + gap / 100 + instance / 1000`` against a reference of 1."""
    with open(path / "reference.csv", "w") as handle:
        handle.write("instance,cost\n" + "".join(f"{i},1.0\n" for i in range(instances)))
    with open(path / "rows.csv", "w") as rows, open(path / "costs.csv", "w") as costs:
        rows.write("pe,seed,obj,gap_pct,train_seconds,eval_seconds,parameters\n")
        costs.write("pe,seed,instance,cost\n")
        for pe, values in gaps.items():
            for seed, gap in enumerate(values):
                rows.write(f"{pe},{seed},{1 + gap / 100},{gap},0,0,0\n")
                costs.write("".join(f"{pe},{seed},{i},{1 + gap / 100 + i / 1000}\n"
                                    for i in range(instances)))
