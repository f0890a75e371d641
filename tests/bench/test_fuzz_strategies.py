"""A few cases of each fuzz strategy (routecli/bench/fuzz/strategies.py) run in-process through
the harness's classification: no traceback, no unclean error, nothing invalid accepted, nothing
valid rejected. ``seeds`` is left to the full run (``python benchmarks/fuzz_inputs.py``): its
hgs and sisr runs take seconds each."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.bench.fuzz.harness import BAD, capture, classify
from routecli.bench.fuzz.mutations import load_seeds
from routecli.bench.fuzz.strategies import STRATEGIES, Run
from routecli.cli.app import main

CASES = 4


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(STRATEGIES) - {"seeds"}))
def test_every_strategy_runs_clean(benchdata, tmp_path, name):
    seeds = load_seeds(benchdata)
    for number in range(CASES):
        case = STRATEGIES[name](np.random.default_rng([7, number]), seeds)
        folder = tmp_path / f"case{number}"
        folder.mkdir()
        for file, data in case.files.items():
            (folder / file).write_bytes(data)
        for run in case.runs:
            result = capture(main, [a.replace("{dir}", str(folder)) for a in run.argv])
            outcome, detail = classify(run, result, folder, case)
            assert outcome not in BAD, (name, case.detail, run.argv, outcome, detail)


def test_the_oracle_finds_what_it_is_for(tmp_path):
    """classify() counts a refused valid input, an accepted invalid one, and non-strict JSON."""
    from routecli.bench.fuzz.strategies import Case

    case = Case("t", {}, [], "")
    ok = {"code": 0, "stdout": '{"gap_pct": NaN}\n', "stderr": "", "exception": "", "seconds": 0}
    assert classify(Run(["solve", "--json"], "accept"), ok, tmp_path, case)[0] == "invalid accepted"
    refused = {**ok, "code": 2, "stdout": "", "stderr": "error: x\n"}
    assert classify(Run(["info"], "accept"), refused, tmp_path, case)[0] == "valid input rejected"
    assert classify(Run(["info"], "reject"), refused, tmp_path, case)[0] == "clean error"
    assert classify(Run(["info"], "reject"), {**ok, "stdout": ""}, tmp_path,
                    case)[0] == "invalid accepted"
    infeasible = {**ok, "code": 1, "stdout": ""}
    assert classify(Run(["validate"], "infeasible"), infeasible, tmp_path,
                    case)[0] == "infeasible reported"
    crashed = {**ok, "exception": "Traceback ...\nOverflowError: x"}
    assert classify(Run(["info"], "any"), crashed, tmp_path, case) == ("traceback",
                                                                      "OverflowError: x")
