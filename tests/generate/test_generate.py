import numpy as np
import pytest

from routecli import generate as gen
from routecli.baselines.construction import NearestNeighbour
from routecli.problems import validate


@pytest.mark.parametrize("problem", sorted(gen.GENERATORS))
def test_generators_are_seeded(problem):
    a = gen.GENERATORS[problem](3, 20, seed=5)
    b = gen.GENERATORS[problem](3, 20, seed=5)
    c = gen.GENERATORS[problem](3, 20, seed=6)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert any(not np.array_equal(a[k], c[k]) for k in a)


def test_cvrp_demands_depot_and_capacities():
    batch = gen.cvrp(50, 30, seed=0)
    assert batch["locs"].shape == (50, 31, 2)
    assert (batch["demand"][:, 0] == 0).all()
    assert batch["demand"][:, 1:].min() == 1 and batch["demand"][:, 1:].max() == 9
    assert (batch["capacity"] == 50).all()
    assert (gen.cvrp(2, 500, seed=0, capacity=None)["capacity"] == 130).all()


def test_pe_capacity_rule():
    assert [gen.pe_capacity(n) for n in (20, 21, 100, 500, 1000)] == [30, 34, 50, 130, 230]
    assert gen.pe_capacity(2000) == 30 + int(200 + 1000 / 33.3)


def test_clustered_locations_stay_in_the_unit_square_and_cluster():
    locs = gen.cvrp(20, 200, seed=1, distribution="clustered")["locs"]
    assert locs.min() >= 0 and locs.max() <= 1
    uniform = gen.cvrp(20, 200, seed=1)["locs"]

    def mean_nn(xy):
        d = np.linalg.norm(xy[:, :, None] - xy[:, None], axis=-1)
        d[:, np.arange(d.shape[1]), np.arange(d.shape[1])] = np.inf
        return d.min(-1).mean()

    assert mean_nn(locs) < 0.7 * mean_nn(uniform)
    with pytest.raises(ValueError, match="unknown distribution"):
        gen.cvrp(1, 5, seed=0, distribution="spiral")


def test_vrptw_instances_are_feasible_by_construction():
    batch = gen.vrptw(30, 100, seed=2)
    width = batch["due"][:, 1:] - batch["ready"][:, 1:]
    assert (width >= 0.18).all() and (width <= 0.20 + 1e-12).all()
    assert (batch["service"][:, 1:] >= 0.15).all() and (batch["service"][:, 0] == 0).all()
    # the out-and-back route to every customer is on time
    d0 = np.linalg.norm(batch["locs"] - batch["locs"][:, :1], axis=-1)
    assert (batch["ready"][:, 1:] >= d0[:, 1:] - 1e-12).all()
    back = batch["due"] + batch["service"] + d0
    assert (back[:, 1:] <= gen.VRPTW_HORIZON + 1e-9).all()
    for inst in gen.batch_instances("vrptw", batch)[:5]:
        assert validate(inst, NearestNeighbour().solve(inst)) == []


def test_pcvrp_prizes_scale_with_demand_and_half_pay_their_share():
    batch = gen.pcvrp(20, 100, seed=3)
    prize, demand = batch["prize"][:, 1:], batch["demand"][:, 1:]
    ratio = prize / demand
    assert (ratio.max(1) / ratio.min(1) <= 1.2 / 0.8 + 1e-9).all()
    unit = np.stack([gen._nearest_neighbour_unit_cost(batch["locs"][b], batch["demand"][b], 50.0)
                     for b in range(20)])
    pays = (prize >= unit[:, 1:] * demand).mean(1)
    np.testing.assert_allclose(pays, 0.5, atol=0.02)


def test_pdtsp_and_kp_shapes():
    assert gen.pdtsp(2, 10, seed=0)["locs"].shape == (2, 11, 2)
    with pytest.raises(ValueError, match="even"):
        gen.pdtsp(1, 9, seed=0)
    kp = gen.kp(4, 50, seed=0, capacity=10)
    assert kp["weights"].shape == (4, 50) and (kp["capacity"] == 10).all()


def test_batch_round_trip_and_instances(tmp_path):
    batch = gen.vrptw(2, 10, seed=0)
    gen.save_batch(tmp_path / "b.npz", "vrptw", batch)
    problem, loaded = gen.load_batch(tmp_path / "b.npz")
    assert problem == "vrptw"
    for key in batch:
        np.testing.assert_array_equal(batch[key], loaded[key])
    instances = gen.batch_instances(problem, loaded, prefix="t-")
    assert [i.name for i in instances] == ["t-vrptw-10-0", "t-vrptw-10-1"]


def _mean_nearest_neighbour(xy):
    d = np.linalg.norm(xy[:, :, None] - xy[:, None], axis=-1)
    d[:, np.arange(d.shape[1]), np.arange(d.shape[1])] = np.inf
    return d.min(-1).mean()


def test_explosion_empties_a_disc_around_its_centre():
    num, nodes = 50, 200
    locs = gen.explosion_locations(np.random.default_rng(3), num, nodes)
    # the same draws the generator makes, in its order: points, centre, radius
    rng = np.random.default_rng(3)
    before = rng.random((num, nodes, 2))
    centre = rng.random((num, 1, 2))
    radius = rng.uniform(*gen.EXPLOSION_RADIUS, size=(num, 1, 1))[..., 0]
    assert locs.shape == (num, nodes, 2) and locs.min() >= 0 and locs.max() <= 1
    inside_before = np.linalg.norm(before - centre, axis=-1) < radius
    inside_after = np.linalg.norm(locs - centre, axis=-1) < radius
    assert inside_before.sum() > 0.05 * num * nodes  # the disc held points before
    on_border = ((locs == 0) | (locs == 1)).any(-1)
    assert not (inside_after & ~on_border).any()  # only points clipped to the square remain
    np.testing.assert_array_equal(locs[~inside_before], before[~inside_before])


def test_mixed_locations_sit_between_uniform_and_clustered():
    def spacing(distribution):
        return _mean_nearest_neighbour(gen.cvrp(20, 200, seed=4, distribution=distribution)["locs"])

    mixed = gen.cvrp(20, 200, seed=4, distribution="mixed")["locs"]
    assert mixed.shape == (20, 201, 2) and mixed.min() >= 0 and mixed.max() <= 1
    assert spacing("clustered") < spacing("mixed") < spacing("uniform")


@pytest.mark.parametrize("distribution", gen.DISTRIBUTIONS)
def test_every_distribution_reaches_the_cvrp_family(distribution):
    for problem in ("cvrp", "vrptw"):
        batch = gen.GENERATORS[problem](2, 15, 0, distribution=distribution)
        for inst in gen.batch_instances(problem, batch):
            assert validate(inst, NearestNeighbour().solve(inst)) == []


def test_the_generate_command_takes_every_distribution(tmp_path, capsys):
    from routecli.cli.app import main

    for distribution in gen.DISTRIBUTIONS:
        out = tmp_path / f"{distribution}.npz"
        assert main(["generate", "cvrp", "--size", "12", "--num", "2", "--distribution",
                     distribution, "--out", str(out)]) == 0
        problem, batch = gen.load_batch(out)
        assert problem == "cvrp" and batch["locs"].shape == (2, 13, 2)
    assert main(["generate", "cvrp", "--distribution", "spiral", "--out",
                 str(tmp_path / "x.npz")]) == 2
    assert "unknown distribution 'spiral'" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()
