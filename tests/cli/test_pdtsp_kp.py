"""PDTSP and knapsack files end to end: generate --format file, solve (nn, exact, hgs) with
--out, info, validate, and one line with exit 2 for malformed input (issue 17)."""

from __future__ import annotations

import pytest

from routecli.cli.app import main
from tests.io.test_pdtsp_kp import INVALID


@pytest.mark.parametrize("name", sorted(INVALID))
def test_malformed_pdtsp_and_kp_files_give_one_line_and_exit_2(malformed_dir, tmp_path, capsys,
                                                               name):
    out = tmp_path / "out.sol"
    code = main(["solve", str(malformed_dir / name), "--model", "nn", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: ")
    assert INVALID[name] in err and not out.exists()


def test_generate_solve_and_write_knapsack_files(tmp_path, capsys):
    folder = tmp_path / "kp"
    assert main(["generate", "kp", "--size", "30", "--num", "2", "--capacity", "10", "--format",
                 "file", "-o", str(folder)]) == 0
    files = sorted(folder.glob("*.kp"))
    assert [f.name for f in files] == ["kp-30-c10-s0-0.kp", "kp-30-c10-s0-1.kp"]
    assert main(["info", str(files[0])]) == 0
    assert "30 items" in capsys.readouterr().out
    best = tmp_path / "best.sol"
    assert main(["solve", str(files[0]), "--model", "exact", "--out", str(best), "--json"]) == 0
    exact = capsys.readouterr().out
    assert '"feasible": true' in exact and best.read_text().startswith("# written by routecli")
    # the greedy's gap is against the --bks given: (best - ours) / best
    import json

    value = json.loads(exact)["cost"]
    assert main(["solve", str(files[0]), "--model", "nn", "--bks", str(value), "--json"]) == 0
    greedy = json.loads(capsys.readouterr().out)
    assert 0 <= greedy["gap_pct"] == pytest.approx(100 * (value - greedy["cost"]) / value)
    assert main(["validate", str(files[0]), str(best)]) == 0


def test_generate_solve_and_write_pdtsp_files(tmp_path, capsys):
    folder = tmp_path / "pd"
    assert main(["generate", "pdtsp", "--size", "10", "--num", "1", "--format", "file", "-o",
                 str(folder)]) == 0
    path = folder / "pdtsp-10-s0-0.vrp"
    assert "PICKUP_AND_DELIVERY_SECTION" in path.read_text()
    assert main(["info", str(path)]) == 0
    assert "depot + 5 pickup-delivery pairs" in capsys.readouterr().out
    tour = tmp_path / "pd.tour"
    assert main(["solve", str(path), "--model", "hgs", "--iterations", "200", "--out",
                 str(tour)]) == 0
    assert main(["validate", str(path), str(tour)]) == 0
    capsys.readouterr()
    lines = tour.read_text().splitlines()
    body = lines[lines.index("TOUR_SECTION") + 1:lines.index("-1")]
    order = [int(v) for v in body]
    position = {node: k for k, node in enumerate(order)}
    pickup, delivery = next((p, p + 5) for p in range(2, 7) if position[p] < position[p + 5])
    order[position[pickup]], order[position[delivery]] = delivery, pickup
    swapped = tmp_path / "swapped.tour"
    swapped.write_text("\n".join(lines[:lines.index("TOUR_SECTION") + 1] + [str(v) for v in order]
                                 + ["-1", "EOF"]) + "\n")
    assert main(["validate", str(path), str(swapped)]) == 1
    # named as the .tour names them
    assert f"delivery {delivery} before pickup {pickup}" in capsys.readouterr().out


def test_info_on_a_knapsack_of_inf_items_is_one_line(malformed_dir, capsys):
    # issue 39: `info` on ITEMS : inf raised OverflowError
    assert main(["info", str(malformed_dir / "kp_items_inf.kp")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("line 3: ITEMS must be a positive integer, got 'inf'") and "\n" not in err


@pytest.mark.parametrize("model", ["nn", "hgs"])
def test_a_pdtsp_of_any_consistent_pairing_is_solved_in_the_files_numbering(data_dir, tmp_path,
                                                                            capsys, model):
    # issue 36, item 3: pairs (2, 3), (4, 5), (6, 7), not "pickup k, delivery k + n/2"
    out = tmp_path / "pd.tour"
    argv = ["solve", str(data_dir / "pdtsp_interleaved_pairs.vrp"), "-m", model, "-o", str(out)]
    assert main([*argv, "--iterations", "20"] if model == "hgs" else argv) == 0
    assert main(["validate", str(data_dir / "pdtsp_interleaved_pairs.vrp"), str(out)]) == 0
    assert "feasible" in capsys.readouterr().out
