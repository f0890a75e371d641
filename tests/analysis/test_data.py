import pytest

from routecli.analysis.budget import ANALYSIS_FACTORS
from routecli.analysis.data import PROBLEMS, default_budget, instance_set, parse_set, reference_set
from routecli.baselines.reference import ReferenceBudget, reference_budget
from routecli.problems import validate


def test_set_names():
    assert parse_set("CVRP-100") == ("cvrp", 100)
    assert parse_set("pdtsp-51") == ("pdtsp", 51)
    for bad in ("tsp-100", "cvrp", "cvrp-x", "pdtsp-50"):
        with pytest.raises(ValueError, match="bad instance set"):
            parse_set(bad)
    assert default_budget("cvrp-100", 1.0) == reference_budget("cvrp", 100)
    assert default_budget("pdtsp-51", 2) == reference_budget("pdtsp", 51).scaled(2)


def test_the_analyses_default_to_a_fraction_of_the_gap_grade_budget():
    assert set(ANALYSIS_FACTORS) == set(PROBLEMS)
    assert all(0 < factor < 1 for factor in ANALYSIS_FACTORS.values())
    full = reference_budget("cvrp", 200)
    assert default_budget("cvrp-200") == full.scaled(ANALYSIS_FACTORS["cvrp"])
    assert default_budget("cvrp-200").iterations < full.iterations


def test_instance_sets_follow_the_pe_paper_generators():
    cvrp = instance_set("cvrp-100", 2, seed=0)
    assert cvrp[0].num_customers == 100 and cvrp[0].capacity == 50  # Appendix F: 30 + n/5
    assert instance_set("cvrp-200", 1, seed=0)[0].capacity == 70
    pdtsp = instance_set("pdtsp-51", 1, seed=0)[0]
    assert pdtsp.size == 51 and pdtsp.num_requests == 25
    assert instance_set("cvrp-100", 2, seed=0)[1].demands.tolist() == cvrp[1].demands.tolist()


def test_reference_set_returns_feasible_cached_solutions(tmp_path):
    instances, solutions = reference_set("cvrp-12", 2, budget=ReferenceBudget(200, 50), jobs=1,
                                         cache_dir=tmp_path, progress=False)
    assert len(solutions) == 2 and all(not validate(i, s) for i, s in zip(instances, solutions,
                                                                          strict=True))
    assert len(list(tmp_path.iterdir())) == 2
