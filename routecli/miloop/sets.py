"""The instance sets MiLoop's numbers come from, named so that every result row says which one
it used, and kept apart so that a reported gap never comes from instances that chose it.

- ``labels`` (seed :data:`routecli.miloop.labels.LABEL_SEED`): the supervised stages' training
  instances (:class:`routecli.miloop.labels.LabelStore`).
- ``validation`` (:attr:`routecli.miloop.train.TrainConfig.val_seed`): a run's validation
  during training; it picks ``best.pt``.
- ``development``: the 128 instances per size on which checkpoints, recipes and settings are
  compared (and were compared before the split existed: ``benchmarks/results/miloop_eval.jsonl``).
- ``test``: read only for final reports of the weights a development comparison chose; nothing
  is tuned on it.

``tests/miloop/test_sets.py`` checks that no ``test`` instance is in another set.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from routecli import generate

EvaluationSet = Literal["development", "test"]
EVALUATION_SETS: tuple[EvaluationSet, ...] = get_args(EvaluationSet)
SEEDS: dict[EvaluationSet, int] = {"development": 2026, "test": 20_261_207}
SIZE = 128  # instances per evaluation set and problem size


def evaluation_batch(problem: str, size: int, name: EvaluationSet, num: int = SIZE
                     ) -> dict[str, np.ndarray]:
    """The first ``num`` instances of evaluation set ``name`` (uniform TSP, or CVRP with the
    paper's capacity 50) of ``size`` nodes (CVRP: customers)."""
    if name not in SEEDS:
        raise ValueError(f"evaluation set must be one of {', '.join(EVALUATION_SETS)}, "
                         f"not {name!r}")
    seed = SEEDS[name]
    if problem == "tsp":
        return generate.tsp(num, size, seed)
    if problem == "cvrp":
        return generate.cvrp(num, size, seed)
    raise ValueError(f"the evaluation sets are TSP and CVRP, not {problem!r}")
