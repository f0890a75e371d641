"""The named choices of the non-neural search, torch- and numba-free so that the command line
lists them without loading the kernels."""

from __future__ import annotations

from typing import Literal, get_args

from routecli.solvers import WARM_START, CliOption

Removal = Literal["random", "strings"]  # SISR string removal, or uniform random removal
REMOVALS: tuple[Removal, ...] = get_args(Removal)

CLI_OPTIONS = (
    CliOption("policy", f"removal {' or '.join(REMOVALS)} (default strings)", "NAME", REMOVALS),
    CliOption("polish", "local-search polish of the result", kind="bool"),
    WARM_START,
)
