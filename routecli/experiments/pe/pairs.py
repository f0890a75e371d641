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
``rows.csv``, holds the control: the reference PE's policy before training. Processes on
one machine share a folder (one core each), each taking the pairs no other one holds: a
:func:`routecli.atomic.claim` per pair (``models/<pe>-s<seed>.lock``, ``untrained.lock``),
which the kernel releases when its holder dies.
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

from routecli.atomic import atomic_write_text, claim
from routecli.baselines.reference import reference_solutions
from routecli.errors import OptionError
from routecli.experiments.pe.protocol import (
    Device,
    Model,
    Protocol,
    build,
    load,
    save_model,
    versus_pe,
)
from routecli.generate import batch_instances, load_batch, save_batch
from routecli.improve.imitation import ImitationConfig, train_imitation
from routecli.improve.train import evaluate, generate_instances, train
from routecli.nn.device import to_host
from routecli.problems import cost, gap
from routecli.results import ResultStore, read_csv, write_table

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
                       seed=protocol.test_seed, augment=protocol.augment, device=device)
    costs = to_host(best).astype(np.float64)
    row = {"pe": pe, "seed": seed, "obj": float(costs.mean()),
           "gap_pct": float(gap(costs, reference).mean()),
           "train_seconds": round(train_seconds, 1),
           "eval_seconds": round(time.perf_counter() - started, 1),
           "parameters": sum(p.numel() for p in model.parameters())}
    return costs, row


UNTRAINED_SEED = 0


def evaluate_untrained(protocol: Protocol, out: Path, test: dict, reference: np.ndarray,
                       log: Callable[[str], None] = print, device: Device = "cpu") -> None:
    """The control that says what training bought: the reference PE's policy at its seed-0
    initial weights, evaluated like every trained one (``untrained.csv``; once per folder)."""
    store = row_store(out / "untrained.csv")
    if store.rows:
        return
    pe = versus_pe(protocol)
    _, row = evaluate_row(protocol, build(protocol, pe, UNTRAINED_SEED, device), pe,
                          UNTRAINED_SEED, test, reference, train_seconds=0, device=device)
    store.add(**row)
    log(f"untrained {pe} seed {UNTRAINED_SEED}: obj {row['obj']:.4f}, gap {row['gap_pct']:.2f}%")


def finished(out: Path) -> set[tuple[str, int]]:
    return {(r["pe"], int(r["seed"])) for r in row_store(out / "rows.csv").rows}


def run(protocol: Protocol, pes: list[str], seeds: list[int], out: Path,
        log: Callable[[str], None] = print, progress: bool = True,
        device: Device = "cpu") -> None:
    """Train and evaluate every missing (PE, seed) pair, appending rows as they finish; seed by
    seed, so an interrupted run has every PE on its first seeds. Pairs that another process
    on this machine is running in ``out`` (its claim in ``models/``) are left to it."""
    test, reference = prepare(protocol, out, progress)
    with claim(out / "untrained.lock") as mine:
        if mine:
            evaluate_untrained(protocol, out, test, reference, log, device)
    for seed in seeds:
        for pe in pes:
            model_path = out / "models" / f"{slug(pe)}-s{seed}.pt"
            with claim(model_path.with_suffix(".lock")) as mine:
                if mine and (pe, seed) not in finished(out):
                    run_pair(protocol, pe, seed, out, model_path, test, reference, log, device)


def run_pair(protocol: Protocol, pe: str, seed: int, out: Path, model_path: Path, test: dict,
             reference: np.ndarray, log: Callable[[str], None], device: Device = "cpu") -> None:
    """Train one (PE, seed) (or load its weights from ``model_path``), evaluate it and append
    its costs (those a run killed before its row did not write) and its row."""
    started = time.perf_counter()
    if model_path.is_file():
        model = load(protocol, model_path, device)
        train_seconds = float(json.loads(
            (model_path.with_suffix(".json")).read_text())["train_seconds"])
    else:
        model = build(protocol, pe, seed, device)
        history: list[dict[str, Any]] = []
        schedule = protocol.schedule
        if isinstance(schedule, ImitationConfig):
            train_imitation(model, protocol.problem, protocol.size, schedule, seed,
                            cache=out / "labels" / f"s{seed}.pt", log=history.append,
                            device=device)
        else:
            train(model, protocol.problem, protocol.size, schedule, seed,
                  log=history.append, device=device)
        train_seconds = time.perf_counter() - started
        meta = {"pe": pe, "seed": seed, "train_seconds": train_seconds,
                "protocol": asdict(protocol)}
        save_model(model, model_path, meta)
        atomic_write_text(model_path.with_suffix(".json"),
                          json.dumps({**meta, "history": history}, indent=1))
    costs, row = evaluate_row(protocol, model, pe, seed, test, reference, train_seconds, device)
    store = cost_store(out)
    stored = {r["instance"] for r in store.rows if (r["pe"], r["seed"]) == (pe, str(seed))}
    store.add_rows([{"pe": pe, "seed": seed, "instance": k, "cost": repr(float(c))}
                    for k, c in enumerate(costs) if str(k) not in stored])
    row_store(out / "rows.csv").add(**row)
    log(f"{pe} seed {seed}: obj {row['obj']:.4f}, gap {row['gap_pct']:.2f}% "
        f"(train {train_seconds:.0f} s, eval {row['eval_seconds']:.0f} s)")
