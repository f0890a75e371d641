"""Reading instances and solutions, writing solutions, best-known values.

``read_instance`` reads a file once and picks the reader from it: TSPLIB (``.tsp`` or
``TYPE : TSP``) through :mod:`routecli.io.tsplib`, knapsacks (``.kp`` or ``TYPE : KP``) through
:mod:`routecli.io.kp`, pickup-and-delivery TSPs (``TYPE : PDTSP``) through
:mod:`routecli.io.pdtsp`, everything else (CVRPLIB/VRPLIB ``.vrp``, Solomon ``.txt``) through
:mod:`routecli.io.cvrplib`. ``expand_inputs`` turns the paths a user
gives (files and folders) into instance files.
"""

from __future__ import annotations

from pathlib import Path

from routecli.errors import InstanceFormatError, display_path
from routecli.io.bks import best_known, is_bks_source, registry
from routecli.io.cvrplib import vrplib_from_text
from routecli.io.files import INSTANCE_SUFFIXES, folder_instances
from routecli.io.kp import kp_from_text
from routecli.io.pdtsp import pdtsp_from_text
from routecli.io.solutions import read_solution, solution_suffix, write_solution, written_by_routecli
from routecli.io.sources import no_such_file
from routecli.io.text import declared_type, read_text
from routecli.io.tsplib import tsp_from_text
from routecli.kernels.distance import RULES
from routecli.problems import Instance

ROUND_CHOICES = ("file", "none", *RULES)


def round_rule(option: str | None) -> str | None:
    """Map the CLI's ``--round`` value onto a distance rule (``None`` = the file's own)."""
    if option in (None, "file"):
        return None
    if option == "none":
        return "exact"
    if option not in RULES:
        raise InstanceFormatError(
            f"--round must be one of {', '.join(ROUND_CHOICES)}, got {option!r}")
    return option


def read_instance(path: str | Path, rounding: str | None = None) -> Instance:
    """Read any supported instance file; ``rounding`` as the CLI's ``--round``."""
    p = Path(path)
    return instance_from_text(read_text(p), display_path(p), rounding)


def instance_from_text(text: str, source: str, rounding: str | None = None) -> Instance:
    """The instance of the ``text`` of the file named ``source`` (its suffix picks the
    reader, as for :func:`read_instance`, which shares this rule with the writers'
    read-back)."""
    rule = round_rule(rounding)
    p = Path(source)
    kind = declared_type(text)
    if p.suffix.lower() == ".tsp" or kind == "TSP":
        return tsp_from_text(text, source, rule)
    if p.suffix.lower() == ".kp" or kind == "KP":
        if rule is not None:
            raise InstanceFormatError(f"{source}: --round has no meaning for a knapsack")
        return kp_from_text(text, source)
    if kind == "PDTSP":
        return pdtsp_from_text(text, source, rule)
    return vrplib_from_text(text, source, rule)


def expand_inputs(paths: list[str | Path]) -> list[Path]:
    """Files as given and folders as their instance files (sorted, by the rule ``bench`` uses
    for a folder), in order, without repeats; a path that does not exist is an error."""
    files: list[Path] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            files += folder_instances(p)
        elif p.is_file():
            files.append(p)
        else:
            raise no_such_file(p, "file or folder")
    return list(dict.fromkeys(files))


__all__ = [
    "INSTANCE_SUFFIXES", "ROUND_CHOICES", "best_known", "expand_inputs",
    "folder_instances", "instance_from_text", "is_bks_source", "read_instance", "read_solution", "registry",
    "solution_suffix", "write_solution", "written_by_routecli",
]
