import pytest
import torch

from routecli import generate
from routecli.generate import batch_instances
from routecli.models.miloop import MiLoop, MiLoopConfig
from routecli.problems import Metric, TSPInstance
from routecli.solvers import SolveOptions, make_solver, run
from routecli.train.checkpoint import atomic_save, policy_checkpoint


@pytest.fixture
def checkpoints(tmp_path):
    paths = {}
    for problem in ("tsp", "cvrp"):
        torch.manual_seed(0)
        model = MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, layers=1))
        paths[problem] = tmp_path / f"{problem}.pt"
        atomic_save(policy_checkpoint(model), paths[problem])
    return paths


@pytest.mark.parametrize("decode,augment", [("greedy", False), ("multistart", True),
                                            ("sampling", False)])
def test_registry_solver_returns_valid_solutions_on_instance_scale(checkpoints, decode, augment):
    raw = generate.cvrp(1, 12, seed=5)
    raw["locs"] = raw["locs"] * 1000.0  # file-like scale: the policy sees it normalised
    cvrp = batch_instances("cvrp", raw, rule="euc2d")[0]
    tsp = batch_instances("tsp", generate.tsp(1, 12, seed=5), rule="exact")[0]
    for inst, path in ((cvrp, checkpoints["cvrp"]), (tsp, checkpoints["tsp"])):
        solver = make_solver("miloop", SolveOptions(decode=decode, starts=5, augment=augment,
                                                    checkpoint=str(path)))
        result = run(solver, inst, seed=1)
        assert result.feasible, result.problems
        assert result.cost > 0


def test_checkpoint_of_the_wrong_problem_is_refused(checkpoints):
    solver = make_solver("miloop", SolveOptions(checkpoint=str(checkpoints["cvrp"])))
    tsp = TSPInstance("t", Metric("exact", coords=torch.rand(6, 2).double().numpy()))
    with pytest.raises(ValueError, match="CVRP checkpoint"):
        solver.solve(tsp)


def test_candidate_count_is_automatic_above_1000_nodes_and_overridable():
    from routecli.models.miloop_solver import candidate_count

    assert candidate_count("tsp", 1000, None) is None
    assert candidate_count("tsp", 1001, None) == 200
    assert candidate_count("cvrp", 30001, None) == 400
    assert candidate_count("tsp", 50, 8) == 8
    assert candidate_count("tsp", 5000, 0) is None
