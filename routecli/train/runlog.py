"""The ``log.jsonl`` of a training run, one strict JSON record per line (:func:`append`),
each with the ``step`` it was logged at.

A run resumed from ``last.pt`` continues from the checkpoint's step, which lags the log by up to
``checkpoint_every`` seconds; the steps after it are trained (and logged) again. Before training
resumes, :func:`rewind` drops the records of those steps, so every step appears once.
"""

from __future__ import annotations

import json
from pathlib import Path

from routecli.atomic import atomic_write_text
from routecli.errors import OptionError
from routecli.results.strict_json import dumps


def append(path: Path, record: dict) -> None:
    """Add ``record`` as one line of strict JSON (an undefined number, such as the best gap
    before the first validation, is ``null``: every JSON parser reads the log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(dumps(record) + "\n")


def rewind(path: Path, step: int) -> int:
    """Keep the records of ``path`` logged at or before ``step`` (and drop a line torn by a
    crash mid-write); returns how many records were dropped."""
    if not path.exists():
        return 0
    kept: list[str] = []
    lines = path.read_text().splitlines()
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if int(record.get("step", 0)) <= step:
            kept.append(line)
    if len(kept) < len(lines):
        atomic_write_text(path, "".join(f"{line}\n" for line in kept))
    return len(lines) - len(kept)


def check_run_folder(folder: Path, resume: bool) -> Path:
    """``folder`` as a training run may use it: a fresh run may not start over another run's
    state (``last.pt``, or the compact ``state-bf16.pt`` a clone carries) without ``resume``,
    and ``resume`` needs one of them."""
    states = [name for name in ("last.pt", "state-bf16.pt") if (folder / name).is_file()]
    if states and not resume:
        raise OptionError(f"{folder} holds a training run ({states[0]}); pass --resume to "
                          "continue it, or --out for a new folder")
    if resume and not states:
        raise OptionError(f"--resume: {folder} holds no last.pt or state-bf16.pt to continue; "
                          "drop --resume to start a new run there")
    return folder
