"""``routecli train``: train a MiLoop policy (registered by the app as ``app.command("train")``)."""

from __future__ import annotations

from typing import Annotated

import typer

DEFAULT_CURRICULUM = {
    "tsp": "20:600:8:20,50:400:4:25,100:100000:2:25",
    "cvrp": "20:600:8:20,50:400:4:25,100:100000:2:25",
}


def train(
    problem: Annotated[str, typer.Option(help="tsp or cvrp")] = "tsp",
    model: Annotated[str, typer.Option(help="policy to train (miloop)")] = "miloop",
    run_dir: Annotated[str | None, typer.Option(help="folder for last.pt, best.pt, log.jsonl"
                                                )] = None,
    curriculum: Annotated[str | None, typer.Option(
        help="stages size:steps:batch:rollouts[:imitation], comma-separated (default per "
        "problem); an :imitation stage is a supervised warm start on PyVRP solutions")] = None,
    loss: Annotated[str, typer.Option(help="dpo (reference-free DPO) or reinforce")] = "dpo",
    beta: Annotated[float, typer.Option(help="DPO preference scale")] = 0.1,
    lr: Annotated[float, typer.Option(help="AdamW learning rate")] = 1e-4,
    decay_at: Annotated[float, typer.Option(help="fraction of steps where lr drops x0.1")] = 0.918,
    layers: Annotated[int, typer.Option(help="AAFM layers")] = 3,
    fusion: Annotated[bool, typer.Option(help="memory fusion (Eq. 4)")] = True,
    gated: Annotated[bool, typer.Option(help="gated memory update (Eq. 6-7)")] = True,
    memory: Annotated[bool, typer.Option(help="carry memory across steps")] = True,
    val_size: Annotated[int, typer.Option(help="validation instance size")] = 100,
    val_instances: Annotated[int, typer.Option(help="validation instances")] = 64,
    val_every: Annotated[int, typer.Option(help="validate every N steps")] = 200,
    val_time_limit: Annotated[float, typer.Option(help="PyVRP seconds per reference")] = 1.0,
    label_time_limit: Annotated[float, typer.Option(
        help="PyVRP seconds per label in imitation stages")] = 0.1,
    checkpoint_every: Annotated[float, typer.Option(help="seconds between last.pt writes")] = 120.0,
    log_every: Annotated[int, typer.Option(help="log every N steps")] = 10,
    threads: Annotated[int, typer.Option(help="torch CPU threads (0 = default)")] = 0,
    device: Annotated[str, typer.Option(help="cpu or cuda")] = "cpu",
    seed: Annotated[int, typer.Option(help="data and initialisation seed")] = 0,
    init: Annotated[str | None, typer.Option(
        help="start from this checkpoint's weights with a fresh optimizer")] = None,
    resume: Annotated[bool, typer.Option(help="continue from run_dir/last.pt if present")] = False,
) -> None:
    """Train MiLoop with reference-free DPO (or REINFORCE) on uniform instances."""
    from routecli.miloop.train import Stage, TrainConfig, Trainer

    if model != "miloop":
        raise typer.BadParameter(f"only miloop is trainable here, not {model!r}", param_hint="--model")
    if problem not in DEFAULT_CURRICULUM:
        raise typer.BadParameter("choose tsp or cvrp", param_hint="--problem")
    if loss not in ("dpo", "reinforce"):
        raise typer.BadParameter("choose dpo or reinforce", param_hint="--loss")
    try:
        stages = Stage.parse_list(curriculum or DEFAULT_CURRICULUM[problem])
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--curriculum") from err
    cfg = TrainConfig(problem=problem, run_dir=run_dir or f"runs/miloop-{problem}",
                      curriculum=stages, loss=loss, beta=beta, lr=lr, decay_at=decay_at,
                      seed=seed, init=init, val_size=val_size, val_instances=val_instances,
                      val_every=val_every, val_time_limit=val_time_limit,
                      label_time_limit=label_time_limit,
                      checkpoint_every=checkpoint_every, log_every=log_every, threads=threads,
                      device=device, layers=layers, fusion=fusion, gated=gated, memory=memory)
    Trainer(cfg, resume=resume).run()


def main() -> None:
    typer.run(train)


if __name__ == "__main__":
    main()
