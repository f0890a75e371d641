"""The per-pair lock of a controlled-comparison run folder (``models/<pe>-s<seed>.lock``,
``untrained.lock``, the curves' ``state/*.lock``): a file created exclusively holding
``pid boot-id``, so several processes on one machine share a run folder (one core each), each
taking the (PE, seed) pairs no other one holds, and a lock whose process has ended (crash,
killed session, an earlier boot) is taken over.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """This machine boot's identity (Linux), so a lock left by a process of an earlier boot,
    whose pid may now belong to another process, counts as stale."""
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def lock_holder_alive(lock: Path) -> bool:
    """Whether the process that wrote ``lock`` (``pid boot-id``) still runs; an empty lock is
    being written (held) unless it is older than a minute (its writer died before writing)."""
    try:
        pid, _, boot = lock.read_text().partition(" ")
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if not pid:
        return age < 60
    if boot.strip() != boot_id():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


@contextmanager
def claimed(lock: Path) -> Iterator[bool]:
    """Whether this process holds ``lock``, created exclusively with its pid; a lock whose
    process has ended (crash, killed session) is taken over. Removed on leaving. This lets
    several processes on one machine share a run folder (one core each), each taking the
    (PE, seed) pairs no other one holds."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            if lock_holder_alive(lock):
                yield False
                return
            lock.unlink(missing_ok=True)
    else:
        yield False
        return
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{os.getpid()} {boot_id()}")
    try:
        yield True
    finally:
        lock.unlink(missing_ok=True)
