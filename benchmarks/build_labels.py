"""Grow the committed label stores (PyVRP solutions of training instances, or LKH-3 tours with
``--labeller lkh``), chunk by chunk, round-robin over the stores named, until stopped or
``--hours`` have passed.

    python benchmarks/build_labels.py --store tsp:uniform:100 --store cvrp:uniform:100 \
        --store cvrp:mixed:100 --hours 2.5
    python benchmarks/build_labels.py --labeller lkh --store tsp:uniform:500 \
        --store tsp:uniform:1000

Resumable: each store goes on at its first missing chunk (``data/labels/``, committed). Each
round labels one chunk of every store, a task each (``--executor``, ``--workers``,
``--scheduler``: a local pool by default); this process writes each chunk as it finishes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from routecli.miloop.labels import LabelStore
from routecli.miloop.options import LABELLERS
from routecli.miloop.train import pyvrp_budget
from routecli.tasks import Task, add_executor_options, executor_of, run_tasks

ROOT = Path(__file__).resolve().parents[1] / "data" / "labels"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", action="append", required=True,
                        help="problem:distribution:size (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=1.0,
                        help="nominal PyVRP seconds per label (iteration budget)")
    parser.add_argument("--labeller", choices=LABELLERS, default="pyvrp",
                        help="pyvrp (on --budget) or lkh (TSP, one LKH-3 run per instance)")
    parser.add_argument("--hours", type=float, default=1e9)
    parser.add_argument("--root", type=Path, default=ROOT)
    add_executor_options(parser)
    args = parser.parse_args()
    stores = []
    for spec in args.store:
        problem, distribution, size = spec.split(":")
        stores.append(LabelStore(args.root, problem, distribution, int(size),
                                 pyvrp_budget(args.budget), args.seed, labeller=args.labeller))
    end = time.time() + args.hours * 3600
    owner: dict[str, LabelStore] = {}

    def write(task: Task, arrays: dict) -> None:
        store, chunk = owner[task.key], task.args[0]
        store.write_chunk(chunk, arrays)
        print(f"{store.folder.name} chunk {chunk}: {store.chunk} labels ({len(store)} in all)",
              flush=True)

    with executor_of(args) as engine:
        while time.time() < end:
            tasks = []  # one task per store: its first missing chunk
            for store in stores:
                done = set(store.chunks())
                task = store.chunk_task(next(c for c in range(len(done) + 1) if c not in done))
                tasks.append(task)
                owner[task.key] = store
            run_tasks(tasks, engine, write)

if __name__ == "__main__":
    main()
