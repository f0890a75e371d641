"""solve and bench take one options object (routecli.cli.model_options.RunOptions), so a
user reads the same entry in both helps, defaults included."""

from __future__ import annotations

import re

from routecli.cli.app import main
from routecli.cli.model_options import model_option_flags


def help_entries(capsys, command: str) -> dict[str, str]:
    """Each option's help entry, flags and text on one line, by its long flag."""
    assert main([command, "-h"]) == 0
    options = capsys.readouterr().out.split("\nOptions:\n")[1]
    entries = re.split(r"\n(?=  -)", options.strip("\n"))
    return {re.search(r"--[\w-]+", entry).group(): " ".join(entry.split()) for entry in entries}


def test_solve_and_bench_show_every_run_option_alike(capsys):
    solve, bench = help_entries(capsys, "solve"), help_entries(capsys, "bench")
    flags = model_option_flags()
    assert len(flags) >= 15
    for flag in flags:
        assert solve[flag] == bench[flag], flag
    assert solve["--model"].endswith("[default: hgs]")
