"""``routecli train-nds``: train the NDS deconstruction policy with winner-takes-all policy
gradient (:mod:`routecli.nds.train`). Register with ``app.command("train-nds")(train_nds)``."""

from __future__ import annotations

from typing import Annotated

import typer

from routecli.cli import choices
from routecli.cli.common import DEFAULT_THREADS, THREADS_HELP
from routecli.cli.train import RUN_FILES, TrainTimeLimit, report_stop, run_folder


def train_nds(
    problem: Annotated[str, typer.Option(
        metavar="NAME", help=", ".join(choices.NDS_PROBLEMS) + ".")] = "cvrp",
    size: Annotated[int, typer.Option(metavar="N", help="Customers per training instance.")
                    ] = 100,
    pe: Annotated[str | None, typer.Option(
        metavar="NAME", help="Positional encoding (default: ipe_inv_xpe for CVRP, ipe_xpe "
        "otherwise): " + ", ".join(choices.PE_NAMES) + ".")] = None,
    out: Annotated[str | None, typer.Option(
        "--out", "-o", metavar="FOLDER",
        help=f"Run folder for {RUN_FILES} (default: runs/nds-PROBLEM).")] = None,
    run_dir: Annotated[str | None, typer.Option("--run-dir", hidden=True)] = None,
    steps: Annotated[int, typer.Option(metavar="N", help="Optimiser steps.")] = 20_000,
    batch: Annotated[int, typer.Option(metavar="N", help="Instances per step.")] = 8,
    rollouts: Annotated[int, typer.Option(metavar="N", help="Rollouts per instance.")] = 32,
    remove: Annotated[int, typer.Option(metavar="N", help="Customers removed per rollout.")
                      ] = 15,
    episode: Annotated[int, typer.Option(
        metavar="N", help="Search iterations per batch of instances.")] = 60,
    warmup: Annotated[int, typer.Option(
        metavar="N", help="Iterations per episode without a gradient.")] = 10,
    lr: Annotated[float, typer.Option(metavar="X", help="AdamW learning rate.")] = 1e-4,
    bias_lr: Annotated[float | None, typer.Option(
        metavar="X", help="Learning rate of the decoder's distance bias (default: --lr; with "
        "--lr 0 only the bias trains).")] = None,
    reward: Annotated[str, typer.Option(
        metavar="NAME", help="clipped (max(0, improvement), Appendix B) or delta (signed "
        "improvement).")] = "clipped",
    teacher_steps: Annotated[int, typer.Option(
        metavar="N", help="Warm start: the first N steps imitate the best of the string "
        "removals (SISR-style) instead of sampling the policy.")] = 0,
    init: Annotated[str | None, typer.Option(
        metavar="FILE", help="Start from this policy checkpoint's weights (e.g. "
        "routecli/checkpoints/nds-cvrp.pt).")] = None,
    val_every: Annotated[int, typer.Option(metavar="N", help="Validate every N steps.")] = 300,
    val_instances: Annotated[int, typer.Option(metavar="N", help="Validation instances.")] = 4,
    val_iterations: Annotated[int, typer.Option(
        metavar="N", help="Search iterations per validation instance.")] = 40,
    checkpoint_every: Annotated[float, typer.Option(
        metavar="SECONDS", help="Seconds between last.pt writes.")] = 120.0,
    threads: Annotated[int, typer.Option(min=1, metavar="N", help=THREADS_HELP)
                       ] = DEFAULT_THREADS,
    seed: Annotated[int, typer.Option(metavar="N", help="Data and initialisation seed.")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out from its last.pt.")
                      ] = False,
    time_limit: TrainTimeLimit = None,
) -> None:
    """Train the NDS removal policy (PE paper Appendix E) on generated instances."""
    from routecli.nds.policy import PROBLEMS
    from routecli.nds.train import NDSTrainConfig, train
    from routecli.pe.registry import PE_REGISTRY

    if problem not in PROBLEMS:
        raise typer.BadParameter(f"choose one of {', '.join(PROBLEMS)}", param_hint="--problem")
    if reward not in ("delta", "clipped"):
        raise typer.BadParameter("choose delta or clipped", param_hint="--reward")
    if pe is not None and pe.lower().replace("-", "_").replace("+", "_") not in PE_REGISTRY:
        raise typer.BadParameter(f"choose one of {', '.join(PE_REGISTRY)}", param_hint="--pe")
    folder = run_folder(out, run_dir, f"runs/nds-{problem}", resume)
    cfg = NDSTrainConfig(problem=problem, size=size, pe=pe,
                         run_dir=str(folder), steps=steps, batch=batch,
                         rollouts=rollouts, remove=remove, episode=episode, warmup=warmup, lr=lr,
                         bias_lr=bias_lr,
                         reward=reward, teacher_steps=teacher_steps, init=init,
                         val_every=val_every, val_instances=val_instances,
                         val_iterations=val_iterations, checkpoint_every=checkpoint_every,
                         threads=threads, seed=seed)
    trainer, reason = train(cfg, resume=resume, time_limit=time_limit)
    report_stop(reason, folder, trainer.step)


def main() -> None:  # ``python -m routecli.cli.train_nds``, as the NDS model cards record
    typer.run(train_nds)


if __name__ == "__main__":
    main()
