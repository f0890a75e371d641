"""Every move the masks allow keeps the solution feasible, and every masked move is infeasible,
a no-op or a duplicate: checked by applying all moves and validating with routecli.problems."""

from __future__ import annotations

import pytest
import torch

from routecli.improve import moves
from routecli.improve.env import initial_orders, to_solution
from routecli.problems import validate

from .conftest import all_pairwise_actions, instances, random_walk


def canonical(order: torch.Tensor, is_customer: torch.Tensor) -> torch.Tensor:
    """``[3, V, V]``: the one spelling of each move the masks use (2-opt: ``u`` before ``v``;
    relocate: ``u`` a customer; exchange: two customers, ``u < v``)."""
    v = order.shape[0]
    pos = moves.positions(order[None])[0]
    ids = torch.arange(v)
    two = pos[:, None] < pos[None, :]
    rel = is_customer[:, None].expand(v, v)
    ex = is_customer[:, None] & is_customer[None, :] & (ids[:, None] < ids[None, :])
    return torch.stack([two, rel, ex])


def feasible(data, orders: torch.Tensor) -> torch.Tensor:
    if data.problem == "cvrp":
        return moves.cvrp_mask(orders, data.demand, data.is_depot)
    if data.problem == "vrptw":
        return moves.vrptw_mask(orders, data.demand, data.is_depot, data.coords, data.windows)
    return moves.pdtsp_mask(orders, data.requests)


@pytest.mark.parametrize(("problem", "size", "walk"), [
    ("cvrp", 12, 0), ("cvrp", 12, 30), ("vrptw", 8, 0), ("vrptw", 8, 30), ("pdtsp", 13, 0),
    ("pdtsp", 13, 30)])
def test_masks_allow_exactly_the_feasible_moves(problem, size, walk):
    data, insts = instances(problem, size, 3, seed=walk)
    orders = random_walk(data, walk, seed=1) if walk else initial_orders(
        data, torch.Generator().manual_seed(1))
    mask = feasible(data, orders)
    actions = all_pairwise_actions(data.slots)
    for b in range(data.size):
        order = orders[b]
        after = moves.apply_pairwise(order.expand(len(actions), -1), actions)
        expected = []
        for tour in after:
            sol = to_solution(data, tour)
            expected.append(not validate(insts[b], sol) and not torch.equal(tour, order))
        expected_t = torch.tensor(expected).view(3, data.slots, data.slots)
        expected_t &= canonical(order, ~data.is_depot)
        assert torch.equal(mask[b], expected_t), f"row {b}: {(mask[b] != expected_t).nonzero()}"


@pytest.mark.parametrize(("problem", "size", "steps"), [("cvrp", 20, 150), ("vrptw", 12, 60)])
def test_a_long_random_walk_stays_feasible_and_costs_agree(problem, size, steps):
    data, insts = instances(problem, size, 4, seed=5)
    orders = random_walk(data, steps, seed=2)
    costs = moves.tour_cost(orders, data.coords)
    for b in range(data.size):
        sol = to_solution(data, orders[b])
        assert validate(insts[b], sol) == []
        assert insts[b].cost(sol) == pytest.approx(float(costs[b]), rel=1e-5)


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pdtsp"])
def test_initial_tours_are_feasible(problem):
    data, insts = instances(problem, 21, 8, seed=3)
    orders = initial_orders(data, torch.Generator().manual_seed(0))
    assert (orders[:, 0] == 0).all()
    for b in range(data.size):
        assert validate(insts[b], to_solution(data, orders[b])) == []


