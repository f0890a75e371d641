"""``routecli compare-pe``: PE lists, budgets, an end-to-end run that resumes, the summary."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from routecli.cli.app import main
from routecli.errors import OptionError
from routecli.improve import compare


def test_table_lists_follow_the_paper():
    table4 = compare.expand_pes("all", "cvrp")
    assert len(table4) == 14 and table4[0] == "nope" and table4[-1] == "ipe_inv_xpe"
    assert "ipe_inv" in table4 and "ipe" not in table4
    assert compare.expand_pes("table4", "pdtsp")[-1] == "ipe_xpe"
    assert compare.expand_pes("table10", "cvrp") == ["nope", "ipe_inv", "ipe_inv_index", "xpe",
                                                      "ipe_inv_xpe"]
    assert len(compare.expand_pes("table11", "cvrp")) == 6
    assert compare.expand_pes("table12,sin,nope", "cvrp") == ["ipe_xpe", "ipe_inv_xpe", "sin",
                                                              "nope"]
    with pytest.raises(OptionError, match="posenc"):
        compare.expand_pes("posenc", "cvrp")


def test_every_listed_pe_has_the_papers_value():
    for name in ("table4", "table10", "table11", "table12"):
        for pe in compare.expand_pes(name, "cvrp"):
            assert compare.paper_value(pe, "cvrp", "dact", 100) is not None, pe
    for pe in compare.expand_pes("table4", "pdtsp"):
        assert compare.paper_value(pe, "pdtsp", "dact", 51) is not None, pe
    assert compare.paper_value("n2s", "pdtsp", "n2s", 21) == (4.565, 0.05)


def test_the_paper_reference_is_the_one_of_the_reproduced_table():
    # Table 6 (N2S) has LKH at each PDTSP size; Table 4 one reference per problem
    assert compare.paper_reference("pdtsp", "n2s", 21) == 4.563
    assert compare.paper_reference("pdtsp", "n2s", 101) == 9.428
    assert compare.paper_reference("pdtsp", "dact", 51) == 6.87
    assert compare.paper_reference("cvrp", "dact", 20) == 15.58


def test_budgets_parse_with_overrides():
    schedule, steps = compare.parse_budget("cpu:epochs=7,eval_steps=50,lr_actor=0.002", "dact")
    assert schedule.epochs == 7 and steps == 50 and schedule.lr_actor == 0.002
    paper, paper_steps = compare.parse_budget("paper", "n2s")
    assert paper.t_train == 250 and paper.n_step == 5 and paper_steps == 3000
    with pytest.raises(OptionError):
        compare.parse_budget("huge", "dact")
    with pytest.raises(OptionError):
        compare.parse_budget("cpu:warp=9", "dact")


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
    assert (control["pe"], control["seed"], control["train_seconds"]) == ("ipe_inv_xpe", "0", "0")
    assert "untrained (seed 0)" in text
    assert (out / "summary-nope-ipe-inv-xpe.png").stat().st_size > 0
    assert main(args) == 0  # everything done: nothing is retrained, no row is added
    with open(out / "rows.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 4
    with open(out / "untrained.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 1  # the control is evaluated once
    other = [*args[:-4], "--test-size", "5", "--out", str(out)]
    assert main(other) == 2  # another protocol in the same folder is refused


def test_a_lock_is_exclusive_while_its_process_lives_and_taken_over_after(tmp_path):
    import os
    import subprocess
    import sys

    lock = tmp_path / "models" / "pair.lock"
    with compare.claimed(lock) as first:
        assert first and lock.read_text().startswith(f"{os.getpid()} ")
        with compare.claimed(lock) as second:
            assert not second  # held by a live process (this one)
    assert not lock.exists()  # released on leaving
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    lock.write_text(f"{ended.stdout.strip()} {compare.boot_id()}")
    with compare.claimed(lock) as taken:
        assert taken  # its process has ended: stale
    lock.write_text(f"{os.getpid()} another-boot")
    with compare.claimed(lock) as taken:
        assert taken  # written before this boot: the pid may be another process's now
    lock.write_text("")
    with compare.claimed(lock) as taken:
        assert not taken  # being written by its creator
    os.utime(lock, (0, 0))
    with compare.claimed(lock) as taken:
        assert taken  # empty for long: its creator died before writing


def test_pairs_another_process_holds_are_left_to_it(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    (out / "models").mkdir(parents=True)
    (out / "models" / "nope-s0.lock").write_text(f"{os.getpid()} {compare.boot_id()}")
    protocol = compare.make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5", test_size=4)
    compare.run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert compare.finished(out) == {("xpe", 0)}
    (out / "models" / "nope-s0.lock").unlink()
    compare.run(protocol, ["nope", "xpe"], [0], out, log=lambda line: None, progress=False)
    assert compare.finished(out) == {("xpe", 0), ("nope", 0)}
    with open(out / "rows.csv") as handle:
        assert handle.read().count("pe,seed") == 1  # one header


def test_the_seed_level_test_separates_seed_noise_from_a_real_difference(tmp_path):
    # Two PEs whose per-seed gaps differ by far more than their spread get a small Welch p,
    # one whose seeds straddle IPE+XPE's does not; the per-instance Wilcoxon sees neither spread.
    protocol = compare.make_protocol("cvrp", 8, "dact", "smoke", test_size=4)
    gaps = {"ipe_inv_xpe": [10.0, 11.0, 12.0], "nope": [40.0, 41.0, 42.0],
            "ape": [2.0, 11.0, 20.0]}
    with open(tmp_path / "reference.csv", "w") as handle:
        handle.write("instance,cost\n" + "".join(f"{i},1.0\n" for i in range(4)))
    with open(tmp_path / "rows.csv", "w") as rows, open(tmp_path / "costs.csv", "w") as costs:
        rows.write("pe,seed,obj,gap_pct,train_seconds,eval_seconds,parameters\n")
        costs.write("pe,seed,instance,cost\n")
        for pe, values in gaps.items():
            for seed, gap in enumerate(values):
                rows.write(f"{pe},{seed},{1 + gap / 100},{gap},0,0,0\n")
                costs.write("".join(f"{pe},{seed},{i},{1 + gap / 100 + i / 1000}\n"
                                    for i in range(4)))
    by_pe = {s.pe: s for s in compare.summarize(protocol, tmp_path)}
    assert by_pe["nope"].seed_p is not None and by_pe["nope"].seed_p < 0.001
    assert by_pe["ape"].seed_p is not None and by_pe["ape"].seed_p > 0.5
    assert by_pe["ipe_inv_xpe"].seed_p is None  # not compared with itself
    text = compare.markdown(protocol, list(by_pe.values()), np.ones(4), "ipe_inv_xpe", "cmd")
    assert "seed-level Welch p" in text
