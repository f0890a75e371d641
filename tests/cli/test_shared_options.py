"""The model options of ``solve`` and ``bench`` are declared once (routecli.cli.common), so a
user reads the same entry in both helps; only --model's default differs."""

from __future__ import annotations

import re

from routecli.cli.app import main

SHARED = ("--time-limit", "--iterations", "--seed", "--round", "--decode", "--starts",
          "--augment", "--checkpoint", "--candidates", "--pe", "--policy", "--polish",
          "--threads")


def help_entries(capsys, command: str) -> dict[str, str]:
    """Each option's help entry, flags and text on one line, by its long flag."""
    assert main([command, "-h"]) == 0
    options = capsys.readouterr().out.split("\nOptions:\n")[1]
    entries = re.split(r"\n(?=  -)", options.strip("\n"))
    return {re.search(r"--[\w-]+", entry).group(): " ".join(entry.split()) for entry in entries}


def test_solve_and_bench_show_the_shared_options_alike(capsys):
    solve, bench = help_entries(capsys, "solve"), help_entries(capsys, "bench")
    for flag in SHARED:
        assert solve[flag] == bench[flag], flag
    assert solve["--model"].endswith("[default: hgs]")
    assert bench["--model"].endswith("[required]")
