"""Training and decoding throughput of MiLoop on this machine (CPU by default).

    .venv/bin/python benchmarks/bench_miloop.py --threads 1 --repeats 2

For each (problem, size, batch, rollouts, mode) row: seconds per optimizer step, instances/s
and rollouts/s of training (DPO: K sampled rollouts per instance, full backward through the
rollout; imitation: one teacher-forced rollout per instance, PyVRP label time excluded), and
greedy decoding rollouts/s. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import time

import torch

from routecli.miloop.decode import decode
from routecli.miloop.model import MiLoop, MiLoopConfig, rollout
from routecli.miloop.train import expand_rollouts, sample_batch
from routecli.train.losses import dpo_loss

ROWS = [  # problem, size, batch, rollouts
    ("tsp", 20, 8, 20), ("tsp", 50, 4, 25), ("tsp", 100, 2, 25),
    ("cvrp", 20, 8, 20), ("cvrp", 50, 4, 25), ("cvrp", 100, 2, 25),
]


def train_step(model: MiLoop, problem: str, size: int, batch: int, k: int, seed: int) -> float:
    data = sample_batch(problem, size, batch, seed, "cpu")
    generator = torch.Generator().manual_seed(seed)
    env, forced, k = expand_rollouts(problem, data, k, generator)
    started = time.perf_counter()
    result = rollout(model, env, "sample", first_action=forced, generator=generator,
                     recompute=size >= 50)
    loss = dpo_loss(result.log_prob.view(batch, k), result.cost.view(batch, k))
    loss.backward()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sizes", default="20,50,100")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sizes = {int(s) for s in args.sizes.split(",")}
    print(f"threads={args.threads}, d=128, 3 layers, FF 512 (paper configuration)\n")
    print("| problem | N | batch | K | s/step | train inst/s | train rollouts/s "
          "| greedy decode rollouts/s |")
    print("|---|---|---|---|---|---|---|---|")
    for problem, size, batch, k in ROWS:
        if size not in sizes:
            continue
        torch.manual_seed(0)
        model = MiLoop(MiLoopConfig(problem=problem))
        train_step(model, problem, size, 1, 2, seed=99)  # warm-up
        times = [train_step(model, problem, size, batch, k, seed=i) for i in range(args.repeats)]
        step = min(times)
        data = sample_batch(problem, size, 2 * batch * k // 4, 1234, "cpu")
        started = time.perf_counter()
        decode(model.eval(), data, "greedy")
        decoded = len(data["locs"]) / (time.perf_counter() - started)
        print(f"| {problem} | {size} | {batch} | {k} | {step:.2f} | {batch / step:.2f} | "
              f"{batch * k / step:.1f} | {decoded:.1f} |", flush=True)


if __name__ == "__main__":
    main()
