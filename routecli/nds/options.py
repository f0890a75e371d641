"""The named choices of neural deconstruction search, torch-free so that the command line lists
them without loading the model."""

from __future__ import annotations

from typing import Literal, get_args

from routecli.search.options import REMOVALS

Problem = Literal["cvrp", "vrptw", "pcvrp"]
PROBLEMS: tuple[Problem, ...] = get_args(Problem)
# learned: the trained removal policy; strings, random: the search's non-neural controls
Policy = Literal["learned", "strings", "random"]
POLICIES: tuple[Policy, ...] = ("learned", *REMOVALS)
Variant = Literal["paper", "hybrid"]  # paper: every iteration learned; hybrid: strings + learned
VARIANTS: tuple[Variant, ...] = get_args(Variant)
Reward = Literal["clipped", "delta"]  # max(0, improvement) (Appendix B), or signed improvement
REWARDS: tuple[Reward, ...] = get_args(Reward)
