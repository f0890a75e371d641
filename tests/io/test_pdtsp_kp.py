"""PDTSP (VRPLIB + PICKUP_AND_DELIVERY_SECTION) and knapsack (.kp) files: reading, the one-line
errors of tests/data/malformed/, generated files that read back, solution files (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest
import vrplib

from routecli import generate
from routecli.errors import InstanceFormatError, display_path
from routecli.io import best_known, read_instance, read_solution, write_solution
from routecli.io.writers import instance_files
from routecli.problems import KPInstance, PDTSPInstance, Selection, Tour, validate

# fixture -> the message after "<path>: "
INVALID = {
    "pdtsp_delivery_without_pickup.vrp": "line 17: PICKUP_AND_DELIVERY_SECTION: node 3: pickup "
                                         "without its delivery: node 6 is the delivery of 2",
    "pdtsp_odd_paired_nodes.vrp": "line 4: DIMENSION 6 leaves 5 nodes besides the depot, an odd "
                                  "number of paired nodes",
    "pdtsp_missing_pairs.vrp": "missing PICKUP_AND_DELIVERY_SECTION",
    "kp_negative_weight.kp": "line 9: ITEM_SECTION: weight of item 3 is -0.6; weight must be > 0",
    "kp_capacity_zero.kp": "line 5: CAPACITY is 0; it must be > 0 and <= 1e+09 so costs, loads "
                           "and times stay exact in float64/int64",
    "kp_item_count_mismatch.kp": "line 6: ITEM_SECTION has 5 items, ITEMS says 6",
    "kp_ragged_item.kp": "line 8: ITEM_SECTION: expected 2 values 'weight value', got 1",
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_pdtsp_and_kp_files_name_line_and_field(malformed_dir, name):
    path = malformed_dir / name
    with pytest.raises(InstanceFormatError) as info:
        read_instance(path)
    assert str(info.value) == f"{display_path(path)}: {INVALID[name]}"


def test_pdtsp_file_reads_with_its_pairs_and_vrplib_reads_it_too(data_dir):
    path = data_dir / "tiny_pdtsp.vrp"
    inst = read_instance(path)
    assert isinstance(inst, PDTSPInstance) and inst.num_requests == 3 and inst.metric.rule == "euc2d"
    data = vrplib.read_instance(str(path))
    pairs = data["pickup_and_delivery"]  # [n, 2] pickup, delivery (1-based ids, 0 = none)
    assert pairs[1].tolist() == [0, 5] and pairs[4].tolist() == [2, 0]
    assert np.array_equal(data["node_coord"], inst.metric.coords)


def test_kp_file_reads_items_in_file_order(data_dir):
    inst = read_instance(data_dir / "tiny.kp")
    assert isinstance(inst, KPInstance) and inst.size == 5 and inst.capacity == 1.0
    assert inst.weights.tolist() == [0.3, 0.2, 0.6, 0.5, 1.5]
    with pytest.raises(InstanceFormatError, match="--round has no meaning"):
        read_instance(data_dir / "tiny.kp", "euc2d")


def test_generated_files_read_back(tmp_path):
    kp = generate.kp(2, 30, seed=3, capacity=10)
    name, text = instance_files("kp", kp, 3, 1000)[1]
    path = tmp_path / name
    path.write_text(text)
    assert path.name == "kp-30-c10-s3-1.kp"
    inst = read_instance(path)
    assert isinstance(inst, KPInstance)  # every number reads back exactly
    assert np.array_equal(inst.weights, kp["weights"][1]) and np.array_equal(inst.values, kp["values"][1])
    assert inst.capacity == 10
    pd = generate.pdtsp(1, 10, seed=4)
    name, text = instance_files("pdtsp", pd, 4, 1000)[0]
    path = tmp_path / name
    path.write_text(text)
    inst = read_instance(path)
    assert path.name == "pdtsp-10-s4-0.vrp" and isinstance(inst, PDTSPInstance)
    assert inst.num_requests == 5
    assert np.array_equal(inst.metric.coords, np.rint(pd["locs"][0] * 1000))


def test_solution_files_round_trip(data_dir, tmp_path):
    kp = read_instance(data_dir / "tiny.kp")
    assert isinstance(kp, KPInstance)
    written = write_solution(tmp_path / "tiny.sol", kp, Selection([3, 0, 1]))
    text = written.read_text()
    assert "Items: 1 2 4" in text and "Value 1.8" in text
    back = read_solution(written, kp)
    assert isinstance(back, Selection) and sorted(back.items.tolist()) == [0, 1, 3]
    pd = read_instance(data_dir / "tiny_pdtsp.vrp")
    tour = Tour([0, 1, 2, 4, 5, 3, 6])
    assert validate(pd, tour) == []
    assert read_solution(write_solution(tmp_path / "p.tour", pd, tour), pd).order.tolist() == \
        tour.order.tolist()


def test_kp_items_outside_the_instance_are_refused(data_dir, tmp_path):
    kp = read_instance(data_dir / "tiny.kp")
    bad = tmp_path / "bad.sol"
    bad.write_text("Items: 1 9\n")
    with pytest.raises(InstanceFormatError, match="item 9 does not exist; the instance has items 1..5"):
        read_solution(bad, kp)


def test_kp_sibling_solution_is_the_best_known_value(data_dir, tmp_path):
    folder = tmp_path / "kp"
    folder.mkdir()
    (folder / "tiny.kp").write_text((data_dir / "tiny.kp").read_text())
    inst = read_instance(folder / "tiny.kp")
    assert best_known(inst, folder / "tiny.kp") == (None, "")
    (folder / "tiny.sol").write_text("Items: 1 2 4\nValue 1.8\n")
    value, source = best_known(inst, folder / "tiny.kp")
    assert value == pytest.approx(1.8) and source == "tiny.sol"
    (folder / "tiny.sol").write_text("Items: 1 2 3 4\n")  # over capacity: not a BKS
    assert best_known(inst, folder / "tiny.kp") == (None, "")


def test_any_consistent_pairing_is_read_and_tours_keep_the_files_numbering(data_dir, tmp_path):
    # pairs (2, 3), (4, 5), (6, 7): each pickup followed by its delivery
    path = data_dir / "pdtsp_interleaved_pairs.vrp"
    pd = read_instance(path)
    assert isinstance(pd, PDTSPInstance) and pd.num_requests == 3
    assert pd.node_ids.tolist() == [1, 2, 4, 6, 3, 5, 7]  # depot, pickups, their deliveries
    coords = {int(row.split()[0]): [float(v) for v in row.split()[1:]]
              for row in path.read_text().split("NODE_COORD_SECTION\n")[1].split("PICKUP")[0]
              .splitlines()}
    assert pd.metric.coords.tolist() == [coords[i] for i in pd.node_ids]
    # the tour 1 2 3 4 5 6 7 of the file serves every pair in order
    tour = tmp_path / "file.tour"
    tour.write_text("TOUR_SECTION\n1\n2\n3\n4\n5\n6\n7\n-1\nEOF\n")
    solution = read_solution(tour, pd)
    assert validate(pd, solution) == []
    written = write_solution(tmp_path / "back.tour", pd, solution).read_text()
    assert written.split("TOUR_SECTION\n")[1].split() == ["1", "2", "3", "4", "5", "6", "7", "-1",
                                                          "EOF"]
    early = tmp_path / "early.tour"
    early.write_text("TOUR_SECTION\n1\n3\n2\n4\n5\n6\n7\n-1\nEOF\n")
    assert validate(pd, read_solution(early, pd)) == ["delivery 3 before pickup 2"]
