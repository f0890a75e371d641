import numpy as np
import pytest

from routecli.errors import InstanceFormatError, display_path
from routecli.io import read_instance
from routecli.problems import CVRPInstance, VRPTWInstance


def test_tiny_cvrp(data_dir):
    inst = read_instance(data_dir / "tiny.vrp")
    assert isinstance(inst, CVRPInstance)
    assert inst.size == 5 and inst.capacity == 10
    np.testing.assert_array_equal(inst.demands, [0, 4, 5, 3, 6, 2])


def test_solomon_file_becomes_vrptw_with_exact_distances(data_dir):
    inst = read_instance(data_dir / "tiny_solomon.txt")
    assert isinstance(inst, VRPTWInstance)
    assert inst.metric.rule == "exact" and inst.capacity == 20
    np.testing.assert_array_equal(inst.ready, [0, 912, 825, 65])
    np.testing.assert_array_equal(inst.service, [0, 90, 90, 90])


MALFORMED = {
    "empty.vrp": "the file is empty",
    "binary.vrp": "binary data",
    "missing_coords.vrp": "missing NODE_COORD_SECTION",
    "wrong_dimension.vrp": "line 6: NODE_COORD_SECTION has 3 rows, DIMENSION says 10",
    "unknown_edge_weight_type.tsp": "line 4: unsupported EDGE_WEIGHT_TYPE 'MAN_3D'",
    "non_numeric.tsp": "line 7: NODE_COORD_SECTION: non-numeric value 'four'",
    "demand_over_capacity.vrp": "line 13: DEMAND_SECTION: infeasible: demand 12 of node 3 exceeds "
                                "capacity 10",
    "unknown_field.tsp": "line 4: unknown field 'FLAVOUR'",
    "missing_capacity.vrp": "missing CAPACITY",
    "missing_dimension.tsp": "missing DIMENSION",
    "duplicate_node_ids.tsp": "line 8: NODE_COORD_SECTION: node id 2 appears twice (also line 7)",
    "short_matrix.tsp": "line 6: EDGE_WEIGHT_SECTION: UPPER_ROW of dimension 4 needs 6 values, got 5",
    "missing_demand.vrp": "missing DEMAND_SECTION",
    "dimension_not_integer.tsp": "line 3: DIMENSION must be an integer, got 'three'",
    "two_depots.vrp": "line 14: DEPOT_SECTION: only a single depot at node 1 is supported, got 1 2",
    "reversed_window.vrp": "line 16: TIME_WINDOW_SECTION: time window of node 2 opens after it "
                           "closes (50 > 10)",
    "stray_text.tsp": "line 3: expected 'KEY : value'",
    "atsp.tsp": "TYPE 'ATSP' is not a symmetric TSP",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_files_raise_one_precise_error(malformed_dir, name):
    with pytest.raises(InstanceFormatError) as info:
        read_instance(malformed_dir / name)
    message = str(info.value)
    assert message.startswith(display_path(malformed_dir / name))
    assert MALFORMED[name] in message
    assert "\n" not in message


def test_all_cvrplib_solutions_recost_to_their_bks(benchdata):
    import csv

    from routecli.io import read_solution
    from routecli.problems import validate

    rows = csv.DictReader((benchdata / "bks.csv").read_text().splitlines())
    bks = {r["instance"]: float(r["bks"]) for r in rows}
    files = sorted((benchdata / "cvrplib").glob("*/*.vrp"))
    assert len(files) == 110
    for path in files:
        inst = read_instance(path)
        sol = read_solution(path.with_suffix(".sol"), inst)
        assert validate(inst, sol) == [], path.name
        assert inst.cost(sol) == bks[inst.name], path.name
