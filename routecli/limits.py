"""Limits on numbers a user gives on the command line, stated once for the check, its error
and the ``--help`` text. Light (no numpy): the CLI imports it at startup."""

from __future__ import annotations

import math

from routecli.errors import OptionError

# A best-known value is the cost (or knapsack value) of a solution. Instance numbers are bounded
# so that every cost stays exact in float64 (below 2^53, see routecli.io.text.MAX_MAGNITUDE);
# below 1e-6 a value is a unit mistake, and a gap against it would be astronomically large.
BKS_MIN = 1e-6
BKS_MAX = 2.0**53
BKS_RULE = f"a finite number from {BKS_MIN:g} to 2^53 ({BKS_MAX:.4g})"


def check_bks(bks: float | None) -> float | None:
    """``--bks`` as given, if it is :data:`BKS_RULE`; one-line :class:`OptionError` otherwise."""
    if bks is not None and not (math.isfinite(bks) and BKS_MIN <= bks <= BKS_MAX):
        raise OptionError(f"--bks must be {BKS_RULE}, got {bks:g}")
    return bks
