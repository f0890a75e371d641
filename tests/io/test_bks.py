from routecli.io import best_known, read_instance, registry


def test_registry_has_all_benchmark_values():
    reg = registry()
    assert len(reg) == 191
    x101 = reg["X-n101-k25"]
    assert (x101.set, x101.n, x101.rule, x101.value) == ("CVRPLIB-X", 100, "euc2d", 27591.0)
    assert (reg["pla85900"].rule, reg["pla85900"].value) == ("ceil2d", 142382641.0)


def test_priority_given_then_sibling_then_registry(data_dir, tmp_path):
    inst = read_instance(data_dir / "tiny.vrp")
    assert best_known(inst, data_dir / "tiny.vrp", 50.0) == (50.0, "--bks")
    assert best_known(inst, data_dir / "tiny.vrp") == (52.0, "tiny.sol")
    lonely = tmp_path / "tiny.vrp"
    lonely.write_text((data_dir / "tiny.vrp").read_text())
    assert best_known(read_instance(lonely), lonely) == (None, "")


def test_sibling_solution_is_recosted_not_trusted(data_dir, tmp_path):
    (tmp_path / "tiny.vrp").write_text((data_dir / "tiny.vrp").read_text())
    (tmp_path / "tiny.sol").write_text("Route #1: 1 2\nRoute #2: 3 4\nRoute #3: 5\nCost 1\n")
    inst = read_instance(tmp_path / "tiny.vrp")
    assert best_known(inst, tmp_path / "tiny.vrp") == (52.0, "tiny.sol")
