"""``--model nds``: checkpoint selection and checks, controls, valid solutions, progress."""

from __future__ import annotations

import pytest
import torch

from routecli import generate
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.models.nds import NDSConfig, NDSPolicy, policy_checkpoint
from routecli.models.nds_solver import default_checkpoint
from routecli.solvers import SolveOptions, make_solver, run

SMALL = {"embed_dim": 32, "num_heads": 4, "num_layers": 1, "ff_dim": 64, "pe_dim": 16,
         "poly_dim": 32}


def save(tmp_path, problem="cvrp", pe="ipe_inv_xpe"):
    torch.manual_seed(0)
    path = tmp_path / f"nds-{problem}-{pe}.pt"
    torch.save(policy_checkpoint(NDSPolicy(NDSConfig(problem=problem, pe=pe, **SMALL))), path)
    return str(path)


def instance(problem="cvrp", n=25):
    return batch_instances(problem, getattr(generate, problem)(1, n, 1, capacity=None))[0]


def options(**kw):
    return SolveOptions(extra={"rollouts": "8", "remove": "5"}, **kw)


def test_default_checkpoints_follow_problem_and_pe():
    assert default_checkpoint("cvrp").name == "nds-cvrp.pt"
    assert default_checkpoint("cvrp", "IPE-INV+XPE").name == "nds-cvrp.pt"
    assert default_checkpoint("cvrp", "rope").name == "nds-cvrp-rope.pt"
    assert default_checkpoint("vrptw", "ipe_xpe").name == "nds-vrptw.pt"


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_learned_search_returns_valid_solutions_and_reports_progress(tmp_path, problem):
    pe = "ipe_inv_xpe" if problem == "cvrp" else "ipe_xpe"
    solver = make_solver("nds", options(checkpoint=save(tmp_path, problem, pe)))
    seen = []
    solver.on_improve = lambda sec, best: seen.append(best)
    result = run(solver, instance(problem), seed=1, time_limit=0.5)
    assert result.feasible, result.problems
    assert seen and seen == sorted(seen, reverse=True) and seen[-1] == pytest.approx(result.cost)
    assert solver.last.iterations >= 1


def test_random_control_needs_no_checkpoint():
    result = run(make_solver("nds", options(policy="random")), instance(), time_limit=0.3)
    assert result.feasible


def test_checkpoint_for_another_problem_is_refused(tmp_path):
    solver = make_solver("nds", options(checkpoint=save(tmp_path, "vrptw", "ipe_xpe")))
    with pytest.raises(OptionError, match="NDS-VRPTW checkpoint"):
        solver.solve(instance("cvrp"), time_limit=0.1)


def test_pe_must_match_the_checkpoint(tmp_path):
    solver = make_solver("nds", options(checkpoint=save(tmp_path), pe="rope"))
    with pytest.raises(OptionError, match="trained with PE 'ipe_inv_xpe'"):
        solver.solve(instance(), time_limit=0.1)


def test_bad_options_are_refused_early(tmp_path):
    with pytest.raises(OptionError, match="unknown positional encoding"):
        make_solver("nds", options(pe="nonsense"))
    with pytest.raises(OptionError, match="--policy"):
        make_solver("nds", options(policy="greedy"))
    with pytest.raises(OptionError, match="images"):
        make_solver("nds", SolveOptions(extra={"images": "3"}))
    with pytest.raises(OptionError, match="not found"):
        make_solver("nds", options(checkpoint=str(tmp_path / "missing.pt"))).solve(
            instance(), time_limit=0.1)
