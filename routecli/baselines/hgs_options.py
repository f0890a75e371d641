"""The command-line options of ``hgs``, PyVRP-free so that ``--help`` lists them without loading
it."""

from __future__ import annotations

from routecli.solvers import WARM_START

CLI_OPTIONS = (WARM_START,)
