"""``routecli train``: train a MiLoop policy (registered by the app as ``app.command("train")``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from routecli.cli.common import Device, Seed, Threads, console, deprecated, err_console
from routecli.cli.outputs import check_folder, output_path
from routecli.errors import OptionError
from routecli.limits import MAX_INSTANCES, MAX_JOBS, MAX_LR, MAX_STEPS
from routecli.miloop.options import MAX_CANDIDATES, STAGE_RANGES, Distribution, Labeller, Loss, Targets
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS, PrecisionChoice
from routecli.stop import MAX_SECONDS

if TYPE_CHECKING:
    from routecli.train.stopping import StopReason

RUN_FILES = "last.pt, best.pt, log.jsonl"
MILOOP_RUN_FILES = "last.pt, state-bf16.pt, best.pt, log.jsonl"  # with its compact state
# Ranges of the training options (with the shared ones of routecli.limits)
MIN_LR = 1e-8  # below it AdamW moves no weight measurably
MIN_BETA, MAX_BETA = 1e-4, 100.0  # DPO's scale of the preference margin
MAX_LAYERS = 64
MIN_REFERENCE_SECONDS = 0.001  # nominal PyVRP seconds of one reference or label
MAX_ACTIVATION_GB = 1e6


TrainTimeLimit = Annotated[float | None, typer.Option(
    "--time-limit", "-t", min=0.0, max=MAX_SECONDS, metavar="SECONDS",
    help=f"Stop after this many wall-clock seconds, at most {MAX_SECONDS:.0f} (a week), saving "
    "last.pt (--resume continues). Ctrl-C (or SIGTERM) also stops training early and saves "
    "last.pt.")]


def when_written(files: str) -> str:
    """When each of the run ``files`` appears (a run announces them before any exists)."""
    saved = [f for f in files.split(", ") if f not in ("best.pt", "log.jsonl")]
    return (f"log.jsonl as it goes, {' and '.join(saved)} at each checkpoint and at the end, "
            "best.pt after each better validation")


def run_folder(out: Path | None, run_dir: Path | None, default: str, resume: bool,
               files: str = RUN_FILES) -> Path:
    """The run folder (``--out``, or its old spelling ``--run-dir``, else ``default``): a
    folder it can write in (:func:`routecli.cli.outputs.check_folder`), checked as a run
    (:func:`routecli.train.runlog.check_run_folder`) and said out loud."""
    from routecli.train.runlog import check_run_folder

    folder = out or run_dir or Path(default)
    check_folder(folder)
    check_run_folder(folder, resume)
    console.print(f"{'resuming' if resume else 'training'} in {folder}/: {when_written(files)}",
                  markup=False)
    return folder


def report_stop(reason: StopReason | None, folder: Path, step: int) -> None:
    """Say why training stopped early and where it can continue from; an interrupted run
    exits as the shell expects of the signal (130 after Ctrl-C, 143 after SIGTERM)."""
    import signal

    from routecli.stop import noted_signal, signal_exit_code
    from routecli.train.stopping import StopReason

    if reason is None:
        return
    line = (f"{reason} at step {step}: saved {folder / 'last.pt'}; rerun with --resume to "
            "continue")
    if reason is StopReason.INTERRUPTED:
        err_console.print(line, markup=False)
        raise typer.Exit(signal_exit_code(noted_signal() or signal.SIGINT))
    console.print(line, markup=False)


def train(
    problem: Annotated[str, typer.Option(metavar="NAME",
                                         help="tsp, cvrp, pdtsp or kp.")] = "tsp",
    model: Annotated[str, typer.Option("--model", "-m", metavar="NAME", help="Policy to train: miloop.")
                     ] = "miloop",
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="FOLDER", parser=output_path,
        help=f"Run folder for {MILOOP_RUN_FILES} (default: runs/miloop-PROBLEM).")] = None,
    run_dir: Annotated[Path | None, typer.Option(
        "--run-dir", hidden=True, parser=output_path, callback=deprecated("--run-dir", "--out"))] = None,
    size: Annotated[int | None, typer.Option(
        min=STAGE_RANGES["size"][0], max=STAGE_RANGES["size"][1], metavar="N",
        help="One-stage curriculum: instance size (with --steps, --batch, "
        "--rollouts; instead of --curriculum).")] = None,
    steps: Annotated[int | None, typer.Option(
        min=STAGE_RANGES["steps"][0], max=STAGE_RANGES["steps"][1], metavar="N",
        help="One-stage curriculum: optimiser steps.")] = None,
    batch: Annotated[int | None, typer.Option(
        min=STAGE_RANGES["batch"][0], max=STAGE_RANGES["batch"][1], metavar="N",
        help="One-stage curriculum: instances per step.")] = None,
    rollouts: Annotated[int | None, typer.Option(
        min=STAGE_RANGES["rollouts"][0], max=STAGE_RANGES["rollouts"][1], metavar="N",
        help="One-stage curriculum: rollouts per instance.")] = None,
    curriculum_text: Annotated[str | None, typer.Option(
        "--curriculum", metavar="STAGES",
        help="Stages size[-size]:steps:batch:rollouts[:imitation|:supervised], comma-separated "
        "(default per problem; size: nodes, PDTSP pickup+delivery nodes, KP items; a range "
        "draws each step's size from the multiples of 10 in it). An :imitation stage is teacher "
        "forcing on PyVRP solutions labelled step by step (KP: exact optima); a :supervised "
        "stage trains on random suffixes of the solutions of a label pool built in parallel "
        "before the stage and kept in --labels.")] = None,
    loss: Annotated[Loss, typer.Option(metavar="NAME",
                                       help="dpo (reference-free DPO) or reinforce.")] = "dpo",
    beta: Annotated[float, typer.Option(min=MIN_BETA, max=MAX_BETA, metavar="X",
                                        help="DPO preference scale.")] = 0.1,
    lr: Annotated[float, typer.Option(min=MIN_LR, max=MAX_LR, metavar="X",
                                      help="AdamW learning rate.")] = 1e-4,
    decay_at: Annotated[float, typer.Option(
        min=0.0, max=1.0, metavar="SHARE",
        help="Share of the steps after which the learning rate drops x0.1.")
    ] = 0.918,
    warmup_steps: Annotated[int, typer.Option(
        min=0, max=MAX_STEPS, metavar="N", help="Raise the learning rate linearly over the first N steps (0: "
        "none, the paper's recipe). With --init, a fresh AdamW otherwise moves every weight by "
        "about --lr in its first steps, whatever the gradient.")] = 0,
    layers: Annotated[int, typer.Option(min=1, max=MAX_LAYERS, metavar="N",
                                        help="AAFM layers.")] = 3,
    fusion: Annotated[bool, typer.Option(help="Memory fusion (Eq. 4).")] = True,
    gated: Annotated[bool, typer.Option(help="Gated memory update (Eq. 6-7).")] = True,
    memory: Annotated[bool, typer.Option(help="Carry memory across steps.")] = True,
    val_size: Annotated[int | None, typer.Option(
        min=STAGE_RANGES["size"][0], max=STAGE_RANGES["size"][1], metavar="N",
        help="Validation instance size (default: the size of the last curriculum stage, the "
        "one training ends on).")] = None,
    kp_capacity: Annotated[str, typer.Option(
        metavar="C[,C...]", help="KP training capacities, used in turn step by step "
        "(validation cycles through 10, 25, 50, 100).")] = "25",
    val_instances: Annotated[int, typer.Option(min=1, max=MAX_INSTANCES, metavar="N",
                                               help="Validation instances.")] = 64,
    val_every: Annotated[int, typer.Option(min=1, max=MAX_STEPS, metavar="N",
                                           help="Validate every N steps.")] = 200,
    val_time_limit: Annotated[float, typer.Option(
        min=MIN_REFERENCE_SECONDS, max=MAX_SECONDS, metavar="SECONDS",
        help="PyVRP budget per validation reference, in seconds of a quiet "
        "core: run as the iteration count a quiet core makes in that time, so references do "
        "not depend on machine load.")] = 1.0,
    label_time_limit: Annotated[float, typer.Option(
        min=MIN_REFERENCE_SECONDS, max=MAX_SECONDS, metavar="SECONDS",
        help="PyVRP budget per label in imitation and supervised stages, "
        "in seconds of a quiet core (an iteration count, as for validation).")
    ] = 0.1,
    labels: Annotated[Path, typer.Option(
        metavar="FOLDER", parser=output_path,
        help="Label stores of supervised stages (committed chunks), reused by later runs.")
    ] = Path("data/labels"),
    label_instances: Annotated[int, typer.Option(
        min=1, max=MAX_INSTANCES, metavar="N",
        help="Labelled instances per size in a supervised stage.")] = 1000,
    label_jobs: Annotated[int, typer.Option(
        min=1, max=MAX_JOBS, metavar="N", help="Processes labelling a pool.")] = 1,
    labeller: Annotated[Labeller, typer.Option(
        metavar="NAME", help="Who labels the supervised stages' stores: pyvrp (PyVRP on "
        "--label-time-limit) or lkh (TSP: one LKH-3 run per instance through elkai, "
        'pip install -e ".[lkh]"; 2 s per label at 500 nodes, 7 s at 1,000). Each labeller has its '
        "own stores.")] = "pyvrp",
    train_candidates: Annotated[int, typer.Option(
        min=0, max=MAX_CANDIDATES, metavar="K",
        help="Supervised TSP stages above K nodes show each step the K nearest unvisited "
        "nodes of the current node, as decoding does on large instances (--candidates); a "
        "label's next node outside them is visited but not trained on (log.jsonl: "
        "label_outside). 0: every node.")] = 0,
    window: Annotated[int, typer.Option(
        min=0, max=STAGE_RANGES["size"][1], metavar="N",
        help="Supervised stages teacher-force N consecutive decisions at a random place, "
        "the memory before them replayed without gradients (bounded memory on large "
        "instances: 100 at 1,000 nodes). 0: a random suffix of each label.")] = 0,
    targets: Annotated[Targets, typer.Option(
        metavar="NAME", help="Teacher forcing towards the label's action (label) or towards "
        "every action as good as it (equivalent: any end of a route the label has not started "
        "where it starts a route, either neighbour where a tour leaves its start), in "
        "imitation and supervised stages.")] = "label",
    distribution: Annotated[Distribution, typer.Option(
        metavar="NAME", help="Training instances: uniform (the papers') or mixed (TSP, CVRP: "
        "integer grids, clustered or not, normalised as files are read; CVRP depots, demand "
        "ranges and routes of 5 to 150 customers varied).")] = "uniform",
    precision: Annotated[PrecisionChoice, typer.Option(
        metavar="NAME", help="auto (bf16 where the CPU or GPU multiplies bfloat16 natively, "
        "else fp32), bf16 (bfloat16 autocast, float32 master weights) or fp32.")
    ] = "auto",
    compile: Annotated[bool, typer.Option(
        help="Fuse the policy's elementwise work with torch.compile on CPU (needs a C++ "
        "compiler; without one it runs eagerly, with a warning).")] = True,
    activation_gb: Annotated[float, typer.Option(
        min=0.0, max=MAX_ACTIVATION_GB, metavar="GB",
        help="Recompute activations in backward when a step would keep more.")
    ] = 8.0,
    checkpoint_every: Annotated[float, typer.Option(
        min=0.0, max=MAX_SECONDS, metavar="SECONDS",
        help="Seconds between last.pt writes.")] = 120.0,
    log_every: Annotated[int, typer.Option(min=1, max=MAX_STEPS, metavar="N",
                                           help="Log and show progress every N steps.")] = 10,
    threads: Threads = DEFAULT_THREADS,
    device: Device = DEFAULT_DEVICE,
    seed: Seed = 0,
    init: Annotated[str | None, typer.Option(
        metavar="FILE", help="Start from this checkpoint's weights with a fresh optimizer.")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out from its last.pt.")
                      ] = False,
    time_limit: TrainTimeLimit = None,
) -> None:
    """Train MiLoop with reference-free DPO (or REINFORCE), or supervised on PyVRP solutions."""
    from routecli.miloop.train import TrainConfig, Trainer, curriculum, kp_capacities

    if model != "miloop":
        raise OptionError(f"--model: only miloop is trainable here, not {model!r}")
    stages = curriculum(problem, curriculum_text, size=size, steps=steps, batch=batch,
                        rollouts=rollouts)
    cfg = TrainConfig(problem=problem, run_dir=str(run_dir or out or f"runs/miloop-{problem}"),
                      curriculum=stages, loss=loss, beta=beta, lr=lr, decay_at=decay_at,
                      warmup_steps=warmup_steps,
                      seed=seed, init=init, val_instances=val_instances,
                      kp_capacities=kp_capacities(kp_capacity),
                      val_size=val_size or stages[-1].size,
                      val_every=val_every, val_time_limit=val_time_limit,
                      label_time_limit=label_time_limit, labels=str(labels),
                      label_instances=label_instances, label_jobs=label_jobs,
                      distribution=distribution, precision=precision, compile=compile,
                      activation_gb=activation_gb,
                      checkpoint_every=checkpoint_every, log_every=log_every, threads=threads,
                      device=device, layers=layers, fusion=fusion, gated=gated, memory=memory,
                      targets=targets, labeller=labeller, train_candidates=train_candidates,
                      window=window)
    folder = run_folder(out, run_dir, cfg.run_dir, resume, MILOOP_RUN_FILES)
    trainer = Trainer(cfg, resume=resume)
    report_stop(trainer.run(time_limit=time_limit), folder, trainer.step)
