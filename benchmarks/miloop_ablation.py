"""MiLoop ablations (MiLoop Tables 4-5) on a CPU-scaled protocol, resumable.

    .venv/bin/python benchmarks/miloop_ablation.py --variants all --seeds 5 --train-size 50 \
        --steps 1000 --test-sizes 50,250,500 --out benchmarks/results/miloop_ablation_tsp50

Trains every variant of :data:`routecli.experiments.ablation.VARIANTS` from scratch with each
seed (run folders under ``--runs``, resumed from their ``last.pt``), on the same TSP instance
stream for the same number of updates (``--steps``; or, with ``--steps 0``, the CPU budget of
``--cpu-minutes`` spent by each variant's first seed), decodes the fixed test sets greedily
and appends one row per test instance to ``OUT/rows.csv`` (commit, command and protocol
recorded). Each (variant, seed) is a task (``--executor``, ``--workers``, ``--scheduler``: in
this process by default, a local pool, or Dask); this process writes the rows as tasks
finish. A rerun skips what is done. Then writes ``OUT/summary.md`` (Table 5's layout, mean
± sd over seeds, the difference from the full model with its 95% interval, Holm-corrected p
and verdict, the paper's values beside) and ``OUT/curves.png`` (validation gap against
CPU-minutes, one line per run). ``--summary-only`` only writes the summary of the rows there.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from routecli.atomic import atomic_write_text
from routecli.errors import RoutecliError
from routecli.experiments.ablation import (
    VARIANTS,
    Evaluation,
    Protocol,
    markdown,
    parse_variants,
    plot_curves,
    run_study,
    set_name,
    summarize,
)
from routecli.results import Provenance, ResultLog, ResultRow, git_commit
from routecli.tasks import add_executor_options, executor_of

EXTRA = ["train_steps", "train_cpu_seconds"]  # the rows' columns beyond the result row's


def store(path: Path, protocol: Protocol
          ) -> tuple[Callable[[str, int, int], bool], Callable[[Evaluation], None]]:
    """The study's ``is_done`` and ``record`` over the result log at ``path``: one row per test
    instance, keyed by variant, seed, test set and settings."""
    rec = ResultLog(path, extra=EXTRA)
    provenance = Provenance.current()

    def is_done(name: str, seed: int, size: int) -> bool:
        return rec.find(solver=name, seed=seed, set=set_name(size, protocol),
                        settings=protocol.settings(name), instance=protocol.test_num - 1) \
            is not None

    def record(result: Evaluation) -> None:
        settings = protocol.settings(result.variant)
        per_instance = result.seconds / len(result.costs)
        for k, (cost, reference, gap) in enumerate(zip(result.costs, result.reference,
                                                      result.gaps, strict=True)):
            key = {"solver": result.variant, "seed": result.seed, "instance": k,
                   "set": set_name(result.size, protocol), "settings": settings}
            if rec.find(**key) is None:
                rec.add_row(ResultRow(provenance.commit, provenance.date, provenance.command,
                                  key["set"], str(k), "", "tsp", result.size, result.variant,
                                  settings, result.seed, None, None, float(cost),
                                  float(reference), float(gap), per_instance, True, ""),
                        train_steps=result.train_steps,
                        train_cpu_seconds=round(result.train_cpu_seconds, 1))

    return is_done, record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="all", help="all or comma-separated names")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per variant")
    parser.add_argument("--train-size", type=int, default=20, help="TSP nodes in training")
    parser.add_argument("--batch", type=int, default=8, help="instances per step")
    parser.add_argument("--rollouts", type=int, default=20, help="rollouts per instance")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--steps", type=int, default=0,
                        help="updates of every (variant, seed); 0: --cpu-minutes decides")
    parser.add_argument("--cpu-minutes", type=float, default=30.0,
                        help="with --steps 0: CPU budget of the first seed of each variant")
    parser.add_argument("--chunk", type=int, default=50,
                        help="steps between budget checks (each ends with a validation)")
    parser.add_argument("--val-instances", type=int, default=64)
    parser.add_argument("--test-sizes", default="20,50,100", help="comma-separated TSP sizes")
    parser.add_argument("--test-num", type=int, default=128, help="test instances per size")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--jobs", type=int, default=1, help="processes for PyVRP references")
    add_executor_options(parser, workers=1)  # (variant, seed) runs at once
    parser.add_argument("--no-compile", action="store_true", help="run the policy eagerly")
    parser.add_argument("--runs", type=Path, default=Path("runs/miloop-ablation"),
                        help="run folders (weights, optimizer, log)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/miloop_ablation"),
                        help="result folder (rows.csv, logs/, summary.md, curves.png)")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "benchmarks/miloop_ablation.py",
                          *(sys.argv[1:] if argv is None else argv)])
    try:
        names = parse_variants(args.variants)
        protocol = Protocol(args.train_size, args.batch, args.rollouts, args.lr,
                            args.cpu_minutes, args.chunk, args.val_instances,
                            tuple(int(s) for s in args.test_sizes.split(",")), args.test_num,
                            steps=args.steps)
        if not args.summary_only:
            is_done, record = store(args.out / "rows.csv", protocol)
            run_study(names, list(range(args.seeds)), protocol, args.runs, args.out / "logs",
                      is_done, record, threads=args.threads, compile=not args.no_compile,
                      jobs=args.jobs, log=lambda line: print(line, flush=True),
                      executor=executor_of(args))
    except (RoutecliError, ValueError) as err:
        raise SystemExit(f"error: {err}") from None
    except KeyboardInterrupt:
        raise SystemExit("interrupted: the run in progress saved its last.pt; rerun the same "
                         "command to resume") from None
    rows_path = args.out / "rows.csv"
    if not rows_path.is_file():
        raise SystemExit(f"error: {rows_path} has no rows yet")
    rows = [r for r in ResultLog(rows_path, extra=EXTRA).rows
            if r["solver"] in VARIANTS and r["settings"] == protocol.settings(r["solver"])]
    text = f"Commit {git_commit()}\n\n" + markdown(summarize(rows), protocol, command)
    atomic_write_text(args.out / "summary.md", text)
    if (args.out / "logs").is_dir():
        plot_curves(args.out / "logs", args.out / "curves.png")
    print(text)


if __name__ == "__main__":
    main()
