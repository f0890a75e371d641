"""``routecli validate INSTANCE SOLUTION``: solutions from other tools, checked (issue 15,
item 17). Exit 0 feasible, 1 infeasible, 2 unreadable input."""

from __future__ import annotations

import json

import pytest

from routecli import __version__
from routecli.cli.app import main


def test_a_feasible_solution_reports_cost_and_gap(data_dir, capsys):
    assert main(["validate", str(data_dir / "tiny.vrp"), str(data_dir / "tiny.sol")]) == 0
    out = capsys.readouterr().out
    assert "cost=52" in out and "bks=52 (tiny.sol)" in out and "gap=0.00%" in out
    assert "feasible" in out


def test_every_violation_is_named_and_the_exit_code_is_1(data_dir, tmp_path, capsys):
    bad = tmp_path / "bad.sol"
    bad.write_text("Route #1: 1 2\nRoute #2: 3 4 4\nCost 99\n")
    assert main(["validate", str(data_dir / "tiny.vrp"), str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["feasible"] is False and report["gap_pct"] is None
    assert report["cost"] == 42 and report["stated_cost"] == 99 and report["rule"] == "euc2d"
    assert report["violations"] == ["route 2 over capacity by 5 (load 15 > 10)",
                                    "customer 4 visited 2 times", "customer 5 missing"]


def test_a_tour_is_costed_under_the_rule_given(data_dir, tmp_path, capsys):
    tour = tmp_path / "t.tour"
    tour.write_text("TYPE : TOUR\nTOUR_SECTION\n1\n2\n3\n4\n-1\nEOF\n")
    assert main(["validate", str(data_dir / "tiny.tsp"), str(tour), "--json", "--bks", "10"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bks_source"] == "--bks" and report["gap_pct"] == pytest.approx(
        100 * (report["cost"] - 10) / 10)
    assert report["routecli_version"] == __version__  # what checked it, as solve records


@pytest.mark.parametrize("solution, message", [
    ("malformed/bad_solution.sol", "line 1: 'two' is not a node id"),
    ("tiny.tsp", "is a .tour file"),  # wrong kind of file for a CVRP
    ("missing.sol", "missing.sol"),
])
def test_unreadable_input_is_one_line_with_exit_2(data_dir, capsys, solution, message):
    instance = data_dir / "tiny.vrp"
    if solution == "tiny.tsp":
        instance, solution = data_dir / "tiny.tsp", "tiny.sol"
    assert main(["validate", str(instance), str(data_dir / solution)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and message in err


def strict(line: str) -> dict:
    """``line`` parsed by a JSON parser that refuses NaN and Infinity, as strict parsers do."""
    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("instance, solution, message", [
    ("tiny.vrp", "junk_line.sol", "line 3: cannot read 'this line is not a route'"),
    ("tiny.vrp", "cost_nan.sol", "line 4: Cost must be one finite number, got 'nan'"),
    ("tiny.vrp", "cost_abc.sol", "line 4: Cost must be one finite number, got 'abc'"),
    ("tiny.vrp", "twenty_digit_id.sol", "line 2: id '99999999999999999999' is far beyond"),
    ("tiny.vrp", "underscore_id.sol", "line 3: '1_0' is not a node id"),
    ("tiny.vrp", "arabic_digit_id.sol", "line 3: '\u0665' is not a node id"),
    ("tiny.kp", "kp_twenty_digit_item.sol", "line 1: id '99999999999999999999' is far beyond"),
    ("tiny.tsp", "id_beyond_instance.tour", "line 6: TOUR_SECTION: '9' is not a node id in 1..4"),
    ("tiny.tsp", "id_in_exponent_form.tour", "line 6: TOUR_SECTION: '1e2' is not a node id in 1..4"),
    # in range, such a token named a node: '1e2' was node 100 of a 105-node tour (fuzz, case 368)
    ("tiny.tsp", "float_id_in_range.tour", "line 4: TOUR_SECTION: '2e0' is not a node id in 1..4"),
    ("tiny_pdtsp.vrp", "id_beyond_instance.tour", "line 6: TOUR_SECTION: '9' is not a node id in "
                                                  "1..7"),
])
def test_a_solution_file_with_a_line_it_cannot_read_is_unreadable(data_dir, malformed_dir, capsys,
                                                                  instance, solution, message):
    code = main(["validate", str(data_dir / instance), str(malformed_dir / solution)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("instance, solution, missing", [
    ("tiny.tsp", "missing_node.tour", "node 4 missing"),
    ("tiny.vrp", "missing_customer.sol", "customer 5 missing"),
])
def test_a_missing_node_is_infeasible_for_every_problem(data_dir, capsys, instance, solution,
                                                        missing):
    assert main(["validate", str(data_dir / instance), str(data_dir / solution), "--json"]) == 1
    assert missing in strict(capsys.readouterr().out)["violations"]


def test_a_declared_fleet_limits_the_routes(data_dir, capsys):
    assert main(["validate", str(data_dir / "fleet_of_one.vrp"), str(data_dir / "tiny.sol"),
                 "--json"]) == 1
    assert strict(capsys.readouterr().out)["violations"] == ["3 routes, but the fleet has 1 vehicle"]


def test_solomons_vehicle_number_limits_the_routes(data_dir, tmp_path, capsys):
    solomon = tmp_path / "one.txt"  # tiny_solomon.txt with a vehicle NUMBER of 1, not 3
    solomon.write_text((data_dir / "tiny_solomon.txt").read_text().replace(
        "   3         20", "   1         20"))
    two = tmp_path / "two.sol"
    two.write_text("Route #1: 3\nRoute #2: 2 1\n")
    assert main(["validate", str(solomon), str(two), "--json"]) == 1
    assert "2 routes, but the fleet has 1 vehicle" in strict(capsys.readouterr().out)["violations"]
    assert main(["validate", str(data_dir / "tiny_solomon.txt"), str(two), "--json"]) == 0


def test_json_is_strict_when_a_number_is_undefined(tmp_path, capsys):
    # every node at one point: the sibling tour costs 0, so the gap to it is undefined
    (tmp_path / "zero.tsp").write_text("NAME : zero\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : "
                                       "EUC_2D\nNODE_COORD_SECTION\n1 5 5\n2 5 5\n3 5 5\nEOF\n")
    (tmp_path / "zero.opt.tour").write_text("TOUR_SECTION\n1\n2\n3\n-1\nEOF\n")
    assert main(["validate", str(tmp_path / "zero.tsp"), str(tmp_path / "zero.opt.tour"),
                 "--json"]) == 0
    report = strict(capsys.readouterr().out)
    assert report["bks"] == 0 and report["gap_pct"] is None
    assert main(["solve", str(tmp_path / "zero.tsp"), "--model", "nn", "--json"]) == 0
    row = strict(capsys.readouterr().out)
    assert row["bks"] == 0 and row["gap_pct"] is None


@pytest.mark.parametrize("command", ["solve", "validate"])
@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e-300", "0", "1e300"])
def test_a_best_known_value_must_be_finite_and_plausibly_scaled(data_dir, capsys, command, value):
    argv = [command, str(data_dir / "tiny.vrp")] + (
        [str(data_dir / "tiny.sol")] if command == "validate" else ["--model", "nn"])
    assert main([*argv, "--bks", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --bks must be a number from 1e-06 to 9.0072e+15, got '{value}'"
