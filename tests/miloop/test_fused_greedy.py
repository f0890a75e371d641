"""The fused greedy step computes what the torch step computes (shipped TSP weights)."""

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.envs import TSPEnv
from routecli.envs.base import CandidateSets
from routecli.errors import OptionError
from routecli.miloop import decode as decode_module
from routecli.miloop import fused_greedy
from routecli.miloop.decode import decode
from routecli.miloop.model import MiLoop, MiLoopConfig, load_policy
from routecli.miloop.solver import Settings
from routecli.train.checkpoint import shipped


@pytest.fixture(scope="module")
def policy():
    return load_policy(shipped("miloop-tsp.pt"))


@pytest.mark.parametrize("bf16", [False, True])
def test_logits_and_memory_match_the_torch_step_on_fixed_seeds(policy, bf16):
    """float32 products agree with the torch step to float rounding; bfloat16 ones (8-bit
    mantissas, float32 accumulation) to about 2% of each value (a log-probability of -8 can move
    by 0.1)."""
    n, k, steps = 400, 50, 6
    tolerance = {"atol": 0.05, "rtol": 0.02} if bf16 else {"atol": 2e-4, "rtol": 0.0}
    locs = torch.as_tensor(generate.tsp(1, n, 11)["locs"], dtype=torch.float32)
    env = TSPEnv(locs, torch.zeros(1, dtype=torch.long), CandidateSets(locs[0].double().numpy(), k))
    memory = policy.new_memory(1, n, "cpu")
    fused_step = fused_greedy.GreedyStep(policy, locs[0].numpy(), k)
    with torch.inference_mode():
        for step in range(steps):
            obs = env.observe()
            with fused_greedy.matmul_precision(False):
                logits, memory = policy.step(obs, memory, step == 0)
            log_p = torch.log_softmax(logits, -1)[0][obs.feasible[0]].numpy()
            nodes = obs.nodes[0][obs.valid[0]].numpy()
            fused_step.nodes[:len(nodes)] = nodes
            with fused_greedy.matmul_precision(bf16):
                fused = fused_step(len(nodes), step == 0)
            np.testing.assert_allclose(fused, log_p, **tolerance)
            written = nodes[1:] if step == 0 else nodes  # the first call's row 0 is overwritten
            np.testing.assert_allclose(fused_step.memory[written], memory[0, written].numpy(),
                                       **tolerance)
            env.step(obs.nodes[:, 2:].gather(1, logits.argmax(1, keepdim=True)).squeeze(1))


@pytest.mark.slow
def test_fused_greedy_tour_matches_torch_on_1k_nodes(policy):
    batch = {"locs": torch.as_tensor(generate.tsp(1, 1000, 2026)["locs"], dtype=torch.float32)}
    torch_path = decode(policy, batch, "greedy", candidates=200, engine="torch")
    fused = decode(policy, batch, "greedy", candidates=200, engine="fused", precision="fp32")
    assert sorted(fused.actions[0].tolist()) == list(range(1000))
    same = torch.equal(fused.actions[0], torch_path.actions[0])
    assert same or abs(float(fused.cost[0] / torch_path.cost[0]) - 1) < 1e-3


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_auto_engine_reproduces_the_torch_decoding_of_a_small_policy(monkeypatch, seed):
    torch.manual_seed(seed)
    small = MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32, layers=2)).eval()
    batch = {"locs": torch.as_tensor(generate.tsp(1, 300, seed)["locs"])}
    torch_path = decode(small, batch, "greedy", candidates=40, engine="torch")
    monkeypatch.setattr("routecli.miloop.decode.FUSED_MIN_NODES", 300)
    progress: list[float] = []
    fused = decode(small, batch, "greedy", candidates=40, progress=progress.append,
                   precision="fp32")
    assert torch.equal(fused.actions[0], torch_path.actions[0])
    assert torch.allclose(fused.cost, torch_path.cost)
    assert progress[-1] == 1.0 and progress == sorted(progress)


