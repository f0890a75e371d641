"""Winner-takes-all policy-gradient training of the NDS deconstruction policy (PE paper
Appendix E; Hottung et al. 2025a/b).

One *episode* draws ``batch`` fresh instances from :mod:`routecli.generate` (seeded by
``(seed, episode)``, so a resumed run sees the data it would have seen) and starts each from
the search engine's savings solution. Every iteration of the episode:

1. encodes each current solution (on a random one of its 8 symmetric images) and samples
   ``rollouts`` removal sets of ``remove`` customers, each with its own latent ``z``;
2. repairs every rollout with the search engine's randomised greedy insertion
   (:func:`routecli.search.asa.rollout`) and scores it by its improvement over the current
   solution, divided by the solution's mean edge length so that it is unit-free:
   ``reward="clipped"`` (the default) is Appendix B's ``R_i = max(0, cost(s) - cost(s_i))``;
   ``reward="delta"`` keeps the sign, ``R_i = cost(s) - cost(s_i)`` (an infeasible repair
   scores as the worst feasible rollout). The signed reward gives every instance a gradient,
   but near a local optimum its winner is usually a rollout that changes nothing, and a short
   CPU run with it learned to propose such harmless removals (validation worse than random);
   the clipped reward rewards only rollouts that improve;
3. after ``warmup`` iterations (the savings start is easy to improve, so its rewards carry
   little signal), takes a gradient step on ``-(R_{i*} - mean_i R_i) log pi(s_{i*})``: only
   the best rollout ``i*`` of each instance contributes (winner takes all), so rollouts are
   sampled without a graph and only the winners are re-scored (teacher forcing) with one;
4. moves each instance to its best rollout under the simulated-annealing rule, so the
   policy trains on the kind of solutions it meets inside the search.

Optimiser AdamW with linear warm-up. ``last.pt`` (full state, written atomically at episode
ends) makes the run resumable; ``best.pt`` is the shippable policy with the best validation
score; ``log.jsonl`` has one line per logged step and per validation.
Validation: a fixed set of instances, a short ASA run (fixed iterations and rollouts) with the
learned policy and with uniform random removal under the same budget; the score is the mean
of ``1 + (learned - random) / |random|`` (the cost ratio learned / random when costs are
positive; below 1 = the policy beats the random control, also for PCVRP's negative costs).

Data parallelism, as in :mod:`routecli.miloop.train`: under ``torchrun`` every process runs its
own episodes (process ``r`` of ``W`` takes episode ``e``'s data index ``e W + r``, so one
process alone sees exactly the data of a single-process run), starts from rank 0's weights,
and averages its gradients with the others in one flat ``all_reduce`` per step
(:mod:`routecli.train.distributed`: gloo on CPU, the same code path elsewhere). Every process
takes the same number of steps per episode; rank 0 alone validates, logs and writes
checkpoints.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from routecli import generate
from routecli.errors import OptionError
from routecli.generate import batch_instances
from routecli.nds.features import node_features, removable, solution_batch
from routecli.nds.options import BF16_ON_CPU, REWARDS, Problem, Reward
from routecli.nds.policy import (
    KIND,
    NDSConfig,
    NDSPolicy,
    default_pe,
    load_policy,
    sample_latent,
    to_checkpoint,
    unit_distance,
)
from routecli.nds.removal import LearnedRemoval
from routecli.nn.device import generator as seeded_generator
from routecli.nn.device import mixed_precision, to_host
from routecli.pe.batch import RouteBatch
from routecli.pe.registry import PE_REGISTRY, canonical_pe
from routecli.problems import CVRPInstance, PCVRPInstance, VRPTWInstance
from routecli.problems.geometry import augment8
from routecli.resources import require_memory, resolve_device
from routecli.search.asa import (
    ASAConfig,
    initial_solution,
    mean_edge,
    sa_accept,
    temperature,
    workspace,
)
from routecli.search.asa import solve as asa_solve
from routecli.search.repair import BLINK_RATE, drop_unprofitable
from routecli.search.rollouts import commit_rollout, score_rollouts
from routecli.search.ruin import RandomRemoval, seed_kernels, string_sets
from routecli.search.state import SearchProblem, state_cost
from routecli.stop import MaxIterations
from routecli.train import checkpoint, distributed, runlog
from routecli.train.stopping import StopReason, TrainingStop

GENERATORS = {"cvrp": generate.cvrp, "vrptw": generate.vrptw, "pcvrp": generate.pcvrp}
VALIDATION_SEED = 987_654


def search_problems(problem: str, raw: dict[str, np.ndarray]) -> list[SearchProblem]:
    """One :class:`SearchProblem` per instance of a batch from :data:`GENERATORS`."""
    out = []
    for instance in batch_instances(problem, raw):
        assert isinstance(instance, CVRPInstance | VRPTWInstance | PCVRPInstance)
        out.append(SearchProblem.from_instance(instance))
    return out


@dataclass(frozen=True)
class NDSTrainConfig:
    """Training settings. ``steps`` counts optimiser steps (one per post-warm-up iteration);
    ``episode`` is the number of search iterations per batch of instances. The first
    ``teacher_steps`` steps are a warm start: the rollouts come from string removal
    (:func:`routecli.search.ruin.string_sets`) instead of the policy, and the policy learns
    to reproduce the best of them (cross-entropy on the winner's sequence, every instance
    weighted alike: improving rollouts are too rare for the advantage-weighted loss to move
    a policy that has not yet learned what a string is)."""

    problem: Problem = "cvrp"
    size: int = 100
    pe: str | None = None
    run_dir: str = "runs/nds-cvrp"
    steps: int = 20_000
    batch: int = 8
    rollouts: int = 32
    remove: int = 15
    episode: int = 60
    warmup: int = 10
    lr: float = 1e-4
    bias_lr: float | None = None
    weight_decay: float = 1e-6
    lr_warmup: int = 200
    t_start: float = 0.3
    t_end: float = 0.01
    grad_clip: float = 1.0
    reward: Reward = "clipped"
    teacher_steps: int = 0
    init: str | None = None
    val_every: int = 300
    val_instances: int = 4
    val_iterations: int = 40
    val_rollouts: int = 32
    checkpoint_every: float = 120.0
    log_every: int = 10
    threads: int = 1
    seed: int = 0
    embed_dim: int = 128
    num_layers: int = 2
    device: str = "cpu"  # the policy's (auto, cpu, cuda, cuda:N; resolved by the trainer); the
    # search engine always runs on the CPU

    def __post_init__(self) -> None:
        """Settings that cannot train, each one :class:`OptionError`: an unknown encoding, an
        episode without a trained step (burn-in not below its length), a rollout removing
        every customer, a count below 1."""
        if self.pe is not None and canonical_pe(self.pe) not in PE_REGISTRY:
            raise OptionError(f"--pe: choose one of {', '.join(PE_REGISTRY)}, not {self.pe!r}")
        counts = {"--size": self.size, "--steps": self.steps, "--batch": self.batch,
                  "--rollouts": self.rollouts, "--remove": self.remove,
                  "--episode": self.episode, "--val-every": self.val_every,
                  "--val-instances": self.val_instances, "--val-iterations": self.val_iterations}
        for flag, value in counts.items():
            if value < 1:
                raise OptionError(f"{flag} must be at least 1, got {value}")
        if self.warmup >= self.episode:
            raise OptionError(f"--burn-in {self.warmup} leaves no step of an --episode of "
                              f"{self.episode} iterations to train; make it smaller")
        if self.remove >= self.size:
            raise OptionError(f"--remove {self.remove} removes every customer of --size "
                              f"{self.size}; make it smaller")

    def model_config(self) -> NDSConfig:
        return NDSConfig(problem=self.problem, pe=self.pe or default_pe(self.problem),
                         embed_dim=self.embed_dim, num_layers=self.num_layers)


class Episode:
    """``batch`` instances and their current solutions inside one training episode."""

    def __init__(self, cfg: NDSTrainConfig, index: int):
        gen = GENERATORS[cfg.problem]
        raw = gen(cfg.batch, cfg.size, seed=cfg.seed * 1_000_003 + index, capacity=None)
        self.problems = search_problems(cfg.problem, raw)
        self.current = [initial_solution(p) for p in self.problems]
        for p, s in zip(self.problems, self.current):
            if p.optional:
                drop_unprofitable(p.dist, p.node_data, p.capacity, p.timed, *s.arrays())
        self.candidate = [s.copy() for s in self.current]
        self.workspaces = [workspace(p.num_nodes) for p in self.problems]
        self.costs = np.array([state_cost(p.node_data, *s.arrays())
                               for p, s in zip(self.problems, self.current)])
        self.scales = np.array([mean_edge(p, s) for p, s in zip(self.problems, self.current)])
        self.data = [p.data for p in self.problems]
        self.images = [augment8(p.unit_coords) for p in self.problems]
        self.device = cfg.device
        self.distance = unit_distance(np.stack([p.unit_coords for p in self.problems]),
                                      cfg.device)

    def inputs(self, rng: np.random.Generator) -> tuple[torch.Tensor, RouteBatch, torch.Tensor]:
        """Features ``[B, V, F]``, RouteBatch and removable mask ``[B, V]`` of the current
        solutions, each on a random symmetric image of its instance, on the policy's
        device."""
        pick = rng.integers(8, size=len(self.problems))
        coords = [img[k] for img, k in zip(self.images, pick)]
        states = list(zip(self.problems, self.current, coords))
        rows = [solution_batch(p, s, c[None], self.device) for p, s, c in states]
        batch = RouteBatch(**{name: torch.cat([getattr(r, name) for r in rows])
                              for name in rows[0].__dataclass_fields__})
        feats = torch.cat([node_features(p, s, c[None], self.device) for p, s, c in states])
        allowed = torch.cat([removable(p, s, 1, self.device) for p, s, _ in states])
        return feats, batch, allowed

    def string_sets(self, rollouts: int, k: int, rng: np.random.Generator) -> np.ndarray:
        """Teacher rollouts: ``rollouts`` string-removal sets of ``k`` customers per instance.
        ``[B, M, k]``."""
        seed_kernels(int(rng.integers(2**31)))
        out = np.empty((len(self.problems), rollouts, k), np.int64)
        for i, (p, s) in enumerate(zip(self.problems, self.current)):
            string_sets(s.nodes, s.routes, s.totals, p.neighbours, out[i])
        return out

    def score(self, actions: np.ndarray, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
        """Repair every rollout ``actions`` ``[B, M, K]``; returns costs ``[B, M]`` and the
        repair seeds ``[B, M]``."""
        b, m, _ = actions.shape
        seeds = rng.integers(2**31, size=(b, m))
        costs = np.empty((b, m))
        for i in range(b):
            score_rollouts(self.data[i], self.current[i].arrays(), self.candidate[i].arrays(),
                           self.workspaces[i], actions[i], BLINK_RATE, self.costs[i], seeds[i],
                           costs[i])
        return costs, seeds

    def advance(self, actions: np.ndarray, costs: np.ndarray, seeds: np.ndarray,
                progress: float, cfg: NDSTrainConfig, rng: np.random.Generator) -> None:
        """Move each instance to its best rollout under the annealing rule."""
        for i in range(len(self.problems)):
            best = int(np.argmin(costs[i]))
            temp = temperature(progress, cfg.t_start * self.scales[i], cfg.t_end * self.scales[i])
            if not math.isfinite(costs[i, best]) or not sa_accept(costs[i, best], self.costs[i],
                                                                   temp, rng.random()):
                continue
            self.costs[i] = commit_rollout(self.data[i], self.current[i].arrays(),
                                           self.candidate[i].arrays(), self.workspaces[i],
                                           actions[i, best], BLINK_RATE, self.costs[i],
                                           seeds[i, best])


def rollout_rewards(current: np.ndarray, costs: np.ndarray, kind: str) -> np.ndarray:
    """Improvement of each rollout over the current solution. ``[B]``, ``[B, M]`` -> ``[B, M]``.

    ``clipped``: ``max(0, gain)``, 0 when infeasible; ``delta``: the signed gain, an infeasible
    rollout scoring as the worst feasible one of its instance (0 if none is feasible)."""
    finite = np.isfinite(costs)
    gain = np.where(finite, current[:, None] - np.where(finite, costs, 0.0), 0.0)
    if kind == "clipped":
        return np.maximum(gain, 0.0)
    worst = np.where(finite, gain, np.inf).min(axis=1, keepdims=True)
    worst = np.where(np.isfinite(worst), worst, 0.0)
    return np.where(finite, gain, worst)


def winners(rewards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Best rollout of each instance and its advantage ``R_best - mean R``. ``[B, M]`` ->
    ``[B]``, ``[B]``."""
    best = rewards.argmax(dim=1)  # [B]
    return best, rewards.gather(1, best[:, None]).squeeze(1) - rewards.mean(dim=1)


