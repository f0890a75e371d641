"""What one learned NDS iteration costs on a CPU, against string-removal iterations.

On one CVRPLIB instance, from a solution that ``sisr`` has already improved (so routes look
like the ones the policy meets inside a search), this measures in CPU milliseconds of this
process (``time.process_time``, median of ``--repeat`` calls, one torch thread):

- the policy's encoder per call, by number of symmetric images (the batch: 8 images is the
  encoder batched over 8 inputs) and precision (fp32, bf16 autocast);
- its decoder per call, by rollouts (the pointer's 15 steps are small, per-operation-bound
  matrix products);
- the same two for an untrained policy a quarter of the width and half the depth (what a
  smaller or distilled policy would cost at best; timing only);
- one ASA iteration of string removal with 64 rollouts (the paper's search with the
  non-neural control: 64 repairs) and one ``sisr`` iteration (1 rollout), from the difference
  of two iteration budgets, so set-up is excluded.

    .venv/bin/python benchmarks/nds_call_cost.py --instance X-n502-k39 --threads 1

CPU time is less sensitive to other jobs than wall clock, but not immune: on a machine whose
cores are shared, caches and hyperthreads are too; say so next to the numbers.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch

from routecli.bench.sets import data_root
from routecli.io import read_instance
from routecli.nds.features import node_features, removable, solution_batch
from routecli.nds.policy import NDSConfig, NDSPolicy, load_policy, sample_latent, unit_distance
from routecli.nds.solver import default_checkpoint
from routecli.pe.batch import RouteBatch
from routecli.problems.geometry import augment8
from routecli.search.asa import ASAConfig, solve
from routecli.search.ruin import make_policy
from routecli.search.state import SearchProblem, SearchState, from_routes
from routecli.stop import MaxIterations

DATA = data_root() or Path("../shared/benchdata")


def cpu_ms(call: Callable[[], object], repeat: int) -> float:
    """Median CPU milliseconds of ``call`` after one warm-up call."""
    call()
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(1000 * (time.process_time() - start))
    return statistics.median(times)


def iteration_ms(problem: SearchProblem, rollouts: int, remove: int, iterations: int) -> float:
    """CPU ms per string-removal ASA iteration (set-up excluded: two budgets, difference)."""
    spent = []
    for budget in (iterations, 2 * iterations):
        start = time.process_time()
        solve(problem, make_policy("strings"),
              ASAConfig(stop=MaxIterations(budget), rollouts=rollouts, remove=remove))
        spent.append(time.process_time() - start)
    return 1000 * (spent[1] - spent[0]) / iterations


@torch.inference_mode()
def encode(model: NDSPolicy, feats: torch.Tensor, batch: RouteBatch, bf16: bool) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        return model.encode(feats, batch)


@torch.inference_mode()
def decode(model: NDSPolicy, emb: torch.Tensor, allowed: torch.Tensor, latent: torch.Tensor,
           steps: int, distance: torch.Tensor) -> object:
    return model.decode(emb, allowed, latent, steps, distance=distance)


def encoder_rows(model: NDSPolicy, problem: SearchProblem, state: SearchState,
                 repeat: int) -> list[str]:
    rows = []
    for images in (8, 4, 2, 1):
        coords = augment8(problem.unit_coords)[:images]
        feats, batch = node_features(problem, state, coords), solution_batch(problem, state, coords)
        for bf16 in (False, True):
            ms = cpu_ms(partial(encode, model, feats, batch, bf16), repeat)
            rows.append(f"| encoder, {images} image{'s' if images > 1 else ''}, "
                        f"{'bf16' if bf16 else 'fp32'} | {ms:.1f} | {ms / images:.1f} |")
    return rows


def decoder_rows(model: NDSPolicy, problem: SearchProblem, state: SearchState, remove: int,
                 repeat: int) -> list[str]:
    rows = []
    coords = problem.unit_coords[None]
    with torch.inference_mode():
        emb = model.encode(node_features(problem, state, coords),
                           solution_batch(problem, state, coords))
    allowed = removable(problem, state, 1)
    distance = unit_distance(problem.unit_coords)[None]
    for rollouts in (64, 16, 4):
        latent = sample_latent(1, rollouts, model.config.latent_dim)
        ms = cpu_ms(partial(decode, model, emb, allowed, latent, remove, distance), repeat)
        rows.append(f"| decoder, {rollouts} rollouts of {remove} | {ms:.1f} | "
                    f"{ms / rollouts:.2f} per rollout |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instance", default="X-n502-k39")
    ap.add_argument("--checkpoint", default=None, help="policy (default: the shipped nds-cvrp.pt)")
    ap.add_argument("--remove", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    problem = SearchProblem.from_instance(read_instance(DATA / "cvrplib" / "X" /
                                                        f"{args.instance}.vrp"))
    searched = solve(problem, make_policy("strings"), ASAConfig(stop=MaxIterations(20_000)))
    state = from_routes(problem, searched.solution)
    model = load_policy(args.checkpoint or default_checkpoint("cvrp"))
    print(f"{args.instance}, CPU ms per call (median of {args.repeat}), "
          f"{args.threads} torch thread(s)\n")
    print("| part | ms per call | ms per image / rollout |\n|---|---|---|")
    for row in encoder_rows(model, problem, state, args.repeat):
        print(row)
    for row in decoder_rows(model, problem, state, args.remove, args.repeat):
        print(row)
    small = NDSPolicy(NDSConfig(embed_dim=64, num_heads=4, num_layers=1, ff_dim=256,
                                poly_dim=128)).eval()
    coords = problem.unit_coords[None]
    feats, batch = node_features(problem, state, coords), solution_batch(problem, state, coords)
    ms = cpu_ms(partial(encode, small, feats, batch, True), args.repeat)
    print(f"| small policy (embed 64, 1 layer, untrained): encoder, 1 image, bf16 | {ms:.1f} | |")
    for row in decoder_rows(small, problem, state, args.remove, args.repeat):
        print(row.replace("| decoder", "| small policy: decoder", 1))
    strings = iteration_ms(problem, 64, args.remove, 200)
    print(f"| string-removal ASA iteration, 64 rollouts of {args.remove} (64 repairs) | "
          f"{strings:.2f} | {strings / 64:.3f} per repair |")
    single = iteration_ms(problem, 1, 10, 50_000)
    print(f"| sisr iteration (1 string removal of 10, 1 repair) | {single:.4f} | |")


if __name__ == "__main__":
    main()
