"""The options of solve and bench (routecli.cli.model_options): resource options accepted by
every model, model options refused by models without them, one-line errors for values that
used to give tracebacks or never end."""

from __future__ import annotations

import json

import pytest
import torch

from routecli.cli.app import main
from routecli.improve.model import DACT, DACTConfig, to_checkpoint
from routecli.resources import cores
from routecli.solvers import REGISTRY
from routecli.train.checkpoint import save

RESOURCES = ["--threads", "1", "--device", "cpu", "--seed", "7"]


def one_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    return err


CASES = [  # every model of the registry, with --time-limit (dact: below, it needs weights)
    ("nn", "tiny.vrp", ["--time-limit", "1"]),
    ("hgs", "tiny.vrp", ["--time-limit", "1", "--iterations", "20"]),
    ("sisr", "tiny.vrp", ["--time-limit", "1", "--iterations", "20"]),
    ("nds", "tiny.vrp", ["--time-limit", "5", "--iterations", "2"]),
    ("miloop", "tiny.tsp", ["--time-limit", "5"]),
    ("exact", "tiny.kp", ["--time-limit", "5"]),
]


def test_the_resource_cases_cover_every_model():
    assert {model for model, _, _ in CASES} | {"dact"} == set(REGISTRY)


@pytest.mark.parametrize("model, instance, limit", CASES)
def test_every_model_takes_the_resource_options(data_dir, capsys, model, instance, limit):
    argv = ["solve", str(data_dir / instance), "-m", model, "--json", *RESOURCES, *limit]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["feasible"] and row["seed"] == 7 and row["model"].startswith(model)


def test_dact_takes_them_too_and_asks_only_for_its_checkpoint(data_dir, tmp_path, capsys):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "dact", *RESOURCES]) == 2
    assert "needs --checkpoint" in one_error(capsys)
    torch.manual_seed(0)
    tiny = {"embed_dim": 16, "num_heads": 4, "num_layers": 1, "ff_dim": 16, "pe_dim": 8}
    weights = save(to_checkpoint(DACT(DACTConfig(problem="cvrp", pe="ipe_xpe", **tiny))),
                   tmp_path / "cvrp.pt")
    argv = ["solve", str(data_dir / "tiny.vrp"), "-m", "dact", "--checkpoint", str(weights),
            "--json", *RESOURCES, "--time-limit", "5", "--iterations", "5"]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["feasible"] and row["seed"] == 7 and row["model"].startswith("dact")


@pytest.mark.parametrize("model", ["hgs", "sisr", "nn"])
@pytest.mark.parametrize("seed", ["-5", "-1", str(2**32), str(2**64)])
def test_seeds_outside_32_bits_are_one_line(data_dir, capsys, model, seed):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", model, "--seed", seed]) == 2
    assert "--seed must be an integer from 0 to 4,294,967,295, got" in one_error(capsys)


@pytest.mark.parametrize("model", ["hgs", "sisr"])
@pytest.mark.parametrize("limit", ["inf", "nan", "1e300", "-1"])
def test_time_limits_that_never_end_are_refused(data_dir, capsys, model, limit):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", model, "-t", limit]) == 2
    assert "--time-limit must be a number from 0 to 604800, got" in one_error(capsys)


@pytest.mark.parametrize("model", ["sisr", "hgs", "nn"])
def test_json_reports_the_search_time_apart_from_the_whole_solve(data_dir, capsys, model):
    # the limit bounds the search; loading, compiling and --polish come on top of it in the
    # solve, start-up and reading in the command's time (seconds)
    extra = ["--iterations", "20", "--polish"] if model == "sisr" else \
        ["--iterations", "20"] if model == "hgs" else []
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", model, "--json", *extra]) == 0
    row = json.loads(capsys.readouterr().out)
    assert 0 <= row["search_seconds"] <= row["solve_seconds"] <= row["seconds"]


@pytest.mark.parametrize("argv, message", [
    (["--threads", str(cores() + 1)], "--threads must be between 1 and"),
    (["--threads", "0"], "--threads must be an integer from 1 to 1,024, got '0'"),
    (["--iterations", "0"], "--iterations must be an integer from 1 to 9,223,372,036,854,775,807"),
    (["--iterations", str(2**70)], "--iterations must be an integer from 1 to 9,223,372,036,"),
    (["--no-improvement", "0"], "--no-improvement must be an integer from 1 to 9,223,372,036,"),
    (["--device", "gpu"], "--device must be auto, cpu, cuda or cuda:N"),
])
def test_bad_resource_and_stop_values_are_one_line(data_dir, capsys, argv, message):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "sisr", *argv]) == 2
    assert message in one_error(capsys)


def test_a_huge_candidate_count_is_one_line_and_a_large_one_decodes_all_nodes(data_dir, capsys):
    tsp = str(data_dir / "tiny.tsp")
    assert main(["solve", tsp, "-m", "miloop", "--candidates", str(10**12)]) == 2
    assert "--candidates must be an integer from 0 to 1,000,000, got" in one_error(capsys)
    assert main(["solve", tsp, "-m", "miloop", "--candidates", "5000", "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["solve", tsp, "-m", "miloop", "--candidates", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == full["cost"]


def test_precision_is_a_miloop_option_recorded_in_the_result(data_dir, capsys):
    tsp = str(data_dir / "tiny.tsp")
    assert main(["solve", tsp, "-m", "miloop", "--precision", "bf16", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["feasible"] and result["settings"]["precision"] == "bf16"
    assert main(["solve", tsp, "-m", "nn", "--precision", "bf16"]) == 2
    assert "--precision does not apply to model 'nn'" in one_error(capsys)


def test_no_improvement_stops_a_search_deterministically(data_dir, capsys):
    argv = ["solve", str(data_dir / "tiny.vrp"), "-m", "hgs", "--no-improvement", "30", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == first["cost"]
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "miloop", "--no-improvement", "3"]) == 2
    assert "constructive" in one_error(capsys)


def test_bench_takes_the_options_solve_takes(data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["bench", str(data_dir / "tiny.vrp"), "-o", str(out), "-m", "sisr", "--iterations",
            "5", "--polish", "--no-improvement", "100", *RESOURCES]
    assert main(argv) == 0, capsys.readouterr().err
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 7 and run["settings"]["polish"] is True
    assert run["stop"] == {"seconds": None, "iterations": 5, "no_improvement": 100}
