"""``python -m routecli.cli.docgen``: the CLI reference, ``docs/cli.md``, written from the Typer
app itself, so the page cannot drift from the commands (``tests/cli/test_docgen.py`` fails when
the committed page differs from what this prints).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from routecli.atomic import atomic_write
from routecli.cli.app import app

HELP_WIDTH = 100
REGENERATE = "python -m routecli.cli.docgen --out docs/cli.md"


# Typer ships its own copy of click, whose classes it does not export: commands are duck-typed.
def commands(command: Any, ctx: typer.Context) -> Iterator[tuple[str, str]]:
    """(command line, ``--help`` text) of ``command`` and of every visible command under it, in
    ``--help`` order; each context has its parent's, so settings such as ``-h`` carry down."""
    yield ctx.command_path, command.get_help(ctx).rstrip()
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, typer.Context(sub, parent=ctx, info_name=name,
                                                       **sub.context_settings))


def anchor(title: str) -> str:
    """The fragment GitHub gives a heading: lower case, spaces to hyphens, no punctuation."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def reference() -> str:
    """The whole Markdown page."""
    root = typer.main.get_command(app)
    # A fixed width, whatever the terminal, so the page is the same on every machine.
    entries = list(commands(root, typer.Context(root, info_name="routecli", terminal_width=HELP_WIDTH,
                                                max_content_width=HELP_WIDTH, **root.context_settings)))
    lines = [
        "# CLI reference",
        "",
        "Every command's `--help`, generated from the Typer app by "
        f"`{REGENERATE}` (`make docs`); a test fails when this page is not current, so edit "
        "the commands, not this page. Each command also answers `-h`. What the words the "
        "options share mean (sizes, sets, outputs, resources): [option vocabulary](vocabulary.md).",
        "",
    ]
    lines += [f"- [`{path}`](#{anchor(path)})" for path, _ in entries]
    for path, text in entries:
        lines += ["", f"## {path}", "", "```text", text, "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the page, or write it atomically with ``--out FILE``."""
    args = sys.argv[1:] if argv is None else argv
    if args and (len(args) != 2 or args[0] != "--out"):
        print("error: usage: python -m routecli.cli.docgen [--out FILE]", file=sys.stderr)
        return 2
    page = reference()
    if args:
        atomic_write(Path(args[1]), lambda handle: handle.write(page.encode()))
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
