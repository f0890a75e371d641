"""``routecli analyze memory`` end to end on tiny policies."""

from __future__ import annotations

import csv
import json

import pytest
import torch

from routecli.cli.app import main
from routecli.miloop.model import MiLoop, MiLoopConfig, to_checkpoint
from routecli.train.checkpoint import save


@pytest.fixture
def tiny_checkpoints(tmp_path):
    paths = {}
    for name, memory in (("tiny.pt", True), ("dynamic.pt", False)):
        torch.manual_seed(1)
        model = MiLoop(MiLoopConfig(dim=16, layers=1, ff_dim=32, memory=memory))
        paths[name] = save(to_checkpoint(model), tmp_path / name)
    return paths


def test_memory_prints_ours_beside_the_paper_and_writes_json_and_png(tmp_path, capsys,
                                                                     tiny_checkpoints):
    out, plot = tmp_path / "memory.json", tmp_path / "memory.png"
    code = main(["analyze", "memory", "--checkpoint", str(tiny_checkpoints["tiny.pt"]),
                 "--baseline", str(tiny_checkpoints["dynamic.pt"]), "--size", "8", "--num", "2",
                 "--out", str(out), "--figure", str(plot)])
    text = capsys.readouterr().out
    assert code == 0
    assert "0.9159" in text and "0.7655" in text  # the paper's Table 8 beside ours
    data = json.loads(out.read_text())
    assert [r["model"] for r in data["rows"]] == ["MiLoop (tiny.pt)", "tiny.pt, memory off",
                                                  "dynamic.pt"]
    assert data["commit"] and data["size"] == 8
    assert len(data["steps"]["dynamic.pt"]) == 7  # t = 2..8
    assert all(-1 <= r["adjacent"] <= 1 and -1 <= r["first"] <= 1 for r in data["rows"])
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_memory_writes_csv_without_the_steps(tmp_path, tiny_checkpoints):
    out = tmp_path / "memory.csv"
    assert main(["analyze", "memory", "--checkpoint", str(tiny_checkpoints["tiny.pt"]),
                 "--size", "6", "--num", "1", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 and rows[0]["adjacent_paper_miloop"] == "0.9159"


@pytest.mark.parametrize("extra, message", [
    (["--problem", "kp"], "--problem must be one of tsp, cvrp"),
    (["--figure", "x.pdf"], "--figure must end in .png"),
    (["--out", "x.txt"], "--out must end in .csv or .json"),
    (["--problem", "cvrp"], "a checkpoint of problem 'tsp', not 'cvrp'"),
])
def test_bad_options_fail_with_one_line(tmp_path, capsys, tiny_checkpoints, extra, message):
    code = main(["analyze", "memory", "--checkpoint", str(tiny_checkpoints["tiny.pt"]),
                 "--size", "5", "--num", "1", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_damaged_checkpoint_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    assert main(["analyze", "memory", "--checkpoint", str(bad), "--num", "1"]) == 2
    err = capsys.readouterr().err
    assert "bad.pt" in err and len(err.strip().splitlines()) == 1
