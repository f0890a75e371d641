"""Where a number comes from: the git commit the process started from, the UTC date and the
command line, recorded with every stored row (:class:`routecli.results.store.ResultStore`)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from: the commit the process started from (``-dirty`` with
    uncommitted code changes), the UTC date and the command line."""

    commit: str
    date: str
    command: str

    @classmethod
    def current(cls, argv: list[str] | None = None) -> Provenance:
        return cls(STARTED_FROM, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   command_line(sys.argv if argv is None else argv))


# Files whose edits cannot change a number: result files (a long run appends rows while the
# same checkout keeps running) and prose.
_NOT_CODE = (":(top,exclude)benchmarks/results", ":(top,exclude,glob)**/*.md",
             ":(top,exclude,glob)**/*.png")


def git_commit(cwd: Path | None = None) -> str:
    """``git rev-parse --short HEAD`` of the checkout routecli runs from (``unknown``
    outside one), with ``-dirty`` when tracked files other than results and prose have
    uncommitted changes."""
    here = cwd or Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no",
                                "--", ":(top)", *_NOT_CODE],
                               cwd=here, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty.strip() else "")


# The commit this process loaded its code from, read once when the store is first imported:
# rows a long run appends hours later name that code, not commits made meanwhile.
STARTED_FROM = git_commit()


def command_line(argv: list[str]) -> str:
    """The command as a user would retype it: the program's file name, not its full path."""
    if not argv:
        return ""
    program = Path(argv[0])
    shown = program.name if program.is_absolute() else argv[0]
    return shlex.join([shown, *argv[1:]])


PROVENANCE = [f.name for f in fields(Provenance)]
