"""Every trainer and decoder of routecli on a GPU beside the CPU, in one command.

    python benchmarks/gpu_check.py --device cuda --out benchmarks/results/gpu_check_h200.md
    python benchmarks/gpu_check.py --device cpu --quick          # CPU only, about a minute

For each model (MiLoop TSP / CVRP / PDTSP / KP with DPO, NDS on CVRP, the compare-pe DACT
backbone on CVRP and N2S on PDTSP) it

1. builds the model from one seed on the CPU and copies the same weights to ``--device``;
2. checks that both devices compute the same thing on fixed inputs, in float32: MiLoop the
   greedy tour costs of a fixed batch, NDS the log-probabilities of fixed removal sequences,
   DACT and N2S the log-probabilities and values of fixed moves (``max |diff|``, relative to
   the largest value, must stay under ``--tolerance``);
3. times ``--steps`` training steps (after one untimed warm-up step: allocation, kernel
   selection) on the CPU and on ``--device`` (mixed precision where the trainer uses it:
   bfloat16 autocast on a CUDA device that supports it), and one decoding call;
4. prints a markdown table of steps per second side by side (``--out`` also writes it).

The exit status is 1 when a device disagrees with the CPU. ``--device cpu`` compares the CPU
with itself (a determinism check) and is how the script is tested.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from routecli.improve.env import Env, initial_orders, make_instances
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.moves import OPERATORS
from routecli.improve.n2s import N2S, N2SConfig
from routecli.improve.train import (
    PPOConfig,
    evaluate,
    generate_instances,
    make_env,
    make_optimizer,
    ppo_segment,
)
from routecli.miloop.decode import decode
from routecli.miloop.train import Stage, TrainConfig, Trainer, sample_batch
from routecli.nds.removal import LearnedRemoval
from routecli.nds.train import Episode, NDSTrainConfig, NDSTrainer
from routecli.nn.device import generator as seeded_generator
from routecli.results import git_commit


@dataclass(frozen=True)
class Sizes:
    """Problem sizes and batches of one run (``--quick`` or the full check)."""

    miloop_size: int
    miloop_batch: int
    miloop_rollouts: int
    nds_size: int
    nds_batch: int
    nds_rollouts: int
    improve_size: int
    improve_batch: int
    embed: int | None  # None: the models' published sizes


FULL = Sizes(miloop_size=50, miloop_batch=16, miloop_rollouts=16, nds_size=100, nds_batch=8,
             nds_rollouts=32, improve_size=50, improve_batch=256, embed=None)
QUICK = Sizes(miloop_size=10, miloop_batch=2, miloop_rollouts=4, nds_size=12, nds_batch=2,
              nds_rollouts=4, improve_size=10, improve_batch=4, embed=16)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device: torch.device, fn: Callable[[], object], repeats: int) -> float:
    """Calls per second of ``fn`` after one untimed call."""
    fn()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    synchronize(device)
    return repeats / (time.perf_counter() - start)


def difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """``max |a - b|`` relative to the largest magnitude (``1`` when shapes differ)."""
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    if a.shape != b.shape:
        return 1.0
    return float((a - b).abs().max() / a.abs().max().clamp_min(1e-12))


@dataclass
class Row:
    model: str
    train: dict[str, float]  # device -> training steps / s
    decode: dict[str, float]  # device -> decoding calls / s
    diff: float


# ------------------------------------------------------------------------------------------
# MiLoop


def miloop_row(problem: str, devices: list[torch.device], sizes: Sizes, steps: int,
               workdir: Path) -> Row:
    size = sizes.miloop_size if problem != "pdtsp" else sizes.miloop_size + sizes.miloop_size % 2
    batch = sample_batch(problem, size, 4, 123, "cpu")
    costs, train, decoding = [], {}, {}
    for device in devices:
        cfg = TrainConfig(problem=problem, run_dir=str(workdir / f"miloop-{problem}-{device}"),
                          curriculum=[Stage(size, steps + 1, sizes.miloop_batch,
                                            sizes.miloop_rollouts)],
                          val_every=10**9, checkpoint_every=1e9, device=str(device),
                          precision="auto" if device.type == "cuda" else "fp32")
        trainer = Trainer(cfg, progress=False)  # seed 0: the same weights on every device
        data = {k: v.to(device) for k, v in batch.items()}
        costs.append(decode(trainer.model.eval(), data, "greedy").cost)
        if str(device) not in train:
            decoding[str(device)] = timed(device, lambda m=trainer.model, d=data: decode(
                m, d, "multistart", starts=8, augment=problem != "kp"), 1)
            train[str(device)] = timed(device, trainer.train_step, steps)
    return Row(f"MiLoop {problem.upper()}-{size} DPO", train, decoding,
               difference(costs[0], costs[-1]))


# ------------------------------------------------------------------------------------------
# NDS


def nds_row(devices: list[torch.device], sizes: Sizes, steps: int, workdir: Path) -> Row:
    train, decoding, logps = {}, {}, []
    for device in devices:
        cfg = NDSTrainConfig(problem="cvrp", size=sizes.nds_size, batch=sizes.nds_batch,
                             rollouts=sizes.nds_rollouts, warmup=0, steps=10**9,
                             embed_dim=sizes.embed or 128, lr_warmup=1, checkpoint_every=1e9,
                             run_dir=str(workdir / f"nds-{device}"), device=str(device))
        trainer = NDSTrainer(cfg, quiet=True)  # seed 0: the same weights on every device
        episode = Episode(cfg, 0)
        feats, batch, allowed = episode.inputs(np.random.default_rng(0))
        model = trainer.model.eval()
        latent = torch.zeros(len(episode.problems), 2, model.config.latent_dim, device=device)
        order = allowed.float().argsort(dim=1, descending=True, stable=True)  # removable first
        actions = torch.stack([order[:, :4], order[:, 4:8]], 1)  # [B, 2, 4]
        with torch.no_grad():
            logps.append(model(feats, batch, allowed, latent, 4, actions=actions,
                               distance=episode.distance)[1])
        if str(device) in train:
            continue
        model.train()
        rng = np.random.default_rng(0)
        gen = seeded_generator(device, 0)
        t = iter(range(10**9))
        train[str(device)] = timed(
            device, lambda tr=trainer, ep=episode, g=gen, r=rng, it=t, c=cfg: tr.train_iteration(
                ep, next(it) % c.episode, r, g), steps)
        removal = LearnedRemoval(trainer.model)
        decoding[str(device)] = timed(device, lambda rm=removal, ep=episode, r=rng, c=cfg: rm.propose(
            ep.problems[0], ep.current[0], r, c.remove, c.rollouts), 1)
    return Row(f"NDS CVRP-{sizes.nds_size} WTA", train, decoding,
               difference(logps[0], logps[-1]))


# ------------------------------------------------------------------------------------------
# compare-pe backbones


def improve_row(name: str, devices: list[torch.device], sizes: Sizes, steps: int) -> Row:
    problem = "cvrp" if name == "dact" else "pdtsp"
    size = sizes.improve_size if problem == "cvrp" else sizes.improve_size + 1
    small = {} if sizes.embed is None else {"embed_dim": sizes.embed, "ff_dim": 2 * sizes.embed}
    raw = generate_instances(problem, size, sizes.improve_batch, 0)
    cfg = PPOConfig()
    train: dict[str, float] = {}
    decoding: dict[str, float] = {}
    outputs: list[torch.Tensor] = []
    orders = fixed = None  # the CPU's random tours and sampled moves, reused on the device
    for device in devices:
        torch.manual_seed(0)
        model = (DACT(DACTConfig(problem=problem, **small)) if name == "dact"
                 else N2S(N2SConfig(**small))).to(device)
        data = make_instances(problem, raw, device=device)
        if orders is None:
            orders = initial_orders(data, seeded_generator(device, 0))
        env = Env(data, orders.to(device), kind=model.kind, window=data.slots - 1)
        with torch.no_grad():
            if fixed is None:
                fixed = model(env.observe(), generator=seeded_generator(device, 0)).action
            decision = model(env.observe(), action=fixed.to(device))
        outputs.append(torch.cat([decision.log_prob, decision.value]))
        if str(device) in train:
            continue
        optimizer = make_optimizer(model, cfg)
        generator = seeded_generator(device, 0)
        segment = make_env(model, data, orders.to(device), OPERATORS)
        train[str(device)] = timed(device, lambda m=model, e=segment, o=optimizer, g=generator:
                                   ppo_segment(m, e, cfg.n_step, cfg, o, g), steps)
        decoding[str(device)] = timed(device, lambda m=model, d=device: evaluate(
            m, problem, raw, 10, 0, augment=8, device=d), 1)
    title = "compare-pe DACT CVRP" if name == "dact" else "compare-pe N2S PDTSP"
    return Row(f"{title}-{size} PPO (x{cfg.n_step} moves)", train, decoding,
               difference(outputs[0], outputs[-1]))


# ------------------------------------------------------------------------------------------


def table(rows: list[Row], devices: list[torch.device], tolerance: float) -> str:
    names = [str(d) for d in dict.fromkeys(devices)]
    head = ["model", *(f"train steps/s {d}" for d in names), *(f"decode calls/s {d}" for d in names),
            "max rel. diff", "same"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.model, *(f"{r.train[d]:.2f}" for d in names),
                 *(f"{r.decode[d]:.2f}" for d in names), f"{r.diff:.1e}",
                 "yes" if r.diff <= tolerance else "NO"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default cuda)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and models, one step")
    parser.add_argument("--steps", type=int, default=None, help="timed training steps (3; 1 quick)")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument("--out", default=None, help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    try:
        device = torch.device(args.device)
    except RuntimeError:
        print(f"error: --device {args.device!r} is not a device (cpu, cuda, cuda:N)",
              file=sys.stderr)
        return 2
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"error: --device {args.device}: CUDA is not available here", file=sys.stderr)
        return 2
    if device.type not in ("cpu", "cuda"):
        print(f"error: --device {args.device}: only cpu and cuda are supported", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    sizes = QUICK if args.quick else FULL
    steps = args.steps or (1 if args.quick else 3)
    devices = [torch.device("cpu"), device]
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for problem in ("tsp", "cvrp", "pdtsp", "kp"):
            rows.append(miloop_row(problem, devices, sizes, steps, Path(tmp)))
            print(f"{rows[-1].model}: done", file=sys.stderr)
        rows.append(nds_row(devices, sizes, steps, Path(tmp)))
        print(f"{rows[-1].model}: done", file=sys.stderr)
        for name in ("dact", "n2s"):
            rows.append(improve_row(name, devices, sizes, steps))
            print(f"{rows[-1].model}: done", file=sys.stderr)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU only"
    report = (f"gpu_check on {name} ({'quick' if args.quick else 'full'} sizes, {steps} timed "
              f"steps, commit {git_commit()}, {time.perf_counter() - started:.0f} s wall, "
              f"{torch.get_num_threads()} CPU threads)\n\n"
              f"{table(rows, devices, args.tolerance)}\n")
    print(report)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(report)
    return 0 if all(r.diff <= args.tolerance for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
