from routecli.io import (
    best_known,
    is_bks_source,
    read_instance,
    read_solution,
    write_solution,
    written_by_routecli,
)
from routecli.problems.fingerprint import fingerprint


def test_priority_given_then_sibling_then_registry(data_dir, tmp_path):
    inst = read_instance(data_dir / "tiny.vrp")
    assert best_known(inst, data_dir / "tiny.vrp", 50.0) == (50.0, "--bks")
    assert best_known(inst, data_dir / "tiny.vrp") == (52.0, "tiny.sol")
    lonely = tmp_path / "tiny.vrp"
    lonely.write_text((data_dir / "tiny.vrp").read_text())
    assert best_known(read_instance(lonely), lonely) == (None, "")


def test_sibling_solution_is_recosted_not_trusted(data_dir, tmp_path):
    (tmp_path / "tiny.vrp").write_text((data_dir / "tiny.vrp").read_text())
    inst = read_instance(tmp_path / "tiny.vrp")
    (tmp_path / "tiny.sol").write_text("Route #1: 1 2\nRoute #2: 3 4\nRoute #3: 5\n")
    assert best_known(inst, tmp_path / "tiny.vrp") == (52.0, "tiny.sol")  # no stated cost
    # A stated cost its routes do not have here: written for another instance or rule.
    (tmp_path / "tiny.sol").write_text("Route #1: 1 2\nRoute #2: 3 4\nRoute #3: 5\nCost 1\n")
    assert best_known(inst, tmp_path / "tiny.vrp") == (None, "")


def _x101_lookalike(path, shift=0):
    """A CVRP file named X-n101-k25 with 100 customers (the registry's name and size)."""
    coords = "\n".join(f"{i + 1} {(i * 37 + shift) % 1000} {(i * 91) % 1000}" for i in range(101))
    demands = "\n".join(f"{i + 1} {0 if i == 0 else 1 + i % 50}" for i in range(101))
    path.write_text(f"NAME : X-n101-k25\nTYPE : CVRP\nDIMENSION : 101\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                    f"CAPACITY : 206\nNODE_COORD_SECTION\n{coords}\nDEMAND_SECTION\n{demands}\n"
                    "DEPOT_SECTION\n1\n-1\nEOF\n")
    return path


def test_other_coordinates_under_a_registry_name_get_no_bks(tmp_path):
    inst = read_instance(_x101_lookalike(tmp_path / "X-n101-k25.vrp"))
    assert inst.name == "X-n101-k25" and inst.size == 100
    assert best_known(inst, tmp_path / "X-n101-k25.vrp") == (None, "")


def test_registry_needs_the_files_own_rule_and_data(benchdata, tmp_path):
    copy = tmp_path / "X-n101-k25.vrp"  # no sibling .sol: the registry is the only source
    copy.write_text((benchdata / "cvrplib" / "X" / "X-n101-k25.vrp").read_text())
    assert best_known(read_instance(copy), copy) == (27591.0, "registry")
    assert best_known(read_instance(copy, "euc2d"), copy) == (27591.0, "registry")  # the same rule
    for rounding in ("att", "ceil2d", "none"):
        assert best_known(read_instance(copy, rounding), copy) == (None, ""), rounding
    pla = read_instance(benchdata / "tsplib" / "dsj1000.tsp")
    assert best_known(pla)[1] == "registry"
    assert best_known(read_instance(benchdata / "tsplib" / "dsj1000.tsp", "euc2d")) == (None, "")


def test_fingerprint_ignores_numbering_but_not_numbers(tmp_path):
    base = read_instance(_x101_lookalike(tmp_path / "a.vrp"))
    lines = (tmp_path / "a.vrp").read_text().splitlines()
    coords = lines.index("NODE_COORD_SECTION")
    demands = lines.index("DEMAND_SECTION")
    # swap customers 2 and 3 everywhere: ids stay, rows move
    for start in (coords, demands):
        lines[start + 2], lines[start + 3] = lines[start + 3], lines[start + 2]
    (tmp_path / "b.vrp").write_text("\n".join(lines))
    assert fingerprint(read_instance(tmp_path / "b.vrp")) == fingerprint(base)
    moved = read_instance(_x101_lookalike(tmp_path / "c.vrp", shift=1))
    assert fingerprint(moved) != fingerprint(base)


def test_a_solution_routecli_wrote_is_never_a_bks(data_dir, tmp_path):
    (tmp_path / "tiny.vrp").write_text((data_dir / "tiny.vrp").read_text())
    inst = read_instance(tmp_path / "tiny.vrp")
    published = read_solution(data_dir / "tiny.sol", inst)
    write_solution(tmp_path / "tiny.sol", inst, published)  # e.g. solve tiny.vrp --out tiny.sol
    assert written_by_routecli(tmp_path / "tiny.sol")
    assert best_known(inst, tmp_path / "tiny.vrp") == (None, "")
    assert not is_bks_source(tmp_path / "tiny.sol")


def test_is_bks_source(data_dir, tmp_path):
    assert is_bks_source(data_dir / "tiny.sol")  # published, next to tiny.vrp
    assert not is_bks_source(data_dir / "tiny.vrp")
    assert not is_bks_source(tmp_path / "tiny.sol")  # does not exist
    (tmp_path / "lonely.sol").write_text("Route #1: 1\nCost 3\n")
    assert not is_bks_source(tmp_path / "lonely.sol")  # no instance beside it
    (tmp_path / "a280.tsp").write_text("x")
    tour = "NAME : a280.opt.tour\nCOMMENT : Optimum tour\nTYPE : TOUR\nTOUR_SECTION\n1\n2\n-1\nEOF\n"
    (tmp_path / "a280.opt.tour").write_text(tour)
    assert is_bks_source(tmp_path / "a280.opt.tour")
    (tmp_path / "a280.tour").write_text(tour.replace("Optimum tour", "Length 2579 (routecli)"))
    assert not is_bks_source(tmp_path / "a280.tour")  # written by routecli before the mark


def test_sibling_only_under_the_files_own_rule(data_dir):
    exact = read_instance(data_dir / "tiny.vrp", "none")
    assert best_known(exact, data_dir / "tiny.vrp") == (None, "")


def test_an_unusable_sibling_is_ignored(data_dir, tmp_path):
    (tmp_path / "tiny.vrp").write_text((data_dir / "tiny.vrp").read_text())
    inst = read_instance(tmp_path / "tiny.vrp")
    for text in ("Route #1: 1 2 3 4 5 99\nCost 1\n", "Route #1: 1 2 -3\nCost 1\n", "garbage\n"):
        (tmp_path / "tiny.sol").write_text(text)
        assert best_known(inst, tmp_path / "tiny.vrp") == (None, ""), text


def test_a_header_padded_with_blank_lines_keeps_its_sibling_bks(data_dir, tmp_path):
    # 65,536 blank lines: a regex over a fixed look-ahead window was quadratic here and missed
    # the EDGE_WEIGHT_TYPE beyond the window, hence the sibling tour
    padded = tmp_path / "padded.tsp"
    padded.write_text("\n" * 65_536 + (data_dir / "tiny.tsp").read_text())
    (tmp_path / "padded.opt.tour").write_text("TOUR_SECTION\n1\n2\n3\n4\n-1\nEOF\n")
    instance = read_instance(padded)
    value, source = best_known(instance, padded)
    assert source == "padded.opt.tour" and value == instance.cost(
        read_solution(tmp_path / "padded.opt.tour", instance))
