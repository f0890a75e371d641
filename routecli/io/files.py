"""Which files are instances: the one rule ``solve``, ``bench`` and the BKS lookup share
(where the benchmark instances live: :mod:`routecli.io.datasets`)."""

from __future__ import annotations

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
