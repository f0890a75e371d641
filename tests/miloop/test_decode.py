import pytest
import torch

from routecli import generate
from routecli.generate import batch_instances
from routecli.miloop.decode import decode, start_nodes, to_solution
from routecli.miloop.model import MiLoop, MiLoopConfig
from routecli.problems import validate


def model(problem):
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, layers=1)).eval()


def tensors(raw):
    return {k: torch.as_tensor(v) for k, v in raw.items()}


def test_start_nodes_distinct_and_customers_for_cvrp():
    assert start_nodes("tsp", 10, 100).tolist() == list(range(10))
    picks = start_nodes("cvrp", 21, 5)
    assert len(set(picks.tolist())) == 5 and int(picks.min()) >= 1 and int(picks.max()) <= 20


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_best_of_never_worse_than_its_subsets(problem):
    raw = generate.tsp(3, 10, 1) if problem == "tsp" else generate.cvrp(3, 10, 1)
    batch, policy = tensors(raw), model(problem)
    greedy = decode(policy, batch, "greedy")
    multi = decode(policy, batch, "multistart", starts=10)
    multi_aug = decode(policy, batch, "multistart", starts=10, augment=True, chunk=7)
    assert (multi_aug.cost <= multi.cost + 1e-5).all()
    if problem == "tsp":  # multi-start over all nodes includes greedy's start node 0
        assert (multi.cost <= greedy.cost + 1e-5).all()
    for inst, actions, cost in zip(batch_instances(problem, raw), multi_aug.actions,
                                   multi_aug.cost, strict=True):
        solution = to_solution(inst, actions)
        assert validate(inst, solution) == []
        assert abs(inst.cost(solution) - float(cost)) < 1e-4


def test_sampling_is_seeded():
    batch, policy = tensors(generate.tsp(2, 12, 3)), model("tsp")
    a = decode(policy, batch, "sampling", samples=4, generator=torch.Generator().manual_seed(7))
    b = decode(policy, batch, "sampling", samples=4, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a.cost, b.cost)


def test_unknown_decode_is_refused():
    with pytest.raises(ValueError, match="unknown decode"):
        decode(model("tsp"), tensors(generate.tsp(1, 5, 0)), "beam")


@pytest.mark.parametrize("method", ["greedy", "multistart"])
def test_candidates_covering_all_nodes_reproduce_full_tsp_decoding(method):
    batch, policy = tensors(generate.tsp(1, 30, 4)), model("tsp")
    full = decode(policy, batch, method, starts=5, augment=True)
    limited = decode(policy, batch, method, starts=5, augment=True, candidates=30)
    assert torch.equal(full.actions[0], limited.actions[0])
    assert torch.equal(full.cost, limited.cost)


def test_candidates_covering_all_nodes_reproduce_full_cvrp_decoding_when_all_fit():
    # with room for every customer the feasible set is the whole candidate set A_t
    raw = generate.cvrp(1, 25, 6)
    raw["capacity"] = raw["demand"].sum(1).astype(raw["capacity"].dtype)
    batch, policy = tensors(raw), model("cvrp")
    full = decode(policy, batch, "multistart", starts=4)
    limited = decode(policy, batch, "multistart", starts=4, candidates=400)
    assert torch.equal(full.actions[0], limited.actions[0])


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_small_candidate_sets_still_give_feasible_solutions(problem):
    raw = generate.tsp(1, 60, 8) if problem == "tsp" else generate.cvrp(1, 60, 8)
    batch, policy = tensors(raw), model(problem)
    result = decode(policy, batch, "multistart", starts=3, augment=True, candidates=5, chunk=4)
    inst = batch_instances(problem, raw)[0]
    solution = to_solution(inst, result.actions[0])
    assert validate(inst, solution) == []
    assert abs(inst.cost(solution) - float(result.cost[0])) < 1e-4


def test_candidate_decoding_takes_one_instance():
    with pytest.raises(ValueError, match="one instance"):
        decode(model("tsp"), tensors(generate.tsp(2, 10, 0)), "greedy", candidates=5)


def test_progress_reports_increasing_shares():
    seen = []
    decode(model("tsp"), tensors(generate.tsp(1, 600, 2)), "greedy", candidates=8,
           progress=seen.append)
    assert seen == sorted(seen) and len(seen) == 2 and 0 < seen[0] < seen[-1] <= 1


def test_deadline_pace_starts_with_one_rollout_grows_and_fits_the_time_left(monkeypatch):
    import routecli.miloop.decode as decode_module
    from routecli.miloop.decode import DeadlinePace, DeadlinePassed

    clock = [0.0]
    monkeypatch.setattr(decode_module.time, "perf_counter", lambda: clock[0])
    pace = DeadlinePace(deadline=10.0, chunk=1024)
    assert pace.next_chunk(800) == 1  # a solution first, however short the limit
    clock[0] = 0.5
    pace.finished(1)  # 0.5 s a rollout
    assert pace.next_chunk(800) == 4  # at most four times the last chunk
    clock[0] = 1.5
    pace.finished(4)  # 0.25 s a rollout
    assert pace.next_chunk(800) == 16
    clock[0] = 9.0
    pace.finished(16)  # 1 s left, 0.47 s a rollout: two fit
    assert pace.next_chunk(800) == 2
    pace.check()  # before the deadline: go on
    clock[0] = 10.0
    assert pace.next_chunk(800) == 0
    with pytest.raises(DeadlinePassed):
        pace.check()
    assert DeadlinePace(None, 64).next_chunk(800) == 64


def test_a_stop_request_ends_a_watched_decode_only():
    from routecli.miloop.decode import DeadlinePace, DeadlinePassed
    from routecli.stop import clear_stop_request, request_stop

    request_stop()
    try:
        DeadlinePace(None, 64).check()  # training and evaluation decodes go on
        with pytest.raises(DeadlinePassed):
            DeadlinePace(None, 64, watched=True).check()
    finally:
        clear_stop_request()


@pytest.mark.parametrize(("problem", "instances"), [
    ("tsp", lambda: generate.tsp(1, 60, 1)), ("cvrp", lambda: generate.cvrp(1, 60, 1)),
    ("pdtsp", lambda: generate.pdtsp(1, 30, 1)), ("kp", lambda: generate.kp(1, 60, 1))])
def test_a_rollout_cut_by_the_deadline_is_finished_by_nearest_neighbour(problem, instances):
    from routecli.stop import MaxRuntime, Watch

    batch = tensors(instances())
    result = decode(model(problem), batch, "multistart", starts=8, watch=Watch(MaxRuntime(0)))
    assert result.finished == 0 and result.planned > 1 and result.completed > 0
    solution = to_solution(batch_instances(problem, instances())[0], result.actions[0])
    assert validate(batch_instances(problem, instances())[0], solution) == []
