"""The resources a run may use, with one meaning for every model and command: the torch
device, its arithmetic (precision), CPU threads and the random seed.

Torch loads only inside :func:`resolve_device`, so the command line can declare and check
these options without paying for it at ``--help`` time.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from typing import Literal, get_args

from routecli.errors import OptionError

DEVICE_HELP = ("Torch device: auto (CUDA when present, else cpu), cpu, cuda or cuda:N; models "
               "without torch run on the CPU.")
DEFAULT_DEVICE = "auto"
DEFAULT_THREADS = 1  # torch's default, one per core, crawls on a core other jobs use
SEED_MAX = 2**32 - 1  # numpy's and PyVRP's seeds are 32-bit
SEED_HELP = f"Random seed, 0..2**32-1 ({SEED_MAX})."
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")

# The one precision vocabulary of every model: the arithmetic a model runs in, and what a user
# asks for (auto: bf16 where the device multiplies bfloat16 natively, on a CPU only for a model
# whose policy says it gains there; routecli.nn.device.resolve_precision).
Precision = Literal["fp32", "bf16"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
PrecisionChoice = Literal["auto", "fp32", "bf16"]
PRECISION_CHOICES: tuple[PrecisionChoice, ...] = get_args(PrecisionChoice)


def resolve_device(name: str) -> str:
    """``name`` as a torch device string (``auto``: ``cuda`` when CUDA is present, else
    ``cpu``); a CUDA device this machine lacks is refused."""
    text = name.strip().lower()
    if not _DEVICE.fullmatch(text):
        raise OptionError(f"--device must be auto, cpu, cuda or cuda:N, got {name!r}")
    if text == "cpu":
        return text
    import torch

    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if text == "auto":
        return "cuda" if available else "cpu"
    index = int(text.partition(":")[2] or 0)
    if index >= available:
        have = f"{available} CUDA device(s)" if available else "no CUDA device"
        raise OptionError(f"--device {name}: this machine has {have} (use cpu or auto)")
    return text


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def check_threads(threads: int) -> int:
    """``threads`` if between 1 and the core count (more only slows torch down)."""
    if not 1 <= threads <= cores():
        raise OptionError(f"--threads must be between 1 and the {cores()} core(s) here, "
                          f"got {threads}")
    return threads



# Below this many bytes an allocation is not worth reading /proc for (training steps and
# small instances call the check often).
MEMORY_CHECK_FROM = 256 * 2**20
MEMORY_SHARE = 0.8  # of the memory available that one run may plan on: the rest stays for others


def available_memory() -> float:
    """Bytes this process may still allocate without swapping: the memory the system reports
    available (Linux's ``MemAvailable``; free pages elsewhere), and what an address-space
    limit (``ulimit -v``) leaves above the process's current size; infinite where neither is
    known."""
    import resource

    room = math.inf
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            room = next((int(line.split()[1]) * 1024 for line in fh
                         if line.startswith("MemAvailable:")), math.inf)
    except OSError:
        with contextlib.suppress(AttributeError, ValueError, OSError):  # no such name here
            room = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as fh:
                used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            used = 0
        room = min(room, max(0, limit - used))
    return room


def require_memory(nbytes: float, what: str) -> None:
    """Refuse at once, with one line naming the memory it needs, work whose estimated peak
    ``nbytes`` is more than :data:`MEMORY_SHARE` of the memory available: the one check
    every allocation sized by a user's number (an option, a set name, a file's size) makes
    first, instead of swapping, being killed or failing half-way."""
    if nbytes < MEMORY_CHECK_FROM:
        return
    room = available_memory()
    if nbytes > MEMORY_SHARE * room:
        raise OptionError(f"{what} needs about {_gb(nbytes)} of memory, more than "
                          f"{MEMORY_SHARE:.0%} of the {_gb(room)} available here")


def _gb(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GB" if nbytes < 2**30 * 1e6 else f"{nbytes / 2**30:.2e} GB"
