"""``routecli validate INSTANCE SOLUTION``: solutions from other tools, checked (issue 15,
item 17). Exit 0 feasible, 1 infeasible, 2 unreadable input."""

from __future__ import annotations

import json

import pytest

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
