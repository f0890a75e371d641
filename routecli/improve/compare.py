"""The PE paper's controlled comparison (Layer 1, Table 4; ablations, Tables 10-12; Layer 3,
Table 6) as one resumable protocol.

For every PE and seed: build the backbone with that PE (nothing else differs), train it with
the same budget on the same seeded instances, improve one fixed test set from the same random
tours with the same step budget, and record the mean objective and gap to a PyVRP reference.
Rows land in ``rows.csv`` and per-instance costs in ``costs.csv`` as they finish, so a rerun with
the same ``--out`` skips finished (PE, seed) pairs; trained weights stay in ``models/``.
The summary gives, per PE, the mean and the spread over seeds, the paired comparison with
IPE+XPE over test instances (wins, Wilcoxon signed-rank p), Welch's t over the per-seed gaps
(whether the difference exceeds seed-to-seed noise) and the paper's values beside ours.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from routecli.atomic import append_csv_rows, atomic_write_text
from routecli.baselines.reference import reference_solutions
from routecli.errors import OptionError
from routecli.generate import batch_instances, load_batch, save_batch
from routecli.improve.model import DACT, DACTConfig, load_model, parse_pe, to_checkpoint
from routecli.improve.n2s import N2S, N2SConfig, load_n2s, n2s_checkpoint
from routecli.improve.train import PPOConfig, evaluate, generate_instances, train
from routecli.nn.device import to_host
from routecli.pe.registry import PE_REGISTRY
from routecli.plots.figure import save_png
from routecli.problems import cost
from routecli.train.checkpoint import save

PROBLEMS = ("cvrp", "vrptw", "pdtsp")
BACKBONES = ("dact", "n2s")

# --------------------------------------------------------------------------------------------
# the PE lists of the paper's tables, per problem (the IPE variant follows Section 5.2: the
# direction-invariant one for the reversal-symmetric CVRP, the direction-aware one otherwise)

AGGREGATES = ("mean", "circular", "demand", "median", "midpoint")


def ours(problem: str) -> tuple[str, str]:
    """The IPE and IPE+XPE registry names the paper uses for ``problem``."""
    return ("ipe_inv", "ipe_inv_xpe") if problem == "cvrp" else ("ipe", "ipe_xpe")


def pe_list(name: str, problem: str) -> list[str]:
    """A named PE list: ``table4`` (= ``all``), ``table10``, ``table11``, ``table12``,
    ``table6`` (N2S's own PE vs IPE+XPE)."""
    ipe, full = ours(problem)
    lists = {
        "table4": ["nope", "ape", "sin", "rope", "rpe", "alibi", "lap", "rwse", "spd", "dact",
                   "cycleformer", ipe, "xpe", full],
        "table10": ["nope", ipe, f"{ipe}_index", "xpe", full],
        "table11": [f"{full}:xpe_aggregate={a}" for a in AGGREGATES] + [full],
        "table12": ["ipe_xpe", "ipe_inv_xpe"],
        "table6": ["n2s", "ipe_xpe"],
    }
    lists["all"] = lists["table4"]
    if name not in lists:
        raise KeyError(name)
    return lists[name]


def expand_pes(spec: str, problem: str) -> list[str]:
    """``all``, a table name or a comma list of PE specs and table names, in order, unique."""
    out: list[str] = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        try:
            names = pe_list(item.lower(), problem)
        except KeyError:
            try:
                parse_pe(item)
            except (KeyError, ValueError) as err:
                raise OptionError(f"--pe {item!r}: {err}; use all, table4, table10, table11, "
                                  f"table12, table6 or names from {', '.join(PE_REGISTRY)}, "
                                  "n2s") from None
            names = [item]
        out += [n for n in names if n not in out]
    if not out:
        raise OptionError("--pe names no encoding")
    return out


# The paper's numbers (Obj., Gap %) at CVRP-100, VRPTW-100, PDTSP-51 (Tables 4, 10-12) and
# PDTSP-21/51/101 (Table 6), keyed by our PE spec.
PAPER_TABLE4 = {
    "nope": {"cvrp": (17.42, 11.81), "vrptw": (29.99, 17.96), "pdtsp": (7.95, 15.86)},
    "ape": {"cvrp": (16.34, 4.88), "vrptw": (27.05, 6.40), "pdtsp": (7.20, 4.93)},
    "sin": {"cvrp": (16.45, 5.58), "vrptw": (27.34, 7.54), "pdtsp": (7.27, 5.95)},
    "rope": {"cvrp": (16.42, 5.39), "vrptw": (27.22, 7.07), "pdtsp": (7.24, 5.51)},
    "rpe": {"cvrp": (16.30, 4.62), "vrptw": (27.00, 6.20), "pdtsp": (7.18, 4.63)},
    "alibi": {"cvrp": (16.40, 5.26), "vrptw": (27.30, 7.39), "pdtsp": (7.26, 5.80)},
    "lap": {"cvrp": (15.91, 2.12), "vrptw": (26.55, 4.43), "pdtsp": (7.07, 3.06)},
    "rwse": {"cvrp": (16.06, 3.08), "vrptw": (26.79, 5.38), "pdtsp": (7.13, 3.94)},
    "spd": {"cvrp": (15.86, 1.80), "vrptw": (26.41, 3.88), "pdtsp": (7.05, 2.74)},
    "dact": {"cvrp": (15.95, 2.37), "vrptw": (26.58, 4.55), "pdtsp": (7.05, 2.84)},
    "cycleformer": {"cvrp": (15.94, 2.31), "vrptw": (26.55, 4.43), "pdtsp": (7.05, 2.74)},
    "ipe": {"vrptw": (26.32, 3.53), "pdtsp": (7.01, 2.16)},
    "ipe_inv": {"cvrp": (15.81, 1.48)},
    "xpe": {"cvrp": (15.84, 1.67), "vrptw": (26.27, 3.33), "pdtsp": (7.02, 2.30)},
    "ipe_xpe": {"cvrp": (15.78, 1.28), "vrptw": (26.18, 2.97), "pdtsp": (6.99, 1.87)},
    "ipe_inv_xpe": {"cvrp": (15.76, 1.16), "vrptw": (26.45, 4.04), "pdtsp": (7.12, 3.71)},
    "ipe_inv_index": {"cvrp": (16.18, 3.85)},
    **{f"ipe_inv_xpe:xpe_aggregate={a}": {"cvrp": v} for a, v in zip(
        AGGREGATES, [(15.83, 1.61), (15.82, 1.54), (15.83, 1.61), (15.84, 1.67), (15.85, 1.73)],
        strict=True)},
    **{f"ipe_xpe:xpe_aggregate={a}": {"vrptw": v} for a, v in zip(
        AGGREGATES, [(26.30, 3.46), (26.27, 3.34), (26.31, 3.50), (26.32, 3.54), (26.34, 3.62)],
        strict=True)},
}
# Table 4's reference objectives: HGS on CVRP-100 and VRPTW-100, LKH on PDTSP-51
PAPER_REFERENCE = {"cvrp": 15.58, "vrptw": 25.42, "pdtsp": 6.87}
PAPER_TABLE6_REFERENCE = {21: 4.563, 51: 6.862, 101: 9.428}  # LKH (10k), Table 6
PAPER_TABLE6 = {  # PDTSP-size: (Obj., Gap %) with 3k steps; the reference is LKH (10k)
    "n2s": {21: (4.565, 0.05), 51: (7.027, 2.40), 101: (9.846, 4.44)},
    "ipe_xpe": {21: (4.564, 0.03), 51: (6.997, 1.96), 101: (9.701, 2.89)},
}


def paper_value(pe: str, problem: str, backbone: str, size: int) -> tuple[float, float] | None:
    if backbone == "n2s":
        return PAPER_TABLE6.get(pe, {}).get(size)
    return PAPER_TABLE4.get(pe, {}).get(problem)


def paper_reference(problem: str, backbone: str, size: int) -> float | None:
    """The paper's reference objective for the table this protocol reproduces."""
    if backbone == "n2s":
        return PAPER_TABLE6_REFERENCE.get(size)
    return PAPER_REFERENCE.get(problem)


# --------------------------------------------------------------------------------------------
# budgets

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
}
N2S_PAPER = {"t_train": 250, "n_step": 5, "lr_actor": 8e-5, "lr_critic": 2e-5,
             "max_grad_norm": 0.05, "curriculum": 100}