def wta_loss(winner_logp: torch.Tensor, advantage: torch.Tensor) -> torch.Tensor:
    """Winner-takes-all policy gradient ``-(R_best - mean R) log pi(best)``, averaged over
    instances; only the winners' log-probabilities ``[B]`` carry a graph."""
    return -(advantage.detach() * winner_logp).mean()


# ------------------------------------------------------------------------------------------
# validation


def validation_problems(cfg: NDSTrainConfig) -> list[SearchProblem]:
    raw = GENERATORS[cfg.problem](cfg.val_instances, cfg.size, seed=VALIDATION_SEED,
                                  capacity=None)
    return search_problems(cfg.problem, raw)


def search_costs(problems: list[SearchProblem], policy: Any, cfg: NDSTrainConfig) -> np.ndarray:
    """Final ASA cost per problem with a fixed iteration and rollout budget."""
    config = ASAConfig(stop=MaxIterations(cfg.val_iterations), rollouts=cfg.val_rollouts,
                       remove=cfg.remove, t_start=cfg.t_start, t_end=cfg.t_end)
    return np.array([asa_solve(p, policy, config, seed=k).cost for k, p in enumerate(problems)])


# ------------------------------------------------------------------------------------------
# the loop


def param_groups(model: NDSPolicy, cfg: NDSTrainConfig) -> tuple[list[dict[str, Any]], list[float]]:
    """AdamW parameter groups and their base learning rates: one group at ``lr``, or with
    ``bias_lr`` two, the rest at ``lr`` and the distance-bias head (``reach``) at ``bias_lr``.
    At the main rate (1e-4), WTA fine-tuning moved the bias's two numbers by under 0.1% in
    3000 steps; ``lr=0`` with ``bias_lr`` trains the bias alone."""
    named = list(model.named_parameters())
    bias = [p for name, p in named if name.startswith("reach.")]
    if cfg.bias_lr is None or not bias:
        return [{"params": [p for _, p in named]}], [cfg.lr]
    rest = [p for name, p in named if not name.startswith("reach.")]
    return [{"params": rest}, {"params": bias}], [cfg.lr, cfg.bias_lr]


