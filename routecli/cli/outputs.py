"""Where ``solve --out`` writes, decided and checked before the first instance is solved, so a
bad ``--out`` costs the user a second, not a long solve followed by a traceback.

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

from routecli.cli.common import check_writable
from routecli.errors import OptionError, display_path

if TYPE_CHECKING:
    from routecli.problems import Instance, Solution

SOLUTION_SUFFIXES = (".sol", ".tour")
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


def check_replaceable(target: Path, force: bool, what: str = "--out",
                      written: Callable[[Path], bool] | None = None) -> None:
    """Refuse to write ``target`` if it is a folder, cannot be written, or is an existing file
    routecli did not write (unless ``force``). ``written`` tells routecli's files of this
    kind (default: solution files)."""
    from routecli.io import is_bks_source, written_by_routecli

    check_writable(target, what)
    if not target.exists() or force or (written or written_by_routecli)(target):
        return
    if is_bks_source(target):
        raise OptionError(f"{what} {display_path(target)} is the best-known solution of the "
                          "instance beside it; refusing to overwrite it (--force overwrites)")
    raise OptionError(f"{what} {display_path(target)} exists and was not written by routecli; "
                      "refusing to overwrite it (--force overwrites)")
