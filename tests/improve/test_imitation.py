"""Offline imitation of best improvement: the labelled states are the teacher's, a fit cut into
chunks trains exactly as one, the fit learns its teacher, and the settings are checked."""

from __future__ import annotations

import pytest
import torch

from routecli.improve.imitation import (
    ImitationConfig,
    fit,
    imitation_loss,
    label_states,
    labelled_states,
    make_optimizer,
    state_env,
    state_instances,
    train_imitation,
    trainable,
)
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.moves import (
    as_good_as_best,
    pair_mask,
    pair_tour_costs,
    pairwise_tour_costs,
    unflatten_move,
)
from routecli.improve.n2s import N2S, N2SConfig

from .test_model import SMALL

TINY = ImitationConfig(instances=6, trajectory=6, batch=8, updates=4)


def model(seed: int = 0) -> DACT:
    torch.manual_seed(seed)
    return DACT(DACTConfig(problem="cvrp", pe="ipe_inv_xpe", **SMALL))


def test_labelled_states_are_the_teachers_best_moves_and_their_ties():
    states = label_states("cvrp", 6, TINY, seed=3)
    env = state_env(state_instances("cvrp", states), states, torch.arange(len(states["target"])))
    obs = env.observe()
    assert obs.allowed is not None
    costs = pairwise_tour_costs(env.order, env.data.coords, obs.allowed).flatten(1)
    assert torch.equal(states["target"], costs.argmin(1))  # the teacher's best move
    rows = torch.arange(len(costs))
    assert states["ties"][rows, states["target"]].all()  # its tie set holds it
    least = costs.min(1, keepdim=True).values
    assert torch.equal(states["ties"], costs <= least + 1e-6 * least.abs())
    assert states["improvable"].all()  # only improvable states are kept by default
    assert (costs.min(1).values < env.cost - 1e-6).all()
    every = label_states("cvrp", 6, ImitationConfig(instances=6, trajectory=6,
                                                     train_states="all"), seed=3)
    assert len(every["target"]) == 6 * 6 and not every["improvable"].all()  # local optima too
    assert len(trainable(every, ImitationConfig(train_states="all"))) == 36


def test_labels_are_cached_and_deterministic(tmp_path):
    cache = tmp_path / "labels" / "s3.pt"
    first = labelled_states("cvrp", 6, TINY, 3, cache)
    assert cache.is_file()
    again = label_states("cvrp", 6, TINY, 3)
    for key in ("instance", "order", "last", "target", "ties"):
        assert torch.equal(first[key], again[key])
    assert torch.equal(labelled_states("cvrp", 6, TINY, 3, cache)["order"], first["order"])


def test_states_labelled_at_a_tight_capacity_keep_their_depot_slots():
    states = label_states("cvrp", 20, TINY, seed=3, capacity=12)
    data = state_instances("cvrp", states)
    assert data.slots == states["order"].shape[1] > 20 + 10  # more than the size's 10 copies
    env = state_env(data, states, torch.arange(len(states["target"])))
    assert torch.isfinite(env.cost).all()


def test_a_fit_cut_into_chunks_trains_exactly_as_one():
    states = label_states("cvrp", 6, TINY, seed=1)
    data, rows = state_instances("cvrp", states), trainable(states, TINY)
    whole, parts = model(), model()
    fit(whole, make_optimizer(whole, TINY), data, states, rows, TINY, 7, 0, 4)
    optimizer = make_optimizer(parts, TINY)
    fit(parts, optimizer, data, states, rows, TINY, 7, 0, 1)
    fit(parts, optimizer, data, states, rows, TINY, 7, 1, 4)
    for key, weight in whole.state_dict().items():
        assert torch.equal(weight, parts.state_dict()[key]), key


