"""The one instance fingerprint: the name does not count, every number does."""

from routecli import generate as gen
from routecli.problems.fingerprint import fingerprint


def test_fingerprint_ignores_name_but_not_data():
    a, b = gen.batch_instances("tsp", gen.tsp(2, 10, seed=0))
    renamed = gen.batch_instances("tsp", gen.tsp(2, 10, seed=0), prefix="other-")[0]
    assert fingerprint(a) == fingerprint(renamed) != fingerprint(b)
