"""The choices of the learned improvement models, torch-free so that the command line lists
them without loading the model."""

from __future__ import annotations

from routecli.solvers import CliOption

# The precision policy (routecli.resources' vocabulary): auto takes bf16 on a GPU only; a CPU
# step of these small policies is bound by per-operation overhead, not by the products.
BF16_ON_CPU = False

CLI_OPTIONS = (
    CliOption("augment", "search the 8 symmetric images", kind="bool"),
    CliOption("checkpoint", "a compare-pe model file (required)", "FILE", kind="path"),
)
