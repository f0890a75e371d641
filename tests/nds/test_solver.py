"""``--model nds``: checkpoint selection and checks, controls, valid solutions, progress."""

from __future__ import annotations

import pytest
import torch

from routecli import generate
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.nds.policy import NDSConfig, NDSPolicy, to_checkpoint
from routecli.nds.removal import HybridRemoval, LearnedRemoval
from routecli.nds.solver import default_checkpoint
from routecli.solvers import make_solver, run
from routecli.stop import MaxIterations
from routecli.train.checkpoint import CheckpointError
from routecli.train.checkpoint import save as save_checkpoint

SMALL = {"embed_dim": 32, "num_heads": 4, "num_layers": 1, "ff_dim": 64, "pe_dim": 16,
         "poly_dim": 32}


def save(tmp_path, problem="cvrp", pe="ipe_inv_xpe"):
    torch.manual_seed(0)
    path = tmp_path / f"nds-{problem}-{pe}.pt"
    save_checkpoint(to_checkpoint(NDSPolicy(NDSConfig(problem=problem, pe=pe, **SMALL))), path)
    return str(path)


def instance(problem="cvrp", n=25):
    return batch_instances(problem, getattr(generate, problem)(1, n, 1, capacity=None))[0]


def solver(**kw):
    return make_solver("nds", rollouts=8, remove=5, **kw)


def test_default_checkpoints_follow_problem_and_pe():
    assert default_checkpoint("cvrp").name == "nds-cvrp.pt"
    assert default_checkpoint("cvrp", "IPE-INV+XPE").name == "nds-cvrp.pt"
    assert default_checkpoint("cvrp", "rope").name == "nds-cvrp-rope.pt"
    assert default_checkpoint("vrptw", "ipe_xpe").name == "nds-vrptw.pt"


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_learned_search_returns_valid_solutions_and_reports_progress(tmp_path, problem):
    pe = "ipe_inv_xpe" if problem == "cvrp" else "ipe_xpe"
    nds = solver(checkpoint=save(tmp_path, problem, pe))
    seen = []
    result = run(nds, instance(problem), seed=1, stop=MaxIterations(20),
                 progress=lambda p: seen.append(p.best))
    assert result.feasible, result.problems
    assert seen and seen == sorted(seen, reverse=True) and seen[-1] == pytest.approx(result.cost)
    assert nds.last.iterations == 20


def test_the_paper_variant_is_the_published_search(tmp_path):
    nds = make_solver("nds", checkpoint=save(tmp_path))
    settings = nds.settings
    assert (settings.variant, settings.images, settings.rollouts, settings.remove,
            settings.precision) == ("paper", 8, 64, 15, "auto")
    policy = nds.policy("cvrp")
    assert isinstance(policy, LearnedRemoval) and policy.augment and policy.precision == "auto"
    config = settings.asa_config(MaxIterations(5))
    assert (config.rollouts, config.remove) == (64, 15)


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_the_hybrid_returns_valid_solutions_and_runs_its_learned_iterations(tmp_path, problem):
    pe = "ipe_inv_xpe" if problem == "cvrp" else "ipe_xpe"
    nds = solver(checkpoint=save(tmp_path, problem, pe), variant="hybrid", every=20, images=1,
                 precision="bf16")
    result = run(nds, instance(problem, 40), seed=2, stop=MaxIterations(2100))
    assert result.feasible, result.problems
    assert nds.last.iterations == 2100
    policy = nds.policy(problem)
    assert isinstance(policy, HybridRemoval) and policy.every == 20
    assert policy.calls == 2100 // 21
    assert 1 <= policy.learned.encodings <= policy.calls  # reused when the strings moved nothing
    config = nds.settings.asa_config(MaxIterations(5))
    assert (config.rollouts, config.remove) == (1, 10)  # its string iterations are sisr's


def test_random_control_needs_no_checkpoint():
    control = solver(policy="random")
    assert control.name == "nds-random"
    assert run(control, instance(), stop=MaxIterations(20)).feasible


def test_checkpoint_for_another_problem_is_refused(tmp_path):
    nds = solver(checkpoint=save(tmp_path, "vrptw", "ipe_xpe"))
    with pytest.raises(CheckpointError, match="NDS-VRPTW checkpoint"):
        nds.solve(instance("cvrp"), stop=MaxIterations(1))


def test_pe_must_match_the_checkpoint(tmp_path):
    nds = solver(checkpoint=save(tmp_path), pe="rope")
    with pytest.raises(CheckpointError, match="trained with PE 'ipe_inv_xpe'"):
        nds.solve(instance(), stop=MaxIterations(1))


def test_bad_options_are_refused_early(tmp_path):
    with pytest.raises(OptionError, match="unknown positional encoding"):
        solver(pe="nonsense")
    with pytest.raises(OptionError, match="--policy"):
        solver(policy="greedy")
    with pytest.raises(OptionError, match="images"):
        solver(images=3)
    with pytest.raises(OptionError, match="variant"):
        solver(variant="fast")
    with pytest.raises(OptionError, match="every"):
        solver(variant="hybrid", every=0)
    with pytest.raises(CheckpointError, match="not found"):
        solver(checkpoint=str(tmp_path / "missing.pt")).solve(instance(), stop=MaxIterations(1))


def test_the_learned_policy_refuses_instances_beyond_its_size_and_strings_take_them(
        tmp_path, monkeypatch):
    from routecli.nds import solver as nds_solver
    from routecli.solvers import require_problem

    monkeypatch.setattr(nds_solver, "LEARNED_MAX_NODES", 20)
    with pytest.raises(OptionError, match="26 nodes; the learned policy takes at most 20"):
        require_problem(solver(checkpoint=save(tmp_path)), instance())
    control = solver(policy="strings")
    require_problem(control, instance())
    assert run(control, instance(), stop=MaxIterations(20)).feasible
