"""Forward time of every registered positional encoding on a padded batch of multi-route
solutions; prints a table (not part of the tests).

    .venv/bin/python benchmarks/bench_pe.py --batch 256 --customers 100 --dim 128
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from routecli.pe import PE_REGISTRY, RouteBatch, get_pe


def sweep_batch(batch: int, customers: int, per_route: int, seed: int) -> RouteBatch:
    """Random instances solved by a sweep (angle-sorted customers cut into routes)."""
    rng = np.random.default_rng(seed)
    coords = rng.random((batch, customers + 1, 2))
    rel = coords[:, 1:] - coords[:, :1]
    order = np.argsort(np.arctan2(rel[..., 1], rel[..., 0]), axis=1) + 1
    routes = [np.array_split(o, int(np.ceil(customers / per_route))) for o in order]
    return RouteBatch.from_routes(list(coords), routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--customers", type=int, default=100)
    parser.add_argument("--per-route", type=int, default=10)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    batch = sweep_batch(args.batch, args.customers, args.per_route, seed=0)
    build = time.perf_counter() - start
    table = Table(title=f"PE forward, B={args.batch}, N={args.customers + 1}, D={args.dim}, "
                  f"{torch.get_num_threads()} threads (RouteBatch.from_routes: {build * 1e3:.0f} ms)")
    for col in ("encoding", "kind", "output", "ms / batch", "us / solution"):
        table.add_column(col, justify="left" if col in ("encoding", "kind") else "right")
    for name, spec in PE_REGISTRY.items():
        pe = get_pe(name, args.dim // args.heads if name == "rope" else args.dim,
                    num_heads=args.heads).eval()
        with torch.no_grad():
            out = pe(batch)
            start = time.perf_counter()
            for _ in range(args.repeat):
                pe(batch)
        ms = (time.perf_counter() - start) / args.repeat * 1e3
        table.add_row(name, spec.kind, "x".join(map(str, out.shape)), f"{ms:.1f}",
                      f"{ms * 1e3 / args.batch:.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
