import pytest

from routecli import generate as gen
from routecli.solvers import REGISTRY, SolveOptions, UnknownSolverError, make_solver, run


def test_every_registered_model_builds():
    for name in REGISTRY:
        assert make_solver(name).name == name


def test_unknown_model_and_unsupported_problem_are_user_errors():
    with pytest.raises(UnknownSolverError, match="unknown model 'nope'"):
        make_solver("nope")
    kp = gen.batch_instances("kp", gen.kp(1, 10, seed=0))[0]
    with pytest.raises(UnknownSolverError, match="does not solve KP"):
        run(make_solver("nn"), kp)


def test_run_recosts_validates_and_computes_the_gap():
    inst = gen.batch_instances("cvrp", gen.cvrp(1, 20, seed=0))[0]
    result = run(make_solver("nn"), inst, bks=1.0)
    assert result.feasible and result.problems == []
    assert result.cost == inst.cost(result.solution)
    assert result.gap == pytest.approx(100 * (result.cost - 1.0))


def test_threads_option_sets_torch_threads():
    import torch

    before = torch.get_num_threads()
    try:
        make_solver("nn", SolveOptions(threads=1))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
