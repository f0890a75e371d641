"""One task: a stable key, a module-level function and its (picklable) arguments."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Task:
    """``run(*args)`` in any process. ``key`` names it to the executor (Dask's task key) and
    in messages, and is the same on every run of the same work, so a resumed run finds what is
    done; ``run`` is a module-level function (workers import it by name)."""

    key: str
    run: Callable[..., Any]
    args: tuple[Any, ...] = ()


def task_key(kind: str, label: str, **what: Any) -> str:
    """A stable key: ``kind``, a readable ``label`` (an instance, a (PE, seed) pair) and a
    digest of ``what`` identifies the work (model, settings, seed, budget), as JSON with
    sorted keys, so equal work has equal keys on every machine and run."""
    text = json.dumps(what, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9_.+-]+", "-", label).strip("-")[:80]
    return f"{kind}-{readable}-{digest}"


@dataclass(frozen=True)
class Outcome:
    """What a task gave: its ``value``, or the one-line ``error`` it raised (after the
    executor's retries)."""

    value: Any = None
    error: str | None = None

    @classmethod
    def failed(cls, exc: BaseException) -> Outcome:
        text = str(exc).strip()
        return cls(error=f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
