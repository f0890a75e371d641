"""The summary of a comparison run: per-instance Wilcoxon and seed-level Welch tests, Markdown;
a committed run folder of the first layout summarizes as before, and after its migration."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from routecli.experiments.pe.pairs import ROW_FIELDS, row_store
from routecli.experiments.pe.protocol import make_protocol
from routecli.experiments.pe.summary import markdown, report, summarize, title
from routecli.results import PROVENANCE, read_csv

from .conftest import comparison_folder


def test_the_seed_level_test_separates_seed_noise_from_a_real_difference(tmp_path):
    # Two PEs whose per-seed gaps differ by far more than their spread get a small Welch p,
    # one whose seeds straddle IPE+XPE's does not; the per-instance Wilcoxon sees neither spread.
    protocol = make_protocol("cvrp", 8, "dact", "smoke", test_size=4)
    full = "ipe_inv_xpe:schedule=geometric"  # the paper's IPE+XPE, the default versus
    gaps = {full: [10.0, 11.0, 12.0], "nope": [40.0, 41.0, 42.0], "ape": [2.0, 11.0, 20.0]}
    comparison_folder(tmp_path, gaps)
    by_pe = {s.pe: s for s in summarize(protocol, tmp_path)}
    assert by_pe["nope"].seed_p is not None and by_pe["nope"].seed_p < 0.001
    assert by_pe["ape"].seed_p is not None and by_pe["ape"].seed_p > 0.5
    assert by_pe[full].seed_p is None  # not compared with itself
    text = markdown(protocol, list(by_pe.values()), np.ones(4), full, "cmd")
    assert "seed-level Welch p" in text


COMMITTED = Path(__file__).parents[3] / "benchmarks/results/compare_pe/pdtsp21-n2s-cpu"


def test_a_committed_folder_of_the_first_layout_summarizes_as_before_and_after_migration(
        tmp_path, capsys):
    for name in ("reference.csv", "costs.csv", "rows.csv", "untrained.csv"):
        shutil.copy(COMMITTED / name, tmp_path / name)
    assert (tmp_path / "rows.csv").read_text().splitlines()[0] == ",".join(ROW_FIELDS)
    protocol = make_protocol("pdtsp", 21, "n2s", "cpu", 128, 1)
    # since then HA-N2S's paper values belong to the paper's printed IPE, not routecli's
    committed = (COMMITTED / "summary-table6.md").read_text().replace("| 4.564 | 0.03 |",
                                                                        "| - | - |")
    command = committed.split("```sh\n")[1].split("\n```")[0]
    pes = ["n2s", "ipe_xpe"]  # Table 6 of that time: HA-N2S with routecli's harmonic IPE
    marker = " [routecli's integer-harmonic IPE]"  # titles name the IPE formula since
    assert report(protocol, tmp_path, pes, command, "before",
                  versus="ipe_xpe").replace(marker, "") == committed
    before = read_csv(tmp_path / "rows.csv")
    row_store(tmp_path / "rows.csv").add(pe="another", seed=0, obj=1, gap_pct=0,
                                         train_seconds=0, eval_seconds=0, parameters=0)
    assert "rewrote its 6 rows" in capsys.readouterr().err
    after = read_csv(tmp_path / "rows.csv")
    assert list(after[0]) == [*PROVENANCE, *ROW_FIELDS]
    assert [{k: r[k] for k in ROW_FIELDS} for r in after[:-1]] == before
    assert report(protocol, tmp_path, pes, command, "after",
                  versus="ipe_xpe").replace(marker, "") == committed


def test_variants_of_one_encoding_keep_distinct_names_in_a_table():
    names = ["ipe_inv_xpe", "ipe_inv_xpe:schedule=geometric", "ipe_inv_xpe:amplitude=flat",
             "ipe_inv_xpe:xpe_aggregate=mean", "ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric"]
    titles = [title(n) for n in names]
    assert len(set(titles)) == len(names)
    assert titles[0] == "IPE+XPE (direction-invariant) [routecli's integer-harmonic IPE]"
    assert titles[1] == "IPE+XPE (direction-invariant)"  # the paper's printed formula
    assert titles[2] == ("IPE+XPE (direction-invariant) [routecli's integer-harmonic IPE] "
                         "[amplitude=flat]")
    assert titles[3] == "IPE+XPE, per-route XPE: mean [routecli's integer-harmonic IPE]"
    assert titles[4] == "IPE+XPE, per-route XPE: mean"


def test_a_smoke_budget_and_a_missing_reference_encoding_are_said_above_the_table(tmp_path):
    comparison_folder(tmp_path, {"ipe_xpe": [10.0], "nope": [40.0]})
    smoke = make_protocol("cvrp", 8, "dact", "smoke", test_size=4)
    text = report(smoke, tmp_path, ["ipe_xpe", "nope"], "cmd", "summary")
    notes = [line for line in text.splitlines() if line.startswith("**Note:")]
    assert len(notes) == 2 and "--budget smoke is a plumbing check" in notes[0]
    assert "empty because the encoding every other one is paired with, ipe_inv_xpe" in notes[1]
    assert "IPE+XPE (direction-invariant)" in notes[1]
    imitation = make_protocol("cvrp", 8, "dact", "imitation", test_size=4)
    paired = report(imitation, tmp_path, ["ipe_xpe", "nope"], "cmd", "paired", "ipe_xpe")
    assert "**Note:" not in paired
