"""The environment: giant tours as RouteBatch (what every PE reads), rewards, observations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from routecli.improve import moves
from routecli.improve.env import (
    Env,
    capacity_depot_slots,
    depot_copies,
    depot_slots,
    initial_orders,
    make_instances,
    to_solution,
    tour_batch,
)
from routecli.improve.train import generate_instances
from routecli.pe.batch import RouteBatch

from .conftest import instances, random_walk


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pdtsp"])
def test_tour_batch_matches_the_node_layout_of_routecli_pe(problem):
    data, insts = instances(problem, 15, 4, seed=1)
    orders = random_walk(data, 25, seed=3)
    batch = tour_batch(data, orders)
    solutions = [to_solution(data, orders[b]) for b in range(data.size)]
    reference = RouteBatch.from_solutions(insts, solutions)
    nodes = reference.num_slots  # the instance's own nodes come first in the slot layout
    for name in ("node", "prev", "next", "route", "pos", "length", "mask"):
        assert torch.equal(getattr(batch, name)[:, :nodes], getattr(reference, name)), name
    for name in ("cum", "total", "theta", "coords"):
        assert torch.allclose(getattr(batch, name)[:, :nodes], getattr(reference, name),
                              atol=1e-5), name
    extra = batch.node[:, nodes:]  # further depot copies read as the depot
    assert (extra == 0).all() and (batch.pos[:, nodes:] == 0).all()
    assert (batch.route[:, nodes:] == 0).all() and (batch.prev[:, nodes:] == -1).all()


def test_reward_is_the_decrease_of_the_best_cost():
    data, _ = instances("cvrp", 12, 6, seed=2)
    generator = torch.Generator().manual_seed(0)
    env = Env(data, initial_orders(data, generator))
    best = env.best.clone()
    total = torch.zeros(data.size)
    v = data.slots
    for _ in range(40):
        index = torch.multinomial(env.allowed().flatten(1).float(), 1, generator=generator)[:, 0]
        reward = env.step(torch.stack([index // (v * v), index // v % v, index % v], 1))
        assert (reward >= 0).all()
        total += reward
        assert torch.allclose(env.cost, moves.tour_cost(env.order, data.coords))
        assert torch.allclose(moves.tour_cost(env.best_order, data.coords), env.best)
    assert torch.allclose(best - total, env.best, atol=1e-5)
    assert (env.best <= env.cost + 1e-6).all()


def test_the_previous_move_is_masked():
    data, _ = instances("cvrp", 12, 3, seed=4)
    env = Env(data, initial_orders(data, torch.Generator().manual_seed(1)))
    allowed = env.allowed()
    index = allowed.flatten(1).float().argmax(1)
    v = data.slots
    action = torch.stack([index // (v * v), index // v % v, index % v], 1)
    env.step(action)
    rows = torch.arange(data.size)
    assert not env.allowed()[rows, action[:, 0], action[:, 1], action[:, 2]].any()


def test_disabled_operators_are_never_allowed():
    data, _ = instances("cvrp", 12, 3, seed=4)
    env = Env(data, initial_orders(data, torch.Generator().manual_seed(1)), operators=("2opt",))
    allowed = env.allowed()
    assert allowed[:, 0].any() and not allowed[:, 1:].any()


def test_depot_copies_follow_dact_rates():
    assert depot_copies(20) == 10 and depot_copies(50) == 20 and depot_copies(100) == 20
    data, _ = instances("cvrp", 20, 2)
    assert data.slots == 20 + 10 and int(data.is_depot.sum()) == 10


def test_a_chosen_tight_capacity_gets_the_depot_slots_its_start_tours_need():
    tight = generate_instances("cvrp", 20, 64, seed=0, capacity=12)  # about 8 loads each
    with pytest.raises(ValueError, match="depot copies"):  # the size's 10 slots are too few
        initial_orders(make_instances("cvrp", tight), torch.Generator().manual_seed(0))
    slots = capacity_depot_slots("cvrp", tight, 12)
    assert slots == depot_slots("cvrp", tight) > depot_copies(20)
    data = make_instances("cvrp", tight, slots)
    order = initial_orders(data, torch.Generator().manual_seed(0))
    env = Env(data, order)
    assert torch.isfinite(env.cost).all()
    paper = generate_instances("cvrp", 20, 64, seed=0)  # the paper's capacity: its layout stays
    assert capacity_depot_slots("cvrp", paper, None) is None
    assert capacity_depot_slots("vrptw", generate_instances("vrptw", 20, 4, 0, 30), 30) is None


def test_observation_rows_can_be_selected():
    data, _ = instances("pdtsp", 11, 4, seed=0)
    env = Env(data, initial_orders(data, torch.Generator().manual_seed(0)), kind="pair",
              window=10)
    obs = env.observe()
    part = obs.index(torch.tensor([1, 3]))
    assert part.order.shape == (2, data.slots) and part.route.batch_size == 2
    assert part.signature is not None and part.signature.shape == (2, data.requests, 4)
    assert np.allclose(part.cost.numpy(), obs.cost[[1, 3]].numpy())
