"""Benchmark sets: named sets under a data root, a folder, or explicit files."""

from __future__ import annotations

from pathlib import Path

from routecli.errors import OptionError, display_path
from routecli.io.datasets import DATASETS, data_root
from routecli.io.files import folder_instances

# name -> (folder under the data root, file pattern, size buckets key)
NAMED_SETS: dict[str, tuple[str, str, str]] = {
    name: (d.folder, f"*{d.instance}", d.problem) for name, d in DATASETS.items()}


def resolve(targets: list[str], root: Path | None = None) -> list[Path]:
    """Instance files of named sets, folders and files, in the order given, without repeats."""
    files: list[Path] = []
    for target in targets:
        if target in NAMED_SETS:
            base = data_root(root)
            if base is None:
                raise OptionError(f"set {target!r}: no data folder; routecli data fetch "
                                  "downloads the sets (routecli data path says where)")
            folder, pattern, _ = NAMED_SETS[target]
            found = sorted((base / folder).glob(pattern))
            if not found:
                raise OptionError(f"set {target!r}: no {pattern} files in "
                                  f"{display_path(base / folder)}; routecli data fetch --set "
                                  f"{target} downloads them")
            files += found
        elif Path(target).is_dir():
            files += folder_instances(target)
        elif Path(target).is_file():
            files.append(Path(target))
        else:
            known = ", ".join(NAMED_SETS)
            raise OptionError(f"{target!r} is neither a set ({known}), a folder nor a file")
    unique: dict[Path, None] = dict.fromkeys(files)
    return list(unique)


def pick_cvrplib_x(files: list[Path], subset: str) -> list[Path]:
    """CVRPLIB X files sorted by size, then ``all``, ``spread:K`` (K spread evenly over the
    sizes) or a comma list of instance names."""
    by_size = sorted(files, key=lambda f: int(f.stem.split("-")[1][1:]))
    if subset == "all":
        return by_size
    if subset.startswith("spread:"):
        k = int(subset.split(":")[1])
        step = (len(by_size) - 1) / max(k - 1, 1)
        return [by_size[round(i * step)] for i in range(k)]
    names = set(subset.split(","))
    return [f for f in by_size if f.stem in names]
