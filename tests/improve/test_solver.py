"""``--model dact``: a compare-pe checkpoint behind the solver protocol."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.improve.model import DACT, DACTConfig, to_checkpoint
from routecli.improve.n2s import N2S, N2SConfig, n2s_checkpoint
from routecli.improve.train import generate_instances
from routecli.problems import Metric
from routecli.solvers import make_solver, run
from routecli.stop import MaxIterations, MaxRuntime
from routecli.train.checkpoint import CheckpointError, save

from .test_model import SMALL


def checkpoint(tmp_path, problem: str, backbone: str = "dact"):
    torch.manual_seed(0)
    if backbone == "n2s":
        return save(n2s_checkpoint(N2S(N2SConfig(pe="ipe_xpe", **SMALL))), tmp_path / "n2s.pt")
    model = DACT(DACTConfig(problem=problem, pe="ipe_xpe", **SMALL))
    return save(to_checkpoint(model), tmp_path / f"{problem}.pt")


@pytest.mark.parametrize(("problem", "size", "backbone"), [
    ("cvrp", 10, "dact"), ("vrptw", 8, "dact"), ("pdtsp", 11, "dact"), ("pdtsp", 11, "n2s")])
def test_solves_feasibly_and_ignores_the_instance_scale(tmp_path, problem, size, backbone):
    instance = batch_instances(problem, generate_instances(problem, size, 1, seed=3))[0]
    solver = make_solver("dact", checkpoint=str(checkpoint(tmp_path, problem, backbone)),
                         augment=True)
    result = run(solver, instance, seed=1, stop=MaxIterations(15))
    assert result.feasible, result.problems
    # the same instance 100 times larger (windows too) gives the same tour
    grown = dataclasses.replace(instance, metric=Metric("exact", coords=instance.metric.coords * 100))
    if problem == "vrptw":
        grown = dataclasses.replace(grown, ready=instance.ready * 100, due=instance.due * 100,
                                    service=instance.service * 100)
    big = run(solver, grown, seed=1, stop=MaxIterations(15))
    assert big.feasible and big.cost == pytest.approx(100 * result.cost, rel=1e-4)


def test_needs_a_checkpoint_of_the_instances_problem(tmp_path):
    instance = batch_instances("cvrp", generate_instances("cvrp", 8, 1, seed=0))[0]
    with pytest.raises(OptionError, match="--checkpoint"):
        run(make_solver("dact"), instance, stop=MaxIterations(2))
    solver = make_solver("dact", checkpoint=str(checkpoint(tmp_path, "pdtsp")))
    with pytest.raises(CheckpointError, match="PDTSP policy"):
        run(solver, instance, stop=MaxIterations(2))


def test_a_time_limit_stops_the_search(tmp_path):
    instance = batch_instances("cvrp", generate_instances("cvrp", 10, 1, seed=1))[0]
    solver = make_solver("dact", checkpoint=str(checkpoint(tmp_path, "cvrp")))
    seen: list[float] = []
    result = run(solver, instance, stop=MaxRuntime(0.0) | MaxIterations(50),
                 progress=lambda p: seen.append(p.best or np.inf))
    assert result.feasible and len(seen) <= 1  # stopped after the one move every search makes


def test_an_instance_needing_more_routes_than_training_had_depots_is_solved(tmp_path):
    # DACT's rate gives CVRP-100 20 depot slots; a tight capacity needs 26+ routes (X-n101-k25)
    instance = batch_instances("cvrp", generate_instances("cvrp", 100, 1, seed=0))[0]
    tight = dataclasses.replace(instance, capacity=int(sum(instance.demands) / 26))
    solver = make_solver("dact", checkpoint=str(checkpoint(tmp_path, "cvrp")))
    result = run(solver, tight, stop=MaxIterations(3))
    assert result.feasible and len(result.solution.routes) >= 26
