"""``routecli analyze anisometry|entropy`` end to end on tiny sets."""

from __future__ import annotations

import csv
import json

import pytest

from routecli.cli.app import main


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))


def test_anisometry_prints_ours_beside_the_paper_and_writes_csv(tmp_path, capsys):
    out = tmp_path / "t1.csv"
    code = main(["analyze", "anisometry", "--set", "cvrp-100,pdtsp-11", "--num", "2",
                 "--ref-budget", "0.02", "--jobs", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "cvrp-100" in text and "0.81" in text and "26.6" in text  # the paper's row
    rows = list(csv.DictReader(out.open()))
    assert [r["set"] for r in rows] == ["cvrp-100", "pdtsp-11"]
    assert rows[1]["routes"] == "2" and rows[1]["cv_paper"] == ""  # one tour per instance
    assert 0 < float(rows[0]["cv"]) < 3 and float(rows[0]["max_min"]) > 1


def test_entropy_reports_each_k_and_the_grid_mean_and_minimum(tmp_path, capsys):
    out = tmp_path / "entropy.json"
    code = main(["analyze", "entropy", "--set", "cvrp-20", "--num", "3", "--ref-budget",
                 "0.02", "--jobs", "1", "--min-count", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "paper 0.992" in text and "paper 0.953" in text
    data = json.loads(out.read_text())
    assert [r["k"] for r in data["rows"]][:2] == [2, 3] and data["rows"][-1]["k"] == "min"
    routes = data["rows"][0]["cvrp-20_count"]  # every route has a first customer
    assert routes >= 3 and data["rows"][1]["cvrp-20_count"] <= routes
    assert 0 <= data["min"] <= data["mean"] <= 1
    # with the default --min-count of 100 no cell of 3 small instances is counted
    assert main(["analyze", "entropy", "--set", "cvrp-20", "--num", "3", "--ref-budget", "0.02",
                 "--jobs", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["mean"] is None
    assert "* = fewer than 100 customers" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["analyze", "anisometry", "--set", "tsp-100"], "bad instance set 'tsp-100'"),
    (["analyze", "anisometry", "--set", "pdtsp-50"], "the size is odd"),
    (["analyze", "entropy", "--out", "x.txt"], "--out must end in .csv or .json"),
    (["analyze", "entropy", "--ref-budget", "0"], "--ref-budget must be a number from 0.001 to"),
    (["probe", "--pe", "sin,posenc"], "unknown positional encoding 'posenc'"),
    (["probe", "--dim", "12", "--heads", "4"], "--dim / --heads even"),
    (["probe", "--ipe-schedule", "log"], "--ipe-schedule must be one of"),
    (["probe", "--ipe-schedule", "geometric", "--ipe-amplitude", "harmonic"], "needs"),
    (["plot", "pe", "--plots", "contour"], "unknown plot 'contour'"),
    (["plot", "pe", "--pe", "alibi", "--plots", "pca"], "need a node encoding"),
])
def test_bad_options_give_one_line_and_exit_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "x.txt").exists()


def test_an_infeasible_reference_is_one_line_not_a_traceback(capsys, monkeypatch):
    from routecli.analysis import data
    from routecli.problems import InfeasibleSolutionError

    def failing(*args, **kwargs):
        raise InfeasibleSolutionError(["time window of customer 7 violated"])

    monkeypatch.setattr(data, "reference_set", failing)  # analyze imports it when it runs
    assert main(["analyze", "anisometry", "--set", "vrptw-100", "--num", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: vrptw-100: a PyVRP reference solution failed validation: time window "
                   "of customer 7 violated")
