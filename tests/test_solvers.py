from pathlib import Path

import pytest

from routecli import generate as gen
from routecli.errors import OptionError
from routecli.solvers import (
    REGISTRY,
    Progress,
    UnknownSolverError,
    make_settings,
    make_solver,
    run,
    settings_type,
)
from routecli.stop import MaxIterations, MaxRuntime


def test_every_registered_model_builds_from_its_default_settings():
    for name in REGISTRY:
        assert make_solver(name).name == name
        assert isinstance(make_settings(name), settings_type(name))


def test_unknown_model_and_unsupported_problem_are_user_errors():
    with pytest.raises(UnknownSolverError, match="unknown model 'nope'"):
        make_solver("nope")
    kp = gen.batch_instances("kp", gen.kp(1, 10, seed=0))[0]
    with pytest.raises(UnknownSolverError, match="does not solve KP"):
        run(make_solver("sisr"), kp)  # nn solves knapsacks (value/weight greedy)


COMMAND_OPTIONS = {"decode": None, "starts": None, "augment": False, "pe": None, "polish": False}


def test_an_option_the_model_does_not_take_is_refused_by_its_flag_name():
    with pytest.raises(OptionError, match="--decode does not apply to model 'nn'"):
        make_settings("nn", {**COMMAND_OPTIONS, "decode": "sampling"})
    with pytest.raises(OptionError, match="--pe does not apply to model 'miloop'"):
        make_settings("miloop", {**COMMAND_OPTIONS, "pe": "ipe"})
    with pytest.raises(OptionError, match="--augment does not apply to model 'sisr'"):
        make_settings("sisr", {**COMMAND_OPTIONS, "augment": True})


def test_a_refusal_lists_every_option_the_model_has_on_the_command_line():
    # sisr's settings also hold rollouts, remove, t_start...: not options of the command;
    # the list is the model's, whichever options this command call happened to pass
    with pytest.raises(OptionError) as err:
        make_settings("sisr", {**COMMAND_OPTIONS, "decode": "greedy"})
    assert str(err.value).endswith("(its own options: --init, --policy, --polish)")
    with pytest.raises(OptionError) as err:
        make_settings("miloop", {"policy": "strings", "augment": False})
    assert str(err.value).endswith("(its own options: --decode, --starts, --augment, "
                                   "--checkpoint, --candidates, --precision)")
    with pytest.raises(OptionError, match=r"its own options: --init\)$"):
        make_settings("hgs", {**COMMAND_OPTIONS, "starts": 5})
    with pytest.raises(OptionError, match=r"its own options: none\)$"):
        make_settings("nn", {**COMMAND_OPTIONS, "starts": 5})


def test_resources_apply_to_every_model():
    for name in REGISTRY:
        settings = make_settings(name, COMMAND_OPTIONS, resources={"threads": 1, "device": "cpu"})
        assert isinstance(settings, settings_type(name))
        if hasattr(settings, "threads"):
            assert settings.threads == 1


def test_library_settings_are_checked_by_name():
    with pytest.raises(OptionError, match="model 'sisr' has no setting 'warp'"):
        make_settings("sisr", warp=9)
    assert make_settings("sisr", rollouts=3).rollouts == 3


def test_settings_of_another_model_are_a_type_error():
    with pytest.raises(TypeError, match="takes Settings"):
        make_solver("nn", make_settings("sisr"))


def test_stop_rejects_negative_budgets():
    with pytest.raises(OptionError):
        MaxRuntime(-1)
    with pytest.raises(OptionError):
        MaxIterations(0)


def test_run_recosts_validates_and_computes_the_gap():
    inst = gen.batch_instances("cvrp", gen.cvrp(1, 20, seed=0))[0]
    result = run(make_solver("nn"), inst, bks=1.0)
    assert result.feasible and result.problems == []
    assert result.cost == inst.cost(result.solution)
    assert result.gap == pytest.approx(100 * (result.cost - 1.0))


def test_hgs_reports_its_best_cost_as_it_improves():
    inst = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=2))[0]
    seen: list[Progress] = []
    result = run(make_solver("hgs"), inst, seed=1, stop=MaxIterations(200),
                 progress=seen.append)
    assert result.feasible
    bests = [p.best for p in seen]
    assert bests and bests == sorted(bests, reverse=True)


def test_threads_setting_sets_torch_threads():
    import torch

    before = torch.get_num_threads()
    try:
        make_solver("miloop", threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_knapsack_gap_is_the_share_of_the_best_value_missed():
    kp = gen.batch_instances("kp", gen.kp(1, 50, seed=1, capacity=10))[0]
    best = run(make_solver("exact"), kp)
    greedy = run(make_solver("nn"), kp, bks=best.cost)
    assert best.feasible and greedy.feasible and greedy.cost <= best.cost
    assert greedy.gap == pytest.approx(100 * (best.cost - greedy.cost) / best.cost)
    assert run(make_solver("exact"), kp, bks=best.cost).gap == 0.0


# --------------------------------------------------------------------------------------------
# every model, every distance rule: a feasible solution (a bug in one rule's translation, such
# as hgs scaling distances but not loads, shows up as an infeasible solution here)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted(p for p in (ROOT / "data" / "demo").iterdir()
                  if p.suffix in (".tsp", ".vrp", ".kp")) + \
    sorted(p for p in (ROOT / "tests" / "data").glob("tiny*") if p.suffix != ".sol")
# small budgets: feasibility, not quality, is under test
BUDGETS = {"hgs": MaxIterations(50), "sisr": MaxIterations(300), "nds": MaxIterations(10),
           "dact": MaxIterations(10)}


