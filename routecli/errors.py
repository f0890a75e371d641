"""User-facing errors: the CLI prints their message as one line on stderr and exits with 2.

Every message goes through :func:`one_line` when the error is created, so a message built from
a multi-line library error or an echoed 100 KB input line still prints as one readable line;
fragments of the input quoted inside a message go through :func:`excerpt` and file names
through :func:`display_path` first, so a message fits without cutting its explanation however
deep the user's folder or long the offending input.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_MESSAGE = 200  # characters of one error line, the "error: " prefix aside
MAX_EXCERPT = 40  # characters of input quoted inside a message
MAX_PATH = 60  # characters of a file name inside a message


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` with every run of whitespace (newlines included) made one space, cut to ``limit``
    characters (the last one an ellipsis) when longer."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def excerpt(fragment: object, limit: int = MAX_EXCERPT) -> str:
    """A quoted, shortened piece of input for a message: ``'xxxx…'``."""
    text = str(fragment)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def display_path(path: str | Path, limit: int = MAX_PATH) -> str:
    """``path`` as a message names it: relative to the working directory when it lies below it,
    else as given; longer than ``limit``, its middle is elided (``/tmp/…/dir/file.vrp``) so the
    start and the whole file name (the stem names an instance without a NAME) stay readable."""
    text = str(path)
    try:
        relative = os.path.relpath(os.path.abspath(text))
    except ValueError:  # another drive (Windows)
        relative = text
    if not relative.startswith(".."):
        text = relative
    if len(text) <= limit:
        return text
    head = limit // 3
    tail = max(limit - head - 1, len(os.path.basename(text)) + 1)
    return text[:head] + "…" + text[len(text) - tail:]


class RoutecliError(Exception):
    """Base of every error caused by user input (files, options); its message is one line."""

    def __init__(self, message: object = "") -> None:
        super().__init__(one_line(str(message)))


class InstanceFormatError(RoutecliError):
    """An instance or solution file is malformed or describes an impossible instance."""


class OptionError(RoutecliError):
    """A command-line option has a bad value."""
