"""The public benchmark sets on this machine: the data folder they live in, its layout, where
each set is downloaded from, and the check that a folder holds exactly the registry's instances.

The data folder is ``--data-root`` where a command takes one, else ``$ROUTECLI_DATA``, else
the user data folder (:func:`user_data_folder`, ``~/.local/share/routecli`` on Linux) when it
exists, else ``../shared/benchdata`` from the working folder (this project's own checkout
layout). Under it: ``tsplib/`` (``.tsp`` and ``.opt.tour``), ``cvrplib/X/`` and
``cvrplib/AGS/`` (``.vrp`` and ``.sol``). :func:`fetch` fills it from the sources below;
:func:`check` compares every file with the packaged registry (``bks.csv``), instance by
instance, by fingerprint, so a file that is not the published instance is found.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from routecli.errors import RoutecliError, display_path
from routecli.io.registry import registry

DATA_ROOT_ENV = "ROUTECLI_DATA"
# The PyVRP/Instances commit the registry's CVRPLIB values and fingerprints were checked against.
PYVRP_INSTANCES = ("https://github.com/PyVRP/Instances/archive/"
                   "1445e12e99fc8c252994e45c902ed61db645fa58.tar.gz")


@dataclass(frozen=True)
class DataSet:
    """A public set: its name on the command line, its problem, its ``set`` in the registry, its folder
    under the data root, the suffixes of its instance and solution files, and the archive
    :func:`fetch` unpacks its files from (by the registry's names, wherever they lie in it)."""

    name: str
    problem: str
    registry_set: str
    folder: str
    instance: str
    solutions: tuple[str, ...]
    url: str

    def names(self) -> list[str]:
        """The registry's instances of the set, sorted."""
        return sorted(n for n, e in registry().items() if e.set == self.registry_set)


DATASETS = {s.name: s for s in (
    DataSet("tsplib", "tsp", "TSPLIB", "tsplib", ".tsp", (".opt.tour",),
            "http://comopt.ifi.uni-heidelberg.de/software/TSPLIB95/tsp/ALL_tsp.tar.gz"),
    DataSet("cvrplib-x", "cvrp", "CVRPLIB-X", "cvrplib/X", ".vrp", (".sol",), PYVRP_INSTANCES),
    DataSet("cvrplib-ags", "cvrp", "CVRPLIB-AGS", "cvrplib/AGS", ".vrp", (".sol",), PYVRP_INSTANCES),
)}


class DataError(RoutecliError):
    """A set cannot be downloaded or unpacked (offline, a moved archive, a full disk)."""


def user_data_folder() -> Path:
    """Where routecli keeps data for this user: ``$XDG_DATA_HOME/routecli`` (default
    ``~/.local/share/routecli``), ``~/Library/Application Support/routecli`` on macOS,
    ``%LOCALAPPDATA%\\routecli`` on Windows."""
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "routecli"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "routecli"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "routecli"


def data_root(given: Path | None = None) -> Path | None:
    """The data folder in use (module docstring); ``None`` when none is given and neither
    default folder exists."""
    if given is not None:
        return given
    if os.environ.get(DATA_ROOT_ENV):
        return Path(os.environ[DATA_ROOT_ENV])
    for candidate in (user_data_folder(), Path.cwd().parent / "shared" / "benchdata"):
        if candidate.is_dir():
            return candidate
    return None


def target_root(given: Path | None = None) -> Path:
    """Where :func:`fetch` writes: :func:`data_root`, else the user data folder."""
    return data_root(given) or user_data_folder()


def locate(name: str, root: Path | None = None) -> Path | None:
    """The file ``name`` (``X-n101-k25.vrp``) in the data folder, where its set keeps it."""
    base = data_root(root)
    if base is None:
        return None
    for dataset in DATASETS.values():
        if (base / dataset.folder / name).is_file():
            return base / dataset.folder / name
    return None


@dataclass
class SetStatus:
    """What :func:`check` found for one set: instances present and matching the registry,
    missing, and present but not the registry's instance (or unreadable), with why."""

    dataset: DataSet
    folder: Path
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    wrong: dict[str, str] = field(default_factory=dict)
    solutions: int = 0

    @property
    def complete(self) -> bool:
        return not self.missing and not self.wrong


def check(root: Path, sets: Iterable[str] = tuple(DATASETS), verify: bool = True,
          progress: Callable[[str], None] | None = None) -> list[SetStatus]:
    """Compare the data folder ``root`` with the registry, set by set: every instance file
    present, and (``verify``) read and fingerprinted like the registry's (which takes a while
    on the large ones); ``progress(name)`` after each instance."""
    from routecli.io import read_instance
    from routecli.problems.fingerprint import fingerprint

    statuses = []
    for name in sets:
        dataset = DATASETS[name]
        status = SetStatus(dataset, root / dataset.folder)
        for instance in dataset.names():
            path = status.folder / f"{instance}{dataset.instance}"
            if not path.is_file():
                status.missing.append(instance)
            elif verify:
                try:
                    read = fingerprint(read_instance(path))
                except RoutecliError as exc:
                    status.wrong[instance] = str(exc)
                else:
                    if read != registry()[instance].fingerprint:
                        status.wrong[instance] = "not the published instance (fingerprint differs)"
                    else:
                        status.found.append(instance)
            else:
                status.found.append(instance)
            status.solutions += any((status.folder / f"{instance}{s}").is_file()
                                    for s in dataset.solutions)
            if progress is not None:
                progress(instance)
        statuses.append(status)
    return statuses


def fetch(root: Path, sets: Iterable[str] = tuple(DATASETS),
          log: Callable[[str], None] | None = None) -> dict[str, int]:
    """Download the archives of ``sets`` (each once) and unpack their registry instances and
    solution files into ``root``; returns the files written per set. A file already there is
    left alone. Raises :class:`DataError`, one line, when an archive cannot be had."""
    chosen = [DATASETS[name] for name in sets]
    written: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="routecli-fetch-") as scratch:
        archives: dict[str, Path] = {}
        for dataset in chosen:
            if dataset.url not in archives:
                if log is not None:
                    log(f"downloading {dataset.url}")
                archives[dataset.url] = _download(dataset.url, Path(scratch), len(archives))
            written[dataset.name] = _unpack(archives[dataset.url], dataset, root)
            if log is not None:
                log(f"{dataset.name}: {written[dataset.name]} files written to "
                    f"{display_path(root / dataset.folder)}")
    return written


