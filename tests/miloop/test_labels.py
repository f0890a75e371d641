from importlib.util import find_spec

import numpy as np
import pytest

from routecli.baselines.reference import ReferenceBudget
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.miloop import labels
from routecli.miloop.labels import LabelStore
from routecli.problems import Tour, check

BUDGET = ReferenceBudget(iterations=20, no_improvement=20)


def test_store_labels_only_missing_chunks_and_reads_back_feasible_solutions(tmp_path, monkeypatch):
    calls = []
    original = labels.reference_solutions

    def counted(instances, *args, **kwargs):
        calls.append(len(instances))
        return original(instances, *args, **kwargs)

    monkeypatch.setattr(labels, "reference_solutions", counted)
    store = LabelStore(tmp_path, "cvrp", "mixed", 8, BUDGET, chunk=4)
    pool = store.ensure(6, progress=False)
    assert calls == [4, 4] and len(pool) == 8 and store.chunks() == [0, 1]
    assert store.ensure(8, progress=False) is not None and calls == [4, 4]  # nothing new
    for instance, solution in zip(batch_instances("cvrp", pool.raw), pool.solutions, strict=True):
        check(instance, solution)
    again = LabelStore(tmp_path, "cvrp", "mixed", 8, BUDGET, chunk=4).load(limit=4)
    assert len(again) == 4
    assert np.array_equal(again.raw["locs"], pool.raw["locs"][:4])


def test_a_chunk_whose_instances_no_longer_regenerate_is_refused(tmp_path):
    store = LabelStore(tmp_path, "tsp", "uniform", 6, BUDGET, chunk=2)
    store.label_chunk(0)
    assert all(isinstance(s, Tour) for s in store.read_chunk(0).solutions)
    moved = LabelStore(tmp_path, "tsp", "uniform", 6, BUDGET, seed=1, chunk=2)
    moved.folder.mkdir(parents=True)
    store.chunk_path(0).rename(moved.chunk_path(0))
    with pytest.raises(ValueError, match="no longer regenerate"):
        moved.read_chunk(0)


def test_equivalent_actions_at_a_cvrp_route_start_are_the_ends_of_routes_not_yet_started():
    import torch

    from routecli.problems import Routes

    solution = Routes([[1, 2, 3], [4], [5, 6]])
    seq = labels.label_sequences("cvrp", [solution], np.random.default_rng(0))  # [1, T]
    sets = labels.equivalent_actions("cvrp", seq, 7)
    path = seq[0].tolist()
    routes = []
    for t, node in enumerate(path):
        if node and path[t - 1] == 0:
            routes.append([t])
        if node:
            routes[-1].append(node)
    for r, (start, *nodes) in enumerate(routes):
        later = {end for _, *rest in routes[r:] for end in (rest[0], rest[-1])}
        assert set(torch.nonzero(sets[0, start])[:, 0].tolist()) == later
        for offset in range(1, len(nodes)):  # inside a route: the label's action alone
            assert torch.nonzero(sets[0, start + offset])[:, 0].tolist() == [nodes[offset]]
    depot_steps = [t for t, node in enumerate(path) if node == 0]
    assert all(torch.nonzero(sets[0, t])[:, 0].tolist() == [0] for t in depot_steps)


def test_equivalent_actions_of_a_tour_are_both_neighbours_of_its_start_then_the_label():
    seq = labels.label_sequences("tsp", [Tour(np.array([0, 3, 1, 4, 2]))],
                                 np.random.default_rng(1))
    sets = labels.equivalent_actions("tsp", seq, 5)
    tour = seq[0].tolist()
    assert set(sets[0, 1].nonzero()[:, 0].tolist()) == {tour[1], tour[-1]}
    assert all(sets[0, t].nonzero()[:, 0].tolist() == [tour[t]] for t in range(2, 5))
    assert labels.equivalent_actions("pdtsp", seq, 5) is None


needs_elkai = pytest.mark.skipif(find_spec("elkai") is None, reason='pip install -e ".[lkh]"')


@needs_elkai
def test_an_lkh_store_holds_valid_tours_in_its_own_folder_and_labels_each_chunk_once(
        tmp_path, monkeypatch):
    calls = []
    original = labels.lkh_tour

    def counted(xy, runs):
        calls.append(len(xy))
        return original(xy, runs)

    monkeypatch.setattr(labels, "lkh_tour", counted)
    store = LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, chunk=3, labeller="lkh")
    assert store.folder != LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, chunk=3).folder
    assert "lkh" in store.folder.name
    pool = store.ensure(5, progress=False)
    assert calls == [9] * 6 and len(pool) == 6
    for instance, solution in zip(batch_instances("tsp", pool.raw), pool.solutions, strict=True):
        check(instance, solution)
    again = LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, chunk=3, labeller="lkh")
    assert len(again.ensure(6, progress=False)) == 6 and len(calls) == 6  # read, not relabelled
    assert LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, labeller="lkh").chunk == \
        labels.LKH_CHUNK


def test_lkh_labels_only_tsp_and_needs_elkai(tmp_path, monkeypatch):
    with pytest.raises(OptionError, match="TSP instances only"):
        LabelStore(tmp_path, "cvrp", "uniform", 9, BUDGET, labeller="lkh")
    with pytest.raises(OptionError, match="choose pyvrp, lkh"):
        LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, labeller="concorde")  # type: ignore[arg-type]
    monkeypatch.setattr("routecli.baselines.lkh.find_spec", lambda name: None)
    with pytest.raises(OptionError, match=r'pip install -e "\.\[lkh\]"'):
        LabelStore(tmp_path, "tsp", "uniform", 9, BUDGET, labeller="lkh")
