"""Learning curve of MiLoop training runs: validation gap over steps, instances and time.

    .venv/bin/python benchmarks/miloop_curve.py runs/miloop-tsp/log.jsonl runs/miloop-tsp-b/log.jsonl

Reads the JSONL logs written by ``routecli train`` (one or more runs, in order: a run started
with ``--init`` continues the previous one, so instances and time are accumulated across
files) and prints a markdown table. ``log.jsonl@50`` keeps that run only up to step 50 (the
step whose weights the next run was initialised from).
"""

from __future__ import annotations

import json
import sys


def main(paths: list[str]) -> None:
    print("| run | step | stage size | instances (cum.) | train time h (cum.) | val gap % |")
    print("|---|---|---|---|---|---|")
    base_instances, base_elapsed = 0, 0.0
    for spec in paths:
        path, _, cut = spec.partition("@")
        with open(path) as fh:
            records = [json.loads(line) for line in fh]
        if cut:
            records = [r for r in records if r.get("step", 0) <= int(cut)]
        size, last_instances, last_elapsed = "-", 0, 0.0
        for r in records:
            if "size" in r:
                size = int(r["size"])
            if "val_gap" in r:
                print(f"| {path} | {r['step']} | {size} | {base_instances + r['instances']} | "
                      f"{(base_elapsed + r['elapsed']) / 3600:.2f} | {r['val_gap']:.2f} |")
            if "instances" in r:
                last_instances, last_elapsed = r["instances"], r["elapsed"]
        base_instances += last_instances
        base_elapsed += last_elapsed


if __name__ == "__main__":
    main(sys.argv[1:])
