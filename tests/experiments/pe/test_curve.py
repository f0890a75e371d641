"""Learning curves of the PE comparison: a training run stopped after any epoch and resumed from
its saved state ends with the weights of an uninterrupted run; curves advance round-robin and
resume from their folder, after a kill too; the committed curve of the first layout reports as
before and resumes in the store's."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
import torch

from routecli.experiments.pe import curve
from routecli.experiments.pe.protocol import make_protocol
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.train import PPOConfig, train
from routecli.results import PROVENANCE
from tests.improve.test_model import SMALL

CFG = PPOConfig(epochs=3, batches=2, batch_size=3, t_train=4, n_step=2, curriculum=2,
                lr_actor=1e-3, lr_critic=1e-3)


def test_a_resumed_run_ends_with_the_weights_of_an_uninterrupted_one():
    torch.manual_seed(0)
    straight = DACT(DACTConfig(**SMALL))
    interrupted = DACT(DACTConfig(**SMALL))
    interrupted.load_state_dict(straight.state_dict())
    train(straight, "cvrp", 8, CFG, seed=4)

    saved: dict = {}

    def stop_after_first(state: dict) -> bool:
        buffer = io.BytesIO()  # the state goes through a weights-only save and load
        torch.save({"model": interrupted.state_dict(), "state": state}, buffer)
        buffer.seek(0)
        saved.update(torch.load(buffer, weights_only=True))
        return False

    train(interrupted, "cvrp", 8, CFG, seed=4, after_epoch=stop_after_first)
    assert saved["state"]["epoch"] == 1
    resumed = DACT(DACTConfig(**SMALL))
    resumed.load_state_dict(saved["model"])
    train(resumed, "cvrp", 8, CFG, seed=4, resume=saved["state"])
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
    assert not all(torch.equal(a, b) for a, b in zip(
        straight.state_dict().values(), interrupted.state_dict().values(), strict=True))


def rows(path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_curves_advance_round_robin_stop_on_their_budget_and_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    protocol = curve.validation_protocol(
        make_protocol("cvrp", 8, "dact", "smoke:epochs=2,eval_steps=5"), val_size=3)
    assert protocol.test_seed != make_protocol("cvrp", 8, "dact", "smoke").test_seed
    plan = curve.CurvePlan(protocol, ("nope", "xpe"), (0,), val_every=1)
    out = tmp_path / "curve"
    quiet = {"log": lambda line: None, "progress": False}
    assert not curve.run_curves(plan, out, cpu_minutes=0, **quiet)  # nothing trained yet
    assert not (out / "curve.csv").exists()
    assert curve.run_curves(plan, out, **quiet)
    done = [(r["pe"], int(r["epoch"])) for r in rows(out / "curve.csv")]
    assert done == [("nope", 1), ("xpe", 1), ("nope", 2), ("xpe", 2)]  # the least trained first
    assert all(float(r["val_gap_pct"]) >= -1e-6 for r in rows(out / "curve.csv"))
    state = torch.load(curve.state_path(out, "xpe", 0), weights_only=True)["train_state"]
    assert state["epoch"] == 2 and state["cpu_seconds"] > 0
    assert curve.run_curves(plan, out, **quiet)  # complete: nothing more is trained
    assert len(rows(out / "curve.csv")) == 4
    text = curve.curve_markdown(out, "t")
    assert "| nope | 2 | 1 |" in text and "| xpe | 1 | 1 |" in text
    curve.curve_plot(out, tmp_path / "curve.png", "t")
    assert (tmp_path / "curve.png").stat().st_size > 0


class Killed(Exception):
    """A kill, at the point the test chooses."""


def test_a_curve_killed_between_its_row_and_its_state_resumes_to_the_same_numbers(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    protocol = curve.validation_protocol(
        make_protocol("cvrp", 8, "dact", "smoke:epochs=2,eval_steps=5"), val_size=3)
    plan = curve.CurvePlan(protocol, ("nope",), (0,), val_every=1)
    quiet = {"log": lambda line: None, "progress": False}
    assert curve.run_curves(plan, tmp_path / "straight", **quiet)
    out = tmp_path / "killed"
    save = curve.ckpt.save

    def killed(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(curve.ckpt, "save", killed)  # epoch 1's row stored, its state not
    with pytest.raises(Killed):
        curve.run_curves(plan, out, **quiet)
    with open(out / "curve.csv", "a") as handle:
        handle.write("abc,2024-01-01T00:00:00Z,pe_curve.py,nope,0,2,8,0.")  # a torn row
    monkeypatch.setattr(curve.ckpt, "save", save)
    assert curve.epochs_done(out, "nope", 0) == 1
    assert curve.run_curves(plan, out, **quiet)  # epoch 1 again from the seed, row not repeated

    def numbers(folder: Path) -> list[tuple[str, ...]]:
        return [(r["pe"], r["seed"], r["epoch"], r["val_obj"], r["val_gap_pct"])
                for r in curve.read_curve(folder)]

    assert numbers(out) == numbers(tmp_path / "straight")
    assert [n[2] for n in numbers(out)] == ["1", "2"]


COMMITTED = Path(__file__).parents[3] / "data/runs/pe_curve/cvrp20-cpu-e60"
REPORT = Path(__file__).parents[3] / "benchmarks/results/pe_curve_cvrp20_cpu_e60.md"


def test_the_committed_curve_of_the_first_layout_reports_as_before_and_resumes_in_the_store(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "curve"
    out.mkdir()
    shutil.copy(COMMITTED / "curve.csv", out / "curve.csv")
    original = (out / "curve.csv").read_bytes()
    assert original.split(b"\r\n")[0].decode().split(",") == [*curve.CURVE_FIELDS, "commit"]
    committed = REPORT.read_text().split("\nRows: ")[0]
    title = committed.splitlines()[0].removeprefix("# ")
    assert curve.curve_markdown(out, title) == committed  # the report, read as it is
    assert (out / "curve.csv").read_bytes() == original  # reading rewrites nothing
    # a resumed run (another pair, a smoke budget) migrates the file and appends in the store
    protocol = curve.validation_protocol(
        make_protocol("cvrp", 8, "dact", "smoke:eval_steps=5"), val_size=3)
    plan = curve.CurvePlan(protocol, ("xpe",), (0,), val_every=1)
    assert curve.run_curves(plan, out, log=lambda line: None, progress=False)
    assert "rewrote its 38 rows" in capsys.readouterr().err
    after = rows(out / "curve.csv")
    with open(out / "curve.csv", newline="") as handle:
        assert next(csv.reader(handle)) == [*PROVENANCE, *curve.CURVE_FIELDS]
    old = list(csv.DictReader(io.StringIO(original.decode())))
    assert [{k: r[k] for k in old[0]} for r in after[:-1]] == old  # every value kept
    assert all(r["date"] == r["command"] == "" for r in after[:-1])  # not recorded then
    new = after[-1]
    assert (new["pe"], new["epoch"]) == ("xpe", "1") and new["commit"] and new["date"]
    report = curve.curve_markdown(out, title)
    assert "".join(line + "\n" for line in report.splitlines() if "| xpe |" not in line) \
        == committed
