"""The CLI reference in docs/cli.md is the app's own --help, and current."""

from __future__ import annotations

from pathlib import Path

import pytest

from routecli.cli import docgen
from routecli.cli.app import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_docs_cli_md_is_current():
    assert PAGE.read_text() == docgen.reference(), (
        f"docs/cli.md is stale: regenerate it with `{docgen.REGENERATE}` (or `make docs`)")


def test_every_command_has_a_section_with_its_own_help(capsys):
    page = docgen.reference()
    for path in (["solve"], ["analyze", "entropy"], ["plot", "solution"], ["train-nds"]):
        assert main([*path, "--help"]) == 0
        usage = capsys.readouterr().out.splitlines()[0]
        heading = f"## routecli {' '.join(path)}"
        assert heading in page and usage in page.split(heading)[1]
        assert f"(#{docgen.anchor(heading[3:])})" in page


def test_anchor_follows_github_headings():
    assert docgen.anchor("routecli train-nds") == "routecli-train-nds"
    assert docgen.anchor("Tables 4, 6 and 10-12: `compare-pe`") == "tables-4-6-and-10-12-compare-pe"


def test_out_writes_the_page_and_bad_arguments_exit_2(tmp_path, capsys):
    target = tmp_path / "cli.md"
    assert docgen.main(["--out", str(target)]) == 0
    assert target.read_text() == docgen.reference()
    assert docgen.main(["--out"]) == 2
    assert capsys.readouterr().err.startswith("error: usage: ")


@pytest.mark.parametrize("width_env", ["40", "300"])
def test_the_page_does_not_depend_on_the_terminal(monkeypatch, width_env):
    monkeypatch.setenv("COLUMNS", width_env)
    assert docgen.reference() == PAGE.read_text()
