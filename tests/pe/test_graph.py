import numpy as np
import torch
from scipy.sparse.csgraph import shortest_path

from routecli.pe import get_pe, route_graph


def dense_route_graph(n: int, routes) -> np.ndarray:
    adj = np.zeros((n, n))
    for r in routes:
        path = np.concatenate([[0], r, [0]])
        adj[path[:-1], path[1:]] = adj[path[1:], path[:-1]] = 1
    return adj


def test_laplacian_pe_holds_the_smallest_nontrivial_eigenvectors(multi_route):
    batch, coords, routes, _ = multi_route
    pe = get_pe("lap", 12).eval()
    out = pe(batch)
    for b in range(2):
        n = len(coords[b])
        adj = dense_route_graph(n, routes[b])
        lap = np.diag(adj.sum(1)) - adj
        values = np.linalg.eigvalsh(lap)
        vecs = out[b, :n, :8].double().numpy()
        assert np.allclose(vecs.sum(0), 0, atol=1e-5)  # orthogonal to the constant vector
        assert np.allclose(vecs.T @ vecs, np.eye(8), atol=1e-5)
        # L u = lambda u with lambda the 2nd..9th smallest eigenvalues
        rayleigh = np.diag(vecs.T @ lap @ vecs)
        assert np.allclose(lap @ vecs, vecs * rayleigh, atol=1e-4)
        assert np.allclose(rayleigh, values[1:9], atol=1e-4)
        assert (out[b, :, 8:] == 0).all()  # zero-padded to D


def test_laplacian_sign_flips_only_while_training(multi_route):
    batch = multi_route[0]
    pe = get_pe("lap", 8)
    torch.manual_seed(1)
    flipped = pe.train()(batch)
    plain = pe.eval()(batch)
    assert torch.allclose(flipped.abs(), plain.abs(), atol=1e-5)
    assert not torch.allclose(flipped, plain)


def test_rwse_is_the_diagonal_of_random_walk_powers(multi_route):
    batch, coords, routes, _ = multi_route
    out = get_pe("rwse", 10, k=4)(batch)
    n = len(coords[1])
    adj = dense_route_graph(n, routes[1])
    walk = adj / adj.sum(1, keepdims=True)
    for t in range(1, 5):
        expected = np.diag(np.linalg.matrix_power(walk, t))
        assert np.allclose(out[1, :n, t - 1].numpy(), expected, atol=1e-6)
    assert np.allclose(out[1, :n, 0], 0)  # no self loops: a 1-step walk never returns
    assert (out[1, :, 4:] == 0).all()


def test_spd_is_the_hop_distance_on_the_route_graph(multi_route):
    batch, coords, routes, _ = multi_route
    spd = get_pe("spd", 0, max_spd=6)
    hops = spd.spd(batch)
    for b in range(2):
        n = len(coords[b])
        expected = shortest_path(dense_route_graph(n, routes[b]), unweighted=True)
        assert np.array_equal(hops[b, :n, :n].numpy(), np.minimum(expected, 6))
    bias = spd(batch)
    assert bias.shape == (2, 1, batch.num_slots, batch.num_slots)
    assert torch.equal(bias[1, 0, :5, :5], spd.table[hops[1, :5, :5]])


def test_closed_walk_depot_ends_share_graph_encodings(walk):
    for name in ("lap", "rwse"):
        out = get_pe(name, 8).eval()(walk)
        assert torch.allclose(out[:, 0], out[:, -1])
    hops = get_pe("spd", 0).spd(walk)
    assert (hops[:, 0, -1] == 0).all() and (hops[:, 1, -2] == 2).all()
    assert route_graph(walk)[0].sum() == 2 * (walk.num_slots - 1)  # one cycle
