"""Every PE, model and trainer step under :class:`tests.devices.guard.DeviceGuard`: nothing in
a step is created on, or copied back to, the CPU behind the data's back."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from routecli.improve.env import initial_orders, make_instances
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
from routecli.miloop.decode import DECODES, decode
from routecli.miloop.train import Stage, TrainConfig, Trainer, sample_batch
from routecli.nds.removal import LearnedRemoval
from routecli.nds.train import Episode, NDSTrainConfig, NDSTrainer
from routecli.pe.batch import RouteBatch
from routecli.pe.registry import PE_REGISTRY, get_pe
from tests.devices.guard import DeviceGuard
from tests.pe.conftest import make_batch


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("name", sorted(PE_REGISTRY))
def test_every_pe_forward_and_backward(name):
    batch = make_batch((13, 17))[0]
    pe = get_pe(name, 16, num_heads=4)
    with DeviceGuard():
        out = pe(batch)
        if out.requires_grad:
            out.square().sum().backward()


def test_pe_encoder_and_walk_batch():
    from routecli.pe.encoder import PEEncoder

    walk = torch.rand(2, 9, 2, generator=torch.Generator().manual_seed(0))
    for name in ("ipe_xpe", "rope", "alibi"):
        pe = get_pe(name, 8, num_heads=2)
        encoder = PEEncoder(3, pe, embed_dim=16, num_heads=2, num_layers=1, ff_dim=32)
        with DeviceGuard():
            batch = RouteBatch.from_walk(walk)
            encoder(batch.coords.new_ones(2, 9, 3), batch).sum().backward()


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "pdtsp", "kp"])
def test_miloop_dpo_step_and_decoding(tmp_path, problem):
    cfg = TrainConfig(problem=problem, run_dir=str(tmp_path / "run"), curriculum=[Stage(6, 1, 2, 3)],
                      val_every=1000, threads=1, checkpoint_every=1e9, layers=1, compile=False)
    trainer = Trainer(cfg, progress=False)
    data = sample_batch(problem, 6, 2, 0, "cpu")
    with DeviceGuard():
        trainer.train_step()
        for method in DECODES:
            decode(trainer.model.eval(), data, method, starts=3, samples=2,
                   augment=problem != "kp", generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_nds_training_step_and_removal(tmp_path, problem):
    cfg = NDSTrainConfig(problem=problem, size=12, batch=2, rollouts=4, remove=3, episode=2,
                         warmup=0, steps=2, embed_dim=16, num_layers=1, lr_warmup=1,
                         run_dir=str(tmp_path / "run"), checkpoint_every=1e9, val_every=1000)
    trainer = NDSTrainer(cfg, quiet=True)
    episode = Episode(cfg, 0)
    rng = np.random.default_rng(0)
    removal = LearnedRemoval(trainer.model)
    with DeviceGuard():
        assert trainer.train_iteration(episode, 0, rng, torch.Generator().manual_seed(0))
        removal.propose(episode.problems[0], episode.current[0], rng, 3, 8)


IMPROVERS = {
    "dact-cvrp": ("cvrp", 10, lambda pe: DACT(DACTConfig(problem="cvrp", pe=pe, embed_dim=16,
                                                          num_layers=1, ff_dim=32))),
    "dact-vrptw": ("vrptw", 8, lambda pe: DACT(DACTConfig(problem="vrptw", pe=pe, embed_dim=16,
                                                           num_layers=1, ff_dim=32))),
    "dact-pdtsp": ("pdtsp", 9, lambda pe: DACT(DACTConfig(problem="pdtsp", pe=pe, embed_dim=16,
                                                           num_layers=1, ff_dim=32))),
    "n2s-pdtsp": ("pdtsp", 9, lambda pe: N2S(N2SConfig(pe=pe, embed_dim=16, num_layers=1,
                                                       ff_dim=32))),
}


@pytest.mark.parametrize("name", sorted(IMPROVERS))
@pytest.mark.parametrize("pe", ["ipe_xpe", "rope", "spd", "native"])
def test_improvement_ppo_segment_and_evaluation(name, pe):
    problem, size, build = IMPROVERS[name]
    spec = ("n2s" if name.startswith("n2s") else "dact") if pe == "native" else pe
    torch.manual_seed(0)
    model = build(spec)
    cfg = PPOConfig(n_step=2, k_epochs=2)
    raw = generate_instances(problem, size, 3, 0)
    data = make_instances(problem, raw, device="cpu")
    generator = torch.Generator().manual_seed(0)
    optimizer = make_optimizer(model, cfg)
    with DeviceGuard():
        env = make_env(model, data, initial_orders(data, generator), OPERATORS)
        ppo_segment(model, env, 2, cfg, optimizer, generator)
        evaluate(model, problem, raw, 2, 0, augment=2, device="cpu")
