"""``routecli analyze shift`` end to end on tiny sets."""

from __future__ import annotations

import csv
import json

import pytest

from routecli.cli.app import main
from tests.analysis.test_shift import fake_compare_run


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))


def test_shift_prints_ours_beside_the_paper_and_writes_json(tmp_path, capsys):
    out = tmp_path / "shift.json"
    code = main(["analyze", "shift", "--shift", "low-capacity,clustered", "--size", "8",
                 "--num", "2", "--iterations", "2", "--method", "learned,random",
                 "--ref-budget", "0.01", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "91.04" in text and "44.22" in text and "SIN: paper" in text
    data = json.loads(out.read_text())
    assert data["commit"] and data["shifts"] == ["uniform", "low-capacity", "clustered"]
    cells = {(r["method"], r["shift"]): r for r in data["rows"]}
    assert set(cells) == {(m, s) for m in ("reference", "learned", "random")
                          for s in ("uniform", "low-capacity", "clustered")}
    assert cells[("learned", "clustered")]["paper_gap_pct"] == -0.70
    assert cells[("random", "clustered")]["paper_row"] is None
    assert cells[("learned", "uniform")]["change_pct"] == 0.0
    assert len(data["runs"]) == 3 * 2 * 3  # shifts x instances x (reference + 2 methods)


def test_shift_evaluates_compare_pe_models(tmp_path, capsys):
    folder = fake_compare_run(tmp_path / "run", pes=("nope",), seeds=(0, 1))
    out = tmp_path / "shift.csv"
    code = main(["analyze", "shift", "--compare-pe", str(folder), "--shift", "explosion",
                 "--ref-budget", "0.01", "--out", str(out)])
    assert code == 0
    assert "mean ± sd over seeds" in capsys.readouterr().out
    rows = list(csv.DictReader(out.open()))
    assert [(r["method"], r["shift"]) for r in rows] == [("nope", "uniform"),
                                                         ("nope", "explosion")]
    assert rows[1]["paper_gap_pct"] == "" and rows[1]["change_spread"] != ""


@pytest.mark.parametrize("argv, message", [
    (["--shift", "spiral"], "unknown shift 'spiral'"),
    (["--problem", "tsp"], "--problem must be one of cvrp, vrptw, pcvrp"),
    (["--method", "learned,magic"], "unknown --method 'magic'"),
    (["--out", "shift.txt"], "--out must end in .csv or .json"),
    (["--ref-budget", "0"], "--ref-budget must be a number from 0.001 to 1000, got '0'"),
    (["--compare-pe", "no-such-folder"], "no protocol.json"),
])
def test_bad_options_fail_with_one_line(capsys, argv, message):
    code = main(["analyze", "shift", "--size", "5", "--num", "1", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
