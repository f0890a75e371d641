"""One vocabulary across commands, read as a user reads ``--help`` (issue 15, item 16)."""

from __future__ import annotations

import re

import pytest
import typer

from routecli.cli.app import app, main


def every_command(group: object, path: tuple[str, ...] = ()) -> list[list[str]]:
    """The command lines of the group and everything under it, as a user can type them."""
    found = [list(path)]
    for name, command in getattr(group, "commands", {}).items():
        found += every_command(command, (*path, name))
    return found


COMMANDS = every_command(typer.main.get_command(app))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "routecli")
def test_help_speaks_to_users_not_to_python(capsys, command):
    assert main([*command, "-h"]) == 0
    text = capsys.readouterr().out
    assert main([*command, "--help"]) == 0
    assert capsys.readouterr().out == text and text.startswith("Usage: routecli")
    assert not re.search(r"<(bool|str|int|float|path|list)", text), text
    assert "``" not in text and "{" not in text.split("\n")[0]
    for name in ("int range", "float range", "NoneType", "list[", "Path"):
        assert name not in text


def test_every_distance_rule_is_listed(capsys):
    assert main(["solve", "-h"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for rule in ("file", "none", "euc2d", "ceil2d", "att", "geo", "exact"):
        assert re.search(rf"\b{rule}\b", text.split("--round RULE")[1].split("--decode")[0])


def test_sizes_sets_outputs_and_jobs_share_one_spelling(capsys):
    texts = {}
    for command in (["generate"], ["train"], ["train-nds"], ["analyze", "anisometry"],
                    ["probe"], ["bench"]):
        assert main([*command, "-h"]) == 0
        texts[" ".join(command)] = capsys.readouterr().out
    assert "--size" in texts["generate"] and "--size" in texts["train-nds"]
    assert "--set " in texts["analyze anisometry"] and "--sets" not in texts["analyze anisometry"]
    assert all("-o, --out" in texts[c] for c in ("generate", "train", "train-nds", "bench"))
    assert "--run-dir" not in texts["train"]
    assert all("-j, --jobs N" in texts[c] and "[default: 1" in texts[c].split("--jobs")[1]
               for c in ("analyze anisometry", "probe"))
    assert "--workers N" in texts["bench"]  # its tasks run on any executor (-j: hidden alias)


def test_dropped_old_spellings_are_refused(capsys):
    assert main(["analyze", "anisometry", "--sets", "cvrp-9"]) == 2
    assert "--sets" in capsys.readouterr().err


def test_one_set_commands_refuse_several_in_one_line(capsys):
    assert main(["probe", "--set", "cvrp-100,cvrp-200"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --set takes one set here, got 2: cvrp-100, cvrp-200"
