import math

import numpy as np
import pytest

from routecli.kernels import distance as kd


@pytest.fixture(autouse=True, params=["numpy", "numba"])
def kernel_path(request, monkeypatch):
    """Every test runs on both paths: numpy (small inputs) and the numba kernels (large)."""
    if request.param == "numba":
        monkeypatch.setattr(kd, "SMALL", -1)
    return request.param


def reference_edge(a, b, rule):
    """Straight transcription of the TSPLIB 95 formulas, one pair at a time."""
    if rule == "geo":
        def rad(v):
            deg = math.trunc(v)
            return 3.141592 * (deg + 5.0 * (v - deg) / 3.0) / 180.0
        lat_a, lon_a, lat_b, lon_b = rad(a[0]), rad(a[1]), rad(b[0]), rad(b[1])
        q1 = math.cos(lon_a - lon_b)
        q2 = math.cos(lat_a - lat_b)
        q3 = math.cos(lat_a + lat_b)
        return int(6378.388 * math.acos(0.5 * ((1 + q1) * q2 - (1 - q1) * q3)) + 1.0)
    dx, dy = a[0] - b[0], a[1] - b[1]
    if rule == "att":
        r = math.sqrt((dx * dx + dy * dy) / 10.0)
        t = int(r + 0.5)
        return t + 1 if t < r else t
    d = math.sqrt(dx * dx + dy * dy)
    return {"euc2d": int(d + 0.5), "ceil2d": math.ceil(d), "exact": d}[rule]


@pytest.mark.parametrize("rule", ["euc2d", "ceil2d", "att", "geo", "exact"])
def test_edge_lengths_match_tsplib_formulas(rule):
    rng = np.random.default_rng(3)
    coords = rng.uniform(-80, 80, size=(40, 2)) if rule == "geo" else rng.uniform(0, 5000, (40, 2))
    src, dst = rng.integers(0, 40, 200), rng.integers(0, 40, 200)
    got = kd.edge_lengths(kd.prepare_coords(coords, rule), src, dst, rule)
    want = [reference_edge(coords[a], coords[b], rule) for a, b in zip(src, dst, strict=False)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_euc2d_rounds_half_up_and_ceil_rounds_up():
    xy = np.array([[0.0, 0.0], [2.5, 0.0], [2.2, 0.0]])
    src, dst = np.array([0, 0]), np.array([1, 2])
    assert list(kd.edge_lengths(xy, src, dst, "euc2d")) == [3.0, 2.0]
    assert list(kd.edge_lengths(xy, src, dst, "ceil2d")) == [3.0, 3.0]


def test_tour_routes_and_cumulative_agree():
    rng = np.random.default_rng(0)
    xy = rng.random((9, 2))
    tour = rng.permutation(9)
    edges = kd.edge_lengths(xy, tour, np.roll(tour, -1), "exact")
    assert kd.tour_length(xy, tour, "exact") == pytest.approx(edges.sum())
    cum = kd.cumulative_route_distance(xy, tour, "exact")
    assert cum[0] == 0 and cum[-1] == pytest.approx(edges[:-1].sum())
    routes = [np.array([1, 2, 3]), np.array([4]), np.array([], dtype=np.int64)]
    lengths = kd.routes_length(xy, routes, "exact")
    assert lengths[2] == 0
    assert lengths[0] == pytest.approx(kd.tour_length(xy, np.array([0, 1, 2, 3]), "exact"))
    assert lengths[1] == pytest.approx(2 * np.linalg.norm(xy[4] - xy[0]))


def test_unknown_rule_is_rejected():
    with pytest.raises(ValueError, match="unknown distance rule"):
        kd.rule_code("manhattan")


@pytest.mark.parametrize("rule", kd.RULES)
def test_numpy_and_numba_give_the_same_costs(rule, monkeypatch):
    rng = np.random.default_rng(5)
    coords = rng.uniform(-80, 80, (60, 2)) if rule == "geo" else rng.uniform(0, 5000, (60, 2))
    xy = kd.prepare_coords(coords, rule)
    tour = rng.permutation(60)
    routes = [tour[1:20], tour[20:21], np.zeros(0, np.int64), tour[21:]]

    def costs():
        return (kd.edge_lengths(xy, tour, np.roll(tour, -1), rule), kd.tour_length(xy, tour, rule),
                kd.routes_length(xy, routes, rule, depot=int(tour[0])),
                kd.cumulative_route_distance(xy, tour, rule))

    monkeypatch.setattr(kd, "SMALL", 10**9)
    small = costs()
    monkeypatch.setattr(kd, "SMALL", -1)
    for got, want in zip(costs(), small, strict=True):  # sums of float edges: last bits only
        np.testing.assert_allclose(got, want, rtol=1e-12 if rule == "exact" else 0)
