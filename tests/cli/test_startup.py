"""Start-up (issue 15, item 14): ``routecli --help`` and ``routecli info`` must not pay for
torch, matplotlib, PyVRP or scipy; ``solve -m nn`` must not load torch. These are tests about
imports, checked in a fresh interpreter; ``benchmarks/bench_startup.py`` measures the time."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "matplotlib", "pyvrp", "scipy", "numba")


def loaded_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_library():
    assert loaded_after("import routecli.cli.app") == []


def test_help_loads_no_heavy_library():
    code = "from routecli.cli.app import main\nmain(['--help'])\nmain(['solve', '-h'])"
    assert loaded_after(code) == []


def test_info_and_solve_with_nn_do_not_load_torch(data_dir):
    for argv in (["info", str(data_dir / "tiny.vrp")], ["solve", str(data_dir / "tiny.vrp"), "-m", "nn"]):
        loaded = loaded_after(f"from routecli.cli.app import main\nmain({argv!r})")
        assert "torch" not in loaded and "matplotlib" not in loaded and "pyvrp" not in loaded
