"""Device, thread and seed rules shared by every command and model."""

from __future__ import annotations

import pytest

from routecli.errors import OptionError
from routecli.resources import SEED_MAX, check_seed, check_threads, cores, resolve_device


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


def test_seeds_are_32_bit():
    assert check_seed(0) == 0 and check_seed(SEED_MAX) == SEED_MAX
    for bad in (-1, SEED_MAX + 1, 2**64):
        with pytest.raises(OptionError, match="between 0 and 2\\*\\*32-1"):
            check_seed(bad)


def test_threads_are_capped_by_the_cores():
    assert check_threads(1) == 1 and check_threads(cores()) == cores()
    for bad in (0, cores() + 1):
        with pytest.raises(OptionError, match="--threads must be between 1 and"):
            check_threads(bad)


def test_available_memory_is_a_positive_byte_count():
    from routecli.resources import available_memory

    free = available_memory()
    assert free is None or free > 2**20
