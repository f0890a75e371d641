"""What the documentation tests read from README.md and docs/*.md: fenced code blocks and the
commands shown in them, and links."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = ("sh", "console")


@dataclass(frozen=True)
class Shown:
    """A ``routecli`` command shown on a page; ``output`` is what a ``console`` block prints
    under it (None in an ``sh`` block, whose commands are parsed, not run)."""

    page: Path
    line: int
    argv: list[str]
    output: str | None

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: routecli {shlex.join(self.argv)}"


def fenced_blocks(text: str) -> list[tuple[str, int, list[str]]]:
    """(language, line of the first content line, lines) of every fenced block."""
    blocks, language, start, body = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if language is None:
                language, start, body = line[3:].strip(), number + 1, []
            else:
                blocks.append((language, start, body))
                language = None
        elif language is not None:
            body.append(line)
    return blocks


def joined(lines: list[str], start: int) -> list[tuple[int, str]]:
    """Lines with their backslash continuations joined, each with its first line number."""
    result: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(lines, start):
        first, text = pending if pending else (number, "")
        text += line
        if line.endswith("\\"):
            pending = (first, text[:-1] + " ")
        else:
            result.append((first, text))
            pending = None
    return result


def routecli_argv(command: str) -> list[str] | None:
    """The arguments after the program if the command runs routecli (``routecli``, a path to
    it, or ``python -m routecli``), else None."""
    tokens = shlex.split(command, comments=True)
    for i, token in enumerate(tokens):
        if Path(token).name == "routecli":
            return tokens[i + 1:]
        if token == "-m" and tokens[i + 1:i + 2] == ["routecli"]:
            return tokens[i + 2:]
    return None


def shown_commands(page: Path) -> list[Shown]:
    """Every routecli command in the page's ``sh`` and ``console`` blocks, in order."""
    shown = []
    for language, start, lines in fenced_blocks(page.read_text()):
        if language not in SHELL_BLOCKS:
            continue
        if language == "sh":
            for number, command in joined(lines, start):
                argv = routecli_argv(command)
                if argv is not None:
                    shown.append(Shown(page, number, argv, None))
            continue
        entries: list[tuple[int, str, list[str]]] = []  # a console block: "$ command", output
        for number, line in joined(lines, start):
            if line.startswith("$ "):
                entries.append((number, line[2:], []))
            elif entries:
                entries[-1][2].append(line)
        for number, command, output in entries:
            argv = routecli_argv(command)
            if argv is not None:
                shown.append(Shown(page, number, argv, "\n".join(output)))
    return shown


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image outside code blocks and code spans."""
    found, in_block = [], False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            prose = re.sub(r"`[^`]*`", "", line)
            found += [(number, a or b) for a, b in LINK.findall(prose)]
    return found


def headings(page: Path) -> list[str]:
    """The page's headings, outside code blocks."""
    found, in_block = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_block = not in_block
        elif not in_block and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found
