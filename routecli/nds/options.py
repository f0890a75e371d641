"""The named choices of neural deconstruction search, torch-free so that the command line lists
them without loading the model."""

from __future__ import annotations

from typing import Literal, get_args

from routecli.resources import PRECISION_CHOICES
from routecli.search.options import REMOVALS
from routecli.solvers import WARM_START, CliOption

Problem = Literal["cvrp", "vrptw", "pcvrp"]
PROBLEMS: tuple[Problem, ...] = get_args(Problem)
# learned: the trained removal policy; strings, random: the search's non-neural controls
Policy = Literal["learned", "strings", "random"]
POLICIES: tuple[Policy, ...] = ("learned", *REMOVALS)
Variant = Literal["paper", "hybrid"]  # paper: every iteration learned; hybrid: strings + learned
VARIANTS: tuple[Variant, ...] = get_args(Variant)
Reward = Literal["clipped", "delta"]  # max(0, improvement) (Appendix B), or signed improvement
REWARDS: tuple[Reward, ...] = get_args(Reward)
# The precision policy (routecli.resources' vocabulary): auto takes bf16 on a GPU only. On a CPU
# bf16 speeds the encoder's products, but the decoder's small steps are bound by per-operation
# overhead and measured slower (docs/nds.md); --precision bf16 asks for the encoder in bf16.
BF16_ON_CPU = False

CLI_OPTIONS = (
    CliOption("checkpoint", "weights (default: the shipped nds-PROBLEM.pt)", "FILE", kind="path"),
    CliOption("pe", "positional encoding (default: the checkpoint's)", "NAME"),
    CliOption("policy", f"removal {', '.join(POLICIES)} (default {POLICIES[0]})", "NAME",
              POLICIES),
    CliOption("polish", "local-search polish of the result", kind="bool"),
    CliOption("precision", f"the encoder's arithmetic: {', '.join(PRECISION_CHOICES)} (default "
              "auto: bf16 on a GPU that multiplies it natively)", "NAME", PRECISION_CHOICES),
    WARM_START,
)
