import numpy as np

from routecli.kernels import knn


def test_knn_matches_brute_force():
    rng = np.random.default_rng(1)
    xy = rng.random((300, 2))
    got = knn(xy, 7)
    d = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    want = np.argsort(d, axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(np.sort(d[np.arange(300)[:, None], got], axis=1),
                                  np.sort(d[np.arange(300)[:, None], want], axis=1))
    assert not (got == np.arange(300)[:, None]).any()


def test_knn_excludes_self_with_duplicates_and_caps_k():
    xy = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    got = knn(xy, 10)
    assert got.shape == (3, 2)
    assert not (got == np.arange(3)[:, None]).any()
