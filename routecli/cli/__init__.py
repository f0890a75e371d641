"""The command-line interface: thin Typer commands over library calls."""

import os
import time


def _process_started() -> float:
    """The ``time.perf_counter()`` value at which this process started: from ``/proc`` where
    there is one (Linux; to 10 ms), else now, as this package is imported at start-up."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
            age = float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - max(0.0, age)


_started = {"at": _process_started()}


def command_started() -> float:
    """The ``time.perf_counter()`` value at which the running command started: the process's
    start, or the call of :func:`routecli.cli.app.main` that runs it in-process."""
    return _started["at"]


def start_command() -> None:
    """Mark an in-process command's start (tests, scripts calling ``main([...])``)."""
    _started["at"] = time.perf_counter()
