"""The paper's findings pair by pair: orientation by the paper's gaps, the seed-level verdict."""

from __future__ import annotations

import math

from routecli.experiments.pe.claims import claims, report
from routecli.experiments.pe.protocol import make_protocol

from .conftest import comparison_folder


def test_each_claim_is_oriented_by_the_paper_and_judged_at_the_seed_level(tmp_path):
    comparison_folder(tmp_path, {
        "ipe_inv_xpe": [1.0, 1.1, 0.9],
        "nope": [8.0, 8.2, 7.9],  # the paper's order, far beyond seed noise: holds
        "ape": [0.1, 0.12, 0.09],  # the other way: reversed
        "sin": [0.2, 2.0, 1.3],  # seeds straddle IPE+XPE's: not separated
        "rope": [0.5],  # one seed: pending
        "ipe_inv": [3.0, 3.1, 2.9], "ipe_inv_index": [1.0, 1.2, 1.1],  # Table 10's own pair
    }, instances=6)
    protocol = make_protocol("cvrp", 10, "dact", "smoke", test_size=6)
    found = {(c.better.pe, c.worse.pe): c for c in claims(protocol, tmp_path)}
    assert found[("ipe_inv_xpe", "nope")].verdict == "holds"
    assert found[("ipe_inv_xpe", "ape")].verdict == "reversed"
    assert found[("ipe_inv_xpe", "sin")].verdict == "not separated"
    assert found[("ipe_inv_xpe", "rope")].verdict == "pending"
    assert math.isnan(found[("ipe_inv_xpe", "rope")].standard_error)
    table10 = found[("ipe_inv", "ipe_inv_index")]  # the paper: distance-indexed IPE better
    assert table10.tables == "10" and table10.verdict == "reversed"
    assert table10.difference < 0 and table10.worse.wins == 0
    nope = found[("ipe_inv_xpe", "nope")]
    assert nope.tables == "4, 10" and (nope.paper_better, nope.paper_worse) == (1.16, 11.81)
    assert abs(nope.difference - 7.0333) < 1e-3 and nope.worse.wins == 6
    assert ("ipe_inv_xpe", "xpe") not in found  # no rows for XPE: no claim
    text = report(protocol, tmp_path, "cmd")
    assert (tmp_path / "claims.md").read_text() == text
    assert "| 4, 10 | IPE+XPE (direction-invariant) better than NoPE | 1.16 vs 11.81% (CVRP-100)" \
        in text


def test_table6_compares_at_the_nearest_paper_size(tmp_path):
    comparison_folder(tmp_path, {"n2s": [2.0, 2.4], "ipe_xpe": [1.6, 1.7]}, instances=6)
    (claim,) = claims(make_protocol("pdtsp", 11, "n2s", "smoke", test_size=6), tmp_path)
    assert (claim.tables, claim.scale, claim.better.pe) == ("6", "PDTSP-21", "ipe_xpe")
    assert (claim.paper_better, claim.paper_worse) == (0.03, 0.05)
    assert claim.difference > 0


def test_a_folder_without_a_compared_pair_writes_nothing(tmp_path):
    comparison_folder(tmp_path, {"nope": [8.0]}, instances=6)
    assert report(make_protocol("cvrp", 10, "dact", "smoke", test_size=6), tmp_path, "c") == ""
    assert not (tmp_path / "claims.md").exists()
