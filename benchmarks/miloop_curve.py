"""Learning curve of MiLoop training runs: validation gap over steps, instances and time.

    .venv/bin/python benchmarks/miloop_curve.py runs/miloop-tsp/log.jsonl runs/miloop-tsp-b/log.jsonl
    .venv/bin/python benchmarks/miloop_curve.py runs/a/log.jsonl@200 runs/b/log.jsonl \
        --start 10.85 --out benchmarks/results/curve_tsp

Reads the JSONL logs written by ``routecli train`` (one or more runs, in order: a run started
with ``--init`` continues the previous one, so instances and time are accumulated across
files) and prints a markdown table. ``log.jsonl@50`` keeps that run only up to step 50 (the
step whose weights the next run was initialised from). Instances seen do not depend on how
busy the machine was; training hours are the wall clock of the training steps, CPU-hours
those of the process where the run logged them (``-`` before). ``--start`` is the validation
gap of the weights the first run started from, measured separately. ``--out OUT`` also writes
``OUT.md`` (with the commit) and ``OUT.png`` (gap against instances, one colour per run).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from routecli.plots import plot_curves
from routecli.results import git_commit


def curve(specs: list[str]) -> list[dict]:
    """Validation rows of the chained runs ``specs`` (``path[@step]``), cumulative."""
    rows: list[dict] = []
    base = {"instances": 0, "elapsed": 0.0, "cpu_seconds": 0.0}
    for spec in specs:
        path, _, cut = spec.partition("@")
        with open(path) as fh:
            records = [json.loads(line) for line in fh]
        if cut:
            records = [r for r in records if r.get("step", 0) <= int(cut)]
        size, last = "-", {"instances": 0, "elapsed": 0.0, "cpu_seconds": 0.0}
        for r in records:
            if "size" in r:
                size = int(r["size"])
            if "val_gap" in r:
                cpu = r.get("cpu_seconds", math.nan)
                rows.append({"run": path, "step": r["step"], "size": size,
                             "instances": base["instances"] + r["instances"],
                             "hours": (base["elapsed"] + r["elapsed"]) / 3600,
                             "cpu_hours": (base["cpu_seconds"] + cpu) / 3600,
                             "val_gap": r["val_gap"]})
            if "instances" in r:
                last = {"instances": r["instances"], "elapsed": r["elapsed"],
                        "cpu_seconds": r.get("cpu_seconds", math.nan)}
        base = {k: base[k] + last[k] for k in base}
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="log.jsonl[@step] of chained runs, in order")
    parser.add_argument("--start", type=float, default=None,
                        help="validation gap (%%) of the starting weights")
    parser.add_argument("--out", type=Path, default=None, help="also write OUT.md and OUT.png")
    args = parser.parse_args(argv)
    missing = [s for s in args.logs if not Path(s.partition("@")[0]).is_file()]
    if missing:
        raise SystemExit(f"error: no such log: {', '.join(missing)}")
    rows = curve(args.logs)
    lines = ["| run | step | stage size | instances (cum.) | train time h (cum.) "
             "| train CPU-h (cum.) | val gap % |", "|---|---|---|---|---|---|---|"]
    if args.start is not None:
        lines.append(f"| (starting weights) | 0 | - | 0 | 0 | 0 | {args.start:.2f} |")
    lines += [f"| {r['run']} | {r['step']} | {r['size']} | {r['instances']} | "
              f"{r['hours']:.2f} | "
              f"{'-' if math.isnan(r['cpu_hours']) else format(r['cpu_hours'], '.2f')} | "
              f"{r['val_gap']:.2f} |" for r in rows]
    print("\n".join(lines))
    if args.out:
        commit = git_commit()
        command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".md").write_text(f"Commit {commit}; `{command}`\n\n"
                                               + "\n".join(lines) + "\n")
        runs = list(dict.fromkeys(r["run"] for r in rows))
        plot_curves({Path(run).parent.name or run: ([r["instances"] for r in rows if r["run"] == run],
                                                    [r["val_gap"] for r in rows if r["run"] == run])
                     for run in runs}, args.out.with_suffix(".png"),
                    "training instances seen (cumulative)", "greedy validation gap to PyVRP (%)",
                    baseline=args.start)
    return rows


if __name__ == "__main__":
    main()
