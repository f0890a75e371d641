"""``routecli train-nds``: train the NDS deconstruction policy with winner-takes-all policy
gradient (:mod:`routecli.nds.train`). Register with ``app.command("train-nds")(train_nds)``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from routecli.cli import choices
from routecli.cli.common import Device, Seed, Threads, deprecated
from routecli.cli.outputs import output_path
from routecli.cli.train import RUN_FILES, TrainTimeLimit, report_stop, run_folder
from routecli.limits import (
    MAX_BATCH,
    MAX_INSTANCES,
    MAX_LR,
    MAX_NODES,
    MAX_ROLLOUTS,
    MAX_STEPS,
)
from routecli.nds.options import PROBLEMS, Problem, Reward
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS
from routecli.stop import MAX_SECONDS


def train_nds(
    problem: Annotated[Problem, typer.Option(
        metavar="NAME", help=", ".join(PROBLEMS) + ".")] = "cvrp",
    size: Annotated[int, typer.Option(min=2, max=MAX_NODES, metavar="N",
                                      help="Customers per training instance.")] = 100,
    pe: Annotated[str | None, typer.Option(
        metavar="NAME", help="Positional encoding (default: ipe_inv_xpe for CVRP, ipe_xpe "
        "otherwise): " + ", ".join(choices.PE_NAMES) + ".")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="FOLDER", parser=output_path,
        help=f"Run folder for {RUN_FILES} (default: runs/nds-PROBLEM).")] = None,
    run_dir: Annotated[Path | None, typer.Option(
        "--run-dir", hidden=True, parser=output_path, callback=deprecated("--run-dir", "--out"))] = None,
    steps: Annotated[int, typer.Option(min=1, max=MAX_STEPS, metavar="N",
                                       help="Optimiser steps.")] = 20_000,
    batch: Annotated[int, typer.Option(min=1, max=MAX_BATCH, metavar="N",
                                       help="Instances per step.")] = 8,
    rollouts: Annotated[int, typer.Option(min=2, max=MAX_ROLLOUTS, metavar="N",
                                          help="Rollouts per instance (the best one wins).")
                        ] = 32,
    remove: Annotated[int, typer.Option(min=1, max=MAX_NODES, metavar="N",
                                        help="Customers removed per rollout, below --size.")
                      ] = 15,
    episode: Annotated[int, typer.Option(
        min=1, max=MAX_STEPS, metavar="N", help="Search iterations per batch of instances.")
    ] = 60,
    burn_in: Annotated[int, typer.Option(
        min=0, max=MAX_STEPS, metavar="N",
        help="Search iterations at the start of each episode that train nothing "
        "(the policy only searches).")] = 10,
    warmup: Annotated[int | None, typer.Option(
        "--warmup", min=0, max=MAX_STEPS, hidden=True,
        callback=deprecated("--warmup", "--burn-in"))] = None,
    lr: Annotated[float, typer.Option(min=0.0, max=MAX_LR, metavar="X",
                                      help="AdamW learning rate.")] = 1e-4,
    bias_lr: Annotated[float | None, typer.Option(
        min=0.0, max=MAX_LR, metavar="X",
        help="Learning rate of the decoder's distance bias (default: --lr; with "
        "--lr 0 only the bias trains).")] = None,
    reward: Annotated[Reward, typer.Option(
        metavar="NAME", help="clipped (max(0, improvement), Appendix B) or delta (signed "
        "improvement).")] = "clipped",
    teacher_steps: Annotated[int, typer.Option(
        min=0, max=MAX_STEPS, metavar="N",
        help="Warm start: the first N steps imitate the best of the string "
        "removals (SISR-style) instead of sampling the policy.")] = 0,
    init: Annotated[str | None, typer.Option(
        metavar="FILE", help="Start from this policy checkpoint's weights (e.g. "
        "routecli/checkpoints/nds-cvrp.pt).")] = None,
    val_every: Annotated[int, typer.Option(min=1, max=MAX_STEPS, metavar="N",
                                           help="Validate every N steps.")] = 300,
    val_instances: Annotated[int, typer.Option(min=1, max=MAX_INSTANCES, metavar="N",
                                               help="Validation instances.")] = 4,
    val_iterations: Annotated[int, typer.Option(
        min=1, max=MAX_STEPS, metavar="N", help="Search iterations per validation instance.")
    ] = 40,
    checkpoint_every: Annotated[float, typer.Option(
        min=0.0, max=MAX_SECONDS, metavar="SECONDS", help="Seconds between last.pt writes.")
    ] = 120.0,
    threads: Threads = DEFAULT_THREADS,
    device: Device = DEFAULT_DEVICE,
    seed: Seed = 0,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out from its last.pt.")
                      ] = False,
    time_limit: TrainTimeLimit = None,
) -> None:
    """Train the NDS removal policy (PE paper Appendix E) on generated instances."""
    from routecli.nds.train import NDSTrainConfig, train

    cfg = NDSTrainConfig(problem=problem, size=size, pe=pe,
                         run_dir=str(run_dir or out or f"runs/nds-{problem}"), steps=steps,
                         batch=batch,
                         rollouts=rollouts, remove=remove, episode=episode,
                         warmup=burn_in if warmup is None else warmup, lr=lr,
                         bias_lr=bias_lr,
                         reward=reward, teacher_steps=teacher_steps, init=init,
                         val_every=val_every, val_instances=val_instances,
                         val_iterations=val_iterations, checkpoint_every=checkpoint_every,
                         threads=threads, device=device, seed=seed)
    folder = run_folder(out, run_dir, cfg.run_dir, resume)
    trainer, reason = train(cfg, resume=resume, time_limit=time_limit)
    report_stop(reason, folder, trainer.step)


def main() -> None:  # ``python -m routecli.cli.train_nds``, as the NDS model cards record
    typer.run(train_nds)


if __name__ == "__main__":
    main()
