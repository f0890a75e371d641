"""MiLoop memory dynamics (MiLoop Appendix D, Eq. 31-32) on tiny random policies."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.analysis.memory import (
    _adjacent,
    _first,
    memory_dynamics,
    plot_dynamics,
    without_memory,
)
from routecli.miloop.model import MiLoop, MiLoopConfig


def tiny(problem: str = "tsp", **options) -> MiLoop:
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem=problem, dim=16, layers=2, ff_dim=32, **options)).eval()


def batch(problem: str, num: int = 3, size: int = 9) -> dict[str, torch.Tensor]:
    raw = generate.GENERATORS[problem](num, size, 0)
    return {k: torch.as_tensor(v, dtype=torch.long if k == "demand" else torch.float32)
            for k, v in raw.items()}


def test_adjacent_similarity_is_centred_over_the_shared_nodes():
    # the same relative representations plus a shift all nodes share: centred, identical
    rng = np.random.default_rng(0)
    now = torch.as_tensor(rng.normal(size=(1, 5, 4)), dtype=torch.float32)
    before = now + torch.tensor([3.0, -2.0, 1.0, 5.0])
    present = torch.tensor([[True, True, True, True, False]])
    total, count = _adjacent((before, present), (now, present))
    assert count == 4 and total / count == pytest.approx(1.0, abs=1e-5)
    uncentred, _ = _first((before, present), (now, present))
    assert uncentred / 4 < 0.9  # Eq. 32's first-step measure is not centred
    # a single shared node has no centred direction: not counted
    lone = torch.tensor([[True, False, False, False, False]])
    assert _adjacent((before, lone), (now, present)) == (0.0, 0)


def test_a_memory_that_is_never_updated_keeps_its_first_representation():
    model = tiny()
    for gate in (model.gate_first, model.gate_last, model.gate_cand):
        torch.nn.init.zeros_(gate.weight)
        torch.nn.init.constant_(gate.bias, -1e4)  # G = 0: M' = M (Eq. 7)
    result = memory_dynamics(model, batch("tsp"), "frozen")
    assert result.first == pytest.approx(1.0, abs=1e-5)
    assert [s.step for s in result.steps] == list(range(2, 10))  # t = 2..N
    assert math.isnan(result.steps[0].adjacent) and result.steps[0].nodes == 0


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_similarities_are_cosines_and_the_hook_is_removed(problem):
    model = tiny(problem)
    plain = without_memory(model)
    assert not plain.config.memory
    for candidate in (model, plain):
        result = memory_dynamics(candidate, batch(problem), "x")
        assert -1.0 <= result.adjacent <= 1.0 and -1.0 <= result.first <= 1.0
        assert result.cost > 0
        assert sum(s.nodes for s in result.steps) > 0
    assert not plain.blocks[-1]._forward_hooks
    # the plain dynamic embedding recomputes from the same weights: its first call matches
    torch.testing.assert_close(plain.state_dict()["embed.weight"], model.state_dict()["embed.weight"])


def test_other_problems_are_refused():
    with pytest.raises(ValueError, match="tsp, cvrp"):
        memory_dynamics(tiny("kp"), {"weights": torch.rand(1, 4)}, "kp")


def test_plot_writes_a_png(tmp_path):
    result = memory_dynamics(tiny(), batch("tsp"), "tiny")
    path = tmp_path / "memory.png"
    plot_dynamics([result, memory_dynamics(without_memory(tiny()), batch("tsp"), "off")],
                  str(path), "tiny")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
