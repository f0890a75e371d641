"""Small instances and tours shared by the improvement tests."""

from __future__ import annotations

import pytest
import torch

from routecli.generate import batch_instances
from routecli.improve import moves
from routecli.improve.env import Env, Instances, initial_orders, make_instances
from routecli.improve.train import generate_instances
from routecli.problems import Instance
from tests.conftest import single_torch_thread

one_thread = pytest.fixture(autouse=True)(single_torch_thread)


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
