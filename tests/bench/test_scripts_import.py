"""Every benchmark script imports: a name moved inside routecli breaks a script no other test
runs (the scripts are entry points, run by hand or in the background for hours)."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).parents[2] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_the_script_imports(script, monkeypatch):
    name = f"benchmark_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)  # runs the imports, not main (each script is guarded)
    assert callable(getattr(module, "main", None))
