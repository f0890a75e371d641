import numpy as np
import pytest

from routecli.errors import InstanceFormatError
from routecli.io import read_instance, read_solution, write_solution
from routecli.io.solutions import parse_sol
from routecli.problems import Routes, Tour


def test_sol_round_trip_and_stated_cost(data_dir, tmp_path):
    inst = read_instance(data_dir / "tiny.vrp")
    sol = read_solution(data_dir / "tiny.sol", inst)
    assert inst.cost(sol) == 52
    out = write_solution(tmp_path / "x.sol", inst, sol)
    routes, cost = parse_sol(out)
    assert cost == 52
    assert [list(r) for r in routes.routes] == [[1, 2], [3, 4], [5]]
    assert not list(tmp_path.glob(".*part"))


def test_tour_round_trip(data_dir, tmp_path):
    inst = read_instance(data_dir / "tiny.tsp")
    out = write_solution(tmp_path / "x.tour", inst, Tour([0, 3, 1, 2]))
    np.testing.assert_array_equal(read_solution(out, inst).order, [0, 3, 1, 2])


def test_bad_solution_files(data_dir, malformed_dir, tmp_path):
    with pytest.raises(InstanceFormatError, match="line 1: 'two' is not a node id"):
        parse_sol(malformed_dir / "bad_solution.sol")
    (tmp_path / "none.sol").write_text("Cost 5\n")
    with pytest.raises(InstanceFormatError, match="no 'Route #k:' lines"):
        parse_sol(tmp_path / "none.sol")
    inst = read_instance(data_dir / "tiny.tsp")
    with pytest.raises(InstanceFormatError, match="is a .tour file"):
        read_solution(data_dir / "tiny.sol", inst)
    assert isinstance(read_solution(data_dir / "tiny.sol", read_instance(data_dir / "tiny.vrp")),
                      Routes)


def test_all_tsplib_optimal_tours_recost_to_the_optimum(benchdata):
    import csv

    rows = csv.DictReader((benchdata / "bks.csv").read_text().splitlines())
    bks = {r["instance"]: float(r["bks"]) for r in rows}
    tours = sorted((benchdata / "tsplib").glob("*.opt.tour"))
    assert len(tours) == 19
    for path in tours:
        inst = read_instance(path.with_name(path.name.replace(".opt.tour", ".tsp")))
        tour = read_solution(path, inst)
        assert inst.cost(tour) == bks[inst.name], path.name
