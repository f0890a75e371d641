"""MiLoop on PDTSP (pair embedding and fusion, Eq. 18-19; gamma_t rule of B.4.4) and on the
knapsack (Eq. 23-26, the bias of Eq. 30)."""

from __future__ import annotations

import torch

from routecli.envs import KPEnv, PDTSPEnv
from routecli.envs.pdtsp import PICKUP
from routecli.miloop.model import MiLoop, MiLoopConfig, density_bias, rollout


def small(problem: str, **kw) -> MiLoop:
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, **{"layers": 2, **kw}))


def kp_env(batch=3, n=12, capacity=2.0, seed=0) -> KPEnv:
    g = torch.Generator().manual_seed(seed)
    return KPEnv(torch.rand(batch, n, generator=g) + 0.05, torch.rand(batch, n, generator=g),
                 torch.full((batch,), capacity))


def test_pdtsp_rollout_respects_precedence_and_backpropagates():
    model = small("pdtsp")
    env = PDTSPEnv(torch.rand(3, 11, 2))
    result = rollout(model, env)
    r = 5
    for tour in result.actions.tolist():
        assert tour[0] == 0 and sorted(tour) == list(range(11))
        assert all(tour.index(p) < tour.index(p + r) for p in range(1, r + 1))
    result.log_prob.sum().backward()
    assert model.embed_pickup.weight.grad is not None and model.fuse_cand_pickup.weight.grad is not None


def test_pdtsp_policy_invariant_to_translation_and_scale():
    model = small("pdtsp").eval()
    locs = torch.rand(2, 9, 2)
    with torch.no_grad():
        a = rollout(model, PDTSPEnv(locs), "greedy")
        b = rollout(model, PDTSPEnv(locs * 41.0 - 3.0), "greedy")
    assert torch.equal(a.actions, b.actions)


def test_pdtsp_pickup_fusion_reads_its_delivery_memory():
    model = small("pdtsp")
    env = PDTSPEnv(torch.rand(1, 9, 2))
    env.step(torch.tensor([2]))  # current: pickup 2; its delivery 6 is now released
    obs = env.observe()
    memory = torch.randn(1, 10, 16)
    _, base = model.step(obs, memory.clone(), first_call=False)
    poked = memory.clone()
    poked[0, 6] += 1.0  # the delivery of pickup 2
    _, after = model.step(obs, poked, first_call=False)
    assert obs.kind is not None
    rows = obs.nodes[0].tolist()
    changed = [node for node in range(9) if not torch.allclose(base[0, node], after[0, node])]
    assert 2 in changed and 6 in changed  # the pickup's fused input reads memory 6
    assert int(obs.kind[0, 1]) == PICKUP and rows[1] == 2


def test_pdtsp_gamma_is_one_in_training_and_log100_at_inference():
    model = small("pdtsp")
    env = PDTSPEnv(torch.rand(1, 301, 2))  # |A_t| = 300: gamma_t = log_100 300 > 1
    obs = env.observe()
    memory = model.new_memory(1, 301, "cpu")
    with torch.no_grad():
        train_logits, _ = model.train().step(obs, memory.clone(), True)
        eval_logits, _ = model.eval().step(obs, memory.clone(), True)
        small_env = PDTSPEnv(torch.rand(1, 21, 2))  # |A_t| = 20: gamma_t = 1 either way
        small_obs = small_env.observe()
        mem = model.new_memory(1, 21, "cpu")
        same_train, _ = model.train().step(small_obs, mem.clone(), True)
        same_eval, _ = model.eval().step(small_obs, mem.clone(), True)
    assert not torch.allclose(train_logits, eval_logits)
    torch.testing.assert_close(same_train, same_eval)


def test_density_bias_is_eq30():
    values = torch.tensor([[0.9, 0.1, 0.5, 0.0]])
    weights = torch.tensor([[0.3, 0.5, 0.5, 1.0]])
    valid = torch.tensor([[True, True, True, False]])
    bias, excluded = density_bias(values, weights, valid, torch.tensor([3]))
    rho = (values[0, :3, None] + values[0, None, :3]) / (weights[0, :3, None] + weights[0, None, :3])
    i, j = 1, 2
    rho_max = max(float(rho[i, k]) for k in range(3) if k != i)
    expected = -torch.log2(torch.tensor(3.0)) * (1 - rho[i, j] / rho_max)
    torch.testing.assert_close(bias[0, i, j], expected)
    assert excluded[0].diagonal().all() and excluded[0, :, 3].all() and excluded[0, 3].all()
    assert float(bias[0][~excluded[0]].max()) <= 0.0


def test_kp_logits_masked_and_rollout_feasible():
    model = small("kp")
    env = kp_env()
    obs = env.observe()
    logits, memory = model.step(obs, model.new_memory(3, 12, "cpu"), True)
    assert torch.isneginf(logits[~obs.feasible]).all() and torch.isfinite(logits[obs.feasible]).all()
    assert memory.shape == (3, 13, 16)
    env = kp_env()
    result = rollout(model, env)
    assert (env.remaining >= -1e-6).all() and not env.fits().any()
    torch.testing.assert_close(result.cost, -env.value())
    result.log_prob.sum().backward()
    assert model.out.weight.grad is not None and model.gate_cand.weight.grad is not None


def test_kp_forced_first_item_and_replay():
    model = small("kp")
    first = torch.tensor([4, 0, 7])
    result = rollout(model, kp_env(), first_action=first)
    assert result.actions[:, 0].tolist() == first.tolist()
    again = rollout(model, kp_env(), replay=result.actions, first_action=first)
    assert torch.equal(again.actions, result.actions)
    torch.testing.assert_close(again.log_prob, result.log_prob)


def test_kp_ablations_roll_out():
    for kw in (dict(fusion=False), dict(gated=False), dict(memory=False)):
        result = rollout(small("kp", **kw), kp_env())
        assert torch.isfinite(result.log_prob).all()
