"""Limits on numbers a user gives on the command line, stated once for the check, its error
and the ``--help`` text. Light (no numpy): the CLI imports it at startup."""

from __future__ import annotations

# A best-known value is the cost (or knapsack value) of a solution. Instance numbers are bounded
# so that every cost stays exact in float64 (below 2^53, see routecli.io.text.MAX_MAGNITUDE);
# below 1e-6 a value is a unit mistake, and a gap against it would be astronomically large.
BKS_MIN = 1e-6
BKS_MAX = 2.0**53
BKS_RULE = f"a finite number from {BKS_MIN:g} to 2^53 ({BKS_MAX:.4g})"


# The ranges of the command line's counts, declared on every option that takes one (Typer's
# ``min``/``max``: checked when the command line is read and shown in --help). What fits in
# memory is checked separately, against an estimate (routecli.resources.require_memory).
MAX_NODES = 10_000_000  # nodes (or items) of one instance: DIMACS's largest, E10M
MAX_INSTANCES = 10_000_000  # instances of one set, batch or test
MAX_STEPS = 10**9  # optimiser steps, search iterations, intervals counted in them
MAX_JOBS = 1024  # worker processes
MAX_THREADS = 1024  # torch threads (the core count here is checked when the option is read)
MAX_FACTOR = 1000.0  # a budget relative to a default one
MIN_FACTOR = 0.001
MAX_LR = 1.0  # a learning rate (AdamW diverges long before)
MAX_BATCH = 1_000_000  # instances per optimiser step
MAX_ROLLOUTS = 100_000  # rollouts (samples) per instance
MAX_RUNS = 1000  # runs (seeds) of one instance or one encoding
