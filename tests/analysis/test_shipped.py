import numpy as np
import pytest

from routecli import generate
from routecli.analysis.data import default_budget, instance_set, reference_set
from routecli.analysis.shipped import read_shipped, shipped_path, write_shipped
from routecli.baselines.reference import ReferenceBudget, reference_budget, reference_solutions
from routecli.generate import batch_instances
from routecli.problems import validate

SMALL = ReferenceBudget(iterations=200, no_improvement=50)
SETS = ("cvrp-100", "cvrp-200", "cvrp-500", "vrptw-100", "pdtsp-51")


@pytest.mark.parametrize("name", ["cvrp-12", "vrptw-10", "pdtsp-11"])
def test_a_written_file_reads_back_the_same_solutions(tmp_path, name):
    instances = instance_set(name, 3, seed=4)
    solutions = reference_solutions(instances, SMALL, cache_dir=tmp_path, progress=False)
    path = write_shipped(tmp_path / "f.npz", name, 4, SMALL, instances, solutions)
    back, why_not = read_shipped(path, name, 4, SMALL, instances)
    assert why_not is None and len(back) == 3
    for inst, a, b in zip(instances, solutions, back, strict=True):
        assert inst.cost(a) == pytest.approx(inst.cost(b))
    # another number of instances or another budget: not used, nothing to report
    assert read_shipped(path, name, 4, SMALL, instance_set(name, 5, seed=4)) == ([], None)
    assert read_shipped(path, name, 4, SMALL.scaled(2), instances) == ([], None)


def test_a_file_of_other_instances_or_with_an_invalid_solution_is_refused(tmp_path):
    instances = instance_set("cvrp-12", 2, seed=4)
    solutions = reference_solutions(instances, SMALL, cache_dir=tmp_path, progress=False)
    path = write_shipped(tmp_path / "f.npz", "cvrp-12", 4, SMALL, instances, solutions)
    other = instance_set("cvrp-12", 2, seed=5)
    assert "other instances" in read_shipped(path, "cvrp-12", 4, SMALL, other)[1]
    with np.load(path) as data:
        arrays = dict(data)
    arrays["sequence"] = arrays["sequence"].copy()
    arrays["sequence"][0] = arrays["sequence"][1]  # a customer twice, another missing
    np.savez(path, **arrays)
    assert "invalid" in read_shipped(path, "cvrp-12", 4, SMALL, instances)[1]
    assert "not a format-1 file of cvrp-13" in read_shipped(path, "cvrp-13", 4, SMALL,
                                                          instances)[1]


def test_reference_set_uses_a_shipped_file_of_its_set(tmp_path, monkeypatch):
    instances = instance_set("cvrp-12", 3, seed=4)
    solutions = reference_solutions(instances, SMALL, cache_dir=tmp_path / "a", progress=False)
    shipped = write_shipped(tmp_path / "s.npz", "cvrp-12", 4, SMALL, instances, solutions)
    monkeypatch.setattr("routecli.analysis.data.shipped_path", lambda name, seed: shipped)
    cache = tmp_path / "cache"
    got = reference_set("cvrp-12", 3, seed=4, budget=SMALL, jobs=1, cache_dir=cache,
                        progress=False)[1]
    assert len(got) == 3 and not cache.exists()  # nothing computed
    assert all(validate(i, s) == [] for i, s in zip(instances, got, strict=True))
    reference_set("cvrp-12", 2, seed=4, budget=SMALL, jobs=1, cache_dir=cache, progress=False)
    assert len(list(cache.glob("*.npz"))) == 2  # another set of instances: computed


@pytest.mark.parametrize("name", SETS)
def test_shipped_references_match_their_instances_and_validate(name):
    path = shipped_path(name, 0)
    if not path.exists():
        pytest.skip(f"no shipped references for {name}")
    with np.load(path) as data:
        count = len(data["lengths"])
    instances = instance_set(name, count, seed=0)
    solutions, why_not = read_shipped(path, name, 0, default_budget(name), instances)
    assert why_not is None and len(solutions) == count


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_shipped_miloop_evaluation_references_match_their_instances(problem):
    """``benchmarks/eval_miloop.py --ship-references``: the 128 seeded evaluation instances of
    size 100 (seed 2026) on the gap-grade budget."""
    name = f"miloop-{problem}-100"
    path = shipped_path(name, 2026)
    if not path.exists():
        pytest.skip(f"no shipped references for {name}")
    raw = generate.tsp(128, 100, 2026) if problem == "tsp" else generate.cvrp(128, 100, 2026)
    instances = batch_instances(problem, raw)
    solutions, why_not = read_shipped(path, name, 2026, reference_budget(problem, 100), instances)
    assert why_not is None and len(solutions) == 128
