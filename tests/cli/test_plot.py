"""``routecli plot pe`` end to end."""

from __future__ import annotations

from routecli.cli.app import main


def test_plot_pe_writes_every_picture(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "plots"
    code = main(["plot", "pe", "--set", "cvrp-30", "--ref-budget", "0.02", "--out", str(out)])
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["ipe-channels.png", "ipe_inv_xpe-heatmap.png", "ipe_inv_xpe-pca.png",
                     "ipe_inv_xpe-similarity.png", "xpe-angles.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in out.iterdir())
    assert capsys.readouterr().out.count("wrote") == 5


def test_plot_pe_of_a_bias_encoding_skips_node_only_pictures(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "plots"
    assert main(["plot", "pe", "--pe", "alibi", "--set", "cvrp-30", "--ref-budget", "0.02",
                 "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["alibi-heatmap.png", "ipe-channels.png",
                                                     "xpe-angles.png"]
