"""The test set's instances appear in no set that trained or chose a model: the label stores
committed in data/labels, the validation set of training, the development set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from routecli.miloop.labels import LABEL_CHUNK, LABEL_SEED, chunk_seed, training_batch
from routecli.miloop.sets import EVALUATION_SETS, SEEDS, evaluation_batch
from routecli.miloop.train import TrainConfig, validation_batch

LABELS = Path(__file__).parents[2] / "data" / "labels"


def keys(locs: np.ndarray) -> set[bytes]:
    """One key per instance: its coordinates, exactly."""
    return {np.ascontiguousarray(instance).tobytes() for instance in locs}


def label_store_instances(problem: str, size: int) -> list[np.ndarray]:
    """The coordinates of every committed label chunk of ``problem`` and ``size`` (their
    instances regenerate from (seed, chunk), as LabelStore reads them)."""
    found = []
    for folder in LABELS.glob(f"{problem}-*-{size}-s{LABEL_SEED}-*"):
        distribution = folder.name.split("-")[1]
        chunk_size = int(folder.name.rsplit("-c", 1)[1]) if "-c" in folder.name else LABEL_CHUNK
        for path in folder.glob("chunk-*.npz"):
            chunk = int(path.stem.split("-")[1])
            found.append(training_batch(problem, distribution, size, chunk_size,
                                        chunk_seed(LABEL_SEED, chunk))["locs"])
    return found


@pytest.mark.parametrize("problem", ["tsp", "cvrp"])
def test_no_test_instance_is_in_a_set_that_trained_or_chose_a_model(problem):
    test = keys(evaluation_batch(problem, 100, "test")["locs"])
    assert len(test) == 128
    development = keys(evaluation_batch(problem, 100, "development")["locs"])
    validation = keys(validation_batch(TrainConfig(problem=problem))["locs"])
    stores = label_store_instances(problem, 100)
    assert stores, "the committed label stores of size 100 were not found"
    labelled = set().union(*(keys(locs) for locs in stores))
    assert not test & development and not test & validation and not test & labelled
    assert len(SEEDS) == len(EVALUATION_SETS) == len(set(SEEDS.values()))
