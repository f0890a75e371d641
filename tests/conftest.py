"""Shared fixtures: paths to the test data and to the optional shared benchmark instances."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
BENCHDATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def benchdata() -> Path:
    if not BENCHDATA.is_dir():
        pytest.skip(f"benchmark instances not available ({BENCHDATA} is absent)")
    return BENCHDATA
