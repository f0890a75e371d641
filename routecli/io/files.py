"""Which files are instances: the one rule ``solve``, ``bench`` and the BKS lookup share; and
where the benchmark instances live (the data root)."""

from __future__ import annotations

import os
from pathlib import Path

from routecli.errors import InstanceFormatError, display_path

INSTANCE_SUFFIXES = (".tsp", ".vrp", ".txt", ".kp")


def folder_instances(folder: str | Path) -> list[Path]:
    """The instance files (by :data:`INSTANCE_SUFFIXES`) directly inside ``folder``, sorted;
    a folder without any is an error."""
    found = sorted(p for p in Path(folder).iterdir() if p.suffix in INSTANCE_SUFFIXES)
    if not found:
        raise InstanceFormatError(f"{display_path(folder)}: no instance files "
                                  f"({', '.join(INSTANCE_SUFFIXES)}) in this folder")
    return found


DATA_ROOT_ENV = "ROUTECLI_DATA"


def data_root(given: Path | None = None) -> Path | None:
    """``--data-root``, else ``$ROUTECLI_DATA``, else ``../shared/benchdata`` if it exists."""
    if given is not None:
        return given
    if os.environ.get(DATA_ROOT_ENV):
        return Path(os.environ[DATA_ROOT_ENV])
    candidate = Path.cwd().parent / "shared" / "benchdata"
    return candidate if candidate.is_dir() else None
