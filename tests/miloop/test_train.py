import copy
import json
import math
import os
import socket
from importlib.util import find_spec

import pytest
import torch
import torch.multiprocessing as mp

from routecli.envs import TSPEnv
from routecli.miloop.model import MiLoop, MiLoopConfig, rollout
from routecli.miloop.train import Stage, TrainConfig, Trainer, expand_rollouts
from routecli.train.losses import dpo_loss


def read_log(path) -> list[dict]:
    with open(path) as fh:
        return [json.loads(line) for line in fh]


def tiny_config(tmp_path, **kw) -> TrainConfig:
    base = dict(problem="tsp", run_dir=str(tmp_path / "run"),
                curriculum=[Stage(6, 4, 2, 3)], val_size=6, val_instances=2, val_every=1000,
                log_every=1, threads=1, checkpoint_every=0.0, lr=1e-3)
    base.update(kw)
    return TrainConfig(**base)


def test_dpo_updates_lower_the_loss_on_replayed_pairs():
    """Algorithm 1 with replay: fixed sampled pairs, repeated updates, the loss goes down."""
    torch.manual_seed(0)
    model = MiLoop(MiLoopConfig(problem="tsp", dim=32, ff_dim=64, layers=1))
    locs = torch.rand(4, 8, 2)
    g = torch.Generator().manual_seed(0)
    env, _, k = expand_rollouts("tsp", {"locs": locs}, 4, g)
    sampled = rollout(model, env, "sample", generator=g)
    starts = sampled.actions[:, 0]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(15):
        replay = rollout(model, TSPEnv(locs.repeat_interleave(k, 0), starts),
                         replay=sampled.actions)
        loss = dpo_loss(replay.log_prob.view(4, k), sampled.cost.view(4, k), beta=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0] - 0.01


