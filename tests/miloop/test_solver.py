import pytest
import torch

from routecli import generate
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.miloop.model import MiLoop, MiLoopConfig, to_checkpoint
from routecli.problems import Metric, TSPInstance
from routecli.solvers import make_solver, run
from routecli.stop import MaxIterations, MaxRuntime
from routecli.train.checkpoint import CheckpointError, save


@pytest.fixture
def checkpoints(tmp_path):
    paths = {}
    for problem in ("tsp", "cvrp"):
        torch.manual_seed(0)
        model = MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, layers=1))
        paths[problem] = tmp_path / f"{problem}.pt"
        save(to_checkpoint(model), paths[problem])
    return paths


@pytest.mark.parametrize("decode,augment", [("greedy", False), ("multistart", True),
                                            ("sampling", False)])
def test_registry_solver_returns_valid_solutions_on_instance_scale(checkpoints, decode, augment):
    raw = generate.cvrp(1, 12, seed=5)
    raw["locs"] = raw["locs"] * 1000.0  # file-like scale: the policy sees it normalised
    cvrp = batch_instances("cvrp", raw, rule="euc2d")[0]
    tsp = batch_instances("tsp", generate.tsp(1, 12, seed=5), rule="exact")[0]
    for inst, path in ((cvrp, checkpoints["cvrp"]), (tsp, checkpoints["tsp"])):
        solver = make_solver("miloop", decode=decode, starts=5, augment=augment,
                             checkpoint=str(path))
        result = run(solver, inst, seed=1)
        assert result.feasible, result.problems
        assert result.cost > 0


def test_checkpoint_of_the_wrong_problem_is_refused(checkpoints):
    solver = make_solver("miloop", checkpoint=str(checkpoints["cvrp"]))
    tsp = TSPInstance("t", Metric("exact", coords=torch.rand(6, 2).double().numpy()))
    with pytest.raises(CheckpointError, match="CVRP checkpoint"):
        solver.solve(tsp)


def test_candidate_count_is_automatic_above_1000_nodes_and_overridable():
    from routecli.miloop.solver import candidate_count

    assert candidate_count("tsp", 1000, None) is None
    assert candidate_count("tsp", 1001, None) == 200
    assert candidate_count("cvrp", 30001, None) == 400
    assert candidate_count("tsp", 50, 8) == 8
    assert candidate_count("tsp", 5000, 0) is None


def test_a_zero_time_limit_still_returns_one_finished_rollout(checkpoints):
    inst = batch_instances("tsp", generate.tsp(1, 12, seed=3), rule="exact")[0]
    solver = make_solver("miloop", decode="multistart", starts=4, augment=True,
                         checkpoint=str(checkpoints["tsp"]))
    result = run(solver, inst, seed=0, stop=MaxRuntime(0.0))
    assert result.feasible
    full = run(solver, inst, seed=0)
    assert full.cost <= result.cost + 1e-9  # all 32 rollouts can only do better than the first 4


def test_iteration_limits_and_bad_settings_are_refused(checkpoints):
    inst = batch_instances("tsp", generate.tsp(1, 8, seed=3), rule="exact")[0]
    solver = make_solver("miloop", checkpoint=str(checkpoints["tsp"]))
    with pytest.raises(OptionError, match="iteration limit"):
        solver.solve(inst, stop=MaxIterations(5))
    with pytest.raises(OptionError, match="--decode"):
        make_solver("miloop", decode="beam")
    with pytest.raises(OptionError, match="--device"):
        make_solver("miloop", device="tpu")


TIME_MARGIN = 1.0  # seconds past -t a decode may take on a busy machine (see DeadlinePace)


@pytest.mark.parametrize("decode", ["multistart", "sampling"])
def test_a_time_limit_is_honoured_within_the_margin(decode):
    """The shipped policy on the 50-node demo: 100 starts x 8 images take far longer than
    the limit, so the decode is cut, yet returns within limit + margin."""
    from routecli.io import read_instance
    from tests.conftest import DATA

    inst = read_instance(DATA.parents[1] / "data" / "demo" / "tsp-demo-50.tsp")
    solver = make_solver("miloop", decode=decode, starts=100, augment=decode == "multistart",
                         threads=1)
    result = run(solver, inst, seed=0, stop=MaxRuntime(1.5))
    assert result.feasible and result.seconds <= 1.5 + TIME_MARGIN
