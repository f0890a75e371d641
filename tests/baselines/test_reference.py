from routecli import generate as gen
from routecli.baselines.reference import fingerprint, reference_solutions
from routecli.problems import validate


def test_references_are_cached_and_valid(tmp_path):
    instances = gen.batch_instances("cvrp", gen.cvrp(3, 12, seed=0))
    first = reference_solutions(instances, 0.1, cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.npz"))) == 3
    second = reference_solutions(instances, 0.1, cache_dir=tmp_path, progress=False)
    for inst, a, b in zip(instances, first, second, strict=False):
        assert validate(inst, a) == []
        assert inst.cost(a) == inst.cost(b)


def test_fingerprint_ignores_name_but_not_data():
    a, b = gen.batch_instances("tsp", gen.tsp(2, 10, seed=0))
    renamed = gen.batch_instances("tsp", gen.tsp(2, 10, seed=0), prefix="other-")[0]
    assert fingerprint(a) == fingerprint(renamed) != fingerprint(b)
