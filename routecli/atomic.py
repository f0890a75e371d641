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
import io
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


def _drop_torn_line(handle: Any) -> None:
    """Cut a last line without its newline (a writer killed mid-row) so the next row starts on
    a line of its own; leave the handle at the end of the file."""
    end = handle.seek(0, os.SEEK_END)  # another process may have appended since the open
    if end == 0 or os.pread(handle.fileno(), 1, end - 1) == b"\n":
        return
    data = os.pread(handle.fileno(), end, 0)
    handle.truncate(data.rfind(b"\n") + 1)
    handle.seek(0, os.SEEK_END)


@contextmanager
def _locked_for_append(path: str | Path) -> Iterator[Any]:
    """``path`` opened for appending under an exclusive lock, opened again when another
    process replaced the file (:func:`append_csv_rows` migrating it) while this one waited."""
    while True:
        with open(path, "a+", newline="") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                current = os.path.samestat(os.fstat(handle.fileno()), os.stat(path))
            except FileNotFoundError:
                current = False
            if current:
                yield handle
                return


def _header(handle: Any) -> list[str]:
    first = os.pread(handle.fileno(), 64 * 1024, 0).split(b"\n", 1)[0]
    return next(csv.reader([first.decode()]), [])


def append_csv_rows(path: str | Path, fields: Sequence[str], rows: Sequence[Mapping[str, Any]],
                    migrate: Callable[[str], str] | None = None,
                    keep: Callable[[str, list[Any]], list[Any]] | None = None) -> bool:
    """Append rows to a CSV (header first when new), flushed to disk before returning; under an
    exclusive lock, so processes sharing a results file never interleave their rows; a row torn
    by a killed writer is dropped first. When the file's header is not ``fields`` and
    ``migrate`` is given, the file becomes ``migrate(its text)`` with the rows after it, under
    the same lock and atomically (a reader sees the old file or the new one). ``keep(the
    file's text, rows)``, read under the lock, chooses the rows appended (those another process
    has not stored meanwhile). Returns whether it migrated."""
    with _locked_for_append(path) as handle:
        _drop_torn_line(handle)
        if keep is not None:
            handle.seek(0)
            rows = keep(handle.read(), list(rows))
            handle.seek(0, os.SEEK_END)
            if not rows:
                return False
        if migrate is not None and handle.tell() > 0 and _header(handle) != list(fields):
            handle.seek(0)
            buffer = io.StringIO(newline="")
            buffer.write(migrate(handle.read()))
            csv.DictWriter(buffer, fieldnames=list(fields)).writerows(rows)
            atomic_write_text(path, buffer.getvalue())
            return True
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        if handle.tell() == 0:
            writer.writeheader()
        writer.writerows(rows)
        handle.flush()
        os.fsync(handle.fileno())
    return False


class LockHeld(Exception):
    """Another process holds the lock :func:`sole_writer` asked for."""


@contextmanager
def claim(lock_path: str | Path) -> Iterator[bool]:
    """Whether this process holds the exclusive lock ``lock_path`` (created if missing) for the
    ``with`` block: ``True`` for the one process that holds it, ``False`` at once for every
    other (even another ``claim`` of the same process). The kernel releases the lock when its
    holder dies, killed or not, so no claim outlives its process."""
    path = Path(lock_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def one_at_a_time(lock_path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock ``lock_path`` (created if missing) for the ``with`` block,
    waiting while another process (or another ``with`` of this one) holds it: for work that
    several processes would otherwise do at once, each checking inside whether it is done."""
    path = Path(lock_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def sole_writer(lock_path: str | Path) -> Iterator[None]:
    """:func:`claim` ``lock_path`` for the ``with`` block, or raise :class:`LockHeld` at once
    when another process holds it (a killed run never leaves the folder locked)."""
    with claim(lock_path) as held:
        if not held:
            raise LockHeld(str(lock_path))
        yield