@pytest.mark.parametrize("target", ["move", "ties"])
def test_the_fit_learns_its_teacher(target):
    cfg = ImitationConfig(instances=4, trajectory=8, batch=16, lr=3e-3, target=target)
    states = label_states("cvrp", 6, cfg, seed=2)
    data, rows = state_instances("cvrp", states), trainable(states, cfg)

    def loss(policy: DACT) -> float:
        with torch.no_grad():
            obs = state_env(data, states, rows).observe()
            return imitation_loss(policy.move_logits(obs).flatten(1), states, rows,
                                  target).item()

    policy = model()
    before = loss(policy)
    fit(policy, make_optimizer(policy, cfg), data, states, rows, cfg, 0, 0, 60)
    assert loss(policy) < 0.7 * before  # the teacher's moves became far more likely


def test_ties_loss_is_the_probability_of_the_tie_set():
    logits = torch.tensor([[0.0, 1.0, 2.0]])
    states = {"ties": torch.tensor([[True, False, True]]), "target": torch.tensor([2])}
    rows = torch.tensor([0])
    p = logits.softmax(1)[0]
    assert imitation_loss(logits, states, rows, "ties").item() == pytest.approx(
        -torch.log(p[0] + p[2]).item())
    assert imitation_loss(logits, states, rows, "move").item() == pytest.approx(
        -torch.log(p[2]).item())


def test_train_imitation_labels_once_and_logs(tmp_path):
    log: list[dict] = []
    policy = model()
    cache = tmp_path / "s0.pt"
    train_imitation(policy, "cvrp", 6, TINY, 0, cache=cache, log=log.append, log_every=3)
    assert cache.is_file() and [r["update"] for r in log] == [3, 4]
    assert not policy.training


def test_n2s_labels_are_the_best_reinsertions_with_the_removal_signature():
    """N2S's teacher: the least tour over every allowed (request, pickup slot, delivery slot),
    the previous request left out, and a stored state restores the signature the policy saw."""
    cfg = ImitationConfig(instances=4, trajectory=8, train_states="all")
    states = label_states("pdtsp", 7, cfg, seed=5, kind="pair")
    data = state_instances("pdtsp", states)
    rows = torch.arange(len(states["target"]))
    env = state_env(data, states, rows)
    assert env.kind == "pair"
    allowed = pair_mask(env.order, data.requests, env.last[:, 0])
    costs = pair_tour_costs(env.order, env.data.coords, allowed, data.requests).flatten(1)
    assert torch.equal(states["target"], costs.argmin(1))
    assert torch.equal(states["ties"], as_good_as_best(costs))
    previous = env.last[:, 0]
    assert (unflatten_move(states["target"], data.slots)[:, 0] != previous).all()
    # replayed from the first states with the moves taken (each next state's `last`), the env
    # builds the same tours and removal signatures as the stored states restore
    live = state_env(data, states, rows[:cfg.instances])
    for step in range(1, cfg.trajectory):
        at = rows[step * cfg.instances:(step + 1) * cfg.instances]
        live.step(states["last"][at])
        stored = state_env(data, states, at)
        assert torch.equal(stored.order, live.order)
        assert torch.equal(stored.observe().signature, live.observe().signature)
    assert live.removals.sum() > 0


def test_n2s_learns_its_teacher_by_imitation():
    cfg = ImitationConfig(instances=4, trajectory=8, batch=16, lr=3e-3)
    states = label_states("pdtsp", 7, cfg, seed=2, kind="pair")
    data, rows = state_instances("pdtsp", states), trainable(states, cfg)
    torch.manual_seed(0)
    policy = N2S(N2SConfig(pe="ipe_xpe", embed_dim=16, num_heads=4, num_layers=1, ff_dim=16,
                           pe_dim=8))

    def loss() -> float:
        with torch.no_grad():
            obs = state_env(data, states, rows).observe()
            return imitation_loss(policy.move_logits(obs).flatten(1), states, rows,
                                  "ties").item()

    before = loss()
    fit(policy, make_optimizer(policy, cfg), data, states, rows, cfg, 0, 0, 60)
    assert loss() < 0.7 * before


@pytest.mark.parametrize("field, value", [("target", "best"), ("train_states", "some"),
                                          ("updates", 0), ("epsilon", 1.5), ("lr", 0.0)])
def test_settings_are_checked(field, value):
    with pytest.raises(ValueError, match=field):
        ImitationConfig(**{field: value})

