"""The running of a controlled comparison's (PE, seed) pairs in one resumable run folder (the
PE paper's Layer 1, Table 4, ablations Tables 10-12; Layer 3, Table 6).

For every PE and seed: build the backbone with that PE (nothing else differs), train it with
the same budget on the same seeded instances, improve one fixed test set from the same random
tours with the same step budget, and record the mean objective and gap to a PyVRP reference
(the tables' Obj. and Gap % columns). The folder (:func:`prepare`) holds ``protocol.json``, the
test set (``test.npz``) and its reference costs (``reference.csv``). Rows land as they finish
in ``rows.csv``, a :class:`routecli.results.ResultStore` keyed by (PE, seed) with each row's
provenance (commit, date, command), and the row's per-instance costs in ``costs.csv`` (keyed
by PE, seed and instance; the row holds their provenance): a rerun with the same ``--out``
skips the finished pairs, and a row torn by a kill is dropped. Trained weights stay in
``models/``, the labelled states of offline imitation (``--budget imitation``) in
``labels/`` (deterministic: regenerated when missing). ``untrained.csv``, a store like
``rows.csv``, holds the control: the reference PE's policy before training; ``baselines.csv``
the rows that show whether the protocol can separate encodings at all (a random move per
step, best improvement, the imitation labeller; their costs in ``costs.csv`` as PE
``baseline:<row>``). Every (PE, seed) pair and the control is a task (:mod:`routecli.tasks`)
on any executor: a worker trains (its weights and history go to ``models/``, a folder the
workers share) and evaluates, and this process appends the costs and the row as each pair
finishes, each key once.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.baselines.reference import reference_solutions
from routecli.errors import OptionError
from routecli.experiments.pe.protocol import (
    Device,
    Model,
    Protocol,
    build,
    load,
    same_protocol,
    save_model,
    versus_pe,
)
from routecli.generate import batch_instances, load_batch, save_batch
from routecli.improve.env import capacity_depot_slots, make_instances
from routecli.improve.imitation import ImitationConfig, teacher_evaluate, train_imitation
from routecli.improve.train import evaluate, generate_instances, train
from routecli.nn.device import to_host
from routecli.plots.figure import drawn_by_routecli
from routecli.problems import cost, gap
from routecli.results import ResultStore, read_csv, write_table
from routecli.tasks import Executor, Inline, Task, run_tasks, task_key

ROW_FIELDS = ["pe", "seed", "obj", "gap_pct", "train_seconds", "eval_seconds", "parameters"]
COST_FIELDS = ["pe", "seed", "instance", "cost"]


SLUG_LIMIT = 80


def slug(pe: str) -> str:
    """``pe`` as a file-name part (``models/<slug>-s<seed>.pt``, ``summary-<slug>.md``). A long
    list of encodings keeps its first characters and a digest of the whole, so that the name
    stays under the file system's limit and distinct per list."""
    text = re.sub(r"[^a-z0-9]+", "-", pe.lower()).strip("-")
    if len(text) <= SLUG_LIMIT:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return f"{text[:SLUG_LIMIT - len(digest) - 1].rstrip('-')}-{digest}"


def row_store(path: Path) -> ResultStore:
    """``rows.csv`` or ``untrained.csv``: one row per (PE, seed), with its provenance. A file
    written before the provenance was recorded (``ROW_FIELDS`` alone) reads as it is and is
    rewritten with the provenance columns (empty) at its next row."""
    return ResultStore(path, ROW_FIELDS, ["pe", "seed"])


def cost_store(out: Path) -> ResultStore:
    """``costs.csv``: the cost of every test instance per (PE, seed), without provenance of its
    own (the pair's ``rows.csv`` row has it)."""
    return ResultStore(out / "costs.csv", COST_FIELDS, COST_FIELDS[:3], provenance=False)


