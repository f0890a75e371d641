"""One meaning per option name (docs/vocabulary.md), read from every command's --help."""

from __future__ import annotations

import contextlib
import io
import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer

from routecli.cli.app import app, main
from routecli.pe import PE_REGISTRY

VOCABULARY = Path(__file__).resolve().parents[2] / "docs" / "vocabulary.md"
# A value's kind by its metavar: one option name always takes the same kind.
KINDS = {"FILE": "path", "FOLDER": "path", "PATH": "path", "CSV": "path",
         "NAME": "name", "NAMES": "name", "SET": "name", "METHOD": "name", "RULE": "name",
         "FORMAT": "name", "STAGES": "name", "VALUE": "value", "C[,C...]": "value",
         "N": "number", "M": "number", "K": "number", "X": "number", "GB": "number",
         "SHARE": "number", "FACTOR": "number", "SECONDS": "seconds", "COST": "number",
         "ADDRESS": "address"}


def leaf_commands(group: object, path: tuple[str, ...] = ()) -> list[list[str]]:
    commands = getattr(group, "commands", None)
    if commands is None:
        return [list(path)]
    return [c for name, sub in commands.items() for c in leaf_commands(sub, (*path, name))]


COMMANDS = leaf_commands(typer.main.get_command(app))


def help_options(text: str) -> dict[str, str]:
    """Every long option a help text shows, with its kind (flag or a value kind)."""
    found: dict[str, str] = {}
    options = text.split("\nOptions:\n")[1]
    for match in re.finditer(r"^  (?:-\w, )?(--[\w-]+)(?:\s*/\s*(--[\w-]+))?(?: ([^\s]+))?",
                             options, re.M):
        long, negative, metavar = match.groups()
        if long == "--help":
            continue
        found[long] = "flag" if metavar is None or negative else KINDS[metavar]
        if negative:
            found[negative] = "flag"
    return found


@pytest.fixture(scope="module")
def every_help() -> dict[str, dict[str, str]]:
    """The options of every command, read from its --help."""
    helps = {}
    for command in COMMANDS:
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            assert main([*command, "-h"]) == 0
        helps[" ".join(command)] = help_options(text.getvalue())
    return helps


def test_one_option_name_is_always_the_same_kind(every_help):
    kinds: dict[str, dict[str, str]] = defaultdict(dict)
    for command, options in every_help.items():
        for option, kind in options.items():
            kinds[option][command] = kind
    mixed = {o: k for o, k in kinds.items() if len(set(k.values())) > 1}
    assert not mixed, mixed


def test_no_option_is_the_plural_of_another(every_help):
    names = {o for options in every_help.values() for o in options}
    plurals = sorted(o for o in names if o.endswith("s") and o[:-1] in names)
    assert not plurals, plurals


def test_every_option_has_its_meaning_written_down(every_help):
    text = VOCABULARY.read_text()
    written = set(re.findall(r"`(?:-\w, )?(--[\w-]+)", text)) | set(re.findall(r"(--[\w-]+)", text))
    missing = sorted({o for options in every_help.values() for o in options} - written)
    assert not missing, f"add to docs/vocabulary.md: {missing}"


def test_augment_is_a_flag_and_counts_have_their_own_names(every_help):
    assert every_help["solve"]["--augment"] == every_help["bench"]["--augment"] == "flag"
    assert "--augment" not in every_help["compare-pe"] and "--images" in every_help["compare-pe"]
    assert "--seeds" not in every_help["compare-pe"] and "--runs" in every_help["compare-pe"]
    assert "--warmup" not in every_help["train-nds"] and "--burn-in" in every_help["train-nds"]
    for command in ("solve", "bench", "train", "train-nds", "compare-pe", "probe"):
        assert {"--threads", "--device"} <= set(every_help[command]), command


def test_solve_and_bench_default_to_the_same_model(capsys):
    for command in ("solve", "bench"):
        assert main([command, "-h"]) == 0
        entry = capsys.readouterr().out.split("--model NAME")[1].split("\n  -")[0]
        assert "[default: hgs]" in " ".join(entry.split())


@pytest.mark.parametrize("argv, old, new", [
    (["generate", "cvrp", "-n", "7", "--out", "{tmp}/a.npz"], "-n", "--size"),
    (["generate", "cvrp", "--n", "7", "--out", "{tmp}/b.npz"], "--n", "--size"),
])
def test_old_spellings_work_with_a_note(tmp_path, capsys, argv, old, new):
    assert main([a.format(tmp=tmp_path) for a in argv]) == 0
    captured = capsys.readouterr()
    assert "CVRP-7" in captured.out
    assert captured.err.strip() == f"note: {old} is deprecated and goes in the next release; " \
                                   f"use {new}"


def test_probe_all_is_the_whole_registry(capsys):
    from routecli.cli.probe import resolve_names

    assert resolve_names("all") == list(PE_REGISTRY)
