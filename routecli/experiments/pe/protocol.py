"""What every (PE, seed) run of the controlled comparison shares: the training budget, the
protocol and the backbone it builds.

- Budgets (:data:`BUDGETS`, :func:`parse_budget`): ``smoke`` (a check that everything runs),
  ``cpu`` (the scaled PPO protocol of docs/pe-paper.md), ``paper``, the published recipes:
  DACT's for Layer 1 (Table 4, ablations Tables 10-12) and N2S's for Layer 3 (Table 6, 3k
  evaluation steps), and ``imitation``, offline imitation of best improvement
  (:mod:`routecli.improve.imitation`; either backbone), each optionally with ``key=value``
  overrides.
- :class:`Protocol`: problem, size, backbone, schedule, test set and step budget, stored as
  ``protocol.json`` in a run folder; :func:`versus_pe`, the PE every other one is compared with.
- The backbone with one PE at its seeded initial weights (:func:`build`), saved and loaded
  (:func:`save_model`, :func:`load`): only the PE differs between the runs of a protocol.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from routecli.errors import OptionError
from routecli.experiments.pe.paper import ours, printed
from routecli.improve.imitation import ImitationConfig
from routecli.improve.model import DACT, DACTConfig, load_model, to_checkpoint
from routecli.improve.n2s import N2S, N2SConfig, load_n2s, n2s_checkpoint
from routecli.improve.train import PPOConfig
from routecli.limits import MAX_STEPS
from routecli.resources import require_memory
from routecli.train.checkpoint import save

PROBLEMS = ("cvrp", "vrptw", "pdtsp")
BACKBONES = ("dact", "n2s")

BUDGETS: dict[str, dict[str, Any]] = {
    # a check that everything runs, seconds per (PE, seed)
    "smoke": {"train": {"epochs": 1, "batches": 1, "batch_size": 4, "t_train": 4,
                        "curriculum": 0}, "eval_steps": 10},
    # the scaled protocol that fits a shared 2-core CPU (docs/pe-paper.md): minutes per (PE, seed)
    "cpu": {"train": {"epochs": 4, "batches": 6, "batch_size": 32, "t_train": 20,
                      "curriculum": 50, "lr_actor": 1e-3, "lr_critic": 3e-4, "lr_decay": 0.9},
            "eval_steps": 300},
    # the published recipes (DACT for CVRP/PDTSP Layer 1, N2S for Layer 3): GPU days
    "paper": {"train": {}, "eval_steps": 1000},
    # offline imitation of best improvement: where PPO's curves stay flat on a CPU
    "imitation": {"train": {}, "eval_steps": 300},
}
Schedule = PPOConfig | ImitationConfig
N2S_PAPER = {"t_train": 250, "n_step": 5, "lr_actor": 8e-5, "lr_critic": 2e-5,
             "max_grad_norm": 0.05, "curriculum": 100}


def schedule_type(budget: str) -> type[PPOConfig] | type[ImitationConfig]:
    """The training method of a budget (``NAME[:...]``): PPO, or offline imitation."""
    return ImitationConfig if budget.partition(":")[0] == "imitation" else PPOConfig


def parse_budget(spec: str, backbone: str) -> tuple[Schedule, int]:
    """``NAME[:key=value,...]`` -> training schedule and evaluation steps, e.g.
    ``cpu:epochs=8,eval_steps=1000``, ``imitation:updates=4000``."""
    name, _, rest = spec.partition(":")
    if name not in BUDGETS:
        raise OptionError(f"--budget {name!r}: choose {', '.join(BUDGETS)} (optionally with "
                          ":key=value,... overrides)")
    preset = BUDGETS[name]
    train_options = dict(preset["train"])
    if name == "paper" and backbone == "n2s":
        train_options.update(N2S_PAPER)
    steps = int(preset["eval_steps"] if not (name == "paper" and backbone == "n2s") else 3000)
    config = schedule_type(name)
    known = {f for f in config.__dataclass_fields__}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or (key not in known and key != "eval_steps"):
            raise OptionError(f"--budget option {item!r}: use key=value with key one of "
                              f"{', '.join(sorted(known))}, eval_steps")
        kind = int if key == "eval_steps" else type(getattr(config(), key))
        try:
            parsed = kind(value)
        except ValueError:
            raise OptionError(f"--budget option {item!r}: {key} takes a {kind.__name__}") \
                from None
        if key == "eval_steps":
            if not 1 <= parsed <= MAX_STEPS:
                raise OptionError(f"--budget option {item!r}: eval_steps must be from 1 to "
                                  f"{MAX_STEPS:,}")
            steps = parsed
        else:
            train_options[key] = parsed
    try:
        return config(**train_options), steps
    except ValueError as error:
        raise OptionError(f"--budget {spec!r}: {error}") from None


@dataclass(frozen=True)
class Protocol:
    """Everything every (PE, seed) run shares; stored as ``protocol.json`` in ``--out``."""

    problem: str
    size: int
    backbone: str
    budget: str
    train: dict[str, Any]
    eval_steps: int
    test_size: int = 128
    test_seed: int = 1_000_003
    augment: int = 1
    reference: str = "PyVRP, routecli's default reference budget"
    model: dict[str, Any] = field(default_factory=dict)
    capacity: float | None = None  # CVRP, VRPTW vehicles; None: the PE paper's Appendix F rule

    @property
    def schedule(self) -> Schedule:
        return schedule_type(self.budget)(**self.train)


def make_protocol(problem: str, size: int, backbone: str, budget: str, test_size: int = 128,
                  augment: int = 1, capacity: float | None = None) -> Protocol:
    if problem not in PROBLEMS:
        raise OptionError(f"--problem {problem!r}: the backbones here solve {', '.join(PROBLEMS)}")
    if backbone not in BACKBONES:
        raise OptionError(f"--backbone {backbone!r}: choose {', '.join(BACKBONES)}")
    if backbone == "n2s" and problem != "pdtsp":
        raise OptionError("--backbone n2s solves PDTSP (pickup-delivery pair moves)")
    if test_size < 1:
        raise OptionError(f"--test-size must be >= 1, got {test_size}")
    if capacity is not None and problem == "pdtsp":
        raise OptionError("--capacity: PDTSP has no vehicle capacity")
    if capacity is not None and not 9 <= capacity < float("inf"):
        raise OptionError(f"--capacity must be finite and at least 9 (the largest demand), "
                          f"got {capacity:g}")
    schedule, steps = parse_budget(budget, backbone)
    return Protocol(problem, size, backbone, budget, schedule.to_dict(), steps, test_size,
                    augment=augment, capacity=capacity)


def same_protocol(stored: dict[str, Any], protocol: Protocol) -> bool:
    """Whether ``stored`` (a ``protocol.json``) is ``protocol``; a field a folder written
    before it existed lacks reads as its default."""
    defaults = {f.name: f.default for f in fields(Protocol) if f.default is not MISSING}
    return {**defaults, "model": {}, **stored} == asdict(protocol)


PLUMBING_CHECK = ("--budget smoke is a plumbing check: it shows that every step runs, and "
                  "trains too little for its numbers to compare encodings")


def plumbing_check(budget: str) -> bool:
    """Whether ``budget`` is ``smoke``, whose results say nothing about the encodings."""
    return budget.split(":")[0].strip() == "smoke"


def check_pe(protocol: Protocol, pe: str) -> None:
    """Refuse, before any work, an encoding (with its ``NAME:key=value`` options) that the
    backbone cannot be built with: an option the encoding does not take, a value it refuses."""
    try:
        build(protocol, pe, seed=0)
    except (TypeError, ValueError, KeyError) as err:
        raise OptionError(f"--pe {pe!r}: {' '.join(str(err).split())}") from None


def check_room(protocol: Protocol) -> None:
    """Refuse a protocol whose largest batch cannot be held: attention scores of every head
    and layer over ``[B, V, V]``, kept for backward, at the larger of the training batch and
    the test set with its images."""
    schedule = protocol.schedule
    trained = schedule.batch if isinstance(schedule, ImitationConfig) else schedule.batch_size
    batch = max(trained, protocol.test_size * protocol.augment)
    model = DACTConfig(**protocol.model) if protocol.backbone == "dact" else \
        N2SConfig(**protocol.model)
    nodes = protocol.size + 1
    require_memory(16 * batch * model.num_heads * model.num_layers * nodes**2,
                   f"a batch of {batch:,} instances of {nodes:,} nodes")


def versus_pe(protocol: Protocol) -> str:
    """The PE every other one is compared with: the problem's IPE+XPE (N2S: HA-N2S's)."""
    return ours(protocol.problem)[1] if protocol.backbone == "dact" else printed("ipe_xpe")


Model = DACT | N2S
Device = str | torch.device


def build(protocol: Protocol, pe: str, seed: int, device: Device = "cpu") -> Model:
    """The backbone with ``pe`` at its seeded initial weights (drawn on the CPU, so every
    device starts from the same weights), on ``device``."""
    torch.manual_seed(seed)
    if protocol.backbone == "n2s":
        return N2S(N2SConfig(pe=pe, **protocol.model)).to(device)
    return DACT(DACTConfig(problem=protocol.problem, pe=pe, **protocol.model)).to(device)


def model_checkpoint(model: Model, meta: dict[str, Any]) -> dict[str, Any]:
    return n2s_checkpoint(model, meta) if isinstance(model, N2S) else to_checkpoint(model, meta)


def save_model(model: Model, path: Path, meta: dict[str, Any]) -> None:
    save(model_checkpoint(model, meta), path)


def load(protocol: Protocol, path: Path, device: Device = "cpu") -> Model:
    return (load_n2s(path) if protocol.backbone == "n2s" else load_model(path)).to(device)
