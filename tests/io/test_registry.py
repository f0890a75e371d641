"""The packaged registry of best-known values."""

from routecli.io.registry import registry


def test_registry_has_all_benchmark_values():
    reg = registry()
    assert len(reg) == 191
    x101 = reg["X-n101-k25"]
    assert (x101.set, x101.n, x101.rule, x101.value) == ("CVRPLIB-X", 100, "euc2d", 27591.0)
    assert (reg["pla85900"].rule, reg["pla85900"].value) == ("ceil2d", 142382641.0)
