"""Every numeric option of every command declares its range with the option (Typer's ``min``
and ``max``): the one mechanism that checks it when the command line is read, before any work,
and shows it in ``--help``. Values outside it (NaN and infinities among them) are one line and
exit 2."""

from __future__ import annotations

import math
import typing
from collections.abc import Iterator

import click
import pytest
import typer

from routecli.cli.app import app, main


def commands() -> Iterator[tuple[list[str], click.Command]]:
    def walk(command: click.Command, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])
        if not hasattr(command, "commands"):
            yield path, command

    yield from walk(typer.main.get_command(app), [])


def numeric_options() -> list[tuple[list[str], click.Parameter]]:
    found = []
    for path, command in commands():
        for param in command.params:
            kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            if any(t in (int, float) for t in (typing.get_args(kind) or (kind,))):
                found.append((path, param))
    return found


OPTIONS = numeric_options()
IDS = [" ".join(path) + " " + param.opts[0] for path, param in OPTIONS]


def test_the_walk_finds_the_numeric_options_of_every_command():
    assert len(OPTIONS) > 100
    assert {path[0] for path, _ in OPTIONS} >= {"solve", "bench", "generate", "train",
                                                 "train-nds", "compare-pe", "probe", "analyze",
                                                 "plot", "validate"}


@pytest.mark.parametrize("path, param", OPTIONS, ids=IDS)
def test_every_numeric_option_declares_both_bounds(path, param):
    assert param.min is not None and param.max is not None, \
        f"{' '.join(path)} {param.opts[0]} needs min= and max= in its typer.Option"
    assert param.min <= param.max
    default = param.default
    if isinstance(default, int | float) and not isinstance(default, bool):
        assert param.min <= default <= param.max


def _outside(param: click.Parameter) -> list[str]:
    kind = typing.get_args(param.type_descriptor.annotation) or (param.type_descriptor.annotation,)
    low = [str(param.min - 1)] if int in kind else [repr(param.min * 0.5 - 1.0)]
    high = [str(int(param.max) + 1)] if int in kind else [repr(param.max * 2 + 1), "inf"]
    return [*low, *high] + (["nan", "-inf"] if float in kind else [])


@pytest.mark.parametrize("path, param", [(p, o) for p, o in OPTIONS if not o.hidden],
                         ids=[i for i, (_, o) in zip(IDS, OPTIONS, strict=True) if not o.hidden])
def test_values_outside_the_range_are_one_line_before_any_work(path, param, capsys, tmp_path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, anywhere
    for value in _outside(param):
        if not math.isfinite(param.max) and value in ("inf",):
            continue
        assert main([*path, param.opts[0], value]) == 2, value
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, (value, err)
        assert param.opts[0] in err, (value, err)
    assert list(tmp_path.iterdir()) == []