def _download(url: str, scratch: Path, index: int) -> Path:
    target = scratch / f"archive-{index}"
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(target, "wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        reason = getattr(reason, "strerror", None) or reason
        raise DataError(f"cannot download {url} ({reason}); unpack it by hand into the data "
                        "folder") from None
    return target


def _unpack(archive: Path, dataset: DataSet, root: Path) -> int:
    """Write the set's files found in ``archive`` (a .tar.gz whose members may be gzipped
    themselves, as TSPLIB's are) to ``root/dataset.folder``; files there already stay."""
    wanted = set(dataset.names())
    suffixes = (dataset.instance, *dataset.solutions)
    folder = root / dataset.folder
    count = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                base = member.name.rsplit("/", 1)[-1]
                name = base.removesuffix(".gz")
                suffix = next((s for s in suffixes if name.endswith(s)), None)
                if not member.isfile() or suffix is None or name[: -len(suffix)] not in wanted:
                    continue
                target = folder / name
                if target.exists():
                    continue
                source = tar.extractfile(member)
                assert source is not None
                data = source.read()
                if base.endswith(".gz"):
                    data = gzip.decompress(data)
                folder.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(target.name + ".part")
                partial.write_bytes(data)
                partial.replace(target)
                count += 1
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"{dataset.name}: cannot unpack the archive into "
                        f"{display_path(folder)}: {exc}") from None
    return count
