"""Device, thread and seed rules shared by every command and model."""

from __future__ import annotations

import pytest

from routecli.errors import OptionError
from routecli.resources import check_threads, cores, resolve_device


def test_devices_resolve_and_a_missing_cuda_device_is_refused():
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("AUTO") == ("cuda" if torch.cuda.is_available() else "cpu")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(OptionError, match="--device cuda:99: this machine has"):
        resolve_device("cuda:99")
    if count == 0:
        with pytest.raises(OptionError, match="no CUDA device"):
            resolve_device("cuda")
    for bad in ("gpu", "cuda:", "cuda:x", "tpu:0", ""):
        with pytest.raises(OptionError, match="auto, cpu, cuda or cuda:N"):
            resolve_device(bad)


def test_threads_are_capped_by_the_cores():
    assert check_threads(1) == 1 and check_threads(cores()) == cores()
    for bad in (0, cores() + 1):
        with pytest.raises(OptionError, match="--threads must be between 1 and"):
            check_threads(bad)


def test_memory_is_required_only_above_the_threshold_and_refused_beyond_what_is_free():
    from routecli.resources import MEMORY_CHECK_FROM, available_memory, require_memory

    require_memory(MEMORY_CHECK_FROM - 1, "a small thing")  # not even measured
    require_memory(MEMORY_CHECK_FROM, "a modest thing")
    with pytest.raises(OptionError, match=r"^a huge thing needs about .* GB of memory, more "
                                          r"than 80% of the .* GB available here$"):
        require_memory(available_memory() * 2 + 2**40, "a huge thing")


HUGE = [  # sizes set by options, far beyond any machine: refused at once, before allocating
    ["generate", "tsp", "--size", "10000000", "--num", "10000000", "-o", "x.npz"],
    ["generate", "cvrp", "--num", "10000000", "-o", "x.npz"],
    ["probe", "--set", "cvrp-1000000000", "--num", "1"],
    ["probe", "--pairs", "10000000"],
    ["analyze", "memory", "--size", "10000000", "--num", "1"],
    ["train", "--size", "100000", "--steps", "1", "--batch", "1000", "--rollouts", "100",
     "--out", "run"],
    ["train-nds", "--size", "1000000", "--out", "run"],
    ["compare-pe", "--size", "100000", "--budget", "smoke"],
]


@pytest.mark.parametrize("argv", HUGE, ids=lambda argv: " ".join(argv[:2]))
def test_a_size_the_machine_cannot_hold_is_refused_at_once_under_an_address_space_limit(
        argv, tmp_path):
    """Each run in a child process whose address space is capped (``ulimit -v``): the check
    counts the cap, so the refusal comes instead of a MemoryError or the kernel's kill."""
    import os
    import resource
    import subprocess
    import sys
    import time

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))

    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # this checkout's routecli
    done = subprocess.run([sys.executable, "-m", "routecli", *argv], cwd=tmp_path, text=True,
                          env=env, capture_output=True, preexec_fn=cap, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "GB of memory" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert time.monotonic() - started < 60
    assert [p.name for p in tmp_path.iterdir()] == []
