"""Learning curves of the controlled PE comparison (issue: a budget where it can answer).

    .venv/bin/python benchmarks/pe_curve.py --problem cvrp --size 20 --pe ipe_inv_xpe,nope \
        --seeds 3 --budget cpu:epochs=40 --val-every 4 --cpu-minutes 60 \
        --out data/runs/pe_curve/cvrp20-cpu-e40
    .venv/bin/python benchmarks/pe_curve.py --out data/runs/pe_curve/cvrp20-cpu-e40 \
        --report benchmarks/results/pe_curve_cvrp20_cpu_e40

Trains every (PE, seed) with ``compare-pe``'s protocol (``--budget`` as there) and evaluates it
every ``--val-every`` epochs on a validation set (``--val-size`` instances, another seed than
the comparison's test set) against PyVRP references (:mod:`routecli.experiments.pe.curve`), one row
per evaluation in ``--out/curve.csv`` (a :class:`routecli.results.ResultStore`: commit, date and
command recorded). Resumable: the weights and training state of every pair are saved in
``--out/state`` after each evaluation (commit the folder to carry a run to the next session);
``--cpu-minutes`` bounds this invocation. ``--report STEM`` writes ``STEM.md`` (mean and seed
sd per evaluated epoch) and ``STEM.png`` from the rows in ``--out``. Run one process per free
core on the same ``--out``: each takes the pairs no other one holds.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from routecli.experiments.pe import curve
from routecli.experiments.pe.paper import expand_pes
from routecli.experiments.pe.protocol import make_protocol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--problem", default="cvrp")
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--backbone", default="dact")
    parser.add_argument("--pe", default="ipe_inv_xpe,nope")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", default="cpu")
    parser.add_argument("--val-every", type=int, default=2, help="epochs between evaluations")
    parser.add_argument("--val-size", type=int, default=64)
    parser.add_argument("--augment", type=int, default=1)
    parser.add_argument("--cpu-minutes", type=float, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N (torch device)")
    parser.add_argument("--report", type=Path, default=None,
                        help="write STEM.md and STEM.png from --out's rows, train nothing")
    args = parser.parse_args(argv)
    if args.report is not None:
        stored = json.loads((args.out / "protocol.json").read_text())
        title = (f"{stored['backbone'].upper()} on {stored['problem'].upper()}-{stored['size']}, "
                 f"budget {stored['budget']}: validation gap ({stored['test_size']} instances, "
                 f"{stored['eval_steps']} steps)")
        text = curve.curve_markdown(args.out, title)
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.with_suffix(".md").write_text(
            text + f"\nRows: `{args.out}/curve.csv`; rebuilt by `python benchmarks/pe_curve.py "
            f"--out {args.out} --report {args.report}`.\n")
        curve.curve_plot(args.out, args.report.with_suffix(".png"), title)
        print(text)
        return 0
    if args.val_every < 1 or args.seeds < 1:
        parser.error("--val-every and --seeds must be >= 1")
    torch.set_num_threads(args.threads)
    protocol = curve.validation_protocol(
        make_protocol(args.problem, args.size, args.backbone, args.budget,
                              augment=args.augment), args.val_size)
    plan = curve.CurvePlan(protocol, tuple(expand_pes(args.pe, args.problem)),
                           tuple(range(args.seeds)), args.val_every)
    done = curve.run_curves(plan, args.out, args.cpu_minutes, device=args.device)
    print(json.dumps({"complete": done, "protocol": asdict(protocol)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
