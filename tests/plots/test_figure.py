"""save_png: every PNG routecli draws is written whole or not at all, and its figure closed."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from routecli.plots.figure import save_png  # noqa: E402


def test_writes_a_png_and_closes_the_figure(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_png(fig, tmp_path / "sub" / "line.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.number not in plt.get_fignums()


def test_a_failed_write_keeps_the_old_file_and_still_closes(tmp_path, monkeypatch):
    path = tmp_path / "kept.png"
    path.write_bytes(b"old")
    fig, _ = plt.subplots()

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(RuntimeError):
        save_png(fig, path)
    assert path.read_bytes() == b"old" and list(tmp_path.iterdir()) == [path]
    assert fig.number not in plt.get_fignums()
