"""Shared fixtures: paths to the test data and to the optional shared benchmark instances."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from routecli.io.datasets import DATA_ROOT_ENV, user_data_folder

DATA = Path(__file__).parent / "data"


def _benchdata() -> Path:
    """The public sets for the tests that need them: ``$ROUTECLI_DATA``, else
    ``../shared/benchdata`` beside the checkout, else the user data folder (``routecli data
    fetch`` fills it)."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "benchdata"
    if os.environ.get(DATA_ROOT_ENV):
        return Path(os.environ[DATA_ROOT_ENV])
    return shared if shared.is_dir() else user_data_folder()


BENCHDATA = _benchdata()
DEEP = 150  # characters of a folder path deeper than most users': messages must still fit


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def benchdata() -> Path:
    if not BENCHDATA.is_dir():
        pytest.skip(f"benchmark instances not available ({BENCHDATA} is absent)")
    return BENCHDATA


@pytest.fixture
def deep_dir(tmp_path: Path) -> Path:
    """An empty folder whose path is at least ``DEEP`` characters long, so that no test of an
    error message depends on where the checkout lives."""
    folder = tmp_path
    while len(str(folder)) < DEEP:
        folder = folder / "a-deliberately-deep-folder"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def malformed_dir(deep_dir: Path) -> Path:
    """A copy of tests/data/malformed in :func:`deep_dir`."""
    shutil.copytree(DATA / "malformed", deep_dir / "malformed")
    return deep_dir / "malformed"


def single_torch_thread():
    """Small tensors: one torch thread is faster, and much faster on a busy machine (a
    conftest makes it an autouse fixture of its folder)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
