"""The named choices of MiLoop decoding and training, torch-free so that the command line lists
them without loading the model."""

from __future__ import annotations

from typing import Literal, get_args

Decode = Literal["greedy", "sampling", "multistart"]  # Section 4.1
DECODES: tuple[Decode, ...] = get_args(Decode)
# the decoding step: the model's torch step, routecli.miloop.fused_greedy, or fused where it
# applies (routecli.miloop.decode)
Engine = Literal["auto", "torch", "fused"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
Precision = Literal["fp32", "bf16"]  # the policy's arithmetic (bf16: autocast, fp32 weights)
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
# auto: bf16 where the CPU or GPU multiplies bfloat16 natively, else fp32
PrecisionChoice = Literal["auto", "fp32", "bf16"]
PRECISION_CHOICES: tuple[PrecisionChoice, ...] = get_args(PrecisionChoice)
Loss = Literal["dpo", "reinforce"]  # reference-free DPO, or REINFORCE
LOSSES: tuple[Loss, ...] = get_args(Loss)
# uniform: the papers' instances; mixed: integer grids, clusters, varied depots and demands
Distribution = Literal["uniform", "mixed"]
DISTRIBUTIONS: tuple[Distribution, ...] = get_args(Distribution)
MIXED_PROBLEMS = ("tsp", "cvrp")  # the problems with a mixed distribution
# teacher forcing towards the label's action, or towards every action as good as it (a route
# start of a randomly ordered label, either direction out of a tour's start)
Targets = Literal["label", "equivalent"]
TARGETS: tuple[Targets, ...] = get_args(Targets)