@pytest.fixture(scope="module")
def improvement_checkpoints(tmp_path_factory):
    """Untrained compare-pe policies (their moves are feasible by construction)."""
    import torch

    from routecli.improve.env import PROBLEMS
    from routecli.improve.model import DACT, DACTConfig, to_checkpoint
    from routecli.train.checkpoint import save

    from .improve.test_model import SMALL

    folder = tmp_path_factory.mktemp("dact")
    torch.manual_seed(0)
    return {p: str(save(to_checkpoint(DACT(DACTConfig(problem=p, pe="ipe_xpe", **SMALL))),
                        folder / f"{p}.pt")) for p in PROBLEMS}


def every_customer_servable(instance) -> bool:
    """Whether a route depot -> i -> depot on time serves each customer alone (a VRPTW whose
    distance rule stretches travel past the windows has no feasible solution to find)."""
    import numpy as np

    from routecli.problems import VRPTWInstance

    if not isinstance(instance, VRPTWInstance):
        return True
    customers = np.arange(1, instance.metric.size)
    out = instance.metric.pairs(np.zeros_like(customers), customers)
    back = instance.metric.pairs(customers, np.zeros_like(customers))
    start = np.maximum(instance.ready[0] + out, instance.ready[1:])
    return bool(np.all((start <= instance.due[1:])
                       & (start + instance.service[1:] + back <= instance.due[0])))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_model_is_feasible_under_every_distance_rule(path, improvement_checkpoints):
    from routecli.cli.choices import ROUND
    from routecli.errors import InstanceFormatError
    from routecli.io import read_instance

    rules = ["file"] if path.suffix == ".kp" else ROUND
    failures = []
    for rule in rules:
        try:
            instance = read_instance(path, rule)
        except InstanceFormatError:  # coordinates the rule cannot take (GEO beyond 90 degrees)
            continue
        if not every_customer_servable(instance):  # under GEO, tiny_solomon's km break windows
            continue
        for name in REGISTRY:
            solver = make_solver(name, make_settings(name, {}, resources={"threads": 1}))
            if instance.problem not in solver.problems:
                continue
            if name == "dact":
                solver = make_solver(name, threads=1,
                                     checkpoint=improvement_checkpoints[instance.problem])
            result = run(solver, instance, seed=0, stop=BUDGETS.get(name))
            if not result.feasible:
                failures.append(f"{name} --round {rule}: {'; '.join(result.problems[:2])}")
    assert failures == []


def test_every_command_line_option_a_model_declares_is_a_setting_of_that_model():
    from dataclasses import fields as settings_fields

    from routecli.solvers import cli_options, settings_type

    for setting, offers in cli_options().items():
        assert len({option.kind for _, option in offers}) == 1, setting
        for model, option in offers:
            assert setting in {f.name for f in settings_fields(settings_type(model))}, (model,
                                                                                        setting)
            assert option.help and not option.help.endswith("."), (model, setting)


@pytest.mark.parametrize("model", ["hgs", "sisr"])
def test_a_search_reports_its_improvement_trajectory_ending_at_the_returned_cost(model):
    from routecli.generate import GENERATORS, batch_instances
    from routecli.solvers import make_solver, run
    from routecli.stop import MaxIterations

    instance = batch_instances("cvrp", GENERATORS["cvrp"](1, 30, 0), rule="euc2d")[0]
    result = run(make_solver(model), instance, seed=0, stop=MaxIterations(300))
    times = [t for t, _ in result.trajectory]
    costs = [c for _, c in result.trajectory]
    assert len(costs) >= 2 and times == sorted(times) and times[-1] <= result.seconds
    assert all(a > b for a, b in zip(costs, costs[1:]))  # improvements only
    assert costs[-1] == result.cost


def test_a_construction_reports_no_trajectory(data_dir):
    from routecli.io import read_instance
    from routecli.solvers import make_solver, run

    assert run(make_solver("nn"), read_instance(data_dir / "tiny.vrp")).trajectory == ()


def test_a_warm_start_must_read_and_fit_the_instance(tmp_path, data_dir):
    from routecli.io import read_instance, write_solution
    from routecli.problems import Routes
    from routecli.solvers import read_start

    inst = read_instance(data_dir / "tiny.vrp")
    good = Routes([[3, 2, 5], [1, 4]])
    write_solution(tmp_path / "good.sol", inst, good)
    assert [list(r) for r in read_start(inst, tmp_path / "good.sol").routes] == [[3, 2, 5], [1, 4]]
    with pytest.raises(OptionError, match="--init .*missing.sol: no such file"):
        read_start(inst, tmp_path / "missing.sol")
    (tmp_path / "junk.sol").write_text("Route #1: 1 x 2\n")
    with pytest.raises(OptionError, match="--init .*junk.sol"):
        read_start(inst, tmp_path / "junk.sol")
    write_solution(tmp_path / "short.sol", inst, Routes([[3, 2, 5]]))
    with pytest.raises(OptionError, match="short.sol is not a feasible solution of .*: "):
        read_start(inst, tmp_path / "short.sol")


def test_the_up_front_check_refuses_a_bad_warm_start_before_solving(tmp_path, data_dir):
    from routecli.io import read_instance
    from routecli.solvers import require_problem

    inst = read_instance(data_dir / "tiny.vrp")
    for model in ("sisr", "nds", "hgs"):
        solver = make_solver(model, init=str(tmp_path / "missing.sol"))
        with pytest.raises(OptionError, match="no such file"):
            require_problem(solver, inst)
