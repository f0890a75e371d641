import numpy as np
import pytest

from routecli.kernels.candidates import CandidateIndex


def brute_force(xy, current, visited, k, always=-1, always_open=None, demand=None, remaining=None):
    out = []
    for r, (cur, row) in enumerate(zip(current, visited)):
        first = [always] if always >= 0 and always_open[r] else []
        fits = np.ones(len(xy), bool) if demand is None else demand <= remaining[r]
        others = [j for j in np.flatnonzero(~row & fits) if j != always]
        d = np.linalg.norm(xy[others] - xy[cur], axis=1)
        order = np.lexsort((others, d))
        out.append(first + [others[i] for i in order[: k - len(first)]])
    return out


def assert_matches(cand, sizes, want):
    for row, size, w in zip(cand, sizes, want):
        assert size == len(w)
        assert list(row[:size]) == w
        assert (row[size:] == -1).all()


@pytest.mark.parametrize("visited_share", [0.0, 0.5, 0.97])
@pytest.mark.parametrize("list_size", [4, 32])
def test_matches_brute_force_with_visited_masks(visited_share, list_size):
    rng = np.random.default_rng(int(visited_share * 100) + list_size)
    n, r, k = 400, 12, 10
    xy = rng.random((n, 2))
    index = CandidateIndex(xy, list_size=list_size)
    visited = rng.random((r, n)) < visited_share
    current = rng.integers(0, n, r)
    visited[np.arange(r), current] = True
    cand, sizes = index.query(current, visited, k)
    assert_matches(cand, sizes, brute_force(xy, current, visited, k))


@pytest.mark.parametrize("list_size", [3, 50])
def test_demand_filter_keeps_only_customers_that_fit(list_size):
    rng = np.random.default_rng(11)
    n, r, k = 300, 8, 12
    xy = rng.random((n, 2))
    demand = rng.integers(1, 10, n).astype(float)
    demand[0] = 0.0
    remaining = rng.uniform(0, 10, r)
    visited = rng.random((r, n)) < 0.4
    visited[:, 0] = True
    current = rng.integers(1, n, r)
    visited[np.arange(r), current] = True
    index = CandidateIndex(xy, list_size=list_size)
    always_open = np.arange(r) % 3 != 0
    cand, sizes = index.query(current, visited, k, always=0, always_open=always_open,
                              demand=demand, remaining=remaining)
    assert_matches(cand, sizes, brute_force(xy, current, visited, k, 0, always_open, demand,
                                            remaining))
    for row, size, room in zip(cand, sizes, remaining):
        assert (demand[row[:size]] <= room).all()


def test_depot_is_always_first_when_open():
    rng = np.random.default_rng(7)
    xy = rng.random((200, 2))
    index = CandidateIndex(xy, list_size=8)
    visited = rng.random((5, 200)) < 0.3
    visited[:, 0] = True  # the depot is never "unvisited"; always_open decides
    always_open = np.array([True, True, True, False, False])
    current = np.array([5, 6, 7, 8, 9])
    visited[np.arange(5), current] = True
    cand, sizes = index.query(current, visited, 6, always=0, always_open=always_open)
    assert_matches(cand, sizes, brute_force(xy, current, visited, 6, 0, always_open))
    assert (cand[:3, 0] == 0).all() and (cand[3:] != 0).all()


def test_fewer_allowed_nodes_than_k_and_clustered_points():
    rng = np.random.default_rng(3)
    xy = np.concatenate([rng.normal(0, 0.01, (150, 2)), rng.normal(5, 0.01, (150, 2))])
    index = CandidateIndex(xy, list_size=5)
    visited = np.ones((2, 300), bool)
    visited[0, 200:203] = False  # the only open nodes are in the other cluster
    visited[1, [10, 250]] = False
    cand, sizes = index.query(np.array([0, 1]), visited, 8)
    assert list(sizes) == [3, 2]
    assert sorted(cand[0, :3]) == [200, 201, 202]
    assert list(cand[1, :2]) == brute_force(xy, [1], visited[1:], 8)[0]


def test_demand_without_remaining_is_an_error():
    index = CandidateIndex(np.random.default_rng(0).random((20, 2)), list_size=4)
    with pytest.raises(ValueError, match="remaining"):
        index.query(np.array([0]), np.zeros((1, 20), bool), 3, demand=np.ones(20))


@pytest.mark.parametrize("cx,cy", [(0, 0), (2, 1), (4, 2)])
def test_rings_cover_the_grid_once_each_at_its_chebyshev_distance(cx, cy):
    from routecli.kernels.candidates import ring_cell

    nx, ny = 5, 3
    seen = []
    for ring in range(max(nx, ny) + 1):
        cells = [ring_cell(cx, cy, ring, t, nx, ny) for t in range(max(8 * ring, 1))]
        for c in cells:
            if c >= 0:
                assert max(abs(c % nx - cx), abs(c // nx - cy)) == ring
                seen.append(c)
    assert sorted(seen) == list(range(nx * ny))


def test_nodes_on_a_line_make_a_grid_of_about_n_cells():
    from routecli.kernels.candidates import NodeGrid

    xy = np.stack([np.arange(1000.0), np.zeros(1000)], axis=1)
    grid = NodeGrid(xy)
    assert grid.nx * grid.ny <= 2 * 1000
