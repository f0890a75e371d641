"""Knapsack references: HiGHS's optimum equals brute force, the value/weight greedy (``nn``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from routecli import generate
from routecli.baselines import construction, knapsack
from routecli.generate import batch_instances
from routecli.problems import KPInstance, Selection, gap, validate
from routecli.solvers import run


def brute_force(weights: np.ndarray, values: np.ndarray, capacity: float) -> float:
    best = 0.0
    for mask in itertools.product([0, 1], repeat=len(weights)):
        chosen = np.flatnonzero(mask)
        if weights[chosen].sum() <= capacity:
            best = max(best, float(values[chosen].sum()))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_exact_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    w, v = rng.random(12), rng.random(12)
    chosen, proved = knapsack.optimum(w, v, 2.5)
    assert proved and w[chosen].sum() <= 2.5
    assert v[chosen].sum() == pytest.approx(brute_force(w, v, 2.5), abs=1e-12)


def test_greedy_takes_items_by_value_per_weight_while_they_fit():
    w = np.array([0.6, 0.5, 0.5, 0.2])
    v = np.array([0.9, 0.6, 0.6, 0.1])  # ratios 1.5, 1.2, 1.2, 0.5
    assert knapsack.greedy_selection(w, v, 1.0).tolist() == [0, 3]  # optimum: items 1 and 2
    chosen, _ = knapsack.optimum(w, v, 1.0)
    assert sorted(chosen.tolist()) == [1, 2]


def test_a_time_limit_before_highs_finds_anything_returns_the_greedy(monkeypatch):
    # under load a 1 ms limit can end HiGHS before its first incumbent; the empty selection is
    # feasible, so that is never an error: the greedy's selection stands, not proven optimal
    import scipy.optimize

    class NothingYet:
        x, status, message = None, 1, "Time limit reached."

    monkeypatch.setattr(scipy.optimize, "milp", lambda *args, **kwargs: NothingYet())
    rng = np.random.default_rng(0)
    w, v = rng.random(50), rng.random(50)
    chosen, proved = knapsack.optimum(w, v, 5.0, seconds=0.0)
    assert not proved
    assert chosen.tolist() == knapsack.greedy_selection(w, v, 5.0).tolist()


def test_solvers_through_run_and_the_maximisation_gap():
    inst = batch_instances("kp", generate.kp(1, 200, seed=0, capacity=25))[0]
    assert isinstance(inst, KPInstance)
    exact = run(knapsack.make(knapsack.Settings()), inst)
    greedy = run(construction.make(construction.Settings()), inst)
    assert exact.feasible and greedy.feasible
    assert greedy.cost <= exact.cost
    assert 0 <= gap(greedy.cost, exact.cost, "max") < 1.0  # (best - ours) / best, in percent
    assert gap(90.0, 100.0, "max") == pytest.approx(10.0)
    assert validate(inst, Selection(np.arange(200)))[0].startswith("items over capacity by")


def test_the_greedy_continues_a_selection():
    w, v = np.array([3.0, 1.0, 1.0, 2.0]), np.array([3.0, 4.0, 1.0, 5.0])
    assert knapsack.greedy_selection(w, v, 4.0, np.array([2])).tolist() == [2, 1, 3]