def parse_budget(spec: str, backbone: str) -> tuple[PPOConfig, int]:
    """``NAME[:key=value,...]`` -> training schedule and evaluation steps, e.g.
    ``cpu:epochs=8,eval_steps=1000``."""
    name, _, rest = spec.partition(":")
    if name not in BUDGETS:
        raise OptionError(f"--budget {name!r}: choose {', '.join(BUDGETS)} (optionally with "
                          ":key=value,... overrides)")
    preset = BUDGETS[name]
    train_options = dict(preset["train"])
    if name == "paper" and backbone == "n2s":
        train_options.update(N2S_PAPER)
    steps = int(preset["eval_steps"] if not (name == "paper" and backbone == "n2s") else 3000)
    known = {f for f in PPOConfig.__dataclass_fields__}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or (key not in known and key != "eval_steps"):
            raise OptionError(f"--budget option {item!r}: use key=value with key one of "
                              f"{', '.join(sorted(known))}, eval_steps")
        if key == "eval_steps":
            steps = int(value)
        else:
            kind = type(getattr(PPOConfig(), key))
            train_options[key] = kind(value)
    return PPOConfig(**train_options), steps


# --------------------------------------------------------------------------------------------
# the protocol


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

    @property
    def schedule(self) -> PPOConfig:
        return PPOConfig(**self.train)