def test_pair_reinsertion_mask_allows_exactly_the_feasible_reinsertions():
    data, insts = instances("pdtsp", 11, 2, seed=4)
    orders = initial_orders(data, torch.Generator().manual_seed(3))
    v, n = data.slots, data.requests
    ij = torch.cartesian_prod(torch.arange(v), torch.arange(v))
    for b in range(data.size):
        for r in range(n):
            request = torch.full((len(ij),), r)
            mask = moves.reinsertion_mask(orders[b : b + 1], request[None, :1], n)[0, 0]
            after = moves.pair_reinsert(orders[b].expand(len(ij), -1),
                                        torch.cat([request[:, None], ij], 1), n)
            removed = {r + 1, r + 1 + n}
            for k, (i, j) in enumerate(ij.tolist()):
                if i in removed or j in removed:
                    assert not mask[i, j]
                    continue
                ok = not validate(insts[b], to_solution(data, after[k]))
                assert bool(mask[i, j]) == ok, (b, r, i, j)
                if ok:  # the pickup sits right after i, the delivery after j (or the pickup)
                    pos = moves.positions(after[k : k + 1])[0]
                    assert pos[r + 1] == pos[i] + 1
                    assert pos[r + 1 + n] == pos[r + 1 if i == j else j] + 1


def test_pair_moves_are_every_request_but_the_previous_one_and_their_tours_are_measured():
    """N2S's imitation teacher: the pair mask is each request's reinsertion mask, the previous
    request left out, and every allowed move's cell holds the length of its tour."""
    data, _ = instances("pdtsp", 9, 3, seed=6)
    orders = initial_orders(data, torch.Generator().manual_seed(1))
    n, v = data.requests, data.slots
    previous = torch.tensor([-1, 0, 2])
    mask = moves.pair_mask(orders, n, previous)
    assert mask.shape == (3, n, v, v)
    for b in range(data.size):
        for r in range(n):
            expected = moves.reinsertion_mask(orders[b : b + 1], torch.tensor([[r]]), n)[0, 0]
            assert torch.equal(mask[b, r], expected & (r != previous[b]))
    costs = moves.pair_tour_costs(orders, data.coords, mask, n)
    assert torch.isinf(costs[~mask]).all()
    b, r, i, j = mask.nonzero()[::7].unbind(1)
    tours = moves.pair_reinsert(orders[b], torch.stack([r, i, j], 1), n)
    assert costs[b, r, i, j].tolist() == pytest.approx(
        moves.tour_cost(tours, data.coords[b]).tolist())
    identity = moves.tour_cost(orders, data.coords)  # a request put back where it was
    assert (costs.flatten(1).min(1).values <= identity + 1e-6).all()


def test_the_best_pairwise_move_is_the_shortest_allowed_tour():
    """The imitation teacher: allowed, and no allowed move gives a shorter tour; repeated, it
    is a descent that only stops improving at a local optimum."""
    data, _ = instances("cvrp", 12, 3, seed=4)
    orders = initial_orders(data, torch.Generator().manual_seed(2))
    mask = feasible(data, orders)
    tour_costs = moves.pairwise_tour_costs(orders, data.coords, mask)
    assert torch.isinf(tour_costs[~mask]).all() and torch.isfinite(tour_costs[mask]).all()
    best = moves.best_pairwise(tour_costs)
    actions = all_pairwise_actions(data.slots)
    for b in range(data.size):
        op, u, v = best[b].tolist()
        assert mask[b, op, u, v]
        allowed = actions[mask[b].flatten()]
        costs = moves.tour_cost(moves.apply_pairwise(orders[b].expand(len(allowed), -1), allowed),
                                data.coords[b].expand(len(allowed), -1, -1))
        chosen = moves.tour_cost(moves.apply_pairwise(orders[b:b + 1], best[b:b + 1]),
                                 data.coords[b:b + 1])
        assert chosen.item() == pytest.approx(costs.min().item())
        assert tour_costs[b][mask[b]].tolist() == pytest.approx(costs.tolist())  # in its cell
    cost = moves.tour_cost(orders, data.coords)
    for _ in range(5):
        orders = moves.apply_pairwise(orders, moves.best_pairwise(moves.pairwise_tour_costs(
            orders, data.coords, feasible(data, orders))))
        after = moves.tour_cost(orders, data.coords)
        assert (after < cost).all()  # far from a local optimum after a random start
        cost = after
