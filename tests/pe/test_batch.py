import numpy as np
import pytest
import torch

from routecli.generate import batch_instances, cvrp, pdtsp
from routecli.pe import RouteBatch, route_graph
from routecli.pe.batch import gather_nodes, node_present
from routecli.problems import Routes, Tour


def test_from_routes_matches_a_direct_walk_of_each_route(multi_route):
    batch, coords, routes, _ = multi_route
    for b, (xy, rs) in enumerate(zip(coords, routes, strict=True)):
        for k, route in enumerate(rs, start=1):
            path = np.concatenate([[0], route, [0]])
            legs = np.linalg.norm(np.diff(xy[path], axis=0), axis=1)
            cum = np.concatenate([[0], np.cumsum(legs)])
            for i, node in enumerate(route, start=1):
                assert batch.route[b, node] == k
                assert batch.pos[b, node] == i
                assert batch.length[b, node] == len(route) + 1
                assert batch.cum[b, node] == pytest.approx(cum[i], abs=1e-5)
                assert batch.total[b, node] == pytest.approx(cum[-1], abs=1e-5)
                assert batch.prev[b, node] == path[i - 1]
                assert batch.next[b, node] == path[i + 1]
                rel = xy[node] - xy[0]
                assert batch.theta[b, node] == pytest.approx(np.arctan2(rel[1], rel[0]), abs=1e-5)


def test_padding_slots_are_masked_and_zero(multi_route):
    batch, coords, _, _ = multi_route
    n0 = len(coords[0])
    assert batch.mask[0, :n0].all() and not batch.mask[0, n0:].any()
    for field in (batch.pos, batch.route, batch.cum, batch.theta, batch.coords):
        assert (field[0, n0:] == 0).all()
    assert batch.is_depot[:, 0].all() and batch.is_depot.sum() == 2
    assert batch.num_routes.tolist() == [3, 4]


def test_from_solutions_handles_routes_and_depot_rotated_tours():
    inst = batch_instances("cvrp", cvrp(1, 6, seed=0))[0]
    sol = Routes([[3, 1], [2, 5, 4, 6]])
    batch = RouteBatch.from_solutions([inst], [sol])
    assert batch.route[0].tolist() == [0, 1, 2, 1, 2, 2, 2]
    assert batch.demand[0].tolist() == inst.demands.astype(float).tolist()
    tsp_like = batch_instances("pdtsp", pdtsp(1, 4, seed=0))[0]
    tour = Tour([2, 4, 0, 1, 3])
    walk = RouteBatch.from_solutions([tsp_like], [tour])
    assert walk.pos[0].tolist() == [0, 1, 3, 2, 4]  # rotated to 0 1 3 2 4
    assert walk.length[0, 1:].tolist() == [5] * 4
    assert float(walk.total[0, 1]) == pytest.approx(tsp_like.cost(tour), abs=1e-5)


def test_from_routes_rejects_unknown_customers():
    with pytest.raises(ValueError, match="not a customer"):
        RouteBatch.from_routes([np.zeros((3, 2))], [[np.array([1, 3])]])


def test_from_walk_closes_the_route_on_the_depot(walk):
    length = walk.num_slots - 1
    assert (walk.node[:, 0] == 0).all() and (walk.node[:, -1] == 0).all()
    assert torch.allclose(walk.cum[:, -1], walk.total[:, -1])
    assert (walk.pos[:, -1] == length).all() and (walk.length == length).all()
    assert (walk.prev[:, 0] == -1).all() and (walk.next[:, -1] == -1).all()


def test_from_walk_with_a_mask_pads_shorter_rows():
    pts = torch.rand(2, 6, 2)
    pts[0, 3] = pts[0, 0]  # row 0 is a closed walk of length 3, then padding
    pts[1, 5] = pts[1, 0]
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1] * 6]).bool()
    walk = RouteBatch.from_walk(pts, mask)
    assert walk.length[0, :4].tolist() == [3] * 4 and walk.node[0].tolist() == [0, 1, 2, 0, 0, 0]
    assert (walk.cum[0, 4:] == 0).all()


def test_route_graph_is_the_depot_plus_route_arcs(multi_route):
    batch, coords, routes, _ = multi_route
    adj = route_graph(batch)
    for b, rs in enumerate(routes):
        expected = np.zeros((batch.num_slots, batch.num_slots))
        for r in rs:
            path = np.concatenate([[0], r, [0]])
            expected[path[:-1], path[1:]] = expected[path[1:], path[:-1]] = 1
        assert np.array_equal(adj[b].numpy(), expected)
    assert node_present(batch)[0].sum() == len(coords[0])


def test_gather_nodes_reads_values_by_node_id(walk):
    values = torch.arange(walk.num_slots, dtype=torch.float32)[None, :, None].expand(3, -1, 2)
    out = gather_nodes(values, walk)
    assert torch.equal(out[:, -1], out[:, 0])  # the return visit reads the depot's value
