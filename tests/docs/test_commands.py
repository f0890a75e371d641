"""Every routecli command shown in README.md and docs/ runs: each one parses with the app
(every option exists and takes the values shown), and the commands of ``console`` blocks run
on the repository's demo files, printing what the page shows (times aside)."""

from __future__ import annotations

import ast
import importlib
import re
import shutil
from pathlib import Path

import pytest
import typer

from routecli.cli.app import app, main
from tests.conftest import BENCHDATA
from tests.docs.markdown import PAGES, ROOT, Shown, fenced_blocks, shown_commands

SHOWN = [shown for page in PAGES for shown in shown_commands(page)]
RUN = [page for page in PAGES if any(s.output is not None for s in shown_commands(page))]
INSTANCE_SUFFIXES = (".vrp", ".tsp", ".txt", ".kp")
TIME = re.compile(r"time=\d+(\.\d+)?s( \(solve \d+(\.\d+)?s\))?")


def parse(argv: list[str]) -> None:
    """Parse ``argv`` as the app would, down to its command, without running it."""
    command = typer.main.get_command(app)
    ctx = command.make_context("routecli", list(argv), resilient_parsing=True)
    args = list(argv)
    while hasattr(command, "list_commands") and args and args[0] in command.list_commands(ctx):
        command, name = command.get_command(ctx, args[0]), args.pop(0)
        ctx = command.make_context(name, list(args), parent=ctx)
    if hasattr(command, "list_commands"):
        raise LookupError(f"no such command: {args[0] if args else '(none)'}")


def test_pages_show_commands():
    assert len(SHOWN) > 50 and RUN and PYTHON
    assert any(s.page.name == "README.md" and s.output for s in SHOWN)


@pytest.mark.parametrize("shown", SHOWN, ids=str)
def test_shown_command_parses(shown: Shown):
    try:
        parse(shown.argv)
    except Exception as exc:  # typer's click errors: unknown option, bad value, missing argument
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        pytest.fail(f"{shown}\n  does not parse: {message}")


def test_parse_refuses_what_the_app_refuses():
    for argv in (["solve", "x.vrp", "--no-such-option"], ["solve", "x.vrp", "--seed", "one"],
                 ["solve"], ["nonsense"], ["analyze", "anisometry", "--jobs", "0"]):
        with pytest.raises(Exception):  # noqa: B017 (typer's click errors share no public base)
            parse(argv)


def masked(text: str) -> list[str]:
    """The lines with every time left out: ``time=...`` and the ``time (s)`` column of a table."""
    lines, column = [], None
    for line in text.strip().splitlines():
        line = TIME.sub("time=…", line).rstrip()
        if "time (s)" in line:
            column = [cell.strip() for cell in line.split("┃")].index("time (s)")
        elif column is not None and "│" in line:
            cells = line.split("│")
            line = "│".join([*cells[:column], "…", *cells[column + 1:]])
        lines.append(line)
    return lines


def test_masking_leaves_out_times_only():
    shown = "a  time=2.17s (solve 0.2s)  feasible\n┃ x ┃ time (s) ┃\n│ 1 │     0.00 │"
    assert masked(shown) == ["a  time=…  feasible", "┃ x ┃ time (s) ┃", "│ 1 │…│"]
    assert masked("cost=11,234  time=1s") != masked("cost=11,235  time=1s")


@pytest.mark.parametrize("page", RUN, ids=lambda p: p.name)
def test_console_blocks_print_what_the_page_shows(page, tmp_path, monkeypatch, capsys):
    """The page's console commands run in order in one folder that holds a copy of data/ (so a
    solution one writes, the next can validate); another repository file they name is linked
    in, a benchmark file from ../shared/benchdata, and the command is skipped without it."""
    shutil.copytree(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")  # rich reads it at every print: tables as on the page
    for shown in (s for s in shown_commands(page) if s.output is not None):
        for arg in shown.argv:
            if arg.endswith(INSTANCE_SUFFIXES) and not Path(arg).exists():
                found = [ROOT / arg] if (ROOT / arg).is_file() else (
                    sorted(BENCHDATA.rglob(Path(arg).name)) if BENCHDATA.is_dir() else [])
                if not found:
                    pytest.skip(f"{shown} needs {arg} from the benchmark data")
                Path(arg).parent.mkdir(parents=True, exist_ok=True)
                Path(arg).symlink_to(found[0])
        code = main(list(shown.argv))
        captured = capsys.readouterr()
        expected = shown.output or ""
        assert code == (2 if "error:" in expected else 0), f"{shown}: exit {code}\n{captured.err}"
        assert masked(captured.out + captured.err) == masked(expected), shown


PYTHON = [(page, start, "\n".join(lines)) for page in PAGES
          for language, start, lines in fenced_blocks(page.read_text()) if language == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: f"{b[0].name}:{b[1]}")
def test_python_examples_compile_and_import_what_exists(block):
    """Python examples are not run (a solve takes a while), but they must compile and every
    name they import must exist."""
    page, start, source = block
    tree = ast.parse(source, f"{page.name}:{start}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module(node.module or "")
            missing = [a.name for a in node.names if not hasattr(module, a.name)]
            assert not missing, f"{page.name}:{start}: {node.module} has no {missing}"
