"""PDTSP (precedence mask, Eq. 17) and knapsack (remaining-capacity mask, termination)
environments under random feasible policies; candidate sets never hide the feasible nodes."""

from __future__ import annotations

import numpy as np
import torch

from routecli import generate
from routecli.baselines.knapsack import greedy_selection
from routecli.envs import KPEnv, PDTSPEnv
from routecli.envs.base import CandidateSets
from routecli.envs.pdtsp import DELIVERY, PICKUP
from routecli.generate import batch_instances
from routecli.problems import Selection, Tour, validate


def test_pdtsp_mask_is_eq17_and_random_tours_are_feasible():
    raw = generate.pdtsp(5, 12, seed=1)
    locs = torch.as_tensor(raw["locs"], dtype=torch.float32)
    env = PDTSPEnv(locs)
    g = torch.Generator().manual_seed(0)
    r = env.requests
    while not bool(env.done.all()):
        obs = env.observe()
        cand = obs.nodes[:, 2:]
        for b in range(env.batch):
            visited = {int(a[b]) for a in env.actions}
            unvisited = [i for i in range(env.num_nodes) if i not in visited]
            assert sorted(cand[b][obs.valid[b, 2:]].tolist()) == unvisited  # A_t: all unvisited
            allowed = [i for i in unvisited if i <= r or (i - r) in visited]
            assert sorted(cand[b][obs.feasible[b]].tolist()) == allowed  # N_t of Eq. 17
        assert obs.kind is not None and obs.partner is not None
        pickup_rows = obs.kind == PICKUP
        assert torch.equal(obs.partner[pickup_rows], obs.nodes[pickup_rows] + r)
        assert (obs.features[..., 2:][~pickup_rows] == 0).all()
        assert (obs.kind[:, 2:][obs.valid[:, 2:] & (cand > r)] == DELIVERY).all()
        pick = torch.multinomial(obs.feasible.float(), 1, generator=g).squeeze(1)
        env.step(cand.gather(1, pick[:, None]).squeeze(1))
    tours = env.paths()
    for b, inst in enumerate(batch_instances("pdtsp", raw)):
        tour = Tour(tours[b].numpy())
        assert validate(inst, tour) == []
        assert np.isclose(inst.cost(tour), float(env.cost()[b]), rtol=1e-5)


def test_pdtsp_pickup_rows_carry_their_delivery_in_the_same_normalisation():
    locs = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]])  # depot, pickup 1, delivery 2
    obs = PDTSPEnv(locs).observe()
    # rows: depot, depot (current), pickup, delivery; normalised by the larger side (2)
    torch.testing.assert_close(obs.features[0, 2], torch.tensor([0.5, 0.0, 0.0, 1.0]))
    assert obs.feasible[0, :2].tolist() == [True, False] and not obs.feasible[0, 2:].any()


def test_pdtsp_candidate_sets_hold_only_feasible_nodes():
    raw = generate.pdtsp(1, 60, seed=2)
    locs = torch.as_tensor(raw["locs"], dtype=torch.float32)
    env = PDTSPEnv(locs.expand(3, -1, -1).clone(), CandidateSets(raw["locs"][0], k=4))
    g = torch.Generator().manual_seed(1)
    while not bool(env.done.all()):
        obs = env.observe()
        assert torch.equal(obs.feasible, obs.valid[:, 2:])  # every candidate is feasible
        assert obs.feasible.any(1).all()  # and there always is one
        pick = torch.multinomial(obs.feasible.float(), 1, generator=g).squeeze(1)
        env.step(obs.nodes[:, 2:].gather(1, pick[:, None]).squeeze(1))
    inst = batch_instances("pdtsp", raw)[0]
    for b in range(3):
        assert validate(inst, Tour(env.paths()[b].numpy())) == []


def test_kp_capacity_mask_termination_and_value():
    raw = generate.kp(4, 30, seed=5, capacity=10)
    data = {k: torch.as_tensor(v) for k, v in raw.items()}
    env = KPEnv(data["weights"], data["values"], data["capacity"])
    g = torch.Generator().manual_seed(0)
    while not bool(env.done.all()):
        obs = env.observe()
        live = ~env.done
        fits = obs.valid & (obs.weights <= env.remaining[:, None] + 1e-9)
        assert torch.equal(obs.feasible[live], fits[live])
        assert ((obs.features[..., 0] <= 1 + 1e-6) & (obs.features[..., 0] >= 0)).all()
        pick = torch.multinomial(obs.feasible.float(), 1, generator=g).squeeze(1)
        env.step(obs.nodes.gather(1, pick[:, None]).squeeze(1))
    assert (env.remaining >= -1e-6).all()
    assert not env.fits().any()  # terminated: nothing left fits
    for b, inst in enumerate(batch_instances("kp", raw)):
        chosen = env.paths()[b]
        chosen = chosen[chosen < env.num_nodes].numpy()
        assert validate(inst, Selection(chosen)) == []
        assert np.isclose(inst.cost(Selection(chosen)), float(-env.cost()[b]), rtol=1e-5)


def test_kp_greedy_by_density_feature_reproduces_the_baseline():
    raw = generate.kp(2, 40, seed=7, capacity=10)
    data = {k: torch.as_tensor(v) for k, v in raw.items()}
    env = KPEnv(data["weights"], data["values"], data["capacity"])
    while not bool(env.done.all()):
        obs = env.observe()
        score = obs.features[..., 0].masked_fill(~obs.feasible, -1.0)
        env.step(obs.nodes.gather(1, score.argmax(1, keepdim=True)).squeeze(1))
    for b in range(2):
        taken = env.paths()[b]
        expected = greedy_selection(raw["weights"][b], raw["values"][b], 10.0)
        assert taken[taken < 40].tolist() == expected.tolist()


def test_kp_everything_fits_ends_after_n_steps():
    env = KPEnv(torch.full((1, 3), 0.1), torch.ones(1, 3), torch.tensor([5.0]))
    steps = 0
    while not bool(env.done.all()):
        obs = env.observe()
        env.step(obs.nodes[:, 0])
        steps += 1
    assert steps == 3 and float(env.value()[0]) == 3.0
