"""The prepared GPU script and the learning-curve benchmark, on a CPU with tiny budgets."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

from routecli.miloop.model import MiLoop, MiLoopConfig, load_policy, to_checkpoint
from routecli.results import read_csv
from routecli.train import checkpoint

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_gpu_script_fine_tunes_and_writes_checkpoint_and_card(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "gpu"
    result = script("train_gpu").main([
        "--problem", "tsp", "--device", "cpu", "--minutes", "0.02", "--size", "10",
        "--batch", "2", "--rollouts", "3", "--val-instances", "3", "--val-size", "10",
        "--val-time-limit", "0.01", "--jobs", "2", "--out", str(out)])
    assert result["steps"] >= 1
    model = load_policy(out / "miloop-tsp.pt")
    assert model.config.problem == "tsp"
    card = (out / "miloop-tsp.md").read_text()
    assert f"{result['after']:.2f}%" in card and "--minutes 0.02" in card
    before = torch.load(out / "miloop-tsp.pt", weights_only=True)["meta"]
    assert before["steps"] == result["steps"]


@pytest.mark.slow
def test_learning_curve_stores_rows_and_resumes_where_it_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "curve"

    def run(minutes: str) -> list[dict[str, str]]:
        return script("learning_curve").main([
            "--problem", "cvrp", "--recipes", "dpo,supervised-mixed", "--size", "10",
            "--cpu-minutes", minutes, "--eval-every", "0.005", "--val-instances", "3",
            "--val-time-limit", "0.01", "--label-instances", "3", "--label-time-limit", "0.01",
            "--labels", str(tmp_path / "labels"), "--work", str(tmp_path / "runs"),
            "--out", str(out)])

    first = run("0.01")
    assert {r["recipe"] for r in first} == {"dpo", "supervised-mixed"}
    assert all(float(r["cpu_hours"]) > 0 for r in first if r["steps"] != "0")
    for suffix in (".csv", ".md", ".png"):
        assert out.with_suffix(suffix).stat().st_size > 0
    longer = run("0.02")  # a longer budget goes on from each recipe's last.pt
    assert all(row in longer for row in first)  # stored rows are kept, not redone
    for recipe in ("dpo", "supervised-mixed"):
        before = [int(r["steps"]) for r in first if r["recipe"] == recipe]
        after = [int(r["steps"]) for r in longer if r["recipe"] == recipe]
        assert after[: len(before)] == before and max(after) > max(before)
        assert after.count(0) == 1  # the start is validated once
    assert len(read_csv(out.with_suffix(".csv"))) == len(longer)


def test_miloop_curve_chains_runs_and_writes_table_and_png(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for run in (first, second):
        run.mkdir()
    (first / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"event": "start", "step": 0},
        {"step": 10, "instances": 160, "elapsed": 36.0, "size": 100, "loss": 0.3},
        {"step": 10, "instances": 160, "elapsed": 36.0, "val_gap": 9.5},
        {"step": 20, "instances": 320, "elapsed": 72.0, "val_gap": 9.0}]))
    (second / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"step": 5, "instances": 10, "elapsed": 360.0, "cpu_seconds": 180.0, "val_gap": 8.25}]))
    out = tmp_path / "curve"
    rows = script("miloop_curve").main([f"{first}/log.jsonl@10", f"{second}/log.jsonl",
                                        "--start", "10", "--out", str(out)])
    assert [(r["instances"], r["val_gap"]) for r in rows] == [(160, 9.5), (170, 8.25)]
    table = out.with_suffix(".md").read_text()
    assert "| (starting weights) | 0 | - | 0 | 0 | 0 | 10.00 |" in table
    assert f"| {first}/log.jsonl | 10 | 100 | 160 | 0.01 | - | 9.50 |" in table
    assert f"| {second}/log.jsonl | 5 | - | 170 | 0.11 | - | 8.25 |" in table  # CPU unknown
    assert out.with_suffix(".png").stat().st_size > 0
    with pytest.raises(SystemExit, match="no such log"):
        script("miloop_curve").main([str(tmp_path / "nothing.jsonl")])


def test_label_fit_reports_likelihood_and_greedy_gap(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    path = tmp_path / "tiny.pt"
    checkpoint.save(to_checkpoint(MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32,
                                                      layers=1)), {}), path)
    out = tmp_path / "fit.md"
    lines = script("label_fit").main(["--problem", "tsp", str(path), "--val-size", "8",
                                      "--val-instances", "3", "--val-time-limit", "0.01",
                                      "--out", str(out)])
    rows = [line.split(" | ") for line in lines[2:]]
    assert [r[2] for r in rows] == ["fp32", "bf16"]
    nll, gap = float(rows[0][3]), float(rows[0][4].rstrip(" |"))
    assert nll > 0 and gap >= 0  # references are PyVRP's, a random policy is not better
    assert "TSP-8, 3 validation instances" in out.read_text()
