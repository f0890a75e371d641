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


def test_a_long_route_is_parsed_without_an_object_per_id(tmp_path):
    import tracemalloc

    ids = np.arange(1, 1_000_001)
    path = tmp_path / "long.sol"
    path.write_text("Route #1: " + " ".join(map(str, ids)) + "\nCost 1\n")
    size = path.stat().st_size
    tracemalloc.start()
    routes, cost = parse_sol(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(routes.routes[0], ids)
    assert cost == 1
    # the line, the text after its colon and the ids: about 4x the file (a list of ints: 13x)
    assert peak < 5 * size, (peak, size)


@pytest.mark.parametrize("line, message", [
    ("Route #1: 1 2 3 4 5\nVehicle 2\n", "line 2: cannot read 'Vehicle 2'"),
    ("Route #1: 1 2 3 4 5\nCost inf\n", "line 2: Cost must be one finite number, got 'inf'"),
    ("Route #1: 1 2 3 4 5\nCost 5 7\n", "line 2: Cost must be one finite number, got '5 7'"),
    ("Route #1: 1 2 -3\n", "line 1: '-3' is not a node id"),
    ("Route #1: 1 2 3.0\n", "line 1: '3.0' is not a node id"),
])
def test_every_line_of_a_sol_is_read_or_refused(tmp_path, line, message):
    path = tmp_path / "x.sol"
    path.write_text(line)
    with pytest.raises(InstanceFormatError, match=message):
        parse_sol(path)


def test_a_byte_order_mark_and_comments_are_accepted(tmp_path):
    path = tmp_path / "bom.sol"
    path.write_bytes(b"\xef\xbb\xbfRoute #1: 1 2\n# a note\nRoute #2: 3\nCost 9\n")
    routes, cost = parse_sol(path)
    assert [r.tolist() for r in routes.routes] == [[1, 2], [3]] and cost == 9


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_every_line_ending_reads_alike(data_dir, tmp_path, ending):
    (tmp_path / "t.tsp").write_bytes((data_dir / "tiny.tsp").read_text().replace(
        "\n", ending).encode())
    (tmp_path / "t.sol").write_bytes(ending.join(["# mine", "Route #1: 3 2 5", "Route #2: 1 4",
                                                  "Cost 50", ""]).encode())
    (tmp_path / "t.tour").write_bytes(ending.join(["TOUR_SECTION", "1", "3", "2", "4", "-1",
                                                   "EOF", ""]).encode())
    assert read_instance(tmp_path / "t.tsp").size == 4
    assert np.array_equal(read_solution(tmp_path / "t.tour", read_instance(tmp_path / "t.tsp")).order,
                          [0, 2, 1, 3])
    routes, cost = parse_sol(tmp_path / "t.sol")
    assert cost == 50 and [r.tolist() for r in routes.routes] == [[3, 2, 5], [1, 4]]


@pytest.mark.parametrize("lines, message", [
    (["Route #1: 1", "Cost 5", "Cost 5"], "line 3: a second Cost line"),
    (["Items: 1", "Value 2", "Value 2"], "line 3: a second Value line .the first is line 2."),
])
def test_a_stated_number_given_twice_is_named(data_dir, tmp_path, lines, message):
    kind = "kp" if lines[0].startswith("Items") else "vrp"
    (tmp_path / "x.sol").write_text("\n".join(lines) + "\n")
    with pytest.raises(InstanceFormatError, match=message):
        read_solution(tmp_path / "x.sol", read_instance(data_dir / f"tiny.{kind}"))
