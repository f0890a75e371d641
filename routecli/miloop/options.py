"""The named choices of MiLoop decoding and training, torch-free so that the command line lists
them without loading the model."""

from __future__ import annotations

from typing import Literal, get_args

from routecli.limits import MAX_BATCH, MAX_NODES, MAX_ROLLOUTS, MAX_STEPS
from routecli.resources import PRECISION_CHOICES
from routecli.solvers import CliOption

Decode = Literal["greedy", "sampling", "multistart"]  # Section 4.1
DECODES: tuple[Decode, ...] = get_args(Decode)
# the decoding step: the model's torch step, routecli.miloop.fused_greedy, or fused where it
# applies (routecli.miloop.decode)
Engine = Literal["auto", "torch", "fused"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
# The precision policy (routecli.resources' vocabulary): auto takes bf16 on a CPU that multiplies
# it natively too, where a MiLoop step runs ~4x faster than in fp32.
BF16_ON_CPU = True
Loss = Literal["dpo", "reinforce"]  # reference-free DPO, or REINFORCE
LOSSES: tuple[Loss, ...] = get_args(Loss)
# uniform: the papers' instances; mixed: integer grids, clusters, varied depots and demands
Distribution = Literal["uniform", "mixed"]
DISTRIBUTIONS: tuple[Distribution, ...] = get_args(Distribution)
MIXED_PROBLEMS = ("tsp", "cvrp")  # the problems with a mixed distribution
MAX_CANDIDATES = 1_000_000  # more than any instance has nodes: a larger K is a typing slip
MAX_STARTS = 100_000  # starts or samples of one instance
# The range of each number of a curriculum stage (size:steps:batch:rollouts), for the
# --curriculum text and the one-stage options alike.
STAGE_RANGES = {"size": (2, MAX_NODES), "steps": (1, MAX_STEPS), "batch": (1, MAX_BATCH),
                "rollouts": (1, MAX_ROLLOUTS)}
# teacher forcing towards the label's action, or towards every action as good as it (a route
# start of a randomly ordered label, either direction out of a tour's start)
Targets = Literal["label", "equivalent"]
TARGETS: tuple[Targets, ...] = get_args(Targets)
# who labels a supervised stage's instances: PyVRP on an iteration budget, or LKH-3 (elkai, TSP)
Labeller = Literal["pyvrp", "lkh"]
LABELLERS: tuple[Labeller, ...] = get_args(Labeller)
# The training curriculum of each problem unless one is given (size:steps:batch:rollouts)
DEFAULT_CURRICULUM = {
    "tsp": "20:600:8:20,50:400:4:25,100:100000:2:25",
    "cvrp": "20:600:8:20,50:400:4:25,100:100000:2:25",
    "pdtsp": "20:600:8:10,50:400:4:25,100:100000:2:25",
    "kp": "200:50000:40:2",  # the paper's 20 epochs x 2,500 batches of 40 KP-200 pairs
}

CLI_OPTIONS = (
    CliOption("decode", f"decoding: {', '.join(DECODES)} (default {DECODES[0]})", "METHOD",
              DECODES),
    CliOption("starts", "multistart M (distinct first nodes) or samples (default 100)", "M",
              kind="int", min=1, max=MAX_STARTS),
    CliOption("augment", "8-fold symmetry augmentation", kind="bool"),
    CliOption("checkpoint", "weights (default: the shipped miloop-PROBLEM.pt)", "FILE",
              kind="path"),
    CliOption("candidates", "attend only to the K nearest allowed nodes per step (default: 200 "
              "for TSP, 400 for CVRP above 1000 nodes; 0 or at least the node count: always all "
              "nodes)", "K", kind="int", min=0, max=MAX_CANDIDATES),
    CliOption("precision", f"arithmetic: {', '.join(PRECISION_CHOICES)} (default fp32; auto: "
              "bf16 where the CPU or GPU multiplies bfloat16 natively); bf16 decodes large "
              "instances faster, greedy tours then part from fp32's at near-ties", "NAME",
              PRECISION_CHOICES),
)
