"""Run folders shared by the comparison's tests; one torch thread, as for the models'."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import single_torch_thread

one_thread = pytest.fixture(autouse=True)(single_torch_thread)


def comparison_folder(path: Path, gaps: dict[str, list[float]], instances: int = 4,
                      teacher: tuple[float, float] | None = None) -> None:
    """A compare-pe run folder whose (PE, seed) rows have these gaps, every instance costing
    ``1 + gap / 100 + instance / 1000`` against a reference of 1; with ``teacher`` (gap %,
    share of instances at the reference), its imitation labeller's row."""
    if teacher is not None:
        from routecli.experiments.pe.pairs import baseline_store

        baseline_store(path).add(row="epsilon-teacher", epsilon=0.25, obj=1 + teacher[0] / 100,
                                 gap_pct=teacher[0], at_reference=teacher[1], eval_seconds=0)
    with open(path / "reference.csv", "w") as handle:
        handle.write("instance,cost\n" + "".join(f"{i},1.0\n" for i in range(instances)))
    with open(path / "rows.csv", "w") as rows, open(path / "costs.csv", "w") as costs:
        rows.write("pe,seed,obj,gap_pct,train_seconds,eval_seconds,parameters\n")
        costs.write("pe,seed,instance,cost\n")
        for pe, values in gaps.items():
            for seed, gap in enumerate(values):
                rows.write(f"{pe},{seed},{1 + gap / 100},{gap},0,0,0\n")
                costs.write("".join(f"{pe},{seed},{i},{1 + gap / 100 + i / 1000}\n"
                                    for i in range(instances)))
