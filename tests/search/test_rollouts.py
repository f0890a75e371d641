"""Scored rollouts leave the current solution as it was; the winner replays exactly."""

from __future__ import annotations

import numpy as np

from routecli.nds.train import Episode, NDSTrainConfig
from routecli.problems import validate
from routecli.search.asa import workspace
from routecli.search.repair import BLINK_RATE
from routecli.search.rollouts import commit_rollout, score_rollouts
from routecli.search.state import state_cost


def episode(tmp_path, problem: str, index: int) -> Episode:
    cfg = NDSTrainConfig(problem=problem, size=20, batch=2, rollouts=8, remove=4,
                         run_dir=str(tmp_path / "run"))
    return Episode(cfg, index)


def test_scored_rollouts_replay_exactly_and_leave_the_current_solution(tmp_path):
    ep = episode(tmp_path, "vrptw", 0)
    i = 0
    before = [a.copy() for a in ep.current[i].arrays()]
    rng = np.random.default_rng(0)
    served = ep.current[i].served()
    removals = np.stack([rng.choice(served, 5, replace=False) for _ in range(6)])
    seeds = np.arange(6) + 11
    costs = np.empty(6)
    score_rollouts(ep.data[i], ep.current[i].arrays(), ep.candidate[i].arrays(),
                   ep.workspaces[i], removals, BLINK_RATE, ep.costs[i], seeds, costs)
    for a, b in zip(before, ep.current[i].arrays()):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ep.current[i].arrays(), ep.candidate[i].arrays()):
        np.testing.assert_array_equal(a, b)
    m = int(np.argmin(costs))
    cost = commit_rollout(ep.data[i], ep.current[i].arrays(), ep.candidate[i].arrays(),
                          ep.workspaces[i], removals[m], BLINK_RATE, ep.costs[i], seeds[m])
    assert cost == costs[m]
    problem = ep.problems[i]
    assert np.isclose(state_cost(problem.node_data, *ep.current[i].arrays()), cost)
    solution = ep.current[i].to_routes()
    assert validate(problem.instance, solution) == []
    assert np.isclose(problem.instance.cost(solution), cost)


def test_score_matches_a_fresh_workspace(tmp_path):
    """Scores do not depend on scratch left over from earlier rollouts."""
    ep = episode(tmp_path, "cvrp", 1)
    served = ep.current[0].served()
    removals = np.stack([served[:4], served[4:8], served[:4]])
    seeds = np.array([5, 6, 5])
    costs = np.empty(3)
    score_rollouts(ep.data[0], ep.current[0].arrays(), ep.candidate[0].arrays(),
                   ep.workspaces[0], removals, BLINK_RATE, ep.costs[0], seeds, costs)
    fresh = np.empty(1)
    score_rollouts(ep.data[0], ep.current[0].arrays(), ep.candidate[0].arrays(),
                   workspace(ep.problems[0].num_nodes), removals[1:2], BLINK_RATE, ep.costs[0],
                   seeds[1:2], fresh)
    assert costs[0] == costs[2] and costs[1] == fresh[0]
