"""The options of ``solve`` and ``bench``, one object (:class:`RunOptions`) declared once: which
model, when it stops, the resources every model accepts, and the options of particular models,
which a model that does not take them refuses.

:func:`run_options` adds them to a command's signature (Typer reads the signature) and hands
the command one :class:`RunOptions`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from routecli.cli import choices
from routecli.cli.common import (
    Device,
    Iterations,
    NoImprovementLimit,
    Seed,
    Threads,
    TimeLimit,
)
from routecli.miloop.options import DECODES, PRECISION_CHOICES, Decode, PrecisionChoice
from routecli.nds.options import POLICIES as NDS_POLICIES
from routecli.nds.options import Policy
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS
from routecli.search.options import REMOVALS
from routecli.solvers import REGISTRY

if TYPE_CHECKING:
    from routecli.solvers import SolverSettings
    from routecli.stop import Criterion

ModelName = Annotated[str, typer.Option("--model", "-m", metavar="NAME",
                                        help=f"Solver: {', '.join(REGISTRY)}.")]
DecodeOption = Annotated[Decode | None, typer.Option(
    "--decode", metavar="METHOD",
    help=f"miloop decoding: {', '.join(DECODES)} (default {DECODES[0]}).")]
Starts = Annotated[int | None, typer.Option(
    "--starts", min=1, metavar="M",
    help="miloop multistart M (distinct first nodes) or samples (default 100).")]
Augment = Annotated[bool, typer.Option("--augment",
                                       help="miloop: 8-fold symmetry augmentation; dact: search "
                                       "the 8 symmetric images.")]
Checkpoint = Annotated[Path | None, typer.Option(
    "--checkpoint", metavar="FILE",
    help="Weights of miloop, nds or dact (default: the shipped checkpoint; dact has none).")]
Candidates = Annotated[int | None, typer.Option(
    "--candidates", min=0, metavar="K",
    help="miloop: attend only to the K nearest allowed nodes per step (default: 200 for TSP, "
    "400 for CVRP above 1000 nodes; 0 or at least the node count: always all nodes).")]
PrecisionOption = Annotated[PrecisionChoice | None, typer.Option(
    "--precision", metavar="NAME",
    help=f"miloop arithmetic: {', '.join(PRECISION_CHOICES)} (default fp32; auto: bf16 where the "
    "CPU or GPU multiplies bfloat16 natively). bf16 decodes large instances faster; greedy "
    "tours then part from fp32's at near-ties.")]
PositionalEncoding = Annotated[str | None, typer.Option(
    "--pe", metavar="NAME",
    help=f"nds positional encoding (default: the checkpoint's): {', '.join(choices.PE_NAMES)}.")]
RemovalPolicy = Annotated[Policy | None, typer.Option(
    "--policy", metavar="NAME",
    help=f"Removal policy: sisr takes {' or '.join(REMOVALS)} (default strings), nds "
    f"{', '.join(NDS_POLICIES)} (default {NDS_POLICIES[0]}).")]
Polish = Annotated[bool, typer.Option("--polish",
                                      help="sisr, nds: local-search polish of the result.")]
Init = Annotated[Path | None, typer.Option(
    "--init", metavar="FILE",
    help="sisr, nds, hgs: start the search from this solution (a .sol or .tour from any tool, "
    "a neural model included), checked against the instance before solving; one instance.")]


@dataclass(frozen=True)
class RunOptions:
    """What ``solve`` and ``bench`` run: the model, its stopping criterion, the resources any
    model accepts (a model without torch ignores threads and device) and the model options
    (None or False: not given; refused by a model whose settings lack them)."""

    model: str = "hgs"
    time_limit: float | None = None
    iterations: int | None = None
    no_improvement: int | None = None
    seed: int = 0
    threads: int = DEFAULT_THREADS
    device: str = DEFAULT_DEVICE
    decode: Decode | None = None
    starts: int | None = None
    augment: bool = False
    checkpoint: Path | None = None
    candidates: int | None = None
    precision: PrecisionChoice | None = None
    pe: str | None = None
    policy: Policy | None = None
    polish: bool = False
    init: Path | None = None

    def stop(self) -> Criterion | None:
        from routecli.stop import stop_after

        return stop_after(self.time_limit, self.iterations, self.no_improvement)

    def model_options(self) -> dict[str, Any]:
        """The options of particular models, by setting name (None or False: not given)."""
        return {name: str(value) if isinstance(value, Path) else value
                for name in MODEL_OPTIONS if (value := getattr(self, name)) is not None}

    def settings(self) -> SolverSettings:
        """The model's settings; the device is resolved only for a model that runs torch (a
        named CUDA device was checked when the option was read)."""
        from routecli.resources import resolve_device
        from routecli.solvers import make_settings, settings_type

        takes_device = any(f.name == "device" for f in fields(settings_type(self.model)))
        device = resolve_device(self.device) if takes_device else "cpu"
        return make_settings(self.model, self.model_options(),
                             resources={"threads": self.threads, "device": device})


MODEL_OPTIONS = ("decode", "starts", "augment", "checkpoint", "candidates", "precision", "pe",
                 "policy", "polish", "init")
# Each field's declaration (its default is the field's).
_DECLARED: dict[str, Any] = {
    "model": ModelName, "time_limit": TimeLimit, "iterations": Iterations,
    "no_improvement": NoImprovementLimit, "seed": Seed, "threads": Threads, "device": Device,
    "decode": DecodeOption, "starts": Starts, "augment": Augment, "checkpoint": Checkpoint,
    "candidates": Candidates, "precision": PrecisionOption, "pe": PositionalEncoding, "policy": RemovalPolicy,
    "polish": Polish, "init": Init,
}


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with every :class:`RunOptions` field as a command-line option, called with
    them gathered in ``options``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "options"]
    added = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                               annotation=_DECLARED[f.name]) for f in fields(RunOptions)]

    @functools.wraps(command)
    def with_options(**given: Any) -> Any:
        options = RunOptions(**{f.name: given.pop(f.name) for f in fields(RunOptions)})
        return command(**given, options=options)

    with_options.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*own, *added])
    hints = get_type_hints(command, include_extras=True)
    with_options.__annotations__ = {**{p.name: hints.get(p.name, p.annotation) for p in own},
                                    **{p.name: p.annotation for p in added}}
    return with_options