def check_run_folder(protocol: Protocol, out: Path, reports: list[str]) -> None:
    """Before any work, ``out`` may be written: new, empty, or a run folder of this
    ``protocol`` (its ``protocol.json``) whose results files are this command's and whose
    ``reports`` (file names: summaries, claims) are absent or were written by routecli.
    Anything else (a file, a folder of the user's, another protocol's run, a foreign
    ``rows.csv``, a user's ``summary-x.md``) is one :class:`OptionError`, with nothing
    written."""
    if out.exists() and not out.is_dir():
        raise OptionError(f"--out {out} is a file, not a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return
    stored = out / "protocol.json"
    try:
        previous = json.loads(stored.read_text()) if stored.is_file() else None
    except (OSError, ValueError):
        previous = None
    if previous is None:
        raise OptionError(f"--out {out} holds files and is not a compare-pe run folder (no "
                          "protocol.json of routecli's); use a new folder")
    if previous != asdict(protocol):
        raise OptionError(f"--out {out} holds a run of another protocol ({stored}); use another "
                          "--out or the same options")
    for name in ("rows.csv", "untrained.csv"):
        row_store(out / name)  # a ResultStoreError for a file of other columns
    for name in reports:
        path = out / name
        mine = drawn_by_routecli if name.endswith(".png") else written_report
        if path.exists() and not (path.is_file() and mine(path)):
            raise OptionError(f"--out {out}: {name} was not written by routecli; refusing to "
                              "overwrite it (remove it or write elsewhere)")


def written_report(path: Path) -> bool:
    """Whether ``path`` is a Markdown report compare-pe wrote (a summary or the claims: each
    ends with the command that made it)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return text.rstrip().endswith("```") and "```sh\nroutecli compare-pe" in text


def prepare(protocol: Protocol, out: Path, progress: bool = True) -> tuple[dict, np.ndarray]:
    """``out`` with its protocol, test set and reference costs (created, or checked when
    resuming). Returns the test batch and the reference cost per test instance."""
    out.mkdir(parents=True, exist_ok=True)
    stored = out / "protocol.json"
    if stored.is_file():
        if not same_protocol(json.loads(stored.read_text()), protocol):
            raise OptionError(f"{out} holds a run of another protocol ({stored}); use another "
                              "--out or the same options")
    else:
        atomic_write_text(stored, json.dumps(asdict(protocol), indent=1))
    test_path = out / "test.npz"
    if test_path.is_file():
        _, test = load_batch(test_path)
    else:
        test = generate_instances(protocol.problem, protocol.size, protocol.test_size,
                                  protocol.test_seed, protocol.capacity)
        save_batch(test_path, protocol.problem, test)
    ref_path = out / "reference.csv"
    if ref_path.is_file():
        reference = np.array([float(r["cost"]) for r in read_csv(ref_path)])
    else:
        instances = batch_instances(protocol.problem, test)
        solutions = reference_solutions(instances, progress=progress)
        reference = np.array([cost(i, s) for i, s in zip(instances, solutions, strict=True)])
        write_table(ref_path, ["instance", "cost"],
                    [{"instance": k, "cost": repr(float(c))} for k, c in enumerate(reference)])
    return test, reference


def evaluate_row(protocol: Protocol, model: Model, pe: str, seed: int, test: dict,
                 reference: np.ndarray, train_seconds: float,
                 device: Device = "cpu") -> tuple[np.ndarray, dict[str, Any]]:
    """Improve the test set with ``model`` (on ``device``) on the protocol's step budget:
    per-instance costs and the ``rows.csv`` row (mean objective and gap to ``reference``)."""
    started = time.perf_counter()
    best, _ = evaluate(model, protocol.problem, test, protocol.eval_steps,
                       seed=protocol.test_seed, augment=protocol.augment,
                       depots=capacity_depot_slots(protocol.problem, test, protocol.capacity),
                       device=device)
    costs = to_host(best).astype(np.float64)
    row = {"pe": pe, "seed": seed, "obj": float(costs.mean()),
           "gap_pct": float(gap(costs, reference).mean()),
           "train_seconds": round(train_seconds, 1),
           "eval_seconds": round(time.perf_counter() - started, 1),
           "parameters": sum(p.numel() for p in model.parameters())}
    return costs, row


UNTRAINED_SEED = 0


def evaluate_untrained(protocol: Protocol, test: dict, reference: np.ndarray,
                       device: Device = "cpu") -> tuple[np.ndarray, dict[str, Any]]:
    """The control that says what training bought: the reference PE's policy at its seed-0
    initial weights, evaluated like every trained one (a task; its row goes to
    ``untrained.csv``, once per folder)."""
    pe = versus_pe(protocol)
    return evaluate_row(protocol, build(protocol, pe, UNTRAINED_SEED, device), pe,
                        UNTRAINED_SEED, test, reference, train_seconds=0, device=device)


BASELINE_FIELDS = ["row", "epsilon", "obj", "gap_pct", "at_reference", "eval_seconds"]
AT_REFERENCE_PCT = 0.01  # a gap below this (%) counts as at the reference
BASELINE_EPSILONS = {"random": 1.0, "teacher": 0.0}  # + epsilon-teacher: the labeller's


def baseline_store(out: Path) -> ResultStore:
    """``baselines.csv``: the rows beside the encodings that say whether the protocol can
    separate them (:func:`evaluate_baselines`)."""
    return ResultStore(out / "baselines.csv", BASELINE_FIELDS, ["row"])


def baseline_epsilons(protocol: Protocol) -> dict[str, float]:
    """The baseline rows: a uniformly random allowed move per step, best improvement, and the
    imitation labeller (best improvement with a random move at its rate epsilon)."""
    schedule = protocol.schedule
    labeller = schedule.epsilon if isinstance(schedule, ImitationConfig) else \
        ImitationConfig().epsilon
    return {**BASELINE_EPSILONS, "epsilon-teacher": labeller}


def evaluate_baselines(protocol: Protocol, out: Path, test: dict, reference: np.ndarray,
                       log: Callable[[str], None] = print, device: Device = "cpu") -> None:
    """Improve the test set from the comparison's seeded random tours with the protocol's step
    budget by each baseline of :func:`baseline_epsilons` (the backbone's move kind, every
    allowed move measured); per-instance costs go to ``costs.csv`` as PE ``baseline:<row>``,
    seed 0, the row to ``baselines.csv``."""
    store = baseline_store(out)
    data = make_instances(protocol.problem, test,
                          capacity_depot_slots(protocol.problem, test, protocol.capacity),
                          device=device)
    kind = "pair" if protocol.backbone == "n2s" else "pairwise"
    for name, epsilon in baseline_epsilons(protocol).items():
        if store.done(row=name):
            continue
        started = time.perf_counter()
        costs = to_host(teacher_evaluate(data, protocol.eval_steps, epsilon,
                                         protocol.test_seed, kind)).astype(np.float64)
        gaps = gap(costs, reference)
        append_costs(out, f"baseline:{name}", 0, costs)
        store.add(row=name, epsilon=epsilon, obj=float(costs.mean()), gap_pct=float(gaps.mean()),
                  at_reference=float((gaps < AT_REFERENCE_PCT).mean()),
                  eval_seconds=round(time.perf_counter() - started, 1))
        log(f"baseline {name}: gap {gaps.mean():.2f}%, "
            f"{(gaps < AT_REFERENCE_PCT).mean():.0%} of the instances at the reference")


def append_costs(out: Path, pe: str, seed: int, costs: np.ndarray) -> None:
    """Per-instance ``costs`` of (``pe``, ``seed``) into ``costs.csv``, those not there yet (a
    run killed before its row may have written some)."""
    cost_store(out).add_rows([{"pe": pe, "seed": seed, "instance": k, "cost": repr(float(c))}
                              for k, c in enumerate(costs)], new_only=True)


def finished(out: Path) -> set[tuple[str, int]]:
    return {(r["pe"], int(r["seed"])) for r in row_store(out / "rows.csv").rows}


def model_path(out: Path, pe: str, seed: int) -> Path:
    return out / "models" / f"{slug(pe)}-s{seed}.pt"


def run(protocol: Protocol, pes: list[str], seeds: list[int], out: Path,
        log: Callable[[str], None] = print, progress: bool = True,
        device: Device = "cpu", executor: Executor | None = None) -> None:
    """Train and evaluate every missing (PE, seed) pair on ``executor`` (default: this
    process), appending rows as they finish; submitted seed by seed, so an interrupted run
    has every PE on its first seeds."""
    test, reference = prepare(protocol, out, progress)
    evaluate_baselines(protocol, out, test, reference, log, device)
    settings = asdict(protocol)
    rows, untrained = row_store(out / "rows.csv"), row_store(out / "untrained.csv")
    tasks = [] if untrained.rows else [
        Task(task_key("pe-untrained", versus_pe(protocol), protocol=settings),
             evaluate_untrained, (protocol, test, reference, device))]
    tasks += [Task(task_key("pe", f"{pe}-s{seed}", pe=pe, seed=seed, protocol=settings),
                   run_pair, (protocol, pe, seed, out, test, reference, device))
              for seed in seeds for pe in pes if not rows.done(pe=pe, seed=seed)]

    def record(task: Task, result: tuple[np.ndarray, dict[str, Any]]) -> None:
        costs, row = result
        if task.run is evaluate_untrained:
            if untrained.add_new(**row) is not None:
                log(f"untrained {row['pe']} seed {row['seed']}: obj {row['obj']:.4f}, "
                    f"gap {row['gap_pct']:.2f}%")
            return
        append_costs(out, row["pe"], row["seed"], costs)
        if rows.add_new(**row) is not None:
            log(f"{row['pe']} seed {row['seed']}: obj {row['obj']:.4f}, gap "
                f"{row['gap_pct']:.2f}% (train {row['train_seconds']:.0f} s, eval "
                f"{row['eval_seconds']:.0f} s)")

    with executor or Inline() as engine:
        run_tasks(tasks, engine, record)


def run_pair(protocol: Protocol, pe: str, seed: int, out: Path, test: dict,
             reference: np.ndarray, device: Device = "cpu"
             ) -> tuple[np.ndarray, dict[str, Any]]:
    """Train one (PE, seed) (or load the weights an earlier run saved in ``out/models``) and
    evaluate it: its per-instance costs and its row (a task)."""
    started = time.perf_counter()
    path = model_path(out, pe, seed)
    if path.is_file():
        model = load(protocol, path, device)
        train_seconds = float(json.loads(path.with_suffix(".json").read_text())["train_seconds"])
    else:
        model = build(protocol, pe, seed, device)
        history: list[dict[str, Any]] = []
        schedule = protocol.schedule
        if isinstance(schedule, ImitationConfig):
            train_imitation(model, protocol.problem, protocol.size, schedule, seed,
                            cache=out / "labels" / f"s{seed}.pt", log=history.append,
                            device=device, capacity=protocol.capacity)
        else:
            train(model, protocol.problem, protocol.size, schedule, seed,
                  log=history.append, device=device, capacity=protocol.capacity)
        train_seconds = time.perf_counter() - started
        meta = {"pe": pe, "seed": seed, "train_seconds": train_seconds,
                "protocol": asdict(protocol)}
        save_model(model, path, meta)
        atomic_write_text(path.with_suffix(".json"),
                          json.dumps({**meta, "history": history}, indent=1))
    return evaluate_row(protocol, model, pe, seed, test, reference, train_seconds, device)
