"""The paper's findings pair by pair: orientation by the paper's gaps, verdicts from the
corrected seed-level test, none at a ceiling."""

from __future__ import annotations

from routecli.experiments.pe.claims import claims, report
from routecli.experiments.pe.protocol import make_protocol

from .conftest import comparison_folder

FULL, IPE = "ipe_inv_xpe:schedule=geometric", "ipe_inv:schedule=geometric"
INDEX = "ipe_inv_index:schedule=geometric"

ROOM = (3.0, 0.1)  # a labeller 3% above the references, 10% of the instances at them
FIVE = [0.0, 0.1, -0.1, 0.05, -0.05]


def seeds(mean: float, spread: list[float] = FIVE) -> list[float]:
    return [mean + d for d in spread]


def lifted(gaps: dict[str, list[float]], by: float = 2.0) -> dict[str, list[float]]:
    """``gaps`` a constant higher, so that the best encoding is not at the references."""
    return {pe: [g + by for g in values] for pe, values in gaps.items()}


def test_each_claim_is_oriented_by_the_paper_and_judged_by_the_corrected_test(tmp_path):
    comparison_folder(tmp_path, lifted({
        FULL: seeds(1.0),
        "ipe_inv_xpe": seeds(0.2),  # routecli's harmonic IPE+XPE: an extra row, no claim
        "nope": seeds(8.0),  # the paper's order, far beyond seed noise: holds
        "ape": seeds(0.1),  # the other way: reversed
        "sin": [0.2, 2.0, 1.3, 0.4, 1.6],  # seeds straddle IPE+XPE's: not separated
        "rope": [0.5],  # one seed: pending
        "rpe": [8.0, 8.1, 7.9],  # far apart but three seeds: not separated
        IPE: seeds(3.0), INDEX: seeds(1.1),  # Table 10's own pair
    }), instances=6, teacher=ROOM)
    protocol = make_protocol("cvrp", 10, "dact", "smoke", test_size=6)
    found = {(c.better.pe, c.worse.pe): c for c in claims(protocol, tmp_path)}
    assert found[(FULL, "nope")].verdict == "holds"
    assert found[(FULL, "ape")].verdict == "reversed"
    assert found[(FULL, "sin")].verdict == "not separated"
    assert found[(FULL, "rope")].verdict == "pending"
    rpe = found[(FULL, "rpe")]
    assert rpe.test.p < 0.05 and rpe.verdict == "not separated"
    table10 = found[(IPE, INDEX)]  # the paper: distance-indexed IPE better
    assert table10.tables == "10" and table10.verdict == "reversed"
    assert table10.difference < 0 and table10.worse.wins == 0
    nope = found[(FULL, "nope")]
    assert nope.tables == "4, 10" and (nope.paper_better, nope.paper_worse) == (1.16, 11.81)
    assert abs(nope.difference - 7.0) < 1e-6 and nope.worse.wins == 6
    assert nope.test.ci_low < 7.0 < nope.test.ci_high
    tested = [c.test for c in found.values() if c.verdict != "pending"]
    assert all(t.p_adjusted >= t.p for t in tested)
    assert (FULL, "xpe") not in found  # no rows for XPE: no claim
    assert not any("ipe_inv_xpe" in pair for pair in found)  # the harmonic variant
    text = report(protocol, tmp_path, "cmd")
    assert (tmp_path / "claims.md").read_text() == text
    assert "| 4, 10 | IPE+XPE (direction-invariant) better than NoPE | 1.16 vs 11.81% (CVRP-100)" \
        in text
    assert "room to separate encodings" in text


def test_no_verdict_at_a_ceiling_or_without_a_labeller_row(tmp_path):
    gaps = lifted({FULL: seeds(1.0), "nope": seeds(8.0)})
    protocol = make_protocol("cvrp", 10, "dact", "smoke", test_size=6)
    for folder, teacher in (("ceiling", (0.1, 0.95)), ("none", None)):
        (tmp_path / folder).mkdir()
        comparison_folder(tmp_path / folder, gaps, instances=6, teacher=teacher)
        (claim,) = claims(protocol, tmp_path / folder)
        assert claim.test.verdict == "a" and claim.verdict == "not separated"
    assert "a ceiling" in report(protocol, tmp_path / "ceiling", "cmd")
    assert "No labeller row" in report(protocol, tmp_path / "none", "cmd")
    (tmp_path / "best").mkdir()  # the labeller has room, the best encoding is at the optimum
    comparison_folder(tmp_path / "best", {FULL: seeds(0.0, [0.0] * 5), "nope": seeds(8.0)},
                      instances=6, teacher=ROOM)
    (claim,) = claims(protocol, tmp_path / "best")
    assert claim.room is not None and not claim.room.best.separates
    assert claim.verdict == "not separated"


def test_table6_compares_at_the_nearest_paper_size(tmp_path):
    ha_n2s = "ipe_xpe:schedule=geometric"
    comparison_folder(tmp_path, {"n2s": [2.0, 2.4], ha_n2s: [1.6, 1.7]}, instances=6)
    (claim,) = claims(make_protocol("pdtsp", 11, "n2s", "smoke", test_size=6), tmp_path)
    assert (claim.tables, claim.scale, claim.better.pe) == ("6", "PDTSP-21", ha_n2s)
    assert (claim.paper_better, claim.paper_worse) == (0.03, 0.05)
    assert claim.difference > 0


def test_a_folder_without_a_compared_pair_writes_nothing(tmp_path):
    comparison_folder(tmp_path, {"nope": [8.0]}, instances=6)
    assert report(make_protocol("cvrp", 10, "dact", "smoke", test_size=6), tmp_path, "c") == ""
    assert not (tmp_path / "claims.md").exists()
