import pytest

from routecli.io import read_instance, read_solution
from routecli.plots import plot_solution
from routecli.problems import Tour


def test_route_and_tour_pictures_are_written(data_dir, tmp_path):
    inst = read_instance(data_dir / "tiny.vrp")
    out = plot_solution(inst, read_solution(data_dir / "tiny.sol", inst), tmp_path / "r.png", 50)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tsp = read_instance(data_dir / "tiny.tsp")
    assert plot_solution(tsp, Tour([0, 1, 2, 3]), tmp_path / "t.png").stat().st_size > 1000


def test_matrix_only_instances_cannot_be_drawn(data_dir, tmp_path):
    inst = read_instance(data_dir / "explicit5.tsp")
    with pytest.raises(ValueError, match="no coordinates"):
        plot_solution(inst, Tour(range(5)), tmp_path / "x.png")