@pytest.mark.parametrize("options", [{"method": "sampling"}, {"augment": True},
                                     {"candidates": None}])
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


def test_bf16_tours_are_valid_and_near_the_float32_ones(policy, monkeypatch):
    """A bfloat16 tour parts from the float32 one at the first near-tie, so only its length is
    compared, and loosely (benchmarks/results/miloop_fused_step_quality.md)."""
    monkeypatch.setattr("routecli.miloop.decode.native_bf16", lambda device="cpu": True)
    batch = {"locs": torch.as_tensor(generate.tsp(1, 500, 3)["locs"], dtype=torch.float32)}
    fp32 = decode(policy, batch, candidates=50, engine="fused")
    bf16 = decode(policy, batch, candidates=50, engine="fused", precision="bf16")
    assert sorted(bf16.actions[0].tolist()) == list(range(500))
    assert abs(float(bf16.cost[0] / fp32.cost[0]) - 1) < 0.05


@pytest.mark.parametrize(("precision", "native", "fused_bf16", "torch_precision"), [
    ("fp32", True, False, "fp32"), ("auto", True, True, "bf16"), ("auto", False, False, "fp32"),
    ("bf16", True, True, "bf16"), ("bf16", False, False, "bf16")])
def test_precision_choice_per_engine(monkeypatch, precision, native, fused_bf16, torch_precision):
    """auto resolves to bf16 where the CPU multiplies bfloat16 natively; the fused engine keeps
    float32 products where it does not, even when bf16 is asked for (emulated products are
    slower), while the torch step keeps an explicit bf16."""
    for where in ("routecli.nn.device.native_bf16", "routecli.miloop.decode.native_bf16"):
        monkeypatch.setattr(where, lambda device="cpu": native)
    seen: dict[str, object] = {}
    greedy_tour = fused_greedy.greedy_tour
    monkeypatch.setattr(fused_greedy, "greedy_tour", lambda *a, **kw: (
        seen.setdefault("bf16", kw["bf16"]), greedy_tour(*a, **kw))[1])
    rollout = decode_module.rollout
    monkeypatch.setattr(decode_module, "rollout", lambda *a, **kw: (
        seen.setdefault("precision", kw["precision"]), rollout(*a, **kw))[1])
    torch.manual_seed(0)
    small = MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32, layers=1)).eval()
    batch = {"locs": torch.rand(1, 40, 2)}
    decode(small, batch, candidates=10, precision=precision, engine="auto")  # < FUSED_MIN_NODES
    decode(small, batch, candidates=10, precision=precision, engine="fused")
    assert seen == {"precision": torch_precision, "bf16": fused_bf16}


def test_products_precision_is_restored():
    before = torch.get_float32_matmul_precision()
    with fused_greedy.matmul_precision(True):
        assert torch.get_float32_matmul_precision() == "medium"
    with fused_greedy.matmul_precision(False):
        assert torch.get_float32_matmul_precision() == "highest"
    assert torch.get_float32_matmul_precision() == before


def test_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="precision must be"):
        decode(MiLoop(MiLoopConfig(problem="tsp")), {"locs": torch.rand(1, 30, 2)},
               candidates=10, precision="fp16")
    with pytest.raises(OptionError, match="precision must be"):
        Settings(precision="fp16")


def test_a_fused_decode_cut_by_its_deadline_is_finished_by_nearest_neighbour(policy):
    from routecli.stop import MaxRuntime, Watch

    batch = {"locs": torch.as_tensor(generate.tsp(1, 3000, 1)["locs"], dtype=torch.float32)}
    cut = decode(policy, batch, "greedy", candidates=200, engine="fused",
                 watch=Watch(MaxRuntime(0)))
    assert sorted(cut.actions[0].tolist()) == list(range(3000))
    assert cut.finished == 0 and cut.planned == 1 and cut.completed == 2998  # one step ran
