"""Numba kernel throughput: tour cost, route costs, cumulative distance, static KNN.

    .venv/bin/python benchmarks/bench_kernels.py [--tour-nodes 10000000] [--knn-points 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from routecli.kernels import cumulative_route_distance, knn, routes_length, tour_length


def timed(fn) -> float:
    fn()  # compile / warm caches
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tour-nodes", type=int, default=10_000_000)
    parser.add_argument("--knn-points", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=16)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    table = Table(title="routecli kernels")
    for col in ("kernel", "size", "seconds", "throughput"):
        table.add_column(col, justify="right" if col != "kernel" else "left")
    n = args.tour_nodes
    xy = rng.random((n, 2)) * 1e6
    tour = rng.permutation(n)
    for rule in ("euc2d", "exact"):
        s = timed(lambda r=rule: tour_length(xy, tour, r))
        table.add_row(f"tour_length ({rule})", f"{n:,} nodes", f"{s:.3f}", f"{n / s / 1e6:.1f} M edges/s")
    routes = np.array_split(tour[tour != 0], n // 100)
    s = timed(lambda: routes_length(xy, routes, "euc2d"))
    table.add_row("routes_length (euc2d)", f"{len(routes):,} routes", f"{s:.3f}",
                  f"{n / s / 1e6:.1f} M edges/s")
    s = timed(lambda: cumulative_route_distance(xy, tour, "exact"))
    table.add_row("cumulative_route_distance", f"{n:,} nodes", f"{s:.3f}", f"{n / s / 1e6:.1f} M edges/s")
    m = args.knn_points
    pts = rng.random((m, 2))
    s = timed(lambda: knn(pts, args.k))
    table.add_row(f"knn (k={args.k}, cKDTree)", f"{m:,} points", f"{s:.3f}", f"{m / s / 1e3:.0f} k points/s")
    Console().print(table)


if __name__ == "__main__":
    main()
