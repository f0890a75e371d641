"""Decoding PDTSP (pickup starts, x8 augmentation, candidate sets) and knapsacks (densest
fitting first items), and the ``--model miloop`` solver on both."""

from __future__ import annotations

import pytest
import torch

from routecli import generate
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.miloop.decode import decode, first_items, start_nodes, to_solution
from routecli.miloop.model import MiLoop, MiLoopConfig, to_checkpoint
from routecli.miloop.solver import candidate_count
from routecli.problems import validate
from routecli.solvers import make_solver, run
from routecli.train.checkpoint import save


def model(problem: str) -> MiLoop:
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem=problem, dim=16, ff_dim=32, layers=1)).eval()


def tensors(raw):
    return {k: torch.as_tensor(v) for k, v in raw.items()}


def test_pdtsp_starts_are_distinct_pickups():
    picks = start_nodes("pdtsp", 21, 100)  # 10 pickups
    assert picks.tolist() == list(range(1, 11))
    assert len(set(start_nodes("pdtsp", 201, 7).tolist())) == 7


def test_kp_first_items_are_the_densest_that_fit():
    batch = {"weights": torch.tensor([[0.5, 3.0, 0.2, 0.4]]), "values": torch.tensor([[0.5, 9.0, 0.1, 0.8]]),
             "capacity": torch.tensor([1.0])}
    assert first_items(batch, 2).tolist() == [[3, 0]]  # item 1 is densest but too heavy
    assert first_items(batch, 10).shape == (1, 3)


def test_pdtsp_best_of_is_feasible_and_never_worse():
    raw = generate.pdtsp(3, 12, seed=1)
    batch, policy = tensors(raw), model("pdtsp")
    greedy = decode(policy, batch, "greedy")
    multi = decode(policy, batch, "multistart", starts=6)
    multi_aug = decode(policy, batch, "multistart", starts=6, augment=True, chunk=5)
    assert (multi_aug.cost <= multi.cost + 1e-5).all()
    for inst, g, actions, cost in zip(batch_instances("pdtsp", raw), greedy.actions,
                                      multi_aug.actions, multi_aug.cost, strict=True):
        assert validate(inst, to_solution(inst, g)) == []
        solution = to_solution(inst, actions)
        assert validate(inst, solution) == []
        assert abs(inst.cost(solution) - float(cost)) < 1e-4


def test_pdtsp_small_candidate_sets_stay_feasible():
    raw = generate.pdtsp(1, 80, seed=3)
    result = decode(model("pdtsp"), tensors(raw), "multistart", starts=3, augment=True,
                    candidates=3, chunk=4)
    inst = batch_instances("pdtsp", raw)[0]
    assert validate(inst, to_solution(inst, result.actions[0])) == []
    assert candidate_count("pdtsp", 1001, None) is None  # PDTSP-1000: 1000 paired nodes
    assert candidate_count("pdtsp", 1003, None) == 200


def test_kp_decoding_keeps_the_most_valuable_rollout():
    raw = generate.kp(3, 40, seed=2, capacity=10)
    batch, policy = tensors(raw), model("kp")
    greedy = decode(policy, batch, "greedy")
    multi = decode(policy, batch, "multistart", starts=8)
    sampled = decode(policy, batch, "sampling", samples=4, generator=torch.Generator().manual_seed(0))
    for b, inst in enumerate(batch_instances("kp", raw)):
        for result in (greedy, multi, sampled):
            solution = to_solution(inst, result.actions[b])
            assert validate(inst, solution) == []
            assert inst.cost(solution) == pytest.approx(-float(result.cost[b]), rel=1e-5)
    with pytest.raises(ValueError, match="no symmetric images"):
        decode(policy, batch, "greedy", augment=True)


@pytest.mark.parametrize("decode_method", ["greedy", "multistart", "sampling"])
def test_solver_on_pdtsp_and_kp_files(tmp_path, data_dir, decode_method):
    from routecli.io import read_instance

    for problem, file in (("pdtsp", "tiny_pdtsp.vrp"), ("kp", "tiny.kp")):
        path = tmp_path / f"{problem}.pt"
        save(to_checkpoint(model(problem)), path)
        solver = make_solver("miloop", decode=decode_method, starts=4, checkpoint=str(path),
                             augment=problem == "pdtsp" and decode_method == "multistart")
        result = run(solver, read_instance(data_dir / file), seed=1)
        assert result.feasible, result.problems
        assert result.cost > 0


def test_kp_refuses_augment_and_candidates(tmp_path, data_dir):
    from routecli.io import read_instance

    path = tmp_path / "kp.pt"
    save(to_checkpoint(model("kp")), path)
    inst = read_instance(data_dir / "tiny.kp")
    with pytest.raises(OptionError, match="--augment applies to routing"):
        run(make_solver("miloop", augment=True, checkpoint=str(path)), inst)
    with pytest.raises(OptionError, match="--candidates applies to routing"):
        run(make_solver("miloop", candidates=5, checkpoint=str(path)), inst)
