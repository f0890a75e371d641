"""Where commands write, decided and checked before any work, so a bad output path costs the
user a second, not a long run followed by a traceback or a replaced file.

The one guard of every path a command writes: :func:`output_path` parses each such option
(an empty path, or a name too long for the file system, is refused as the command line is
read), :func:`check_replaceable` checks a file (not a folder, writable, replaced only when
routecli wrote it) and :func:`check_folder` a folder (not a file, writable, and holding
nothing routecli would replace without having written it).

Where ``solve --out`` writes:

The rules: one input and ``--out`` ending in ``.sol``/``.tour`` is that file; anything else is
a folder that gets ``<stem>.sol|.tour`` per input. A TSP or PDTSP solution is a TSPLIB tour and
anything with a depot a CVRPLIB ``.sol``, so a file of the other suffix is refused rather than
written in the wrong format under a misleading name. An existing file is replaced only when
routecli wrote it; a published best-known solution (or any other file) needs ``--force``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from routecli.cli.common import check_writable
from routecli.errors import OptionError, display_path, excerpt

if TYPE_CHECKING:
    from routecli.problems import Instance, Solution

SOLUTION_SUFFIXES = (".sol", ".tour")
NAME_MAX = 255  # bytes of one file name (Linux, macOS, Windows alike)
PATH_MAX = 4095  # bytes of a whole path (Linux)


def output_path(given: str | Path) -> Path:
    """The parser of every option that names a file or folder a command writes (``--out``,
    ``--csv``, ``--figure``): an empty name (which would mean the working folder) and a name
    the file system cannot hold are refused as the command line is read (a default comes in
    as a ``Path``)."""
    text = str(given)
    if not text.strip():
        raise typer.BadParameter("is empty; name a file or a folder")
    too_long = next((part for part in Path(text).parts if len(part.encode()) > NAME_MAX), None)
    if too_long is not None or len(text.encode()) > PATH_MAX:
        what = f"the name {excerpt(too_long)}" if too_long else "the path"
        raise typer.BadParameter(f"{what} is longer than the file system allows "
                                 f"({NAME_MAX} bytes a name, {PATH_MAX} a path)")
    return Path(text)


def check_folder(folder: Path, what: str = "--out") -> None:
    """Refuse, before any work, an output ``folder`` that is a file or cannot be created or
    written in (what it holds is for the command to check: its own files)."""
    if folder.exists() and not folder.is_dir():
        raise OptionError(f"{what} {folder} is a file, not a folder")
    check_writable(folder / ".routecli-probe", what)
TOUR_PROBLEMS = ("tsp", "pdtsp")  # as routecli.io.solution_suffix: these solve to a Tour


def suffix_for(problem: str) -> str:
    return ".tour" if problem in TOUR_PROBLEMS else ".sol"


def solution_targets(out: Path | None, files: list[Path], problems: list[str],
                     force: bool = False) -> list[Path | None]:
    """The solution file of each input (``None`` without ``--out``); raises ``OptionError``
    for any target that cannot or must not be written."""
    if out is None:
        return [None] * len(files)
    if len(files) == 1 and out.suffix in SOLUTION_SUFFIXES:
        targets = [_single_file(out, problems[0])]
    else:
        targets = _in_folder(out, files, problems)
    for target in targets:
        check_replaceable(target, force)
    return list(targets)


def _single_file(out: Path, problem: str) -> Path:
    expected = suffix_for(problem)
    if out.suffix != expected:
        kind = "a TSPLIB tour" if expected == ".tour" else "a CVRPLIB route file"
        raise OptionError(f"--out {display_path(out)}: a {problem.upper()} solution is {kind}; "
                          f"name the file {out.with_suffix(expected).name}")
    return out


def _in_folder(out: Path, files: list[Path], problems: list[str]) -> list[Path]:
    if out.exists() and not out.is_dir():
        raise OptionError(f"--out {display_path(out)} is a file; {len(files)} inputs need a folder"
                          if len(files) > 1 else
                          f"--out {display_path(out)} is a file, not a .sol/.tour file or a folder")
    if out.suffix in SOLUTION_SUFFIXES and not out.exists():
        raise OptionError(f"--out {display_path(out)}: {len(files)} inputs need a folder for "
                          f"--out, not a {out.suffix} file")
    targets = [out / f"{f.stem}{suffix_for(p)}" for f, p in zip(files, problems, strict=True)]
    seen: dict[Path, Path] = {}
    for file, target in zip(files, targets, strict=True):
        if target in seen:
            raise OptionError(f"{display_path(seen[target], 50)} and {display_path(file, 50)} "
                              f"would both be written to --out as {target.name}; "
                              "solve them into different folders")
        seen[target] = file
    return targets


def write_target(target: Path, instance: Instance, solution: Solution) -> Path:
    """Write a solution checked by :func:`solution_targets`; a write that fails all the same
    (the disk filled up during the solve) is one line, not a traceback."""
    from routecli.io import write_solution

    try:
        return write_solution(target, instance, solution)
    except OSError as exc:
        raise OptionError(f"--out {display_path(target)}: cannot write "
                          f"({exc.strerror or type(exc).__name__})") from None


def check_replaceable(target: Path, force: bool | None, what: str = "--out",
                      written: Callable[[Path], bool] | None = None) -> None:
    """Refuse to write ``target`` if it is a folder, cannot be written, or is an existing file
    routecli did not write (unless ``force``; ``None``: the command has no ``--force``, the
    user removes the file). ``written`` tells routecli's files of this kind (default:
    solution files)."""
    from routecli.io import is_bks_source, written_by_routecli

    check_writable(target, what)
    if not target.exists() or force or (written or written_by_routecli)(target):
        return
    if is_bks_source(target):
        raise OptionError(f"{what} {display_path(target)} is the best-known solution of the "
                          "instance beside it; refusing to overwrite it (--force overwrites)")
    raise OptionError(f"{what} {display_path(target)} exists and was not written by routecli; "
                      "refusing to overwrite it (" + ("--force overwrites" if force is not None
                                                     else "remove it or write elsewhere") + ")")