def make_protocol(problem: str, size: int, backbone: str, budget: str, test_size: int = 128,
                  augment: int = 1) -> Protocol:
    if problem not in PROBLEMS:
        raise OptionError(f"--problem {problem!r}: the backbones here solve {', '.join(PROBLEMS)}")
    if backbone not in BACKBONES:
        raise OptionError(f"--backbone {backbone!r}: choose {', '.join(BACKBONES)}")
    if backbone == "n2s" and problem != "pdtsp":
        raise OptionError("--backbone n2s solves PDTSP (pickup-delivery pair moves)")
    if test_size < 1:
        raise OptionError(f"--test-size must be >= 1, got {test_size}")
    schedule, steps = parse_budget(budget, backbone)
    return Protocol(problem, size, backbone, budget, schedule.to_dict(), steps, test_size,
                    augment=augment)


def slug(pe: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", pe.lower()).strip("-")


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


ROW_FIELDS = ["pe", "seed", "obj", "gap_pct", "train_seconds", "eval_seconds", "parameters"]


def read_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def prepare(protocol: Protocol, out: Path, progress: bool = True) -> tuple[dict, np.ndarray]:
    """``out`` with its protocol, test set and reference costs (created, or checked when
    resuming). Returns the test batch and the reference cost per test instance."""
    out.mkdir(parents=True, exist_ok=True)
    stored = out / "protocol.json"
    if stored.is_file():
        previous = json.loads(stored.read_text())
        if previous != asdict(protocol):
            raise OptionError(f"{out} holds a run of another protocol ({stored}); use another "
                              "--out or the same options")
    else:
        atomic_write_text(stored, json.dumps(asdict(protocol), indent=1))
    test_path = out / "test.npz"
    if test_path.is_file():
        _, test = load_batch(test_path)
    else:
        test = generate_instances(protocol.problem, protocol.size, protocol.test_size,
                                  protocol.test_seed)
        save_batch(test_path, protocol.problem, test)
    ref_path = out / "reference.csv"
    if ref_path.is_file():
        reference = np.array([float(r["cost"]) for r in read_rows(ref_path)])
    else:
        instances = batch_instances(protocol.problem, test)
        solutions = reference_solutions(instances, progress=progress)
        reference = np.array([cost(i, s) for i, s in zip(instances, solutions, strict=True)])
        text = "instance,cost\n" + "".join(f"{k},{float(c)!r}\n" for k, c in enumerate(reference))
        atomic_write_text(ref_path, text)
    return test, reference


def versus_pe(protocol: Protocol) -> str:
    """The PE every other one is compared with: the problem's IPE+XPE (N2S: HA-N2S's)."""
    return ours(protocol.problem)[1] if protocol.backbone == "dact" else "ipe_xpe"


def evaluate_row(protocol: Protocol, model: Model, pe: str, seed: int, test: dict,
                 reference: np.ndarray, train_seconds: float,
                 device: Device = "cpu") -> tuple[np.ndarray, dict[str, Any]]:
    """Improve the test set with ``model`` (on ``device``) on the protocol's step budget:
    per-instance costs and the ``rows.csv`` row (mean objective and gap to ``reference``)."""
    started = time.perf_counter()
    best, _ = evaluate(model, protocol.problem, test, protocol.eval_steps,
                       seed=protocol.test_seed, augment=protocol.augment, device=device)
    costs = to_host(best).astype(np.float64)
    row = {"pe": pe, "seed": seed, "obj": float(costs.mean()),
           "gap_pct": float((100.0 * (costs - reference) / reference).mean()),
           "train_seconds": round(train_seconds, 1),
           "eval_seconds": round(time.perf_counter() - started, 1),
           "parameters": sum(p.numel() for p in model.parameters())}
    return costs, row


UNTRAINED_SEED = 0


def evaluate_untrained(protocol: Protocol, out: Path, test: dict, reference: np.ndarray,
                       log: Callable[[str], None] = print, device: Device = "cpu") -> None:
    """The control that says what training bought: the reference PE's policy at its seed-0
    initial weights, evaluated like every trained one (``untrained.csv``; once per folder)."""
    path = out / "untrained.csv"
    if read_rows(path):
        return
    pe = versus_pe(protocol)
    _, row = evaluate_row(protocol, build(protocol, pe, UNTRAINED_SEED, device), pe,
                          UNTRAINED_SEED, test, reference, train_seconds=0, device=device)
    append_csv_rows(path, ROW_FIELDS, [row])
    log(f"untrained {pe} seed {UNTRAINED_SEED}: obj {row['obj']:.4f}, gap {row['gap_pct']:.2f}%")


BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """This machine boot's identity (Linux), so a lock left by a process of an earlier boot,
    whose pid may now belong to another process, counts as stale."""
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def lock_holder_alive(lock: Path) -> bool:
    """Whether the process that wrote ``lock`` (``pid boot-id``) still runs; an empty lock is
    being written (held) unless it is older than a minute (its writer died before writing)."""
    try:
        pid, _, boot = lock.read_text().partition(" ")
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if not pid:
        return age < 60
    if boot.strip() != boot_id():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


@contextmanager
def claimed(lock: Path) -> Iterator[bool]:
    """Whether this process holds ``lock``, created exclusively with its pid; a lock whose
    process has ended (crash, killed session) is taken over. Removed on leaving. This lets
    several processes on one machine share a run folder (one core each), each taking the
    (PE, seed) pairs no other one holds."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            if lock_holder_alive(lock):
                yield False
                return
            lock.unlink(missing_ok=True)
    else:
        yield False
        return
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{os.getpid()} {boot_id()}")
    try:
        yield True
    finally:
        lock.unlink(missing_ok=True)


def finished(out: Path) -> set[tuple[str, int]]:
    return {(r["pe"], int(r["seed"])) for r in read_rows(out / "rows.csv")}


def run(protocol: Protocol, pes: list[str], seeds: list[int], out: Path,
        log: Callable[[str], None] = print, progress: bool = True,
        device: Device = "cpu") -> None:
    """Train and evaluate every missing (PE, seed) pair, appending rows as they finish; seed by
    seed, so an interrupted run has every PE on its first seeds. Pairs that another process
    on this machine is running in ``out`` (its lock in ``models/``) are left to it."""
    test, reference = prepare(protocol, out, progress)
    with claimed(out / "untrained.lock") as mine:
        if mine:
            evaluate_untrained(protocol, out, test, reference, log, device)
    for seed in seeds:
        for pe in pes:
            model_path = out / "models" / f"{slug(pe)}-s{seed}.pt"
            with claimed(model_path.with_suffix(".lock")) as mine:
                if mine and (pe, seed) not in finished(out):
                    run_pair(protocol, pe, seed, out, model_path, test, reference, log, device)


def run_pair(protocol: Protocol, pe: str, seed: int, out: Path, model_path: Path, test: dict,
             reference: np.ndarray, log: Callable[[str], None], device: Device = "cpu") -> None:
    """Train one (PE, seed) (or load its weights from ``model_path``), evaluate it and append
    its rows."""
    started = time.perf_counter()
    if model_path.is_file():
        model = load(protocol, model_path, device)
        train_seconds = float(json.loads(
            (model_path.with_suffix(".json")).read_text())["train_seconds"])
    else:
        model = build(protocol, pe, seed, device)
        history: list[dict[str, Any]] = []
        train(model, protocol.problem, protocol.size, protocol.schedule, seed,
              log=history.append, device=device)
        train_seconds = time.perf_counter() - started
        meta = {"pe": pe, "seed": seed, "train_seconds": train_seconds,
                "protocol": asdict(protocol)}
        save_model(model, model_path, meta)
        atomic_write_text(model_path.with_suffix(".json"),
                          json.dumps({**meta, "history": history}, indent=1))
    costs, row = evaluate_row(protocol, model, pe, seed, test, reference, train_seconds, device)
    append_csv_rows(out / "costs.csv", ["pe", "seed", "instance", "cost"],
                [{"pe": pe, "seed": seed, "instance": k, "cost": repr(float(c))}
                 for k, c in enumerate(costs)])
    append_csv_rows(out / "rows.csv", ROW_FIELDS, [row])
    log(f"{pe} seed {seed}: obj {row['obj']:.4f}, gap {row['gap_pct']:.2f}% "
        f"(train {train_seconds:.0f} s, eval {row['eval_seconds']:.0f} s)")


# --------------------------------------------------------------------------------------------
# the summary


@dataclass(frozen=True)
class Summary:
    """One PE's line: means and sample standard deviations over seeds of the per-seed mean
    objective and gap; paired comparison with the reference PE over test instances (costs
    averaged over the seeds both have); the paper's values."""

    pe: str
    title: str
    seeds: int
    obj: float
    obj_sd: float
    gap: float
    gap_sd: float
    wins: int | None = None  # instances where the reference PE is better
    losses: int | None = None
    p_value: float | None = None
    seed_p: float | None = None  # Welch's t over per-seed gaps: is the PE gap beyond seed noise?
    paper: tuple[float, float] | None = None


def spread(values: np.ndarray) -> float:
    """Sample standard deviation (NaN for one value)."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def title(pe: str) -> str:
    key, options = parse_pe(pe)
    base = "N2S CPE" if pe == "n2s" else PE_REGISTRY[key].title
    if options.get("xpe_aggregate"):
        return f"{base.split(' (')[0]}, per-route XPE: {options['xpe_aggregate']}"
    return base


def summarize(protocol: Protocol, out: Path, pes: list[str] | None = None,
              versus: str | None = None) -> list[Summary]:
    """Summaries in ``pes`` order (default: every PE with rows), paired against ``versus``
    (default: the problem's IPE+XPE)."""
    from scipy.stats import ttest_ind, wilcoxon

    rows = read_rows(out / "rows.csv")
    reference = np.array([float(r["cost"]) for r in read_rows(out / "reference.csv")])
    costs: dict[str, dict[int, np.ndarray]] = {}
    for r in read_rows(out / "costs.csv"):
        per_seed = costs.setdefault(r["pe"], {})
        per_seed.setdefault(int(r["seed"]), np.full(len(reference), np.nan))[int(r["instance"])] \
            = float(r["cost"])
    order = pes or list(dict.fromkeys(r["pe"] for r in rows))
    versus = versus or versus_pe(protocol)

    def instance_means(pe: str, seeds: set[int]) -> np.ndarray:
        return np.mean([costs[pe][s] for s in sorted(seeds)], axis=0)

    def seed_gaps(pe: str) -> np.ndarray:
        return np.array([float(r["gap_pct"]) for r in rows if r["pe"] == pe])

    out_rows: list[Summary] = []
    for pe in order:
        mine = [r for r in rows if r["pe"] == pe]
        if not mine:
            continue
        objs = np.array([float(r["obj"]) for r in mine])
        gaps = seed_gaps(pe)
        summary = Summary(pe, title(pe), len(mine), float(objs.mean()), spread(objs),
                          float(gaps.mean()), spread(gaps),
                          paper=paper_value(pe, protocol.problem, protocol.backbone,
                                            protocol.size))
        if pe != versus and versus in costs:
            shared = set(costs[pe]) & set(costs[versus])
            if shared:
                a, b = instance_means(versus, shared), instance_means(pe, shared)
                diff = b - a
                p = float(wilcoxon(diff).pvalue) if np.any(diff != 0) else 1.0
                summary = replace(summary, wins=int((a < b).sum()), losses=int((a > b).sum()),
                                  p_value=p)
            theirs = seed_gaps(versus)
            if min(len(gaps), len(theirs)) > 1 and np.ptp(np.r_[gaps, theirs]) > 0:
                summary = replace(summary, seed_p=float(
                    ttest_ind(gaps, theirs, equal_var=False).pvalue))
        out_rows.append(summary)
    return out_rows


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.{digits}f}{suffix}"


def fmt_p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def markdown(protocol: Protocol, summaries: list[Summary], reference: np.ndarray,
             versus: str, command: str, untrained: dict[str, str] | None = None) -> str:
    """The summary as a Markdown table (ours beside the paper's), with the command; the
    untrained control (a row of ``untrained.csv``) last, when given."""
    problem = protocol.problem.upper()
    scale = f"{problem}-{protocol.size}"
    paper_ref = paper_reference(protocol.problem, protocol.backbone, protocol.size)
    digits = 3 if protocol.backbone == "n2s" else 2  # Table 6 prints three decimals
    head = (f"| PE | seeds | Obj. (mean ± sd) | Gap % (mean ± sd) | vs {versus}: wins/losses | "
            f"Wilcoxon p | seed-level Welch p | paper Obj. | paper Gap % |\n"
            f"|---|---|---|---|---|---|---|---|---|\n")
    lines = [f"| reference ({protocol.reference}) | | {reference.mean():.4f} "
             f"| - | | | | {fmt(paper_ref, digits)} | - |"]
    for s in summaries:
        lines.append(
            f"| {s.title} | {s.seeds} | {fmt(s.obj, 4)} ± {fmt(s.obj_sd, 4)} | "
            f"{fmt(s.gap)} ± {fmt(s.gap_sd)} | "
            f"{'-' if s.wins is None else f'{s.wins}/{s.losses}'} | {fmt_p(s.p_value)} | "
            f"{fmt_p(s.seed_p)} | "
            f"{fmt(s.paper[0], digits) if s.paper else '-'} | "
            f"{fmt(s.paper[1]) if s.paper else '-'} |")
    if untrained is not None:
        lines.append(f"| control: {title(untrained['pe'])}, untrained (seed "
                     f"{untrained['seed']}) | 1 | {float(untrained['obj']):.4f} | "
                     f"{float(untrained['gap_pct']):.2f} | | | | - | - |")
    schedule = protocol.schedule
    return (f"{scale}, {protocol.backbone.upper()} backbone, budget {protocol.budget}: "
            f"{schedule.epochs} epochs x {schedule.batches} batches x {schedule.batch_size} "
            f"instances x {schedule.t_train} steps; test: {protocol.test_size} instances, "
            f"{protocol.eval_steps} steps, {protocol.augment} image(s). Wins: test instances "
            f"where {versus} is better (costs averaged over seeds).\n\n"
            + head + "\n".join(lines) + f"\n\n```sh\n{command}\n```\n")


def plot(summaries: list[Summary], path: Path, caption: str) -> None:
    """Our gap per PE (mean, sd over seeds as error bars, left axis) beside the paper's gap
    (right axis): the two scales differ, the orderings can be compared."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(summaries) + 2.5), 4.4))
    x = np.arange(len(summaries))
    ax.errorbar(x, [s.gap for s in summaries],
                yerr=[0 if math.isnan(s.gap_sd) else s.gap_sd for s in summaries],
                fmt="o", color="#4c72b0", capsize=4, label="ours: mean ± sd over seeds (left)")
    handles, labels = ax.get_legend_handles_labels()
    paper = [(k, s.paper[1]) for k, s in enumerate(summaries) if s.paper]
    if paper:
        right = ax.twinx()
        right.plot([k for k, _ in paper], [g for _, g in paper], "s", color="#dd8452",
                   label="paper (right)")
        right.set_ylabel("paper gap %")
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    ax.set_xticks(x, [s.title.replace(" (direction-", "\n(").replace(", per-route", "\nper-route")
                      for s in summaries], rotation=60, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(summaries) - 0.4)
    ax.set_ylabel("our gap to the reference %")
    ax.set_title(caption, fontsize=9)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.16), ncol=2,
              fontsize=8, frameon=False)
    save_png(fig, path, dpi=130)


def report(protocol: Protocol, out: Path, pes: list[str], command: str, stem: str) -> str:
    """Write ``<stem>.md`` and ``<stem>.png`` in ``out`` for ``pes``; returns the Markdown."""
    versus = versus_pe(protocol)
    summaries = summarize(protocol, out, pes, versus)
    reference = np.array([float(r["cost"]) for r in read_rows(out / "reference.csv")])
    untrained = read_rows(out / "untrained.csv")
    text = markdown(protocol, summaries, reference, versus, command,
                    untrained[0] if untrained else None)
    atomic_write_text(out / f"{stem}.md", text)
    plot(summaries, out / f"{stem}.png",
         f"{protocol.problem.upper()}-{protocol.size}, {protocol.backbone.upper()}, "
         f"budget {protocol.budget}")
    return text
