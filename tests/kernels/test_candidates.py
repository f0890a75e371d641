import numpy as np
import pytest

from routecli.kernels.candidates import CandidateIndex


def brute_force(xy, current, allowed, k, always=-1):
    out = []
    for cur, row in zip(current, allowed):
        first = [always] if always >= 0 and row[always] else []
        others = [j for j in np.flatnonzero(row) if j != always]
        d = np.linalg.norm(xy[others] - xy[cur], axis=1)
        order = np.lexsort((others, d))
        out.append(first + [others[i] for i in order[: k - len(first)]])
    return out


@pytest.mark.parametrize("visited_share", [0.0, 0.5, 0.97])
@pytest.mark.parametrize("list_size", [4, 32])
def test_matches_brute_force_with_visited_masks(visited_share, list_size):
    rng = np.random.default_rng(int(visited_share * 100) + list_size)
    n, r, k = 400, 12, 10
    xy = rng.random((n, 2))
    index = CandidateIndex(xy, list_size=list_size)
    allowed = rng.random((r, n)) >= visited_share
    current = rng.integers(0, n, r)
    allowed[np.arange(r), current] = False  # the current node is visited
    cand, sizes = index.query(current, allowed, k)
    for row, size, want in zip(cand, sizes, brute_force(xy, current, allowed, k)):
        assert size == len(want)
        assert list(row[:size]) == want
        assert (row[size:] == -1).all()


def test_depot_is_always_first_when_allowed():
    rng = np.random.default_rng(7)
    xy = rng.random((200, 2))
    index = CandidateIndex(xy, list_size=8)
    allowed = rng.random((5, 200)) > 0.3
    allowed[:3, 0] = True
    allowed[3:, 0] = False
    current = np.array([5, 6, 7, 8, 9])
    allowed[np.arange(5), current] = False
    cand, sizes = index.query(current, allowed, 6, always=0)
    want = brute_force(xy, current, allowed, 6, always=0)
    for row, size, w in zip(cand, sizes, want):
        assert list(row[:size]) == w
    assert (cand[:3, 0] == 0).all() and (cand[3:] != 0).all()


def test_fewer_allowed_nodes_than_k_and_clustered_points():
    rng = np.random.default_rng(3)
    xy = np.concatenate([rng.normal(0, 0.01, (150, 2)), rng.normal(5, 0.01, (150, 2))])
    index = CandidateIndex(xy, list_size=5)
    allowed = np.zeros((2, 300), bool)
    allowed[0, 200:203] = True  # the only allowed nodes are in the other cluster
    allowed[1, [10, 250]] = True
    cand, sizes = index.query(np.array([0, 1]), allowed, 8)
    assert list(sizes) == [3, 2]
    assert sorted(cand[0, :3]) == [200, 201, 202]
    assert list(cand[1, :2]) == brute_force(xy, [1], allowed[1:], 8)[0]
