"""Two benchmark scripts killed mid-run (SIGKILL) and rerun: every row once, none lost."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from routecli.miloop.model import MiLoop, MiLoopConfig, to_checkpoint
from routecli.train import checkpoint

ROOT = Path(__file__).resolve().parents[2]


def rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        text = fh.read()
    return list(csv.DictReader(text[: text.rfind("\n") + 1].splitlines()))


def kill_after_first_row(command: list[str], out: Path, env: dict[str, str]) -> int:
    """Start ``command``, SIGKILL it and its children (its own process group) once ``out``
    holds a row; the rows it left."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not rows(out) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return len(rows(out))


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ROUTECLI_CACHE": str(tmp_path / "cache"),
            "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def resumed(command: list[str], out: Path, env: dict[str, str], key: list[str],
            total: int) -> None:
    left = kill_after_first_row(command, out, env)
    assert 1 <= left < total  # killed mid-run
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    keys = [tuple(r[k] for k in key) for r in rows(out)]
    assert len(keys) == total and len(set(keys)) == total


def test_analysis_budget_resumes_after_a_kill(tmp_path):
    out = tmp_path / "budget.csv"
    command = [sys.executable, "benchmarks/analysis_budget.py", "--sets", "cvrp-10",
               "--instances", "12", "--high", "0.02", "--factors", "0.01", "--rows", str(out)]
    resumed(command, out, environment(tmp_path), ["set", "fingerprint", "factor", "budget"],
            total=24)


def test_eval_miloop_resumes_after_a_kill(tmp_path):
    torch.manual_seed(0)
    weights = tmp_path / "tiny.pt"
    checkpoint.save(to_checkpoint(MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32,
                                                      layers=1))), weights)
    out = tmp_path / "per_instance.csv"
    command = [sys.executable, "benchmarks/eval_miloop.py", "--problem", "tsp",
               "--checkpoint", str(weights), "--instances", "12", "--size", "8",
               "--ref-budget", "0.01", "--check-refs", "0", "--per-instance", str(out)]
    resumed(command, out, environment(tmp_path),
            ["checkpoint_sha256", "settings", "fingerprint"], total=12)


def test_fuzz_inputs_resumes_after_a_kill(tmp_path, benchdata):
    out, whole = tmp_path / "fuzz.csv", tmp_path / "whole.csv"
    command = [sys.executable, "benchmarks/fuzz_inputs.py", "--cases", "8", "--seed", "3",
               "--strategies", "bks values,solution ids", "--data-root", str(benchdata)]
    env = environment(tmp_path)
    subprocess.run([*command, "--out", str(whole)], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    key = ["case", "invocation"]
    expected = sorted(tuple(r[k] for k in key) for r in rows(whole))
    resumed([*command, "--out", str(out)], out, env, key, total=len(expected))
    assert sorted(tuple(r[k] for k in key) for r in rows(out)) == expected
