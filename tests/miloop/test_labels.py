import numpy as np
import pytest

from routecli.baselines.reference import ReferenceBudget
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
