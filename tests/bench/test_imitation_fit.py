"""benchmarks/imitation_fit.py on a tiny protocol: its labelled states are the library's, its
rows resume, and its report reads them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from routecli.improve.imitation import ImitationConfig, label_states
from routecli.improve.train import generate_instances
from routecli.results import read_csv

ROOT = Path(__file__).parents[2]


def validation_folder(folder: Path) -> Path:
    """A pe_curve-like validation set: 2 CVRP-6 instances, 2 evaluation steps."""
    folder.mkdir()
    batch = generate_instances("cvrp", 6, 2, seed=5)
    np.savez(folder / "test.npz", problem=np.array("cvrp"), **batch)
    (folder / "reference.csv").write_text("cost\n4.0\n4.0\n")
    (folder / "protocol.json").write_text(json.dumps({"eval_steps": 2, "test_seed": 3}))
    return folder


def run(out: Path, validation: Path, *extra: str) -> None:
    command = [sys.executable, "benchmarks/imitation_fit.py", "--out", str(out),
               "--validation", str(validation), "--size", "6", "--instances", "6",
               "--held-out", "2", "--trajectory", "6", "--keep-every", "1", "--batch", "4",
               "--eval-every", "2", "--pe", "ipe_inv_xpe", *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)


def test_states_rows_resume_and_report(tmp_path):
    validation = validation_folder(tmp_path / "val")
    out = tmp_path / "fit"
    run(out, validation, "--updates", "2", "--target", "ties", "--train-states", "improvable")
    run(out, validation, "--updates", "4", "--target", "ties", "--train-states", "improvable",
        "--final-eval", "2x1,2x2")
    rows = read_csv(out / "curve.csv")
    final = read_csv(out / "final.csv")
    assert [(r["update"], r["eval_steps"], r["augment"]) for r in final] == \
        [("4", "2", "1"), ("4", "2", "2")]
    assert [int(r["update"]) for r in rows] == [2, 4]  # the rerun resumed, nothing twice
    assert all(0.0 <= float(r[k]) <= 1.0 for r in rows for k in ("teacher", "tie", "improves"))

    states = torch.load(out / "states.pt", weights_only=True)  # the library's labels
    again = label_states("cvrp", 6, ImitationConfig(instances=6, trajectory=6, keep_every=1,
                                                    batch=4), seed=0)
    assert all(torch.equal(states[k], again[k]) for k in ("instance", "order", "target", "ties"))

    stem = tmp_path / "report"
    subprocess.run([sys.executable, "benchmarks/imitation_fit.py", "--report", str(stem),
                    "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    text = stem.with_suffix(".md").read_text()
    assert "| ipe_inv_xpe | 4 |" in text and "| ipe_inv_xpe | 4 | 2 x 2 |" in text
    assert stem.with_suffix(".png").stat().st_size > 0


def test_other_settings_in_the_same_folder_are_refused(tmp_path):
    validation = validation_folder(tmp_path / "val")
    out = tmp_path / "fit"
    run(out, validation, "--updates", "2")
    failed = subprocess.run([sys.executable, "benchmarks/imitation_fit.py", "--out", str(out),
                             "--validation", str(validation), "--size", "6", "--instances", "6",
                             "--held-out", "2", "--trajectory", "6", "--lr", "0.1"],
                            cwd=ROOT, capture_output=True, text=True)
    assert failed.returncode != 0 and "other settings" in failed.stderr
