"""Removal policies: what they remove, and the 8-fold augmentation they see."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.errors import OptionError
from routecli.generate import batch_instances, cvrp
from routecli.problems import CVRPInstance, Metric, Routes
from routecli.problems.geometry import augment8
from routecli.search.asa import initial_solution
from routecli.search.ruin import (
    MAX_STRING,
    RandomRemoval,
    StringRemoval,
    make_policy,
    ruin_random,
    ruin_strings,
    seed_kernels,
    string_sets,
)
from routecli.search.state import POS, ROUTE, SERVED, SearchProblem, from_routes


@pytest.fixture(scope="module")
def search() -> SearchProblem:
    return SearchProblem.from_instance(batch_instances("cvrp", cvrp(1, 80, 0, capacity=40))[0])


def test_random_removal_picks_distinct_served_customers(search: SearchProblem) -> None:
    state = initial_solution(search)
    buf = np.empty(search.num_nodes, np.int64)
    seed_kernels(0)
    for k in (1, 10, 200):
        count = ruin_random(state.nodes, state.totals, k, buf)
        out = buf[:count]
        assert count == min(k, search.num_nodes - 1)
        assert len(np.unique(out)) == count and (state.nodes[out, ROUTE] >= 0).all()


def test_random_removal_draws_alike_with_and_without_a_served_list(search: SearchProblem) -> None:
    """With every customer served the draw skips listing them; the draws stay the same."""
    state = from_routes(search, Routes([np.arange(1, 40), np.arange(40, 80)]))  # 80 unserved
    assert state.totals[SERVED] == 79
    listed, unlisted = np.empty(80, np.int64), np.empty(80, np.int64)
    for k in (1, 7, 79):
        seed_kernels(k)
        a = ruin_random(state.nodes, state.totals, k, listed)  # 79 of 80 served: a list
        seed_kernels(k)
        b = ruin_random(state.nodes[:80], state.totals, k, unlisted)  # 79 of 79: none
        assert a == b == k
        assert list(listed[:a]) == list(unlisted[:b])


def _runs(positions: np.ndarray) -> int:
    positions = np.sort(positions)
    return 1 + int((np.diff(positions) > 1).sum())


def test_string_removal_cuts_few_short_strings(search: SearchProblem) -> None:
    state = initial_solution(search)
    buf = np.empty(search.num_nodes, np.int64)
    seed_kernels(1)
    counts = []
    for _ in range(300):
        count = ruin_strings(state.nodes, state.routes, state.totals, search.neighbours, 10.0, False, buf)
        out = buf[:count]
        assert count >= 1 and len(np.unique(out)) == count
        routes = state.nodes[out, ROUTE]
        for r in np.unique(routes):
            removed = out[routes == r]
            # one string, or one split string (two pieces around a preserved block)
            assert len(removed) <= MAX_STRING
            assert _runs(state.nodes[removed, POS]) <= 2
        counts.append(count)
    # the removal budget is the mean number removed, roughly
    assert 4 <= np.mean(counts) <= 16


def test_a_small_budget_still_removes_something(search: SearchProblem) -> None:
    state = initial_solution(search)
    buf = np.empty(search.num_nodes, np.int64)
    seed_kernels(3)
    for _ in range(50):
        assert ruin_strings(state.nodes, state.routes, state.totals, search.neighbours, 1.0, False, buf) >= 1


def test_strings_start_near_each_other(search: SearchProblem) -> None:
    state = initial_solution(search)
    buf = np.empty(search.num_nodes, np.int64)
    seed_kernels(2)
    spread_strings, spread_random = [], []
    xy = search.instance.coords
    for _ in range(200):
        out = buf[: ruin_strings(state.nodes, state.routes, state.totals, search.neighbours,
                                 10.0, False, buf)]
        spread_strings.append(xy[out].std(axis=0).sum())
        out = buf[: ruin_random(state.nodes, state.totals, len(out), buf)]
        spread_random.append(xy[out].std(axis=0).sum())
    assert np.mean(spread_strings) < 0.5 * np.mean(spread_random)


def test_string_sets_have_exactly_k_distinct_served_customers_near_the_seed(
        search: SearchProblem) -> None:
    state = initial_solution(search)
    served = np.flatnonzero(state.nodes[1:, ROUTE] >= 0) + 1
    seed_kernels(4)
    out = np.empty((100, 12), np.int64)
    string_sets(state.nodes, state.routes, state.totals, search.neighbours, out)
    xy = search.instance.coords
    for row in out:
        assert len(np.unique(row)) == 12 and np.isin(row, served).all()
    random = np.stack([np.random.default_rng(i).choice(served, 12, replace=False)
                       for i in range(100)])
    assert np.mean([xy[r].std(axis=0).sum() for r in out]) < \
        0.8 * np.mean([xy[r].std(axis=0).sum() for r in random])
    whole = np.empty((3, len(served)), np.int64)  # k = every served customer: a permutation
    string_sets(state.nodes, state.routes, state.totals, search.neighbours, whole)
    assert all(sorted(row) == sorted(served) for row in whole)


@pytest.mark.parametrize("name", ["random", "strings"])
def test_propose_returns_padded_rows_of_served_customers(search: SearchProblem,
                                                         name: str) -> None:
    state = initial_solution(search)
    rows = make_policy(name).propose(search, state, np.random.default_rng(0), 8, 5)
    assert rows.shape[0] == 5 and rows.dtype == np.int64
    for row in rows:
        picked = row[row >= 0]
        assert len(picked) >= 1 and (row[len(picked):] == -1).all()
        assert (state.nodes[picked, ROUTE] >= 0).all()
    assert isinstance(make_policy(name), RandomRemoval | StringRemoval)


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(OptionError, match="unknown removal policy"):
        make_policy("learned-by-magic")


def test_solution_cost_is_invariant_under_augmentation() -> None:
    inst = batch_instances("cvrp", cvrp(1, 50, 3))[0]
    sol = initial_solution(SearchProblem.from_instance(inst)).to_routes()
    base = inst.cost(sol)
    for image in augment8(inst.coords):
        moved = CVRPInstance("aug", Metric("exact", coords=image), inst.demands, inst.capacity)
        assert moved.cost(sol) == pytest.approx(base, rel=1e-12)


def test_integer_grid_cost_is_invariant_under_rounded_metric() -> None:
    """CVRPLIB-style integer coordinates on a 1000 grid: the images stay on the grid, so
    even the rounded ``euc2d`` cost is unchanged."""
    rng = np.random.default_rng(1)
    coords = rng.integers(0, 1001, size=(40, 2)).astype(float)
    demands = np.r_[0, rng.integers(1, 10, 39)]
    inst = CVRPInstance("g", Metric("euc2d", coords=coords), demands, 30.0)
    sol = initial_solution(SearchProblem.from_instance(inst)).to_routes()
    for image in augment8(coords / 1000.0):
        moved = CVRPInstance("g8", Metric("euc2d", coords=np.rint(image * 1000.0)), demands, 30.0)
        assert moved.cost(sol) == inst.cost(sol)
