import numpy as np
import torch

from routecli import generate
from routecli.envs import CVRPEnv
from routecli.generate import batch_instances
from routecli.miloop.decode import to_solution
from routecli.problems import Routes, validate


def test_random_feasible_policy_respects_eq11_and_builds_valid_routes():
    raw = generate.cvrp(6, 15, seed=3, capacity=20)
    data = {k: torch.as_tensor(v) for k, v in raw.items()}
    env = CVRPEnv(data["locs"].float(), data["demand"], data["capacity"])
    g = torch.Generator().manual_seed(0)
    steps = 0
    while not bool(env.done.all()):
        obs = env.observe()
        cand = obs.nodes[:, 2:]
        demand = env.demand.gather(1, cand.clamp_max(env.num_nodes - 1))
        for b in range(env.batch):
            live = not bool(env.done[b])
            at_depot = int(env.current[b]) == 0
            # the depot is a candidate only away from it (or as the no-op of a finished row)
            assert (0 in cand[b][obs.valid[b, 2:]].tolist()) == (not at_depot or not live)
            if live:
                fits = demand[b] <= env.remaining[b] + 1e-6
                customer = cand[b] != 0
                valid = obs.valid[b, 2:]
                assert torch.equal(obs.feasible[b] & customer, valid & customer & fits)
        pick = torch.multinomial(obs.feasible.float(), 1, generator=g).squeeze(1)
        before = env.remaining.clone()
        nodes = cand.gather(1, pick[:, None]).squeeze(1)
        env.step(nodes)
        assert (env.remaining >= -1e-6).all()
        back = nodes == 0
        assert torch.equal(env.remaining[back], torch.ones(int(back.sum())))  # capacity reset
        served = ~back
        torch.testing.assert_close(env.remaining[served],
                                   before[served] - env.demand[served, nodes[served]])
        steps += 1
        assert steps < 200
    instances = batch_instances("cvrp", raw)
    for b, inst in enumerate(instances):
        sol = to_solution(inst, env.paths()[b])
        assert isinstance(sol, Routes)
        assert validate(inst, sol) == []
        assert np.isclose(inst.cost(sol), float(env.cost()[b]), rtol=1e-5)
    assert bool((env.current == 0).all())  # every route ends back at the depot


def test_first_observation_masks_depot_and_carries_demand_feature():
    raw = generate.cvrp(2, 5, seed=1)
    data = {k: torch.as_tensor(v) for k, v in raw.items()}
    env = CVRPEnv(data["locs"].float(), data["demand"], data["capacity"])
    obs = env.observe()
    assert obs.num_candidates.tolist() == [5, 5]
    assert 0 not in obs.nodes[:, 2:].tolist()[0]
    assert obs.features.shape[-1] == 3
    torch.testing.assert_close(obs.features[:, 2:7, 2],
                               data["demand"][:, 1:].float() / 50.0)
    assert not obs.valid[:, 7:].any() and (obs.features[:, 7:] == 0).all()  # row padding
    torch.testing.assert_close(obs.capacity, torch.ones(2))
