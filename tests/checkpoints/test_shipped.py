"""Every shipped checkpoint loads (digest checked) and solves a demo file, validated."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from routecli.io import read_instance
from routecli.solvers import make_solver, run
from routecli.stop import MaxIterations
from routecli.train.checkpoint import load

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
SHIPPED = sorted(p.name for p in resources.files("routecli.checkpoints").iterdir()
                 if p.name.endswith(".pt"))
DEMO_FILE = {"tsp": "tsp-demo-50.tsp", "cvrp": "cvrp-demo-50.vrp",
             "vrptw": "vrptw-demo-50.vrp", "pcvrp": "pcvrp-demo-50.vrp",
             "pdtsp": "pdtsp-demo-50.vrp", "kp": "kp-demo-200.kp"}


def test_the_expected_checkpoints_ship_with_model_cards() -> None:
    assert SHIPPED == ["miloop-cvrp.pt", "miloop-kp.pt", "miloop-pdtsp.pt", "miloop-tsp.pt",
                       "nds-cvrp.pt", "nds-pcvrp.pt", "nds-vrptw.pt"]
    cards = {p.name for p in resources.files("routecli.checkpoints").iterdir()}
    assert all(name.replace(".pt", ".md") in cards for name in SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_checkpoint_loads_and_solves_its_demo(name: str) -> None:
    path = resources.files("routecli.checkpoints") / name
    kind, problem = name.removesuffix(".pt").split("-")
    data = load(Path(str(path)), kind)
    assert data["config"]["problem"] == problem and data["meta"]
    instance = read_instance(DEMO / DEMO_FILE[problem])
    solver = (make_solver("miloop", threads=1) if kind == "miloop"
              else make_solver("nds", threads=1, rollouts=8))
    result = run(solver, instance, seed=0, stop=None if kind == "miloop" else MaxIterations(5))
    assert result.feasible, result.problems
    assert result.model == kind
