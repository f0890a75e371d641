"""PyVRP's protocol preset and the DIMACS anytime measures."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.bench.protocol import (
    markdown,
    primal_integral,
    protocol,
    time_to_within,
)
from routecli.errors import OptionError
from routecli.problems import CVRPInstance, Metric


def test_the_primal_integral_is_the_mean_gap_over_the_time_limit():
    # 10% until 1 s (before any solution), 5% until 3 s, then the best-known value
    assert primal_integral([(1.0, 105.0), (3.0, 100.0)], 100.0, 10.0) == \
        pytest.approx(100 * (110 * 1 + 105 * 2 + 100 * 7) / (10 * 100) - 100)
    assert primal_integral([(0.0, 100.0)], 100.0, 10.0) == pytest.approx(0.0)
    # a solution worse than 1.1 x BKS counts as 1.1 x BKS (DIMACS' base solution)
    assert primal_integral([(2.0, 130.0)], 100.0, 10.0) == pytest.approx(10.0)
    # improvements after the limit (a last report late by a clock check) count at the limit
    assert primal_integral([(12.0, 100.0)], 100.0, 10.0) == pytest.approx(10.0)
    assert primal_integral([], 100.0, 10.0) is None
    assert primal_integral([(1.0, 100.0)], None, 10.0) is None


def test_time_to_within_one_percent():
    assert time_to_within([(0.5, 120.0), (2.0, 101.0), (4.0, 100.0)], 100.0) == 2.0
    assert time_to_within([(0.5, 120.0)], 100.0) is None
    assert time_to_within([(0.5, 120.0)], None) is None


def test_the_pyvrp_preset_scales_two_point_four_seconds_per_client():
    preset = protocol("pyvrp", time_scale=0.01)
    assert (preset.runs, preset.rounding) == (10, "euc2d")
    coords = np.array([[0.0, 0.0]] + [[i, i] for i in range(1, 101)])
    instance = CVRPInstance("c", Metric("euc2d", coords=coords), np.ones(101), 10.0)
    assert preset.stop(instance).seconds == pytest.approx(2.4 * 100 * 0.01)
    with pytest.raises(OptionError, match="--protocol must be one of pyvrp"):
        protocol("dimacs")
    with pytest.raises(OptionError, match="--time-scale must be > 0"):
        protocol("pyvrp", 0)


def test_the_report_gives_per_instance_gaps_over_seeds_and_the_published_row():
    rows = [{"instance": "X-n101-k25", "n": "100", "time_limit": "2.4", "seed": str(s),
             "solver": "hgs", "feasible": "True", "gap_pct": str(g), "primal_integral": str(p),
             "to_1pct_seconds": t} for s, g, p, t in ((0, 1.0, 3.0, "1.5"), (1, 2.0, 5.0, ""))]
    text = markdown(rows, protocol("pyvrp", 0.01), {"cpu": "AMD EPYC", "host": "vm",
                                                    "pyvrp_iterations_per_second": 500.0,
                                                    "workload": "w", "date": "d"})
    assert "| X-n101-k25 | 100 | 2.4 | 2 | 1.50% | 1.00% | 4.00 | 1.50 | 1/2 |" in text
    assert "| PyVRP v0.14.0 (published) |" in text and "time scale 0.01" in text
    assert "AMD EPYC (vm): 500.0 iterations/s" in text
