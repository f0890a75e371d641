"""CPU seconds of one compare-pe training epoch: DACT with IPE+XPE on CVRP-20, 2 batches of 32
instances, 20 PPO steps each, one thread (min over two seeds, after a warm-up epoch).

    .venv/bin/python benchmarks/bench_ppo_epoch.py
"""

from __future__ import annotations

import time

import torch

from routecli.improve.model import DACT, DACTConfig
from routecli.improve.train import PPOConfig, train


def epoch_seconds(model: DACT, cfg: PPOConfig, seed: int) -> float:
    started = time.process_time()
    train(model, "cvrp", 20, cfg, seed=seed)
    return time.process_time() - started


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DACT(DACTConfig(problem="cvrp", pe="ipe_inv_xpe"))
    epoch_seconds(model, PPOConfig(epochs=1, batches=1, batch_size=4, t_train=4, curriculum=0), 9)
    cfg = PPOConfig(epochs=1, batches=2, batch_size=32, t_train=20, curriculum=0)
    print(f"compare-pe epoch CPU s: {min(epoch_seconds(model, cfg, s) for s in range(2)):.2f}")


if __name__ == "__main__":
    main()
