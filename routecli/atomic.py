"""The one atomic file writer every part of routecli uses, the one locked CSV appender, and the
lock that gives a folder one writer.

Data goes to a temporary file in the target's folder, is flushed and ``fsync``-ed, gets the
permissions a plain ``open`` would give under the current umask, and is renamed over the
target: a reader sees the old file or the new one, never half of one, and a crash leaves at
most a stray temporary (named ``.<name>.tmp<pid>``), never a truncated target.
"""

from __future__ import annotations

import csv
import fcntl
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(handle)`` on a temporary binary file, then move it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda handle: handle.write(data))


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def append_csv_rows(path: str | Path, fields: Sequence[str],
                    rows: Sequence[Mapping[str, Any]]) -> None:
    """Append rows to a CSV (header first when new), flushed to disk before returning; under an
    exclusive lock, so processes sharing a results file never interleave their rows."""
    with open(path, "a", newline="") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0, os.SEEK_END)  # another process may have appended since the open
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        if handle.tell() == 0:
            writer.writeheader()
        writer.writerows(rows)
        handle.flush()
        os.fsync(handle.fileno())


class LockHeld(Exception):
    """Another process holds the lock :func:`sole_writer` asked for."""


@contextmanager
def sole_writer(lock_path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created if missing) for the ``with`` block, or
    raise :class:`LockHeld` at once when another process holds it. The kernel releases the lock
    when the process dies, so a killed run never leaves the folder locked."""
    with open(lock_path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(str(lock_path)) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
