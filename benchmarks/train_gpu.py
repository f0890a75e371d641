"""Fine-tune a shipped MiLoop checkpoint for a fixed number of minutes, with large batches on a
GPU, and write the checkpoint and its model card.

    python benchmarks/train_gpu.py --problem cvrp --minutes 12 --device cuda --out runs/gpu-cvrp

One command: it starts from ``routecli/checkpoints/miloop-PROBLEM.pt``, measures its greedy
validation gap on the fixed validation set of ``routecli train`` (PyVRP references computed
in parallel on the CPUs), trains DPO on uniform N = ``--size`` instances (``--batch``
instances x ``--rollouts`` rollouts per step, bfloat16 autocast, float32 master weights,
learning rate ``--lr``) until ``--minutes`` of training have passed, measures the gap again,
and writes ``OUT/miloop-PROBLEM.pt`` and ``OUT/miloop-PROBLEM.md``. It prints both gaps: ship
the weights only if the gap went down (copy both files over the shipped ones). On a CPU
(``--device cpu``, tiny ``--minutes``) it runs the same code, which is how it is tested.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from routecli.miloop.model import to_checkpoint
from routecli.miloop.train import Stage, TrainConfig, Trainer
from routecli.results import git_commit
from routecli.train import checkpoint
from routecli.train.checkpoint import shipped

CARD = """# miloop-{problem} (fine-tuned on {device_name})

MiLoop policy for {upper}, fine-tuned from the shipped `miloop-{problem}.pt` by
`benchmarks/train_gpu.py` (commit {commit}):

    {command}

## Recipe

Reference-free DPO (Eq. 10 over all pairs of K rollouts, beta {beta}) on uniform {upper}-{size}
instances (`routecli.generate`, capacity 50 for CVRP), {batch} instances x {rollouts} rollouts
per step, AdamW lr {lr}, weight decay 0.01, gradient clipping 1.0, bfloat16 autocast with
float32 master weights; {steps} steps ({instances} instances, {seconds:.0f} s of training on
{device_name}).

## Validation

Greedy decoding of the {val} fixed validation instances of `routecli train` ({upper}-{val_size},
seed 987654) against PyVRP references ({val_time} nominal seconds each):

| weights | gap |
|---|---|
| shipped (start) | {gap_before:.2f}% |
| these | {gap_after:.2f}% |
"""


def activation_budget(device: str) -> float:
    """Half the GPU's memory in GB (activations of eager autograd on a GPU keep more than the
    CPU estimate assumes), or 8 GB on a CPU."""
    if not device.startswith("cuda"):
        return 8.0
    return torch.cuda.get_device_properties(torch.device(device)).total_memory / 2**31


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="cvrp", choices=("tsp", "cvrp"))
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--out", default=None, help="folder (default runs/gpu-PROBLEM)")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rollouts", type=int, default=25)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--val-instances", type=int, default=128)
    parser.add_argument("--val-size", type=int, default=100)
    parser.add_argument("--val-time-limit", type=float, default=1.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes for the PyVRP validation references")
    parser.add_argument("--init", default=None, help="start weights (default: the shipped ones)")
    parser.add_argument("--activation-gb", type=float, default=None,
                        help="recompute activations above this (default: half the GPU's "
                        "memory, 8 on a CPU)")
    args = parser.parse_args(argv)
    out = Path(args.out or f"runs/gpu-{args.problem}")
    name = f"miloop-{args.problem}"
    cfg = TrainConfig(problem=args.problem, run_dir=str(out),
                      curriculum=[Stage(args.size, 10**9, args.batch, args.rollouts)],
                      lr=args.lr, decay_at=1.0, init=args.init or str(shipped(f"{name}.pt")),
                      val_size=args.val_size, val_instances=args.val_instances,
                      val_time_limit=args.val_time_limit, label_jobs=args.jobs,
                      device=args.device, precision="auto", compile=args.device == "cpu",
                      activation_gb=args.activation_gb or activation_budget(args.device))
    trainer = Trainer(cfg, progress=False)
    started = time.perf_counter()
    before = trainer.validate()["val_gap"]
    print(f"validation references and start gap: {before:.2f}% "
          f"({time.perf_counter() - started:.0f} s)", flush=True)
    started = time.perf_counter()
    while time.perf_counter() - started < 60 * args.minutes:
        stats = trainer.train_step()
        print(f"step {trainer.step}: loss {stats['loss']:.4f} cost {stats['cost']:.3f} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    seconds = time.perf_counter() - started
    after = trainer.validate()["val_gap"]
    device_name = (torch.cuda.get_device_name(args.device) if args.device.startswith("cuda")
                   else "CPU")
    commit = git_commit()
    meta = {"trained_on": f"uniform {args.problem.upper()}-{args.size}",
            "recipe": f"fine-tuned from {Path(cfg.init or '').name}: DPO, {args.batch} x "
                      f"{args.rollouts} rollouts per step, lr {args.lr}, bf16 autocast",
            "steps": trainer.step, "instances_seen": trainer.instances,
            "train_seconds": round(seconds, 1), "device": device_name,
            f"val_gap_{args.val_instances}_{args.problem}{args.val_size}_greedy": round(after, 3),
            "val_gap_start": round(before, 3)}
    out.mkdir(parents=True, exist_ok=True)
    checkpoint.save(to_checkpoint(trainer.model, meta), out / f"{name}.pt")
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
    (out / f"{name}.md").write_text(CARD.format(
        problem=args.problem, upper=args.problem.upper(), device_name=device_name,
        commit=commit, command=command, beta=cfg.beta, size=args.size, batch=args.batch,
        rollouts=args.rollouts, lr=args.lr, steps=trainer.step, instances=trainer.instances,
        seconds=seconds, val=args.val_instances, val_size=args.val_size,
        val_time=args.val_time_limit, gap_before=before, gap_after=after))
    verdict = "better: ship it" if after < before else "not better: keep the shipped weights"
    print(f"validation gap {before:.2f}% -> {after:.2f}% after {trainer.step} steps "
          f"({seconds:.0f} s): {verdict}; wrote {out / name}.pt and .md")
    return {"before": before, "after": after, "steps": trainer.step}


if __name__ == "__main__":
    main()
