"""The options of ``solve`` and ``bench``, one object (:class:`RunOptions`): which model, when
it stops, the resources every model accepts, and the options of particular models, which a
model that does not take them refuses.

A model declares its own options once (``CLI_OPTIONS`` in its torch-free options module, see
:class:`routecli.solvers.CliOption`); this module assembles them: models offering the same
setting share one flag, whose help names each model's use. :func:`run_options` adds every
option to a command's signature (Typer reads the signature) and hands the command one
:class:`RunOptions`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_type_hints

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
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS
from routecli.solvers import REGISTRY, CliOption, cli_options

if TYPE_CHECKING:
    from routecli.solvers import SolverSettings
    from routecli.stop import Criterion

ModelName = Annotated[str, typer.Option("--model", "-m", metavar="NAME",
                                        help=f"Solver: {', '.join(REGISTRY)}.")]
# Values a free-text option's help lists, kept where --help can read them without torch.
LISTED = {"pe": choices.PE_NAMES}
KINDS: dict[str, Any] = {"int": int, "str": str, "path": Path}


@dataclass(frozen=True)
class RunOptions:
    """What ``solve`` and ``bench`` run: the model, its stopping criterion, the resources any
    model accepts (a model without torch ignores threads and device) and the model options
    given, by setting (refused by a model whose settings lack them)."""

    model: str = "hgs"
    time_limit: float | None = None
    iterations: int | None = None
    no_improvement: int | None = None
    seed: int = 0
    threads: int = DEFAULT_THREADS
    device: str = DEFAULT_DEVICE
    given: dict[str, Any] = field(default_factory=dict)

    def stop(self) -> Criterion | None:
        from routecli.stop import stop_after

        return stop_after(self.time_limit, self.iterations, self.no_improvement)

    def settings(self) -> SolverSettings:
        """The model's settings, the device as given (the solver resolves it)."""
        from routecli.solvers import make_settings

        return make_settings(self.model, self.given,
                             resources={"threads": self.threads, "device": self.device})


_RESOURCES: dict[str, Any] = {  # each field's declaration (its default is the field's)
    "model": ModelName, "time_limit": TimeLimit, "iterations": Iterations,
    "no_improvement": NoImprovementLimit, "seed": Seed, "threads": Threads, "device": Device,
}


def _help(offers: list[tuple[str, CliOption]]) -> str:
    """One flag's help: each use, the models sharing a phrase named together."""
    phrases: dict[str, list[str]] = {}
    for model, option in offers:
        phrases.setdefault(option.help, []).append(model)
    text = "; ".join(f"{', '.join(models)}: {phrase}" for phrase, models in phrases.items())
    setting = offers[0][1].setting
    if setting in LISTED:
        text += f": {', '.join(LISTED[setting])}"
    return text + "."


def _declared(offers: list[tuple[str, CliOption]]) -> tuple[Any, Any]:
    """The annotation and default of one model option, assembled from every model's offer."""
    first = offers[0][1]
    flag = "--" + first.setting.replace("_", "-")
    kinds = {option.kind for _, option in offers}
    if len(kinds) > 1:
        raise TypeError(f"{flag} is declared with the kinds {sorted(kinds)}")
    declared = typer.Option(flag, help=_help(offers), metavar=first.metavar or None,
                            min=first.min, max=first.max)
    if first.kind == "bool":
        return Annotated[bool, declared], False
    values = tuple(dict.fromkeys(v for _, option in offers for v in option.choices))
    kind = Literal[values] if values else KINDS[first.kind]
    return Annotated[kind | None, declared], None


def model_option_flags() -> list[str]:
    """Every flag of :class:`RunOptions`, the model options included."""
    names = [*_RESOURCES, *cli_options()]
    return ["--" + name.replace("_", "-") for name in names]


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with every :class:`RunOptions` field and model option as a command-line
    option, called with them gathered in ``options``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "options"]
    resources = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                   annotation=_RESOURCES[f.name])
                 for f in fields(RunOptions) if f.name in _RESOURCES]
    offered = cli_options()
    models = []
    for setting, offers in offered.items():
        annotation, default = _declared(offers)
        models.append(inspect.Parameter(setting, inspect.Parameter.KEYWORD_ONLY,
                                        default=default, annotation=annotation))

    @functools.wraps(command)
    def with_options(**given: Any) -> Any:
        values = {name: given.pop(name) for name in _RESOURCES}
        chosen = {name: str(value) if isinstance(value, Path) else value
                  for name in offered if (value := given.pop(name)) is not None}
        return command(**given, options=RunOptions(**values, given=chosen))

    added = [*resources, *models]
    with_options.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*own, *added])
    hints = get_type_hints(command, include_extras=True)
    with_options.__annotations__ = {**{p.name: hints.get(p.name, p.annotation) for p in own},
                                    **{p.name: p.annotation for p in added}}
    return with_options
