import pytest

from routecli.plots import plot_curves


def test_curves_png_with_baseline(tmp_path):
    path = tmp_path / "curve.png"
    plot_curves({"dpo": ([0.1, 0.2], [9.0, 8.5]), "supervised": ([0.1], [10.0])}, path,
                "CPU-hours", "gap (%)", baseline=10.85)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curves_refuse_a_series_of_unequal_lengths(tmp_path):
    with pytest.raises(ValueError):
        plot_curves({"dpo": ([0.1, 0.2], [9.0])}, tmp_path / "bad.png", "x", "y")
