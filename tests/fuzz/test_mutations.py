"""150 fixed mutations of real benchmark files (tests/fuzz/mutations.py) through the
reader and ``routecli info``: no traceback, every error one line, nothing the readers must reject
accepted. The full harness (``solve`` and the other strategies too) is
``python benchmarks/fuzz_inputs.py``."""

import numpy as np
import pytest

from routecli.errors import MAX_MESSAGE, RoutecliError
from routecli.io import best_known, read_instance
from tests.fuzz import mutations as harness

CASES = 150


@pytest.mark.slow
def test_mutated_benchmark_files_never_escape_as_tracebacks(benchdata, tmp_path, capsys):
    from routecli.cli.app import main

    seeds = harness.load_seeds(benchdata)
    picks = np.random.default_rng(15).integers(len(seeds), size=CASES)
    outcomes = {"valid": 0, "clean error": 0}
    for case, k in enumerate(picks):
        data, mutations = harness.mutate(seeds[k], np.random.default_rng([15, case]))
        path = tmp_path / f"case{case}" / seeds[k].name
        path.parent.mkdir()
        path.write_bytes(data)
        label = f"case {case}: {seeds[k].name} {'+'.join(mutations)}"
        try:
            instance = read_instance(path)
        except RoutecliError as exc:
            assert "\n" not in str(exc) and len(str(exc)) <= MAX_MESSAGE, label
            outcomes["clean error"] += 1
        else:
            reason = harness.must_reject(data.decode("utf-8", "replace"))
            assert reason is None, f"{label}: accepted although {reason}"
            best_known(instance, path)
            outcomes["valid"] += 1
        code = main(["info", str(path)])
        err = capsys.readouterr().err
        assert code in (0, 2), label
        assert err.count("\n") == (code == 2), f"{label}: {err[:300]!r}"
    assert outcomes["valid"] >= 5 and outcomes["clean error"] >= 100, outcomes  # both happen
