import math
from collections import Counter

import numpy as np
import pytest
import torch

from routecli.analysis.probe import (
    any_pairs,
    pe_distances,
    probe,
    route_pairs,
    spearman,
    targets,
)
from routecli.pe import RouteBatch, get_pe
from tests.pe.conftest import make_batch


@pytest.fixture
def batch():
    return make_batch((23, 30), per_route=6, seed=4)[0]


def test_route_pairs_are_distinct_customers_of_one_route_uniformly(batch):
    gen = torch.Generator().manual_seed(0)
    pairs = route_pairs(batch, 6000, gen)
    r, u, v = pairs.row, pairs.u, pairs.v
    assert (u != v).all() and (batch.route[r, u] == batch.route[r, v]).all()
    assert (batch.route[r, u] > 0).all()
    # a route of m customers holds m(m-1)/2 of the row's pairs
    first = r == 0
    counts = Counter(batch.route[0, u[first]].tolist())
    sizes = Counter(batch.route[0, 1:24].tolist())
    total_pairs = sum(m * (m - 1) / 2 for m in sizes.values())
    for route, m in sizes.items():
        expected = first.sum().item() * m * (m - 1) / 2 / total_pairs
        assert abs(counts[route] - expected) < 5 * math.sqrt(expected) + 1


def test_any_pairs_are_distinct_customers(batch):
    pairs = any_pairs(batch, 3000, torch.Generator().manual_seed(1))
    assert (pairs.u != pairs.v).all()
    assert (batch.route[pairs.row, pairs.u] > 0).all() and (batch.route[pairs.row, pairs.v] > 0).all()
    same = (batch.route[pairs.row, pairs.u] == batch.route[pairs.row, pairs.v]).float().mean()
    assert 0.1 < same < 0.4  # 4-5 routes: about a fifth of uniform pairs share a route


def test_targets_follow_the_definitions():
    points = torch.rand(3, 12, 2, generator=torch.Generator().manual_seed(0))
    walk = RouteBatch.from_walk(torch.cat([points, points[:, :1]], 1))
    gen = torch.Generator().manual_seed(2)
    rp, ap = route_pairs(walk, 50, gen), any_pairs(walk, 50, gen)
    t = targets(walk, rp, ap)
    gap = (walk.cum[rp.row, rp.u] - walk.cum[rp.row, rp.v]).abs().double().numpy()
    total = walk.total[rp.row, rp.u].double().numpy()
    assert np.allclose(t["D1"], gap)
    assert np.allclose(t["D2"], np.minimum(gap, total - gap)) and (t["D2"] <= t["D1"]).all()
    assert (t["D3"] == 0).all()  # one route per row


def test_single_route_harmonic_ipe_ranks_cyclic_arcs_perfectly():
    points = torch.rand(4, 15, 2, generator=torch.Generator().manual_seed(3))
    walks = RouteBatch.from_walk(torch.cat([points, points[:, :1]], 1))
    one = walks.index(slice(0, 1))
    result = probe(one, ["ipe", "nope", "sin"], pairs_per_solution=300, dim=64)
    assert result["ipe"]["D2"] == pytest.approx(1.0, abs=1e-5)  # float32 near-ties
    assert math.isnan(result["nope"]["D1"])
    assert result["sin"]["D1"] > 0  # index gaps and distance gaps are correlated


def test_distances_by_kind(batch):
    gen = torch.Generator().manual_seed(5)
    pairs = route_pairs(batch, 200, gen)
    gap = (batch.pos[pairs.row, pairs.u] - batch.pos[pairs.row, pairs.v]).abs().numpy()
    alibi = pe_distances(get_pe("alibi", 0, num_heads=4), batch, pairs)
    assert np.allclose(alibi, gap * get_pe("alibi", 0, num_heads=4).slopes.mean().item(),
                       atol=1e-5)
    rope = pe_distances(get_pe("rope", 8), batch, pairs)
    sin = pe_distances(get_pe("sin", 8), batch, pairs)
    # ||R(u)1 - R(v)1||^2 = 4 sum_k (1 - cos(w_k (i - j))) = 2 ||SIN(u) - SIN(v)||^2
    assert np.allclose(rope, math.sqrt(2) * sin, atol=1e-4)


def test_probe_d3_ranks_route_separating_encodings_first(batch):
    result = probe(batch, ["xpe", "xpe_mean", "sin"], pairs_per_solution=500, dim=32)
    assert result["xpe_mean"]["D3"] > result["xpe"]["D3"] > result["sin"]["D3"]
    assert result["xpe"]["d3_ratio"] > 1.2 > 1 > result["sin"]["d3_ratio"]
    assert result["xpe_mean"]["d3_ratio"] == math.inf  # same route, same vector
    assert math.isnan(result["xpe_mean"]["D1"])  # one angle per route: no in-route signal


def test_spearman_is_nan_for_constant_input():
    assert math.isnan(spearman(np.ones(5), np.arange(5.0)))
    assert spearman(np.arange(5.0), np.arange(5.0) ** 3) == pytest.approx(1.0)


def test_reference_rows_bound_what_index_and_cyclic_distance_can_reach(batch):
    result = probe(batch, ["ref_index_gap", "ref_cyclic_arc", "ipe", "cycleformer"],
                   pairs_per_solution=500, dim=64)
    # the harmonic direction-aware IPE is a monotone function of the normalised cyclic arc
    assert result["ipe"]["D2"] == pytest.approx(result["ref_cyclic_arc"]["D2"], abs=1e-3)
    assert math.isnan(result["ref_cyclic_arc"]["D3"])  # undefined across routes
    assert result["ref_index_gap"]["D1"] > 0.5
