import numpy as np
import pytest

from routecli.analysis.anisometry import anisometry, closed_paths, route_statistics
from routecli.generate import batch_instances, cvrp, pdtsp
from routecli.problems import Routes, Tour


def test_a_square_route_is_isometric():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], float)
    stats = route_statistics([square])
    assert stats["cv"][0] == pytest.approx(0)
    assert stats["max_min"][0] == pytest.approx(1)
    assert stats["mad"][0] == pytest.approx(0, abs=1e-12)


def test_statistics_match_a_direct_computation():
    rng = np.random.default_rng(0)
    paths = []
    for m in (1, 4, 9):
        pts = rng.random((m + 1, 2))
        paths.append(np.concatenate([pts, pts[:1]]))
    stats = route_statistics(paths)
    closed = route_statistics(paths, include_return=True)
    for r, p in enumerate(paths):
        e = np.linalg.norm(np.diff(p, axis=0), axis=1)
        d = np.concatenate([[0], np.cumsum(e)])
        i = np.arange(len(d))
        assert stats["cv"][r] == pytest.approx(e.std() / e.mean())
        assert stats["max_min"][r] == pytest.approx(e.max() / e.min())
        for got, last in ((stats, len(d) - 1), (closed, len(d))):
            fit = np.polyfit(i[:last], d[:last], 1)
            resid = d[:last] - np.polyval(fit, i[:last])
            mad = np.median(np.abs(resid - np.median(resid))) / e.mean()
            assert got["mad"][r] == pytest.approx(mad, abs=1e-12)


def test_closed_paths_close_routes_and_rotate_tours_to_the_depot():
    inst = batch_instances("cvrp", cvrp(1, 5, seed=0))[0]
    paths = closed_paths([inst], [Routes([[2, 1], [3, 5, 4]])])
    assert [len(p) for p in paths] == [4, 5]
    assert np.array_equal(paths[0][0], inst.coords[0]) and np.array_equal(paths[0][-1], inst.coords[0])
    tour_inst = batch_instances("pdtsp", pdtsp(1, 4, seed=0))[0]
    (tour_path,) = closed_paths([tour_inst], [Tour([3, 0, 1, 2, 4])])
    assert np.array_equal(tour_path, tour_inst.coords[[0, 1, 2, 4, 3, 0]])


def test_anisometry_averages_over_routes():
    inst = batch_instances("cvrp", cvrp(2, 8, seed=1))
    sols = [Routes([[1, 2, 3, 4], [5, 6, 7, 8]]), Routes([[8, 7, 6, 5, 4, 3, 2, 1]])]
    summary = anisometry(inst, sols)
    stats = route_statistics(closed_paths(inst, sols))
    assert summary["routes"] == 3
    assert summary["cv"] == pytest.approx(stats["cv"].mean())
    assert summary["mad_median"] == pytest.approx(np.median(stats["mad"]))
