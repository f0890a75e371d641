"""``benchmarks/gpu_check.py`` end to end on the CPU (run as a script: tests import nothing
from benchmarks/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
MODELS = ["MiLoop TSP", "MiLoop CVRP", "MiLoop PDTSP", "MiLoop KP", "NDS CVRP",
          "compare-pe DACT CVRP", "compare-pe N2S PDTSP"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_quick_cpu_check_trains_and_decodes_every_model(tmp_path):
    out = tmp_path / "check.md"
    result = run("--device", "cpu", "--quick", "--threads", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ") and
            not line.startswith("| model")]
    assert [r.split(" | ")[0][2:].rsplit("-", 1)[0] for r in rows] == MODELS
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[1]) > 0 and float(cells[2]) > 0  # steps/s, decode calls/s
        assert cells[-1] == "yes"


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
def test_missing_cuda_is_one_line_and_exit_2():
    result = run("--device", "cuda", "--quick")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "CUDA is not available" in result.stderr
