import numpy as np
import torch

from routecli.envs import TSPEnv
from routecli.problems import Metric, Tour, TSPInstance, validate


def random_rollout(env: TSPEnv, generator: torch.Generator) -> list:
    counts = []
    while not bool(env.done.all()):
        obs = env.observe()
        counts.append(obs.num_candidates.clone())
        # candidates are exactly the unvisited nodes, each once
        cand = obs.nodes[:, 2:]
        for b in range(env.batch):
            assert sorted(cand[b][obs.feasible[b]].tolist()) == \
                torch.nonzero(~env.visited[b]).flatten().tolist()
        assert obs.nodes[:, 0].equal(env.first) and obs.nodes[:, 1].equal(env.current)
        pick = torch.multinomial(obs.feasible.float(), 1, generator=generator).squeeze(1)
        env.step(cand.gather(1, pick[:, None]).squeeze(1))
    return counts


def test_every_node_once_and_cost_matches_instance():
    g = torch.Generator().manual_seed(0)
    locs = torch.rand(4, 12, 2, generator=g)
    env = TSPEnv(locs, torch.tensor([0, 3, 5, 11]))
    counts = random_rollout(env, g)
    assert [int(c[0]) for c in counts] == list(range(11, 0, -1))  # |A_t| shrinks by one
    tours = env.paths()
    assert tours[:, 0].tolist() == [0, 3, 5, 11]
    for b in range(4):
        inst = TSPInstance("t", Metric("exact", coords=locs[b].double().numpy()))
        sol = Tour(tours[b].numpy())
        assert validate(inst, sol) == []
        assert np.isclose(inst.cost(sol), float(env.cost()[b]), rtol=1e-5)


def test_observed_coordinates_are_normalised_per_step():
    locs = torch.rand(2, 8, 2) * 50 + 10
    env = TSPEnv(locs, torch.zeros(2, dtype=torch.long))
    obs = env.observe()
    assert float(obs.coords.min()) == 0.0
    side = (obs.coords.amax(1) - obs.coords.amin(1)).amax(-1)
    torch.testing.assert_close(side, torch.ones(2))
