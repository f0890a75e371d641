"""``routecli train-nds``: train the NDS deconstruction policy with winner-takes-all policy
gradient (:mod:`routecli.nds.train`). Register with ``app.command("train-nds")(train_nds)``."""

from __future__ import annotations

from typing import Annotated

import typer


def train_nds(
    problem: Annotated[str, typer.Option(help="cvrp, vrptw or pcvrp")] = "cvrp",
    size: Annotated[int, typer.Option(help="customers per training instance")] = 100,
    pe: Annotated[str | None, typer.Option(
        help="positional encoding (default: ipe_inv_xpe for CVRP, ipe_xpe otherwise)")] = None,
    run_dir: Annotated[str | None, typer.Option(help="folder for last.pt, best.pt, log.jsonl"
                                                )] = None,
    steps: Annotated[int, typer.Option(help="optimiser steps")] = 20_000,
    batch: Annotated[int, typer.Option(help="instances per step")] = 8,
    rollouts: Annotated[int, typer.Option(help="rollouts per instance")] = 32,
    remove: Annotated[int, typer.Option(help="customers removed per rollout")] = 15,
    episode: Annotated[int, typer.Option(help="search iterations per batch of instances")] = 60,
    warmup: Annotated[int, typer.Option(help="iterations per episode without a gradient")] = 10,
    lr: Annotated[float, typer.Option(help="AdamW learning rate")] = 1e-4,
    reward: Annotated[str, typer.Option(
        help="clipped (max(0, improvement), Appendix B) or delta (signed improvement)")] = "clipped",
    teacher_steps: Annotated[int, typer.Option(
        help="warm start: the first N steps imitate the best of the string removals "
             "(SISR-style) instead of sampling the policy")] = 0,
    init: Annotated[str | None, typer.Option(
        help="start from this policy checkpoint's weights (e.g. checkpoints/nds-cvrp.pt)")] = None,
    val_every: Annotated[int, typer.Option(help="validate every N steps")] = 300,
    val_instances: Annotated[int, typer.Option(help="validation instances")] = 4,
    val_iterations: Annotated[int, typer.Option(
        help="ASA iterations per validation instance")] = 40,
    checkpoint_every: Annotated[float, typer.Option(help="seconds between last.pt writes")] = 120.0,
    threads: Annotated[int, typer.Option(help="torch CPU threads (0 = default)")] = 1,
    seed: Annotated[int, typer.Option(help="data and initialisation seed")] = 0,
    resume: Annotated[bool, typer.Option(help="continue from run_dir/last.pt if present")] = False,
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
    cfg = NDSTrainConfig(problem=problem, size=size, pe=pe,
                         run_dir=run_dir or f"runs/nds-{problem}", steps=steps, batch=batch,
                         rollouts=rollouts, remove=remove, episode=episode, warmup=warmup, lr=lr,
                         reward=reward, teacher_steps=teacher_steps, init=init,
                         val_every=val_every, val_instances=val_instances,
                         val_iterations=val_iterations, checkpoint_every=checkpoint_every,
                         threads=threads, seed=seed)
    train(cfg, resume=resume)


def main() -> None:
    typer.run(train_nds)


if __name__ == "__main__":
    main()
