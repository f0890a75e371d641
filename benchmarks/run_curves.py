"""Validation curves of `routecli train` runs, read from their ``log.jsonl``.

    .venv/bin/python benchmarks/run_curves.py runs/miloop-tsp-sup runs/miloop-tsp-sup2 \
        --start 10.85 --out benchmarks/results/curves_tsp

The x axis is training instances seen, which does not depend on how busy the machine was; the
table adds the training hours (wall clock of the training steps, load-dependent) and, for runs
that logged them, the CPU-hours of the training steps. ``--start`` is the validation gap of the
weights the runs started from (measured separately; a run validates only every ``val_every``
steps), drawn as a dashed line. Writes ``OUT.md`` (with the commit) and ``OUT.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path


def validations(run: Path) -> list[dict]:
    """The validation records of one run (step, instances, hours, CPU-hours, gap)."""
    rows = []
    with open(run / "log.jsonl") as fh:
        for line in fh:
            record = json.loads(line)
            if "val_gap" in record:
                rows.append({"run": run.name, "step": record["step"],
                             "instances": record["instances"],
                             "hours": record["elapsed"] / 3600,
                             "cpu_hours": record.get("cpu_seconds", float("nan")) / 3600,
                             "val_gap": record["val_gap"]})
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (with log.jsonl)")
    parser.add_argument("--start", type=float, default=None,
                        help="validation gap (%%) of the starting weights")
    parser.add_argument("--out", type=Path, required=True, help="OUT.md and OUT.png")
    args = parser.parse_args(argv)
    missing = [str(r) for r in args.runs if not (r / "log.jsonl").is_file()]
    if missing:
        raise SystemExit(f"error: no log.jsonl in {', '.join(missing)}")
    rows = [row for run in args.runs for row in validations(run)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
    lines = [f"Commit {commit}; `{command}`\n",
             "| run | step | instances | train h (wall) | train CPU-h | val gap % |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['run']} | {r['step']} | {r['instances']} | {r['hours']:.2f} | "
              f"{'-' if math.isnan(r['cpu_hours']) else format(r['cpu_hours'], '.2f')} | "
              f"{r['val_gap']:.2f} |" for r in rows]
    if args.start is not None:
        lines.append(f"\nStarting weights: {args.start:.2f}%.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(rows, args.start, args.out.with_suffix(".png"))
    return rows


def plot(rows: list[dict], start: float | None, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == name]
        ax.plot([r["instances"] for r in mine], [r["val_gap"] for r in mine], "o-", label=name)
    if start is not None:
        ax.axhline(start, color="grey", linestyle="--", label="starting weights")
    ax.set_xlabel("training instances seen")
    ax.set_ylabel("greedy validation gap to PyVRP (%)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
