"""The ``sisr`` solver through the registry and the validating runner."""

from __future__ import annotations

import pytest

from routecli.errors import OptionError
from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.io import read_instance
from routecli.solvers import REGISTRY, make_solver, run
from routecli.stop import DEFAULT_SECONDS, MaxIterations, MaxRuntime

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


def test_registered() -> None:
    assert REGISTRY["sisr"][0] == "routecli.search.solver"


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
@pytest.mark.parametrize("policy,polish", [("strings", False), ("random", True)])
def test_solves_tiny_generated_instances(problem: str, policy: str, polish: bool) -> None:
    inst = batch_instances(problem, GENERATORS[problem](1, 25, 0))[0]
    solver = make_solver("sisr", policy=policy, polish=polish)
    seen: list[float] = []
    result = run(solver, inst, seed=0, stop=MaxIterations(300),
                 progress=lambda p: seen.append(p.best))
    assert result.feasible, result.problems
    assert seen and result.cost <= seen[-1] + 1e-9  # polish may lower it further
    assert solver.last is not None and solver.last.iterations > 0


def test_settings_reach_the_search() -> None:
    solver = make_solver("sisr", rollouts=4, t_start=2.0)
    config = solver.settings.asa_config(MaxIterations(7))
    assert config.rollouts == 4 and config.t_start == 2.0
    assert config.stop == MaxIterations(7)
    assert solver.settings.asa_config(None).stop == MaxRuntime(DEFAULT_SECONDS)
    with pytest.raises(OptionError, match="model 'sisr' has no setting 'warp'"):
        make_solver("sisr", warp=9)
    with pytest.raises(OptionError, match="rollouts"):
        make_solver("sisr", rollouts=0)


def test_unknown_policy_fails_at_make() -> None:
    with pytest.raises(OptionError, match="--policy must be one of"):
        make_solver("sisr", policy="nope")


def test_cvrplib_instance_on_its_rounded_metric(benchdata) -> None:  # noqa: ANN001
    inst = read_instance(benchdata / "cvrplib" / "X" / "X-n101-k25.vrp")
    result = run(make_solver("sisr"), inst, seed=0, stop=MaxIterations(3000), bks=27591)
    assert result.feasible
    assert result.cost == int(result.cost)  # integer edges under euc2d
    assert 0.0 <= result.gap < 5.0
