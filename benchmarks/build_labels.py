"""Grow the committed label stores (PyVRP solutions of training instances), chunk by chunk,
round-robin over the stores named, until stopped or ``--hours`` have passed.

    python benchmarks/build_labels.py --store tsp:uniform:100 --store cvrp:uniform:100 \
        --store cvrp:mixed:100 --hours 2.5

Resumable: each store goes on at its first missing chunk (``data/labels/``, committed).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from routecli.miloop.labels import LabelStore
from routecli.miloop.train import pyvrp_budget

ROOT = Path(__file__).resolve().parents[1] / "data" / "labels"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", action="append", required=True,
                        help="problem:distribution:size (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=1.0,
                        help="nominal PyVRP seconds per label (iteration budget)")
    parser.add_argument("--hours", type=float, default=1e9)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    stores = []
    for spec in args.store:
        problem, distribution, size = spec.split(":")
        stores.append(LabelStore(args.root, problem, distribution, int(size),
                                 pyvrp_budget(args.budget), args.seed))
    end = time.time() + args.hours * 3600
    while time.time() < end:
        for store in stores:
            done = set(store.chunks())
            chunk = next(c for c in range(len(done) + 1) if c not in done)
            tick = time.time()
            store.label_chunk(chunk)
            print(f"{store.folder.name} chunk {chunk}: {store.chunk} labels in "
                  f"{time.time() - tick:.0f} s ({len(store)} in all)", flush=True)
            if time.time() >= end:
                break


if __name__ == "__main__":
    main()
