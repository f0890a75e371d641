"""``routecli compare-pe``: an end-to-end run that resumes, its summary, another protocol refused."""

from __future__ import annotations

import csv

import pytest

from routecli.cli.app import main


@pytest.mark.slow
def test_compare_pe_runs_end_to_end_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = ["compare-pe", "--problem", "cvrp", "--size", "8", "--pe", "nope,ipe_inv_xpe",
            "--seeds", "2", "--budget", "smoke:eval_steps=5", "--test-size", "4",
            "--out", str(out)]
    assert main(args) == 0
    with open(out / "rows.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["pe"], r["seed"]) for r in rows} == {(p, s) for p in ("nope", "ipe_inv_xpe")
                                                    for s in ("0", "1")}
    assert all(float(r["gap_pct"]) >= -1e-6 for r in rows)  # PyVRP is optimal at this size
    text = (out / "summary-nope-ipe-inv-xpe.md").read_text()
    assert "| NoPE | 2 |" in text and "paper Gap" in text
    with open(out / "untrained.csv") as handle:
        (control,) = list(csv.DictReader(handle))
    # the control is the paper's IPE+XPE (its printed formula) at its initial weights
    assert (control["pe"], control["seed"], control["train_seconds"]) == (
        "ipe_inv_xpe:schedule=geometric", "0", "0")
    assert "untrained (seed 0)" in text and "baseline: best improvement (the teacher)" in text
    assert (out / "summary-nope-ipe-inv-xpe.png").stat().st_size > 0
    assert main(args) == 0  # everything done: nothing is retrained, no row is added
    with open(out / "rows.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 4
    with open(out / "untrained.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 1  # the control is evaluated once
    with open(out / "baselines.csv") as handle:  # and so are the baselines
        assert [r["row"] for r in csv.DictReader(handle)] == ["random", "teacher",
                                                              "epsilon-teacher"]
    other = [*args[:-4], "--test-size", "5", "--out", str(out)]
    assert main(other) == 2  # another protocol in the same folder is refused


def test_compare_pe_trains_by_offline_imitation(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = ["compare-pe", "--problem", "cvrp", "--size", "6", "--pe", "nope,ipe_inv_xpe",
            "--runs", "1", "--budget",
            "imitation:instances=4,trajectory=4,updates=3,batch=4,eval_steps=3",
            "--test-size", "3", "--out", str(out)]
    assert main(args) == 0
    with open(out / "rows.csv") as handle:
        assert {r["pe"] for r in csv.DictReader(handle)} == {"nope", "ipe_inv_xpe"}
    assert (out / "labels" / "s0.pt").is_file()  # labelled once, shared by both encodings
    assert "offline imitation of best improvement, 3 updates" in \
        (out / "summary-nope-ipe-inv-xpe.md").read_text()
    summary = [*args, "--summary-only", "--pe", "ipe_inv_xpe"]
    assert main([*summary, "--versus", "nope"]) == 0
    text = (out / "summary-ipe-inv-xpe-vs-nope.md").read_text()
    assert "vs nope: wins/losses" in text
    assert "| IPE+XPE (direction-invariant) [routecli's integer-harmonic IPE] | 1 |" in text
    assert main([*summary, "--versus", "sin"]) == 2  # no rows to pair against
    assert main([*summary, "--versus", "table4"]) == 2  # not one encoding
