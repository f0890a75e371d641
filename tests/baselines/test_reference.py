import numpy as np
import pytest

from routecli import generate as gen
from routecli.baselines.reference import (
    ReferenceBudget,
    reference_budget,
    reference_solutions,
)
from routecli.errors import OptionError
from routecli.problems import validate

SMALL = ReferenceBudget(iterations=300, no_improvement=100)


def test_references_are_cached_and_valid(tmp_path):
    instances = gen.batch_instances("cvrp", gen.cvrp(3, 12, seed=0))
    first = reference_solutions(instances, SMALL, cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.npz"))) == 3
    second = reference_solutions(instances, SMALL, cache_dir=tmp_path, progress=False)
    for inst, a, b in zip(instances, first, second, strict=False):
        assert validate(inst, a) == []
        assert inst.cost(a) == inst.cost(b)


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "vrptw", "pcvrp", "pdtsp"])
def test_the_same_budget_and_seed_give_the_same_solution(tmp_path, problem):
    # Two separate caches, so both are computed: an iteration budget does not depend on
    # how fast the machine runs.
    instances = gen.batch_instances(problem, gen.GENERATORS[problem](3, 20, seed=5))
    first = reference_solutions(instances, SMALL, cache_dir=tmp_path / "a", progress=False)
    second = reference_solutions(instances, SMALL, cache_dir=tmp_path / "b", progress=False)
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a.routes if hasattr(a, "routes") else [a.order],
                        b.routes if hasattr(b, "routes") else [b.order], strict=True):
            np.testing.assert_array_equal(x, y)


def test_the_cache_key_carries_solver_version_criterion_and_seed(tmp_path):
    instances = gen.batch_instances("tsp", gen.tsp(1, 10, seed=0))
    for budget in (SMALL, SMALL.scaled(2), ReferenceBudget(300, 100, seed=1)):
        reference_solutions(instances, budget, cache_dir=tmp_path, progress=False)
    names = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert len(names) == 3 and all("-hgs0." in n for n in names)
    assert any("-i600-n200-s0" in n for n in names) and any("-i300-n100-s1" in n for n in names)


def test_a_run_cut_by_the_safety_cap_warns_and_is_not_cached(tmp_path):
    instances = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=0))
    capped = ReferenceBudget(iterations=10**9, no_improvement=10**9, safety_seconds=1e-6)
    with pytest.warns(UserWarning, match="safety cap"):
        (solution,) = reference_solutions(instances, capped, cache_dir=tmp_path, progress=False)
    assert validate(instances[0], solution) == [] and not list(tmp_path.glob("*.npz"))


def test_default_budgets_grow_with_size_and_reject_unknown_problems():
    small, large = reference_budget("cvrp", 100), reference_budget("cvrp", 500)
    assert large.iterations > small.iterations and large.no_improvement > small.no_improvement
    assert SMALL.scaled(2) == ReferenceBudget(600, 200, safety_seconds=2 * SMALL.safety_seconds)
    with pytest.raises(OptionError, match="no reference budget for 'kp'"):
        reference_budget("kp", 50)
    with pytest.raises(OptionError):
        ReferenceBudget(iterations=0, no_improvement=10)


def test_references_computed_on_a_pool_are_the_inline_ones_and_twins_are_solved_once(tmp_path):
    from routecli.tasks import Pool

    instances = gen.batch_instances("cvrp", gen.cvrp(3, 12, seed=0))
    twins = [*instances, instances[0]]  # the same instance twice: one task, one cache file
    pooled = reference_solutions(twins, SMALL, cache_dir=tmp_path / "a", progress=False,
                                 executor=Pool(2))
    inline = reference_solutions(instances, SMALL, cache_dir=tmp_path / "b", progress=False)
    assert len(list((tmp_path / "a").glob("*.npz"))) == 3
    assert [i.cost(s) for i, s in zip(twins, pooled, strict=True)] == \
        [i.cost(s) for i, s in zip([*instances, instances[0]], [*inline, inline[0]], strict=True)]
