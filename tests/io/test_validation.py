"""Invalid numbers, ragged rows and impossible sizes are rejected at read time with one line that
names the line and the field (issue 15, items 3, 6, 7 and 10). One fixture per defect class in
tests/data/malformed/, named after the defect."""

import tracemalloc
import warnings

import pytest

from routecli.errors import InstanceFormatError, display_path
from routecli.io import read_instance

EXACT = "so costs, loads and times stay exact in float64/int64"
# fixture -> the message after "<path>: "
INVALID = {
    # item 3: invalid numbers
    "negative_demand.vrp": "line 13: DEMAND_SECTION: demand of node 3 is -3; demand must be >= 0",
    "nan_demand.vrp": "line 12: DEMAND_SECTION: demand of node 2 is nan; it must be a finite number",
    "nan_capacity.vrp": f"line 5: CAPACITY is nan; it must be > 0 and <= 1e+09 {EXACT}",
    "inf_capacity.vrp": f"line 5: CAPACITY is inf; it must be > 0 and <= 1e+09 {EXACT}",
    "negative_capacity.vrp": f"line 5: CAPACITY is -10; it must be > 0 and <= 1e+09 {EXACT}",
    "nan_coords.vrp": "line 8: NODE_COORD_SECTION: x of node 2 is nan; it must be a finite number",
    "overflow_coords.tsp": f"line 7: NODE_COORD_SECTION: x of node 2 is 1e+300; |x| must be <= 1e+09 "
                           f"{EXACT}",
    "huge_coords.tsp": f"line 8: NODE_COORD_SECTION: y of node 3 is -2e+09; |y| must be <= 1e+09 {EXACT}",
    "overflow_demand.vrp": f"line 13: DEMAND_SECTION: demand of node 3 is 1e+300; |demand| must be "
                           f"<= 1e+09 {EXACT}",
    "route_length_limit.vrp": "line 7: DISTANCE (a route length limit) is not supported",
    "explicit_negative_weight.tsp": "line 8: EDGE_WEIGHT_SECTION: weight of edge (2, 4) is -2; "
                                    "weights must be >= 0",
    "explicit_nan_weight.tsp": "line 9: EDGE_WEIGHT_SECTION: weight of edge (3, 4) is nan; it must be "
                               "a finite number",
    "explicit_inf_weight.tsp": "line 9: EDGE_WEIGHT_SECTION: weight of edge (3, 2) is -inf; it must "
                               "be a finite number",
    "explicit_nonzero_diagonal.tsp": "line 8: EDGE_WEIGHT_SECTION: weight of edge (2, 2) is 7; the "
                                     "diagonal must be 0",
    "explicit_asymmetric.tsp": "line 8: EDGE_WEIGHT_SECTION: FULL_MATRIX is not symmetric: edge "
                               "(2, 3) weighs 3, edge (3, 2) 4",
    "negative_service_time.vrp": "line 20: SERVICE_TIME_SECTION: service time of node 2 is -5; "
                                 "service time must be >= 0",
    "inf_time_window.vrp": "line 16: TIME_WINDOW_SECTION: due time of node 2 is inf; it must be a "
                           "finite number",
    "negative_prize.vrp": "line 17: PRIZE_SECTION: prize of node 3 is -7; prize must be >= 0",
    "negative_demand_solomon.txt": "line 12: CUSTOMER: demand of node 2 is -10; demand must be >= 0",
    "nan_node_id.tsp": "line 7: NODE_COORD_SECTION: node id nan is not an integer in 1..3",
    "dimension_one.tsp": "line 3: DIMENSION must be at least 2, got 1",
    "nan_display_data.tsp": "line 12: DISPLAY_DATA_SECTION: x of node 2 is nan; it must be a finite "
                            "number",
    "matrix_in_coordinate_file.tsp": "line 9: EDGE_WEIGHT_SECTION: an edge weight matrix contradicts "
                                     "EDGE_WEIGHT_TYPE EUC_2D",
    # item 6: ragged and non-numeric rows
    "ragged_coords.vrp": "line 8: NODE_COORD_SECTION: expected 3 values 'id x y', got 2",
    "ragged_demand.vrp": "line 12: DEMAND_SECTION: expected 2 values 'id demand', got 3",
    "ragged_time_window.vrp": "line 16: TIME_WINDOW_SECTION: expected 3 values 'id ready time due "
                              "time', got 2",
    "non_numeric_service_time.vrp": "line 20: SERVICE_TIME_SECTION: non-numeric value 'ten'",
    "ragged_solomon.txt": "line 12: CUSTOMER: expected 7 values 'id x y demand ready time due time "
                          "service time', got 6",
    "non_numeric_solomon.txt": "line 12: CUSTOMER: non-numeric value '1O'",
    "solomon_missing_header.txt": "line 9: expected a line starting with 'CUST' (Solomon format), "
                                  "got '0 40 50 0 …'",
    "section_twice.tsp": "line 9: NODE_COORD_SECTION appears twice (first at line 5)",
    # every number read is checked, in fields the problem does not use too
    "nan_service_time_cvrp.vrp": "line 22: SERVICE_TIME_SECTION: service time of node 2 is nan; it "
                                 "must be a finite number",
    "nan_service_time_field.vrp": f"line 6: SERVICE_TIME is nan; it must be >= 0 and <= 1e+09 {EXACT}",
    "nan_vehicles.vrp": "line 6: VEHICLES is 'nan'; it must be a positive integer",
    "negative_num_vehicles.vrp": "line 6: NUM_VEHICLES is '-3'; it must be a positive integer",
    "nan_prize_vrptw.vrp": "line 30: PRIZE_SECTION: prize of node 3 is nan; it must be a finite number",
    "negative_prize_vrptw.vrp": "line 31: PRIZE_SECTION: prize of node 4 is -4; prize must be >= 0",
    # a TYPE routecli does not solve is refused, not solved as a CVRP
    "atsp_type.vrp": "line 2: TYPE 'ATSP' is not a problem routecli solves (TSP, CVRP, VRPTW, PCVRP, "
                     "PDTSP and KP)",
    "unknown_type.vrp": "line 2: TYPE 'CVRPXYZ' is not a problem routecli solves (TSP, CVRP, VRPTW, "
                        "PCVRP, PDTSP and KP)",
    "vrptw_without_windows.vrp": "line 2: TYPE VRPTW needs a TIME_WINDOW_SECTION",
    "depot_demand.vrp": "line 14: DEMAND_SECTION: the depot (node 1) has demand 3; it must be 0",
    "kp_items_inf.kp": "line 3: ITEMS must be a positive integer, got 'inf'",
    # item 7: a declared size the data does not back
    "huge_dimension_explicit.tsp": "line 6: EDGE_WEIGHT_SECTION: UPPER_ROW of dimension 1000000000 "
                                   "needs 499999999500000000 values, got 6",
    "huge_dimension_coords.vrp": "line 6: NODE_COORD_SECTION has 3 rows, DIMENSION says 1000000000",
    # item 10: a long input line is quoted shortly
    "giant_line.tsp": "line 5: expected 'KEY : value' or a section name, got '1 2 3 "
                      + "x" * 33 + "…'",
    "giant_token.tsp": "line 7: NODE_COORD_SECTION: non-numeric value '" + "9" * 39 + "…'",
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_input_is_rejected_with_its_line_and_field(malformed_dir, name):
    path = malformed_dir / name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would print before the message
        with pytest.raises(InstanceFormatError) as info:
            read_instance(path)
    assert str(info.value) == f"{display_path(path)}: {INVALID[name]}"


def test_huge_dimension_fails_before_allocating(data_dir):
    tracemalloc.start()
    with pytest.raises(InstanceFormatError, match="needs 499999999500000000 values"):
        read_instance(data_dir / "malformed" / "huge_dimension_explicit.tsp")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 10 * 2**20  # it allocated 7.9 GB before failing (speed: benchmarks/bench_io.py)


def test_coordinate_bound_shrinks_for_huge_instances():
    from routecli.io.text import MAX_MAGNITUDE, magnitude_bound

    assert magnitude_bound(1000) == MAX_MAGNITUDE
    n = 10_000_000
    # a solution has at most 2n edges of at most 2*sqrt(2)*bound + 1 each: the sum stays < 2^53
    assert 2 * n * (2 * 2**0.5 * magnitude_bound(n) + 1) < 2**53


def test_a_declared_fleet_is_read_from_vrplib_and_solomon_files(data_dir):
    assert read_instance(data_dir / "fleet_of_one.vrp").vehicles == 1
    assert read_instance(data_dir / "tiny.vrp").vehicles is None
    assert read_instance(data_dir / "tiny_solomon.txt").vehicles == 3  # its vehicle NUMBER


def test_a_byte_order_mark_and_a_type_after_a_long_comment_are_read(data_dir):
    assert read_instance(data_dir / "byte_order_mark.tsp").name == "byte_order_mark"
    long_comment = read_instance(data_dir / "pdtsp_long_comment.vrp")
    assert long_comment.problem == "pdtsp" and long_comment.size == 7


@pytest.mark.parametrize("token", ["1_0", "\u0661\u0662", "0x1F"])
def test_only_ascii_numbers_are_numbers(tmp_path, token):
    path = tmp_path / "t.tsp"
    path.write_text("TYPE : TSP\nDIMENSION : 2\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
                    f"1 0 0\n2 {token} 1\nEOF\n")
    with pytest.raises(InstanceFormatError, match="line 6: NODE_COORD_SECTION: non-numeric value"):
        read_instance(path)
