"""Distribution-shift study (PE paper Table 8): shifts, test sets, degradation, compare-pe runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.analysis.shift import (
    LOW_CAPACITY_SHARE,
    SHIFTS,
    CompareRun,
    compare_pe_rows,
    degradation,
    parse_shifts,
    search_rows,
    shifted_batch,
)
from routecli.errors import OptionError
from routecli.improve.model import DACT, DACTConfig, to_checkpoint
from routecli.train.checkpoint import save


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))


def fake_compare_run(folder, pes=("nope", "ipe_inv_xpe"), seeds=(0, 1), size=6, problem="cvrp"):
    """A compare-pe run folder with untrained models (what evaluation reads of one)."""
    (folder / "models").mkdir(parents=True)
    (folder / "protocol.json").write_text(json.dumps(
        {"problem": problem, "size": size, "backbone": "dact", "eval_steps": 3, "augment": 1,
         "test_size": 2, "test_seed": 11}))
    for pe in pes:
        for seed in seeds:
            torch.manual_seed(seed)
            model = DACT(DACTConfig(problem=problem, pe=pe, embed_dim=16, num_heads=2,
                                    num_layers=1, ff_dim=16, pe_dim=8))
            stem = folder / "models" / f"{pe.replace('_', '-')}-s{seed}"
            save(to_checkpoint(model), stem.with_suffix(".pt"))
            stem.with_suffix(".json").write_text(json.dumps({"pe": pe, "seed": seed}))
    return folder


def test_parse_shifts_puts_the_training_distribution_first():
    assert parse_shifts("all") == list(SHIFTS)
    assert parse_shifts("clustered, uniform,clustered") == ["uniform", "clustered"]
    with pytest.raises(OptionError, match="unknown shift 'spiral'"):
        parse_shifts("clustered,spiral")


def test_uniform_is_the_training_distribution_and_low_capacity_halves_it():
    same = shifted_batch("cvrp", 40, 3, 5, "uniform")
    training = generate.cvrp(3, 40, 5, capacity=None)
    for key in training:
        np.testing.assert_array_equal(same[key], training[key])
    low = shifted_batch("cvrp", 40, 3, 5, "low-capacity")
    np.testing.assert_array_equal(low["locs"], training["locs"])
    assert (low["capacity"] == math.floor(generate.pe_capacity(40) * LOW_CAPACITY_SHARE)).all()
    clustered = shifted_batch("vrptw", 40, 3, 5, "clustered")
    assert "ready" in clustered and not np.array_equal(clustered["locs"], training["locs"])
    with pytest.raises(OptionError, match="capacitated problem"):
        shifted_batch("tsp", 10, 1, 0, "uniform")


def test_degradation_per_instance_and_per_seed():
    rows = [{"shift": s, "method": "m", "instance": k, "cost": 1.0, "gap_pct": g}
            for s, gaps in (("uniform", [1.0, 3.0]), ("clustered", [4.0, 6.0]))
            for k, g in enumerate(gaps)]
    cell = degradation(rows, "method")["m"]["clustered"]
    assert (cell.gap, cell.change) == (5.0, 3.0)
    assert cell.gap_spread == pytest.approx(1.0)  # sd sqrt(2) over 2 instances
    assert cell.change_spread == pytest.approx(math.sqrt(2))
    seeds = [{"shift": s, "pe": "p", "seed": seed, "obj": 2.0, "gap_pct": g}
             for s, gaps in (("uniform", [1.0, 2.0, 3.0]), ("mixed", [2.0, 4.0, 6.0]))
             for seed, g in enumerate(gaps)]
    cell = degradation(seeds, "pe")["p"]["mixed"]
    assert cell.change == pytest.approx(2.0) and cell.change_spread == pytest.approx(1.0)
    assert degradation(seeds, "pe")["p"]["uniform"].change == 0.0


def test_search_rows_cover_every_shift_method_and_instance():
    rows = search_rows("cvrp", 8, 2, 0, ["uniform", "explosion"], ["random", "strings"],
                       iterations=2, ref_factor=0.01, log=lambda line: None)
    assert len(rows) == 2 * 2 * 3  # shifts x instances x (reference + methods)
    assert {r["method"] for r in rows} == {"reference", "random", "strings"}
    assert all(r["gap_pct"] == 0.0 for r in rows if r["method"] == "reference")
    assert all(math.isfinite(r["gap_pct"]) and r["cost"] > 0 for r in rows)


def test_compare_pe_models_are_evaluated_on_every_shift(tmp_path):
    run = CompareRun.read(fake_compare_run(tmp_path / "run"))
    assert (run.problem, run.size, len(run.models)) == ("cvrp", 6, 4)
    rows = compare_pe_rows(run, ["uniform", "low-capacity"], ["nope"], None, None, 0.01,
                           log=lambda line: None)
    assert [(r["shift"], r["pe"], r["seed"]) for r in rows] == [
        ("uniform", "nope", 0), ("uniform", "nope", 1),
        ("low-capacity", "nope", 0), ("low-capacity", "nope", 1)]
    assert all(r["gap_pct"] >= -1e-6 for r in rows)  # PyVRP is optimal at this size
    with pytest.raises(OptionError, match="no such model"):
        compare_pe_rows(run, ["uniform"], ["sin"], None, None, 0.01, log=lambda line: None)


def test_compare_pe_folders_are_checked(tmp_path):
    with pytest.raises(OptionError, match="no protocol.json"):
        CompareRun.read(tmp_path)
    empty = fake_compare_run(tmp_path / "empty", pes=())
    with pytest.raises(OptionError, match="no trained weights"):
        CompareRun.read(empty)
    (empty / "protocol.json").write_text(json.dumps({"problem": "pdtsp", "size": 21,
                                                     "backbone": "n2s"}))
    with pytest.raises(OptionError, match="N2S run on PDTSP"):
        CompareRun.read(empty)
    orphan = fake_compare_run(tmp_path / "orphan", pes=("nope",), seeds=(0,))
    (orphan / "models" / "nope-s0.json").unlink()
    with pytest.raises(OptionError, match="missing or unreadable"):
        CompareRun.read(orphan)


def test_depot_slots_grow_only_when_the_capacity_needs_them():
    from routecli.improve.env import depot_copies, depot_slots

    assert depot_slots("cvrp", shifted_batch("cvrp", 20, 4, 0, "uniform")) == depot_copies(20)
    low = shifted_batch("cvrp", 20, 4, 0, "low-capacity")
    loads = low["demand"].sum(1) / low["capacity"]
    assert depot_slots("cvrp", low) >= 2 * loads.max() + 1 > depot_copies(20)
    assert depot_slots("vrptw", shifted_batch("vrptw", 20, 2, 0, "low-capacity")) is None
