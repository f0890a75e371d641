"""N2S on PDTSP: feasible pair moves, its two decoders, the PE swap, training and evaluation."""

from __future__ import annotations

import pytest
import torch

from routecli.improve.env import Env, initial_orders, to_solution
from routecli.improve.moves import pair_mask
from routecli.improve.n2s import N2S, N2SConfig, load_n2s, n2s_checkpoint
from routecli.improve.train import PPOConfig, evaluate, generate_instances, train
from routecli.pe.registry import PE_REGISTRY
from routecli.problems import validate
from routecli.train.checkpoint import save

from .conftest import instances

SMALL = {"embed_dim": 16, "num_heads": 4, "num_layers": 1, "ff_dim": 16, "pe_dim": 8}


def small(pe: str = "n2s", seed: int = 0) -> N2S:
    torch.manual_seed(seed)
    return N2S(N2SConfig(pe=pe, **SMALL)).eval()


def pair_env(seed: int = 0, size: int = 11) -> tuple[Env, list]:
    data, insts = instances("pdtsp", size, 4, seed=seed)
    return Env(data, initial_orders(data, torch.Generator().manual_seed(seed)), kind="pair",
               window=size - 1), insts


@pytest.mark.parametrize("pe", ["n2s", "ipe_xpe", "rope", "spd", "nope"])
def test_n2s_moves_stay_feasible(pe):
    env, insts = pair_env()
    model = small(pe)
    generator = torch.Generator().manual_seed(0)
    previous = None
    for _ in range(12):
        decision = model(env.observe(), generator=generator)
        if previous is not None:  # the request just moved is not removed again at once
            assert (decision.action[:, 0] != previous).all()
        previous = decision.action[:, 0]
        env.step(decision.action)
        for b, inst in enumerate(insts):
            assert validate(inst, to_solution(env.data, env.order[b])) == []


def test_scoring_a_sampled_pair_move_gives_its_probability():
    env, _ = pair_env(1)
    model = small("ipe_xpe")
    obs = env.observe()
    decision = model(obs, generator=torch.Generator().manual_seed(2))
    again = model(obs, action=decision.action)
    assert torch.allclose(decision.log_prob, again.log_prob, atol=1e-6)


def test_the_move_table_is_the_policys_joint_distribution_over_allowed_moves():
    """``move_logits`` (imitation's view): log P(r) + log P(i, j | r) for every move at once,
    equal to scoring each move through the policy, a distribution over exactly the moves of
    ``pair_mask``."""
    env, _ = pair_env(2)
    generator = torch.Generator().manual_seed(0)
    model = small("ipe_xpe")
    env.step(model(env.observe(), generator=generator).action)  # a previous request to mask
    obs = env.observe()
    table = model.move_logits(obs)  # [B, n, V, V]
    allowed = pair_mask(obs.order, obs.requests, obs.last[:, 0])
    assert torch.equal(torch.isfinite(table), allowed)
    assert torch.allclose(table.flatten(1).logsumexp(1), torch.zeros(len(table)), atol=1e-5)
    for _ in range(4):
        action = model(obs, generator=generator).action
        scored = model(obs, action=action).log_prob
        b = torch.arange(len(action))
        assert torch.allclose(table[b, action[:, 0], action[:, 1], action[:, 2]], scored,
                              atol=1e-5)


def test_swapping_the_pe_of_n2s_changes_nothing_else():
    def outside(model: N2S) -> dict[str, tuple[int, ...]]:
        return {n: tuple(p.shape) for n, p in model.named_parameters()
                if not n.startswith("positional.pe.")}

    reference = outside(small("n2s"))
    for pe in PE_REGISTRY:
        assert outside(small(pe)) == reference, pe


def test_the_removal_signature_reaches_the_removal_decoder():
    env, _ = pair_env(2)
    model = small()
    obs = env.observe()
    assert obs.signature is not None
    first = model(obs, generator=torch.Generator().manual_seed(0))
    changed = obs.index(slice(None))
    object.__setattr__(changed, "signature", torch.ones_like(obs.signature))
    second = model(changed, action=first.action)
    assert not torch.allclose(first.log_prob, second.log_prob)


def test_n2s_trains_and_evaluates(tmp_path):
    torch.manual_seed(0)
    model = N2S(N2SConfig(pe="ipe_xpe", **SMALL))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    cfg = PPOConfig(epochs=1, batches=1, batch_size=3, t_train=4, n_step=2, curriculum=0)
    train(model, "pdtsp", 9, cfg, seed=0)
    assert any(not torch.equal(p, before[n]) for n, p in model.named_parameters())
    raw = generate_instances("pdtsp", 9, 3, seed=5)
    best, orders = evaluate(model, "pdtsp", raw, steps=6, seed=0, augment=2)
    data, insts = instances("pdtsp", 9, 3, seed=5)
    for b, inst in enumerate(insts):
        sol = to_solution(data, orders[b])
        assert validate(inst, sol) == []
        assert inst.cost(sol) == pytest.approx(float(best[b]), rel=1e-5)
    loaded = load_n2s(save(n2s_checkpoint(model), tmp_path / "n2s.pt"))
    obs = pair_env(3, 9)[0].observe()
    assert torch.allclose(model.encode(obs), loaded.encode(obs))