def test_training_writes_log_and_resume_is_exact(tmp_path, monkeypatch):
    monkeypatch.setattr("routecli.miloop.train.Trainer.validate",
                        lambda self: {"val_gap": 1.0, "val_cost": 1.0, "val_seconds": 0.0})
    straight = Trainer(tiny_config(tmp_path / "a"))
    straight.run()
    records = read_log(tmp_path / "a" / "run" / "log.jsonl")
    assert records[0]["event"] == "start"
    assert [r["step"] for r in records if "loss" in r] == [1, 2, 3, 4]

    Trainer(tiny_config(tmp_path / "b")).run(until_step=2)
    resumed = Trainer(tiny_config(tmp_path / "b"), resume=True)
    assert resumed.step == 2
    cpu_before = resumed.cpu_seconds
    resumed.run()
    cpu = [r["cpu_seconds"] for r in read_log(tmp_path / "b" / "run" / "log.jsonl")
           if "loss" in r]
    assert cpu_before > 0 and cpu == sorted(cpu) and cpu[-1] > cpu_before  # CPU-h accumulate
    for (k, a), (_, b) in zip(straight.model.state_dict().items(),
                              resumed.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k


def test_a_run_resumes_from_its_compact_state_alone(tmp_path, monkeypatch):
    """The committed state-bf16.pt (bfloat16 weights, no optimizer moments) resumes a run whose
    last.pt is gone: same step and counters, the weights rounded to bfloat16, a fresh optimizer
    whose learning rate ramps up again."""
    from routecli.miloop.train import REWARM_STEPS
    from routecli.train import checkpoint

    monkeypatch.setattr("routecli.miloop.train.Trainer.validate",
                        lambda self: {"val_gap": 1.0, "val_cost": 1.0, "val_seconds": 0.0})
    first = Trainer(tiny_config(tmp_path))
    first.run(until_step=2)
    run = tmp_path / "run"
    full, small = run / "last.pt", run / checkpoint.COMPACT
    assert small.stat().st_size < 0.6 * full.stat().st_size
    stored = torch.load(small, weights_only=True)
    assert "optimizer" not in stored and all(
        v.dtype == torch.bfloat16 for v in stored["model"].values() if v.is_floating_point())
    full.unlink()
    resumed = Trainer(tiny_config(tmp_path), resume=True)
    assert (resumed.step, resumed.instances) == (first.step, first.instances)
    for (k, a), (_, b) in zip(first.model.state_dict().items(),
                              resumed.model.state_dict().items(), strict=True):
        assert torch.equal(a.to(torch.bfloat16).float(), b), k
    assert not resumed.optimizer.state  # moments re-warm from zero
    assert resumed.learning_rate() == pytest.approx(resumed.cfg.lr / REWARM_STEPS)
    resumed.run()
    assert resumed.step == resumed.cfg.total_steps


def test_compiled_kernels_are_scoped_to_the_training_loop(tmp_path, monkeypatch):
    """A run with compile on leaves later inference in the same process eager (compiling the
    inference graph would cost seconds a time limit does not budget for)."""
    from routecli.nn import fused

    seen = []
    monkeypatch.setattr(Trainer, "_loop",
                        lambda self, total, bar, stop: seen.append(fused.active(torch.zeros(1))))
    Trainer(tiny_config(tmp_path, compile=True)).run()
    assert seen == [True] and not fused.active(torch.zeros(1))


def test_imitation_stage_runs_on_reference_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    cfg = tiny_config(tmp_path, problem="cvrp", curriculum=Stage.parse_list("6:2:2:1:imitation"),
                      label_time_limit=0.05, val_every=2, val_time_limit=0.05)
    trainer = Trainer(cfg)
    trainer.run()
    records = read_log(tmp_path / "run" / "log.jsonl")
    assert all(r["loss"] > 0 for r in records if "loss" in r)
    assert any("val_gap" in r for r in records)
    assert (tmp_path / "run" / "best.pt").exists()


def test_stage_parsing_rejects_bad_text():
    assert Stage.parse_list("20:5:4:10,50:1:2:1:imitation")[1].imitation
    ranged = Stage.parse_list("15-42:3:2:1:supervised")[0]
    assert ranged.supervised and ranged.sizes == (15, 20, 30, 40, 42)
    assert str(ranged) == "15-42:3:2:1:supervised"
    with pytest.raises(ValueError):
        Stage.parse_list("50-20:5:4:10")  # a range must increase
    with pytest.raises(ValueError):
        Stage.parse_list("20:5:4:1")  # a preference needs two rollouts
    with pytest.raises(ValueError):
        Stage.parse_list("20:5")


def _ddp_worker(rank: int, world: int, port: int, run_dir: str, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    cfg = TrainConfig(problem="tsp", run_dir=run_dir, curriculum=[Stage(6, 2, 2, 3)],
                      val_every=1000, log_every=1, threads=1, checkpoint_every=1e9, seed=rank)
    trainer = Trainer(cfg)
    trainer.run()
    torch.save({k: v.clone() for k, v in trainer.model.state_dict().items()}, f"{out}{rank}.pt")
    torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_ddp_two_gloo_processes_stay_in_sync(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = str(tmp_path / "state")
    mp.spawn(_ddp_worker, args=(2, port, str(tmp_path / "run"), out), nprocs=2, join=True)
    a, b = (torch.load(f"{out}{r}.pt", weights_only=True) for r in (0, 1))
    for k in a:
        assert torch.equal(a[k], b[k]), k
    records = read_log(tmp_path / "run" / "log.jsonl")
    assert records[0]["world"] == 2
    assert records[-1]["instances"] == 2 * 2 * 2  # steps x batch x processes


def test_supervised_stage_trains_on_a_reused_label_store_of_mixed_sizes(tmp_path, monkeypatch):
    """Labels are computed once per store chunk (in parallel) and read back by a later run;
    each step teacher-forces a random suffix (fewer decisions than the whole solution)."""
    monkeypatch.setattr("routecli.miloop.train.Trainer.validate",
                        lambda self: {"val_gap": 1.0, "val_cost": 1.0, "val_seconds": 0.0})
    import routecli.miloop.labels as labels

    calls = []
    original = labels.LabelStore.write_chunk

    def counted(self, chunk, arrays):  # chunks are tasks of a pool, written by this process
        calls.append(len(arrays["length_nodes"]))
        return original(self, chunk, arrays)

    monkeypatch.setattr(labels.LabelStore, "write_chunk", counted)
    monkeypatch.setattr(labels, "LABEL_CHUNK", 3)
    for run in ("a", "b"):
        cfg = tiny_config(tmp_path / run, problem="cvrp", distribution="mixed",
                          curriculum=Stage.parse_list("6-12:4:2:1:supervised"),
                          labels=str(tmp_path / "labels"), label_instances=3,
                          label_time_limit=0.02, label_jobs=2)
        Trainer(cfg).run()
        records = [r for r in read_log(tmp_path / run / "run" / "log.jsonl") if "loss" in r]
        assert len(records) == 4 and all(math.isfinite(r["loss"]) and r["loss"] >= 0
                                         for r in records)
        assert {r["size"] for r in records} <= {6, 10, 12}
    assert calls and sum(calls) == 3 * len(calls) and len(calls) <= 3  # run b labelled nothing


@pytest.mark.parametrize("native, chosen", [(False, "fp32"), (True, "bf16")])
def test_auto_precision_follows_the_hardware(tmp_path, monkeypatch, native, chosen):
    monkeypatch.setattr("routecli.nn.device.native_bf16", lambda device="cpu": native)
    assert Trainer(tiny_config(tmp_path, precision="auto")).cfg.precision == chosen
    assert Trainer(tiny_config(tmp_path / "x", precision="fp32")).cfg.precision == "fp32"


def test_learning_rate_warms_up_linearly_then_decays(tmp_path):
    cfg = tiny_config(tmp_path, curriculum=[Stage(6, 10, 2, 3)], lr=1e-3, warmup_steps=4,
                      decay_at=0.8)
    trainer = Trainer(cfg, progress=False)
    rates = []
    for step in range(10):
        trainer.step = step
        rates.append(trainer.learning_rate())
    assert rates[:5] == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3])
    assert rates[7] == pytest.approx(1e-3) and rates[8] == pytest.approx(1e-4)
    plain = Trainer(tiny_config(tmp_path / "plain", decay_at=1.0), progress=False)
    assert plain.learning_rate() == pytest.approx(1e-3)  # no warm-up: the paper's recipe


def test_replay_sets_count_the_probability_of_every_equivalent_action():
    """With ``replay_sets`` a teacher-forced decision adds log P(set): more than the label's own
    log-probability where the set is larger, the same where it is the label alone."""
    import numpy as np

    from routecli.envs import CVRPEnv
    from routecli.miloop.labels import equivalent_actions, label_sequences
    from routecli.problems import Routes

    torch.manual_seed(0)
    model = MiLoop(MiLoopConfig(problem="cvrp", dim=32, ff_dim=64, layers=1)).eval()
    locs = torch.rand(1, 7, 2)
    demand = torch.tensor([[0, 2, 2, 2, 2, 2, 2]])
    capacity = torch.tensor([6.0])
    seq = label_sequences("cvrp", [Routes([[1, 2, 3], [4, 5], [6]])], np.random.default_rng(2))

    def replay(sets):
        steps = []
        rollout(model, CVRPEnv(locs, demand, capacity), replay=seq, replay_sets=sets,
                trace=lambda t, obs, log_p, choice, memory: steps.append(log_p[0]))
        return rollout(model, CVRPEnv(locs, demand, capacity), replay=seq,
                       replay_sets=sets).log_prob, steps

    sets = equivalent_actions("cvrp", seq, 7)
    plain, log_ps = replay(None)
    relaxed, _ = replay(sets)
    assert relaxed.item() > plain.item()
    single = sets.clone()
    single[:] = False
    single.scatter_(2, seq[:, :, None], True)
    assert torch.allclose(replay(single)[0], plain)


def test_a_window_covers_every_decision_alike_and_no_window_draws_todays_suffix():
    import numpy as np

    from routecli.miloop.train import trained_steps

    rng = np.random.default_rng(0)
    covered = np.zeros(30)
    for _ in range(20_000):
        start, end = trained_steps(30, 8, rng)
        assert 0 <= start < end <= 30 and end - start <= 8
        covered[start:end] += 1
    share = covered / 20_000  # each decision: 8 / (30 + 8 - 1)
    assert np.allclose(share, 8 / 37, atol=0.015)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert [trained_steps(30, 0, a) for _ in range(5)] == [(int(b.integers(30)), None)
                                                          for _ in range(5)]


@pytest.mark.parametrize("seed", range(6))
def test_candidate_sets_of_at_least_n_nodes_give_the_full_training_loss(seed):
    """The supervised loss (and its gradient) through per-row candidate sets with K >= N is
    the loss of full teacher forcing, for any instance size, suffix or window."""
    import numpy as np

    from routecli.envs.base import CandidateSets
    from routecli.miloop.train import label_env, trained_steps

    rng = np.random.default_rng(seed)
    n, batch = int(rng.integers(4, 20)), int(rng.integers(1, 4))
    locs = torch.as_tensor(rng.random((batch, n, 2)), dtype=torch.float32)
    labels = torch.stack([torch.as_tensor(rng.permutation(n)) for _ in range(batch)])
    start, end = trained_steps(n - 1, int(rng.integers(0, 5)), rng)
    torch.manual_seed(seed)
    policy = MiLoop(MiLoopConfig(problem="tsp", dim=16, ff_dim=32, layers=1))
    losses, grads = [], []
    for env in (label_env("tsp", {"locs": locs}, labels),
                TSPEnv(locs, labels[:, 0], CandidateSets(locs.double().numpy(),
                                                         n + int(rng.integers(0, 3))))):
        model = copy.deepcopy(policy)
        result = rollout(model, env, replay=labels, grad_from=start, until=end)
        loss = -result.log_prob.sum() / result.decisions.sum().clamp_min(1)
        loss.backward()
        losses.append(loss.detach())
        grads.append(model.fuse_cand.weight.grad)
    assert torch.equal(losses[0], losses[1]) and torch.equal(grads[0], grads[1])


needs_elkai = pytest.mark.skipif(find_spec("elkai") is None, reason='pip install -e ".[lkh]"')


@needs_elkai
def test_a_supervised_window_through_candidate_sets_trains_on_lkh_labels(tmp_path, monkeypatch):
    monkeypatch.setattr("routecli.miloop.train.Trainer.validate",
                        lambda self: {"val_gap": 1.0, "val_cost": 1.0, "val_seconds": 0.0})
    monkeypatch.setattr("routecli.miloop.labels.LKH_CHUNK", 4)
    cfg = tiny_config(tmp_path, curriculum=Stage.parse_list("14:3:2:1:supervised"),
                      labels=str(tmp_path / "labels"), label_instances=4, labeller="lkh",
                      train_candidates=5, window=4, val_size=14)
    Trainer(cfg, progress=False).run()
    assert [p.name for p in (tmp_path / "labels").iterdir()] == ["tsp-uniform-14-s0-lkh-r1-c4"]
    records = [r for r in read_log(tmp_path / "run" / "log.jsonl") if "loss" in r]
    assert len(records) == 3
    assert all(math.isfinite(r["loss"]) and 0 <= r["label_outside"] < 1 for r in records)
    assert all(r["cost"] > 1.0 for r in records)  # whole label tours, not the window's walk


@pytest.mark.parametrize("settings, message", [
    (dict(problem="cvrp", labeller="lkh"), "TSP instances only"),
    (dict(problem="cvrp", train_candidates=50), "built for TSP"),
    (dict(curriculum=[Stage(6, 4, 2, 3)], window=10), "--window: applies to supervised"),
    (dict(curriculum=[Stage(6, 4, 2, 3)], labeller="lkh", train_candidates=5),
     "--labeller lkh, --train-candidates: applies to supervised"),
])
def test_candidate_window_and_labeller_settings_that_cannot_apply_are_refused(
        tmp_path, settings, message):
    from routecli.errors import OptionError

    base = {"curriculum": Stage.parse_list("20:2:2:1:supervised"), **settings}
    with pytest.raises(OptionError, match=message):
        tiny_config(tmp_path, **base)


def test_memory_estimate_counts_window_steps_and_candidate_rows(tmp_path):
    from routecli.miloop.train import ACTIVATION_BYTES_PER_ROW, activation_bytes, step_bytes

    stage = Stage.parse_list("1000:5:16:1:supervised")[0]
    full = tiny_config(tmp_path, curriculum=[stage], precision="bf16")
    assert activation_bytes(stage, 1000, full) == 16 * 1000 * 502 * ACTIVATION_BYTES_PER_ROW
    large = tiny_config(tmp_path, curriculum=[stage], precision="bf16", train_candidates=200,
                        window=100)
    assert activation_bytes(stage, 1000, large) == 16 * 100 * 202 * ACTIVATION_BYTES_PER_ROW
    assert step_bytes(stage, large) < step_bytes(stage, full)
