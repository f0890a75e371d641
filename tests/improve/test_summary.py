"""The summary of a comparison run: per-instance Wilcoxon and seed-level Welch tests, Markdown."""

from __future__ import annotations

import numpy as np

from routecli.improve.protocol import make_protocol
from routecli.improve.summary import markdown, summarize


def test_the_seed_level_test_separates_seed_noise_from_a_real_difference(tmp_path):
    # Two PEs whose per-seed gaps differ by far more than their spread get a small Welch p,
    # one whose seeds straddle IPE+XPE's does not; the per-instance Wilcoxon sees neither spread.
    protocol = make_protocol("cvrp", 8, "dact", "smoke", test_size=4)
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
    by_pe = {s.pe: s for s in summarize(protocol, tmp_path)}
    assert by_pe["nope"].seed_p is not None and by_pe["nope"].seed_p < 0.001
    assert by_pe["ape"].seed_p is not None and by_pe["ape"].seed_p > 0.5
    assert by_pe["ipe_inv_xpe"].seed_p is None  # not compared with itself
    text = markdown(protocol, list(by_pe.values()), np.ones(4), "ipe_inv_xpe", "cmd")
    assert "seed-level Welch p" in text
