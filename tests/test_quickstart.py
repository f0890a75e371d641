"""The first commands of a fresh clone work on what the repository ships: routecli's own
generated demo instances (TSPLIB and CVRPLIB files are third-party and never committed)."""

import subprocess
from pathlib import Path

import pytest

from routecli.cli.app import main
from routecli.io import registry

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


@pytest.mark.parametrize("name, model", [("tsp-demo-50.tsp", "miloop"),
                                         ("cvrp-demo-50.vrp", "miloop")])
def test_the_quickstart_solves_the_shipped_demo_instances(name, model, capsys):
    assert main(["solve", str(DEMO / name), "--model", model]) == 0
    assert "feasible" in capsys.readouterr().out


def test_each_demo_instance_records_the_command_that_generated_it():
    for path in DEMO.glob("*-demo-*.*"):
        if path.suffix in (".tsp", ".vrp", ".kp"):
            comment = next(line for line in path.read_text().splitlines()
                           if line.startswith("COMMENT"))
            assert "routecli generate" in comment, path


def test_no_benchmark_set_file_is_committed():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    published = set(registry())  # every TSPLIB and CVRPLIB instance routecli knows by name
    shipped = [f for f in listed.stdout.splitlines()
               if Path(f).name.split(".")[0] in published]
    assert shipped == []
