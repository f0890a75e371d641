"""tsplib95 (an independent TSPLIB implementation) as a cross-check of routecli's fast reader:
the same coordinates, the same explicit matrices and the same edge lengths, file by file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tsplib95

from routecli.io import read_instance
from tests.conftest import BENCHDATA

DATA = Path(__file__).resolve().parents[1] / "data"
BENCH_TSPLIB = BENCHDATA / "tsplib"  # the data folder the tests use (tests/conftest.py)
SMALL = 2_000  # nodes: tsplib95 computes one edge at a time in Python


def agree(path: Path, pairs: int = 400) -> None:
    ours = read_instance(path)
    theirs = tsplib95.load(str(path))
    n = theirs.dimension
    assert ours.size == n
    nodes = list(theirs.get_nodes())  # 1-based
    if theirs.node_coords:
        coords = np.array([theirs.node_coords[v] for v in nodes], np.float64)
        np.testing.assert_array_equal(ours.metric.coords, coords)
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    expected = [theirs.get_weight(nodes[i], nodes[j]) for i, j in zip(src, dst, strict=True)]
    np.testing.assert_array_equal(ours.metric.pairs(src, dst), expected)


@pytest.mark.parametrize("name", ["explicit5.tsp", "full4.tsp", "upper4.tsp", "tiny.tsp"])
def test_fixtures_agree_with_tsplib95(name: str) -> None:
    agree(DATA / name, pairs=50)


def small_tsplib_files() -> list[Path]:
    if not BENCH_TSPLIB.is_dir():
        return []
    files = []
    for path in sorted(BENCH_TSPLIB.glob("*.tsp")):
        head = path.read_text()[:600]
        size = int(next(line.split(":")[1] for line in head.splitlines()
                        if line.strip().upper().startswith("DIMENSION")))
        if size <= SMALL:
            files.append(path)
    return files


@pytest.mark.skipif(not BENCH_TSPLIB.is_dir(), reason=f"{BENCH_TSPLIB} is absent")
@pytest.mark.parametrize("path", small_tsplib_files(), ids=lambda p: p.name)
def test_every_small_tsplib_file_agrees_with_tsplib95(path: Path) -> None:
    agree(path)
