"""Where the public benchmark sets come from. routecli ships none of their files (TSPLIB and
CVRPLIB are third-party), so a missing input named like one of them gets an error that says
where the data folder has it, or how to download it.
"""

from __future__ import annotations

import re
from pathlib import Path

from routecli.errors import InstanceFormatError, display_path
from routecli.io.registry import registry

SOURCES = {"TSPLIB": "http://comopt.ifi.uni-heidelberg.de/software/TSPLIB95/",
           "CVRPLIB": "http://vrp.galgos.inf.puc-rio.br"}
MAX_SHOWN_PATH = 50  # characters of the path, so the address fits the one error line
SUFFIXES = (".opt.tour", ".tour", ".tsp", ".vrp", ".sol", ".txt")
# Augerat, Christofides-Mingozzi-Toth, Golden, Li, Uchoa X and Arnold-Gendreau-Sorensen names.
_CVRPLIB = re.compile(r"[A-Z]{1,2}-n\d+-k\d+|CMT\d+|Golden_\d+|Li_\d+|"
                      r"(Antwerp|Brussels|Flanders|Ghent|Leuven)\d")
_TSPLIB = re.compile(r"[a-z]+[A-Z]?\d+")  # berlin52, kroA100, a280, usa13509


def benchmark_set(path: str | Path) -> str | None:
    """``TSPLIB`` or ``CVRPLIB`` when ``path``'s name is one of theirs (a registry name, or
    the sets' naming pattern), else ``None``."""
    name = Path(path).name
    suffix = next((s for s in SUFFIXES if name.endswith(s)), "")
    stem = name[: len(name) - len(suffix)]
    entry = registry().get(stem)
    if entry is not None:
        return "TSPLIB" if entry.set.startswith("TSPLIB") else "CVRPLIB"
    if _CVRPLIB.fullmatch(stem) and suffix in (".vrp", ".sol"):
        return "CVRPLIB"
    if _TSPLIB.fullmatch(stem) and suffix in (".tsp", ".opt.tour", ".tour"):
        return "TSPLIB"
    return None


def no_such_file(path: str | Path, what: str = "file") -> InstanceFormatError:
    """The error for a missing input: a benchmark file by name points to the copy in the data
    folder if there is one (:mod:`routecli.io.datasets`), else to ``routecli data fetch`` and
    the set's source."""
    from routecli.io.datasets import locate

    known = benchmark_set(path)
    shown = display_path(path)
    if known is None:
        return InstanceFormatError(f"{shown}: no such {what}")
    shown = shown if len(shown) <= MAX_SHOWN_PATH else f"…/{Path(path).name}"
    there = locate(Path(path).name)
    if there is not None:
        return InstanceFormatError(f"{shown}: no such {what}; the data folder has "
                                   f"{display_path(there)}")
    return InstanceFormatError(f"{shown}: no such {what}; {known} instances are not shipped with "
                               f"routecli: routecli data fetch downloads them (from "
                               f"{SOURCES[known]})")
