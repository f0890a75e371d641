import math

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from routecli.experiments import stats


def test_holm_multiplies_the_k_th_smallest_p_by_m_minus_k_and_keeps_the_order():
    p = [0.01, 0.04, 0.03, 0.5]
    assert stats.adjust(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_benjamini_hochberg_agrees_with_scipy():
    p = np.random.default_rng(0).random(12) ** 3
    assert stats.adjust(p.tolist(), "bh") == pytest.approx(false_discovery_control(p).tolist())


def test_untested_pairs_neither_count_nor_get_a_p_value():
    adjusted = stats.adjust([0.01, math.nan, 0.02], "holm")
    assert math.isnan(adjusted[1])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.02)


def synthetic(seeds: int, mean: float, rng: np.random.Generator, seed_sd: float = 0.3,
              instances: int = 64, instance_sd: float = 2.0) -> np.ndarray:
    """Gaps of one method: a per-instance difficulty shared by every method (seeded by
    the instances), a per-seed offset, noise."""
    difficulty = np.random.default_rng(99).normal(0, instance_sd, instances)
    return (mean + difficulty[None] + rng.normal(0, seed_sd, (seeds, 1))
            + rng.normal(0, 0.2, (seeds, instances)))


def test_the_interval_covers_the_true_effect_about_95_times_in_100():
    rng = np.random.default_rng(1)
    covered = 0
    for trial in range(100):
        a, b = synthetic(6, 3.0, rng), synthetic(6, 3.5, rng)
        low, high = stats.bootstrap_ci(a, b, resamples=1000, seed=trial)
        covered += low <= 0.5 <= high
    assert covered >= 85


def test_a_clear_difference_with_five_seeds_names_the_better_method():
    rng = np.random.default_rng(2)
    results = {"ours": synthetic(5, 2.0, rng), "theirs": synthetic(5, 4.0, rng),
               "tie": synthetic(5, 2.0, rng)}
    rows = stats.compare(results, [("ours", "theirs"), ("ours", "tie")])
    assert rows[0].verdict == "a" and rows[0].better == "ours"
    assert rows[0].ci_low > 0 and rows[0].effect == pytest.approx(
        results["theirs"].mean() - results["ours"].mean())
    assert rows[1].verdict == "not separated" and rows[1].better is None
    assert rows[0].p_adjusted >= rows[0].p


def test_three_seeds_never_give_a_verdict_and_one_seed_is_pending():
    rng = np.random.default_rng(3)
    strong = stats.compare({"a": synthetic(3, 1.0, rng), "b": synthetic(3, 9.0, rng)},
                           [("a", "b")])[0]
    assert strong.p < 0.05 and strong.verdict == "not separated"
    single = stats.compare({"a": synthetic(1, 1.0, rng), "b": synthetic(5, 9.0, rng)},
                           [("a", "b")])[0]
    assert single.verdict == "pending" and math.isnan(single.p)


def test_correction_over_a_table_can_turn_a_nominal_result_into_not_separated():
    rng = np.random.default_rng(4)
    base = synthetic(5, 2.0, rng, seed_sd=0.5)
    results = {"base": base, **{f"m{k}": synthetic(5, 2.0, rng, seed_sd=0.5) for k in range(12)}}
    rows = stats.compare(results, [("base", f"m{k}") for k in range(12)])
    assert all(r.p_adjusted >= r.p for r in rows)
    assert all(r.verdict == "not separated" for r in rows if r.p_adjusted >= 0.05)


def test_a_teacher_at_the_reference_on_most_instances_is_a_ceiling():
    at_ceiling = stats.ceiling(np.r_[np.zeros(100), np.full(28, 0.5)])
    assert not at_ceiling.separates and at_ceiling.at_reference == pytest.approx(100 / 128)
    room = stats.ceiling(np.r_[np.zeros(20), np.full(108, 3.0)])
    assert room.separates and room.gap == pytest.approx(108 * 3 / 128)
