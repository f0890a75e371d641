"""The fused greedy step computes what the torch step computes (shipped TSP weights)."""

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.envs import TSPEnv
from routecli.envs.base import CandidateSets
from routecli.errors import OptionError
from routecli.miloop import fused_greedy
from routecli.miloop.decode import decode
from routecli.miloop.model import MiLoop, MiLoopConfig, load_policy
from routecli.miloop.solver import Settings
from routecli.train.checkpoint import shipped


@pytest.fixture(scope="module")
def policy():
    return load_policy(shipped("miloop-tsp.pt"))


def test_logits_and_memory_match_the_torch_step_on_fixed_seeds(policy):
    n, k, steps = 400, 50, 6
    locs = torch.as_tensor(generate.tsp(1, n, 11)["locs"], dtype=torch.float32)
    env = TSPEnv(locs, torch.zeros(1, dtype=torch.long), CandidateSets(locs[0].double().numpy(), k))
    memory = policy.new_memory(1, n, "cpu")
    fused_memory = np.zeros((n + 1, policy.config.dim), np.float32)
    weights, xy = fused_greedy.fused_weights(policy), locs[0].numpy()
    with torch.inference_mode():
        for step in range(steps):
            obs = env.observe()
            logits, memory = policy.step(obs, memory, step == 0)
            log_p = torch.log_softmax(logits, -1)[0][obs.feasible[0]].numpy()
            nodes = obs.nodes[0][obs.valid[0]].numpy()
            fused = fused_greedy.step_logits(weights, fused_memory, xy, nodes, step == 0)
            np.testing.assert_allclose(fused, log_p, atol=2e-4)
            written = nodes[1:] if step == 0 else nodes  # the first call's row 0 is overwritten
            np.testing.assert_allclose(fused_memory[written], memory[0, written].numpy(), atol=2e-4)
            env.step(obs.nodes[:, 2:].gather(1, logits.argmax(1, keepdim=True)).squeeze(1))


@pytest.mark.slow
def test_fused_greedy_tour_matches_torch_on_1k_nodes(policy):
    batch = {"locs": torch.as_tensor(generate.tsp(1, 1000, 2026)["locs"], dtype=torch.float32)}
    torch_path = decode(policy, batch, "greedy", candidates=200, engine="torch")
    fused = decode(policy, batch, "greedy", candidates=200, engine="fused")
    assert sorted(fused.actions[0].tolist()) == list(range(1000))
    same = torch.equal(fused.actions[0], torch_path.actions[0])
    assert same or abs(float(fused.cost[0] / torch_path.cost[0]) - 1) < 1e-3


def test_auto_engine_reproduces_the_torch_decoding_of_a_small_policy(monkeypatch):
    torch.manual_seed(0)
    small = MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32, layers=2)).eval()
    batch = {"locs": torch.as_tensor(generate.tsp(1, 300, 4)["locs"])}
    torch_path = decode(small, batch, "greedy", candidates=40, engine="torch")
    monkeypatch.setattr("routecli.miloop.decode.FUSED_MIN_NODES", 300)
    progress: list[float] = []
    fused = decode(small, batch, "greedy", candidates=40, progress=progress.append)
    assert torch.equal(fused.actions[0], torch_path.actions[0])
    assert torch.allclose(fused.cost, torch_path.cost)
    assert progress[-1] == 1.0 and progress == sorted(progress)


@pytest.mark.parametrize("options", [{"method": "sampling"}, {"augment": True},
                                     {"candidates": None}, {"precision": "bf16"}])
def test_fused_engine_refuses_what_it_does_not_compute(policy, options):
    batch = {"locs": torch.rand(1, 30, 2)}
    settings = {"method": "greedy", "candidates": 10, **options}
    with pytest.raises(ValueError, match="fused engine"):
        decode(policy, batch, engine="fused", **settings)


def test_ablated_policies_are_not_fused():
    assert not fused_greedy.supports(MiLoop(MiLoopConfig(problem="tsp", gated=False)))
    assert not fused_greedy.supports(MiLoop(MiLoopConfig(problem="cvrp")))
    with pytest.raises(ValueError, match="full TSP"):
        fused_greedy.fused_weights(MiLoop(MiLoopConfig(problem="tsp", fusion=False)))


def test_unknown_engine_is_an_option_error():
    with pytest.raises(OptionError, match="engine must be one of"):
        Settings(engine="gpu")  # type: ignore[arg-type]
