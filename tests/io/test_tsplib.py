
import numpy as np
import pytest

from routecli.errors import InstanceFormatError
from routecli.io import read_instance
from routecli.io.tsplib import explicit_matrix, format_tour, read_tour


def test_euc2d_file_and_round_override(data_dir):
    inst = read_instance(data_dir / "tiny.tsp")
    assert inst.size == 4 and inst.metric.rule == "euc2d"
    order = np.array([0, 1, 2, 3])
    # edges 5, 5.016 -> 5, 6.896 -> 7 (nearest integer), 5
    assert inst.metric.tour(order) == 22
    exact = read_instance(data_dir / "tiny.tsp", rounding="none")
    assert exact.metric.rule == "exact"
    assert exact.metric.tour(order) == pytest.approx(5 + np.hypot(0.4, 5) + np.hypot(3.4, 6) + 5)


@pytest.mark.parametrize("name", ["explicit5", "full4", "upper4"])
def test_explicit_formats_give_symmetric_matrices(data_dir, name):
    inst = read_instance(data_dir / f"{name}.tsp")
    m = inst.metric.matrix
    np.testing.assert_array_equal(m, m.T)
    assert (np.diag(m) == 0).all()


def test_all_triangular_layouts_agree():
    full = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]], float)
    upper = full[np.triu_indices(4, 1)]
    lower = full[np.tril_indices(4, -1)]
    upper_diag = full[np.triu_indices(4)]
    lower_diag = full[np.tril_indices(4)]
    cases = {"UPPER_ROW": upper, "LOWER_COL": upper, "LOWER_ROW": lower, "UPPER_COL": lower,
             "UPPER_DIAG_ROW": upper_diag, "LOWER_DIAG_COL": upper_diag,
             "LOWER_DIAG_ROW": lower_diag, "UPPER_DIAG_COL": lower_diag,
             "FULL_MATRIX": full.ravel()}
    for fmt, values in cases.items():
        np.testing.assert_array_equal(explicit_matrix(values, 4, fmt, "x"), full, err_msg=fmt)


def test_tour_round_trip(tmp_path):
    order = np.array([2, 0, 3, 1])
    path = tmp_path / "t.tour"
    path.write_text(format_tour("t", order, 12.0))
    np.testing.assert_array_equal(read_tour(path, 4), order)
    path.with_suffix(".short").write_text("TOUR_SECTION\n3\n1\n4\n2\n-1\n")
    np.testing.assert_array_equal(read_tour(path.with_suffix(".short"), 5), order)  # for validation
    with pytest.raises(InstanceFormatError, match="line 4: DIMENSION 4 is not the instance's 5"):
        read_tour(path, 5)  # the tour of another instance
    with pytest.raises(InstanceFormatError, match=r"line 4: TOUR_SECTION: '4' is not a node id in 1\.\.3"):
        read_tour(path.with_suffix(".short"), 3)


@pytest.mark.parametrize("token", ["1e2", "0", "99999999999999999999", "2.5", "1_0", "١"])
def test_tour_ids_outside_the_instance_are_named(tmp_path, token):
    path = tmp_path / "t.tour"
    path.write_text(f"TYPE : TOUR\nTOUR_SECTION\n1\n{token}\n2\n-1\nEOF\n")
    with pytest.raises(InstanceFormatError, match="line 4: TOUR_SECTION: "):
        read_tour(path, 3)


def test_largest_tsplib_file_reads(benchdata):
    # its reading time is measured by benchmarks/bench_io.py, never asserted here
    inst = read_instance(benchdata / "tsplib" / "pla85900.tsp")
    assert inst.size == 85900 and inst.metric.rule == "ceil2d"


@pytest.mark.parametrize("row, what", [("14 1000 94.55", "latitude of node 14 is 1000"),
                                       ("14 20.09 -5000", "longitude of node 14 is -5000"),
                                       ("14 90.01 94.55", "latitude of node 14 is 90.01")])
def test_geo_coordinates_must_be_latitudes_and_longitudes(tmp_path, data_dir, row, what):
    text = (data_dir / "geo_burma14.tsp").read_text().replace("  14  20.09       94.55", row)
    (tmp_path / "bad.tsp").write_text(text)
    with pytest.raises(InstanceFormatError, match=f"line 22: NODE_COORD_SECTION: {what}; GEO"):
        read_instance(tmp_path / "bad.tsp")


def test_round_geo_checks_the_coordinates_it_reads_as_degrees(tmp_path, data_dir):
    assert read_instance(data_dir / "tiny.tsp", "geo").metric.rule == "geo"
    (tmp_path / "far.tsp").write_text((data_dir / "tiny.tsp").read_text().replace("4 0 5",
                                                                                  "4 0 500"))
    assert read_instance(tmp_path / "far.tsp").metric.rule == "euc2d"
    with pytest.raises(InstanceFormatError, match="line 9: .*longitude of node 4 is 500; GEO"):
        read_instance(tmp_path / "far.tsp", "geo")