# What a run's last.pt holds for --resume (a policy checkpoint lacks it), and the settings a
# resumed run may change (resources, not what it learns from).
RESUME_STATE = {"train": dict, "optimizer": dict, "step": int, "episode": int, "instances": int,
                "seconds": float, "best_val": float, "random_val": list}
RESUME_FREE = ("run_dir", "init", "threads", "device", "checkpoint_every", "steps")


class NDSTrainer:
    """Resumable WTA training; ``run()`` trains until ``cfg.steps`` optimiser steps."""

    def __init__(self, cfg: NDSTrainConfig, resume: bool = False, quiet: bool = False):
        if cfg.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {cfg.reward!r}")
        if cfg.problem not in GENERATORS:
            raise ValueError(f"NDS trains on {', '.join(GENERATORS)}, not {cfg.problem!r}")
        nodes = cfg.size + 1
        # per instance: its distance matrix, the policy's attention and distance bias over
        # every node pair; per rollout: the decoder's states over the nodes
        require_memory(cfg.batch * (64 * nodes**2 + 16 * cfg.rollouts * nodes * cfg.embed_dim),
                       f"a training step of {cfg.batch:,} instances x {cfg.rollouts:,} "
                       f"rollouts on {nodes:,} nodes")
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        cfg = replace(cfg, device=resolve_device(cfg.device))
        self.cfg = cfg
        self.rank, self.world = distributed.setup(cfg.device)
        self.quiet = quiet or self.rank != 0
        self.dir = Path(cfg.run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(cfg.seed)
        self.model = NDSPolicy(cfg.model_config()).to(cfg.device)
        groups, self.rates = param_groups(self.model, cfg)
        self.optimizer = torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.step = self.episode = self.instances = 0
        self.seconds = 0.0
        self.best_val = math.inf
        self.random_val: list[float] | None = None
        last = self.dir / "last.pt"
        if resume and last.exists():
            state = checkpoint.load(last, KIND, cfg.device, expect=self.model.config.to_dict(),
                                    needs=RESUME_STATE)
            checkpoint.check_resume(state["train"], asdict(cfg), RESUME_FREE, last)
            self._restore(state)
            runlog.rewind(self.dir / "log.jsonl", self.step)  # those steps are logged again
        elif cfg.init is not None:
            self._initialise(Path(cfg.init))
        if self.world > 1:
            distributed.broadcast_parameters(self.model)

    def _initialise(self, path: Path) -> None:
        """Start from the weights of the policy checkpoint ``path`` (same architecture; a
        policy without the distance bias starts the bias at its initial value)."""
        ours = self.model.config.to_dict()
        source = load_policy(path, {k: v for k, v in ours.items() if k != "distance_bias"})
        self.model.load_state_dict(source.state_dict(), strict=False)  # all but the bias match

    def _restore(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.episode = int(state["step"]), int(state["episode"])
        self.instances, self.seconds = int(state["instances"]), float(state["seconds"])
        self.best_val = float(state["best_val"])
        self.random_val = list(state["random_val"]) or None

    def state(self) -> dict[str, Any]:
        return {"kind": KIND, "config": self.model.config.to_dict(),
                "train": asdict(self.cfg), "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(), "step": self.step,
                "episode": self.episode, "instances": self.instances, "seconds": self.seconds,
                "best_val": self.best_val, "random_val": self.random_val or []}

    def meta(self) -> dict[str, Any]:
        return {"problem": self.cfg.problem, "size": self.cfg.size, "steps": self.step,
                "episodes": self.episode, "instances": self.instances,
                "train_seconds": round(self.seconds, 1), "best_val_ratio": self.best_val,
                "train": json.dumps(asdict(self.cfg))}

    def log(self, record: dict[str, Any]) -> None:
        if self.rank != 0:
            return
        runlog.append(self.dir / "log.jsonl", record)

    def save(self, state: dict[str, Any], name: str) -> None:
        if self.rank == 0:
            checkpoint.save(state, self.dir / name)

    def say(self, text: str) -> None:
        if not self.quiet:
            end = "\r" if sys.stderr.isatty() else "\n"
            print(text, end=end, file=sys.stderr, flush=True)

    def lr_factor(self) -> float:
        return min(1.0, 0.01 + 0.99 * self.step / max(1, self.cfg.lr_warmup))

    def train_iteration(self, ep: Episode, t: int, rng: np.random.Generator,
                        gen: torch.Generator) -> dict[str, float] | None:
        """One search iteration of an episode; a gradient step after the warm-up. ``gen``
        samples the policy's rollouts (on the policy's device)."""
        cfg = self.cfg
        device = cfg.device
        autocast = mixed_precision(device, bf16_on_cpu=BF16_ON_CPU)
        learn = t >= cfg.warmup
        feats, batch, allowed = ep.inputs(rng)
        allowed_counts = to_host(allowed.sum(1))  # [B]
        steps = min(cfg.remove, int(allowed_counts.min()))
        latent = sample_latent(len(ep.problems), cfg.rollouts, self.model.config.latent_dim, gen)
        with torch.set_grad_enabled(learn), autocast:
            emb = self.model.encode(feats, batch).float()  # [B, V, E]
        teaching = self.step < cfg.teacher_steps
        if teaching:
            acts = ep.string_sets(cfg.rollouts, steps, rng)
            actions = torch.as_tensor(acts, device=device)
        else:
            with torch.no_grad(), autocast:
                actions, _ = self.model.decode(emb.detach(), allowed, latent, steps, gen,
                                               distance=ep.distance)
            acts = to_host(actions).astype(np.int64)
        costs, seeds = ep.score(acts, rng)
        rewards = rollout_rewards(ep.costs, costs, cfg.reward) / ep.scales[:, None]  # [B, M]
        ep.advance(acts, costs, seeds, t / cfg.episode, cfg, rng)
        if not learn:
            return None
        if teaching:  # the cheapest repair wins, improving or not; plain imitation
            best = torch.as_tensor(np.argmin(costs, axis=1), device=device)
            advantage = torch.ones(len(best), device=device)
        else:
            best, advantage = winners(torch.as_tensor(rewards, dtype=torch.float32,
                                                      device=device))
        rows = torch.arange(len(best), device=device)
        with autocast:
            _, winner_logp = self.model.decode(emb, allowed, latent[rows, best][:, None], steps,
                                               actions=actions[rows, best][:, None],
                                               distance=ep.distance)  # [B, 1]
        loss = wta_loss(winner_logp.squeeze(1).float(), advantage)
        for group, rate in zip(self.optimizer.param_groups, self.rates, strict=True):
            group["lr"] = rate * self.lr_factor()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.world > 1:
            distributed.average_gradients(self.model.parameters(), self.world)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.step += 1
        return {"loss": float(loss.detach()), "reward_best": float(rewards.max(1).mean()),
                "reward_mean": float(rewards.mean()), "improving": float((rewards > 0).mean()),
                "logp_best": float(winner_logp.detach().mean()),
                "logp_uniform": -float(np.log(allowed_counts[:, None]
                                              - np.arange(steps)).sum(1).mean()),
                "cost": float(ep.costs.mean())}

    def validate(self) -> float:
        problems = validation_problems(self.cfg)
        if self.random_val is None:
            self.random_val = search_costs(problems, RandomRemoval(), self.cfg).tolist()
        learned = search_costs(problems, LearnedRemoval(self.model), self.cfg)
        self.model.train()
        random = np.asarray(self.random_val)
        ratio = float(np.mean(1.0 + (learned - random) / np.abs(random)))  # PCVRP costs are < 0
        self.log({"kind": "val", "step": self.step, "learned": float(learned.mean()),
                  "random": float(np.mean(self.random_val)), "ratio": ratio,
                  "seconds": round(self.seconds, 1)})
        if ratio < self.best_val:
            self.best_val = ratio
            self.save(to_checkpoint(self.model, self.meta()), "best.pt")
        return ratio

    def run(self, time_limit: float | None = None) -> StopReason | None:
        """Train to ``cfg.steps``, saving ``last.pt`` every ``checkpoint_every`` seconds and at
        the end. A SIGINT or SIGTERM, or ``time_limit`` wall seconds, stops it at the end of
        the episode in progress (so a resumed run sees the same data), saving ``last.pt``;
        returns why it stopped early, if it did."""
        with TrainingStop(time_limit, self.world) as stop:
            reason = self._loop(stop)
        if reason is not None:
            self.save(self.state(), "last.pt")
            self.log({"kind": "stop", "step": self.step, "reason": str(reason)})
        elif self.rank == 0 and not (self.dir / "best.pt").exists():
            self.validate()
        if not self.quiet:
            print(file=sys.stderr)
        return reason

    def _loop(self, stop: TrainingStop) -> StopReason | None:
        cfg = self.cfg
        self.model.train()
        saved = time.perf_counter()
        window: list[dict[str, float]] = []
        while self.step < cfg.steps:
            if (reason := stop.reason()) is not None:
                return reason
            start = time.perf_counter()
            index = self.episode * self.world + self.rank  # this process's data
            rng = np.random.default_rng([cfg.seed, index])
            gen = seeded_generator(cfg.device, cfg.seed * 7_919 + index)
            ep = Episode(cfg, index)
            for t in range(cfg.episode):
                stats = self.train_iteration(ep, t, rng, gen)
                if stats is None:
                    continue
                window.append(stats)
                if self.step % cfg.log_every == 0:
                    mean = {k: float(np.mean([w[k] for w in window])) for k in window[0]}
                    elapsed = self.seconds + time.perf_counter() - start
                    self.log({"kind": "train", "step": self.step, "episode": self.episode,
                              "world": self.world, "lr": cfg.lr * self.lr_factor(),
                              "seconds": round(elapsed, 1), **mean})
                    self.say(f"nds-{cfg.problem} step {self.step}/{cfg.steps} "
                             f"loss {mean['loss']:+.4f} best-reward {mean['reward_best']:.4f} "
                             f"improving {mean['improving']:.3f} {elapsed:.0f}s")
                    window = []
                if self.step % cfg.val_every == 0 and self.rank == 0:
                    self.seconds += time.perf_counter() - start
                    start = time.perf_counter()
                    ratio = self.validate()
                    self.say(f"nds-{cfg.problem} step {self.step} validation learned/random "
                             f"{ratio:.4f} (best {self.best_val:.4f})")
                if self.step >= cfg.steps:
                    break
            self.episode += 1
            self.instances += cfg.batch * self.world
            self.seconds += time.perf_counter() - start
            if time.perf_counter() - saved >= cfg.checkpoint_every or self.step >= cfg.steps:
                self.save(self.state(), "last.pt")
                saved = time.perf_counter()
        return None


def train(cfg: NDSTrainConfig, resume: bool = False, quiet: bool = False,
          time_limit: float | None = None) -> tuple[NDSTrainer, StopReason | None]:
    """Build a trainer (resuming from ``run_dir/last.pt`` when asked) and run it (for at most
    ``time_limit`` seconds); returns it and why it stopped early, if it did."""
    trainer = NDSTrainer(cfg, resume=resume, quiet=quiet)
    return trainer, trainer.run(time_limit)


def export_policy(run_dir: str | Path, dest: str | Path, hardware: str, command: str,
                  notes: str = "") -> Path:
    """Ship ``run_dir/best.pt`` as ``dest`` (meta extended with ``hardware`` and ``command``) and
    write its model card ``dest`` with suffix ``.md`` from the run's checkpoints and log.
    Returns the card's path."""
    run, dest = Path(run_dir), Path(dest)
    best = checkpoint.load(run / "best.pt", KIND)
    last = checkpoint.load(run / "last.pt", KIND)
    best["meta"] = {**best["meta"], "hardware": hardware, "command": command}
    dest.parent.mkdir(parents=True, exist_ok=True)
    checkpoint.save(best, dest)
    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    vals = [r for r in records if r["kind"] == "val"]
    meta, train_cfg = best["meta"], json.loads(best["meta"]["train"])
    lines = [
        f"# {dest.stem}: NDS removal policy for {meta['problem'].upper()}", "",
        "Deconstruction policy of `routecli.nds.policy` (encoder with a pluggable positional "
        "encoding, GRU pointer decoder with a rollout latent), trained by winner-takes-all policy "
        "gradient (`routecli.nds.train`). Load it with `routecli.nds.policy.load_policy`; "
        "`routecli solve FILE --model nds` uses it by default.", "",
        "## Architecture", "", "| setting | value |", "|---|---|",
        *[f"| {k} | {v} |" for k, v in best["config"].items()], "",
        "## Training", "",
        f"- command: `{command}`",
        f"- hardware: {hardware}",
        f"- shipped weights: step {meta['steps']} (best validation), {meta['instances']} "
        f"training instances ({meta['episodes']} episodes of {train_cfg['episode']} search "
        f"iterations), {meta['train_seconds'] / 60:.0f} min wall time at that point",
        f"- whole run: {last['step']} steps, {last['instances']} instances, "
        f"{last['seconds'] / 60:.0f} min wall time",
        f"- data: `routecli.generate.{meta['problem']}` uniform, {meta['size']} customers, "
        "capacity rule of the PE paper (Appendix F)",
        "- settings: " + ", ".join(f"{k}={v}" for k, v in train_cfg.items()
                                   if k not in ("run_dir", "problem", "size")), "",
        "## Validation", "",
        f"{train_cfg['val_instances']} fixed instances, ASA with {train_cfg['val_iterations']} "
        f"iterations of {train_cfg['val_rollouts']} rollouts removing {train_cfg['remove']} "
        "customers; ratio = mean over the instances of 1 + (learned - random) / |random|, the "
        "cost with the learned policy over the cost with uniform random removal under the same "
        "budget (below 1: the policy beats the random control).", "",
        "| step | minutes | learned | random | ratio |", "|---|---|---|---|---|",
        *[f"| {r['step']} | {r['seconds'] / 60:.0f} | {r['learned']:.4f} | {r['random']:.4f} | "
          f"{r['ratio']:.4f} |" for r in vals], "",
    ]
    if notes:
        lines += ["## Notes", "", notes, ""]
    card = dest.with_suffix(".md")
    card.write_text("\n".join(lines))
    return card
