"""Can the DACT backbone learn its best-improvement teacher, given enough updates? Offline
imitation on labelled states, with a learning curve.

    .venv/bin/python benchmarks/imitation_fit.py --out data/runs/imitation_fit/cvrp20 \
        --validation data/runs/pe_curve/cvrp20-imitation-c300 --pe ipe_inv_xpe,nope \
        --updates 6000 --eval-every 500 --cpu-minutes 40

The on-policy imitation pilots (``benchmarks/pe_curve.py --budget ...,imitation=K``) take one
gradient step per few moves of 32 instances: under 4,000 updates in their whole budget, where
DACT's recipe takes hundreds of thousands. This script separates the two questions. First it
labels states once (``--out/states.pt``): ``--instances`` generated instances, each improved for
``--trajectory`` moves from a random tour by an epsilon-greedy teacher (best improvement,
:func:`routecli.improve.moves.best_pairwise`, or with probability ``--epsilon`` a uniformly
random allowed move, so the states range from random tours to perturbed local optima); every
``--keep-every``-th state is stored with its teacher move. Then, per PE, it takes ``--updates``
Adam steps of cross-entropy towards the teacher's move on random minibatches of those states
(the same states and minibatches for every PE; ``--target ties`` maximises the probability of
any move as good as the teacher's instead of its one move; ``--train-states improvable`` leaves
out the local optima, where the teacher's move is an arbitrary least-worsening one). Every
``--eval-every`` updates it measures on held-out states (the last ``--held-out`` instances',
never trained on) the imitation loss and, where some move shortens the tour, how often the
policy's most likely move is the teacher's, as good as it, and shortens the tour; and on the
validation set of a ``benchmarks/pe_curve.py`` folder the gap of ``evaluate`` (its sampled
moves, the curves' measure) to the folder's references.
Rows in ``--out/curve.csv`` (a result store: commit, date, command); the weights, optimizer and
data position are saved after every evaluation, and a rerun resumes. ``--final-eval 1000x8``:
after training, the validation gap at larger budgets (steps x symmetric images), rows in
``--out/final.csv``. One thread.
``--report STEM --out A --out B`` writes ``STEM.md`` and ``STEM.png`` from the folders' rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from routecli.atomic import atomic_write_text
from routecli.generate.batch import load_batch
from routecli.improve.env import Env, Instances, initial_orders, make_instances
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.moves import as_good_as_best, pairwise_move, pairwise_tour_costs
from routecli.improve.pairs import slug
from routecli.improve.train import data_seed, evaluate, generate_instances
from routecli.nn.device import generator as seeded_generator
from routecli.store import Provenance, ResultStore, read_csv

FINAL_COLUMNS = ("pe", "update", "eval_steps", "augment", "val_gap_pct", "eval_seconds")
COLUMNS = ("pe", "update", "train_cpu_s", "train_loss", "held_loss", "teacher", "tie",
           "improves", "val_gap_pct")


# --------------------------------------------------------------------------------------------
# labelled states


def label_states(problem: str, size: int, instances: int, trajectory: int, keep_every: int,
                 epsilon: float, seed: int, improvable_only: bool
                 ) -> dict[str, torch.Tensor | dict]:
    """Run the epsilon-greedy teacher on every instance; keep every ``keep_every``-th state
    (with ``improvable_only``, those where some move shortens the tour):
    ``instance`` ``[S]``, ``order`` ``[S, V]``, ``last`` ``[S, 3]``, ``target`` ``[S]`` (the
    flattened teacher move), and the generated ``batch``."""
    batch = generate_instances(problem, size, instances, data_seed(seed, 0, 0))
    data = make_instances(problem, batch)
    generator = seeded_generator("cpu", seed)
    env = Env(data, initial_orders(data, generator), window=data.slots - 1)
    rows = torch.arange(data.size)
    kept: dict[str, list[torch.Tensor]] = {"instance": [], "order": [], "last": [], "target": [],
                                           "ties": [], "improvable": []}
    for step in range(trajectory):
        obs = env.observe()
        assert obs.allowed is not None  # pairwise moves
        costs = pairwise_tour_costs(env.order, data.coords, obs.allowed)  # [B, 3, V, V]
        flat = costs.flatten(1)
        target = flat.argmin(1)  # [B]
        ties = as_good_as_best(flat)  # [B, M] every move as good as the teacher's
        improvable = flat.min(1).values < env.cost - 1e-6
        keep = improvable if improvable_only else torch.ones_like(improvable)
        if step % keep_every == 0:
            for key, value in (("instance", rows), ("order", env.order), ("last", env.last),
                               ("target", target), ("ties", ties), ("improvable", improvable)):
                kept[key].append(value[keep].clone())
        uniform = torch.rand(obs.allowed.flatten(1).shape, generator=generator)
        random_move = uniform.masked_fill(~obs.allowed.flatten(1), -1.0).argmax(1)
        explore = torch.rand(data.size, generator=generator) < epsilon
        env.step(pairwise_move(torch.where(explore, random_move, target), costs.shape[-1]))
    return {"batch": batch, **{key: torch.cat(value) for key, value in kept.items()}}


def state_env(data: Instances, states: dict, rows: torch.Tensor) -> Env:
    """An env holding the stored states ``rows`` (their tours and previous moves)."""
    env = Env(data.index(states["instance"][rows]), states["order"][rows],
              window=data.slots - 1)
    env.last = states["last"][rows]
    return env


# --------------------------------------------------------------------------------------------
# one PE's curve


def imitation_loss(logits: torch.Tensor, states: dict, rows: torch.Tensor,
                   target: str) -> torch.Tensor:
    """Cross-entropy of the flattened move ``logits`` ``[R, M]`` towards the teacher's move
    (``target`` ``move``) or towards any move as good as it (``ties``: ``-log P(tie set)``)."""
    if target == "ties":
        best = logits.masked_fill(~states["ties"][rows], float("-inf"))
        return (logits.logsumexp(1) - best.logsumexp(1)).mean()
    return F.cross_entropy(logits, states["target"][rows])


@torch.no_grad()
def held_out_metrics(model: DACT, data: Instances, states: dict, rows: torch.Tensor,
                     target: str) -> dict[str, float]:
    """On held-out states ``rows``: the imitation loss, and over those where some move
    shortens the tour the shares where the argmax move is the teacher's, as good as it, and
    shortens the tour (at a local optimum the teacher's move is an arbitrary least-worsening
    one, so those states are left out of the shares)."""
    env = state_env(data, states, rows)
    obs = env.observe()
    assert obs.allowed is not None
    logits = model.move_logits(obs).float().flatten(1)
    improvable = states["improvable"][rows]
    costs = pairwise_tour_costs(env.order, env.data.coords, obs.allowed).flatten(1)
    index = logits.argmax(1)
    chosen = costs.gather(1, index[:, None])[:, 0]

    def share(hit: torch.Tensor) -> float:
        return hit[improvable].float().mean().item()

    return {"held_loss": imitation_loss(logits, states, rows, target).item(),
            "teacher": share(index == states["target"][rows]),
            "tie": share(as_good_as_best(costs).gather(1, index[:, None])[:, 0]),
            "improves": share(chosen < env.cost - 1e-6)}


class Validation(NamedTuple):
    """A ``benchmarks/pe_curve.py`` folder's validation set, references and evaluation."""

    problem: str
    batch: dict
    reference: np.ndarray
    steps: int
    seed: int

    @classmethod
    def load(cls, folder: Path) -> Validation:
        problem, batch = load_batch(folder / "test.npz")
        stored = json.loads((folder / "protocol.json").read_text())
        return cls(problem, batch,
                   np.array([float(r["cost"]) for r in read_csv(folder / "reference.csv")]),
                   int(stored["eval_steps"]), int(stored["test_seed"]))

    def gap(self, model: DACT, steps: int | None = None, augment: int = 1) -> float:
        """Mean gap (%) of ``evaluate``'s best tours (``steps``: default the folder's)."""
        best, _ = evaluate(model, self.problem, self.batch, steps or self.steps,
                           seed=self.seed, augment=augment)
        return float((100.0 * (best.double().numpy() - self.reference) / self.reference).mean())


def run_pe(pe: str, args: argparse.Namespace, states: dict, stores: tuple[ResultStore, ...],
           validation: Validation, deadline: float) -> bool:
    """Train and evaluate one PE up to ``args.updates``, then evaluate it at each of the
    ``--final-eval`` budgets; False when the CPU budget ran out."""
    store, final = stores
    data = make_instances(args.problem, states["batch"])
    eligible = states["improvable"] if args.train_states == "improvable" else \
        torch.ones_like(states["improvable"])
    train = eligible & (states["instance"] < args.instances - args.held_out)
    train_rows, held_rows = train.nonzero()[:, 0], (eligible & ~train).nonzero()[:, 0]
    torch.manual_seed(args.seed)
    model = DACT(DACTConfig(problem=args.problem, pe=pe))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    path = args.out / "state" / f"{slug(pe)}-s{args.seed}.pt"
    update, cpu = 0, 0.0
    if path.is_file():
        saved = torch.load(path, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        update, cpu = int(saved["update"]), float(saved["cpu"])
    losses: list[float] = []
    while update < args.updates:
        if time.process_time() > deadline:
            return False
        started = time.process_time()
        model.train(True)
        pick = torch.randint(len(train_rows), (args.batch,),
                             generator=torch.Generator().manual_seed(data_seed(args.seed, update)))
        rows = train_rows[pick]
        obs = state_env(data, states, rows).observe()
        loss = imitation_loss(model.move_logits(obs).flatten(1), states, rows, args.target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        update += 1
        cpu += time.process_time() - started
        if update % args.eval_every == 0 or update == args.updates:
            model.train(False)
            shares = held_out_metrics(model, data, states, held_rows, args.target)
            gap = validation.gap(model)
            store.add(pe=pe, update=update, train_cpu_s=round(cpu, 1),
                      train_loss=round(float(np.mean(losses)), 4), val_gap_pct=round(gap, 3),
                      **{k: round(v, 4) for k, v in shares.items()})
            print(f"{pe} update {update}: loss {np.mean(losses):.3f} held-out "
                  f"{shares['held_loss']:.3f} teacher "
                  f"{shares['teacher']:.3f} tie {shares['tie']:.3f} improves "
                  f"{shares['improves']:.3f} gap {gap:.2f}% ({cpu / 60:.1f} CPU-min)", flush=True)
            losses = []
            path.parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "update": update, "cpu": cpu}, path)
    model.train(False)
    for steps, augment in args.final_eval:
        if final.done(pe=pe, update=update, eval_steps=steps, augment=augment):
            continue
        if time.process_time() > deadline:
            return False
        started = time.perf_counter()
        gap = validation.gap(model, steps, augment)
        final.add(pe=pe, update=update, eval_steps=steps, augment=augment,
                  val_gap_pct=round(gap, 3), eval_seconds=round(time.perf_counter() - started, 1))
        print(f"{pe} after {update} updates, {steps} steps x {augment} images: {gap:.2f}%",
              flush=True)
    return True


def budgets(text: str) -> list[tuple[int, int]]:
    """``300x1,1000x8`` -> ``[(300, 1), (1000, 8)]`` (improvement steps x symmetric images)."""
    out = []
    for item in filter(None, text.split(",")):
        steps, _, images = item.partition("x")
        out.append((int(steps), int(images or 1)))
    return out


# --------------------------------------------------------------------------------------------
# report


def report(folders: list[Path], stem: Path) -> str:
    """``STEM.md`` (every row of every folder) and ``STEM.png`` (validation gap and held-out
    loss against updates, a line per folder and PE); returns the markdown."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.plots.figure import save_png

    lines = ["# Offline imitation of best improvement: DACT backbone learning curves", ""]
    fig, (gap_ax, loss_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for folder in folders:
        settings = json.loads((folder / "protocol.json").read_text())
        rows = read_csv(folder / "curve.csv")
        lines += [f"## `{folder}`", "", "Settings: " + ", ".join(
            f"{k} {v}" for k, v in settings.items()) + ".", "",
            "| PE | updates | CPU-min | train loss | held-out loss | argmax = teacher | "
            "argmax as good | argmax improves | validation gap |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['pe']} | {int(r['update']):,} | "
                         f"{float(r['train_cpu_s']) / 60:.1f} | {r['train_loss']} | "
                         f"{r.get('held_loss') or '-'} | {r['teacher']} | {r['tie']} | "
                         f"{r['improves']} | {float(r['val_gap_pct']):.2f}% |")
        if (folder / "final.csv").is_file():
            lines += ["", "After training, the validation gap at larger budgets "
                      "(improvement steps x symmetric images, best over the images):", "",
                      "| PE | updates | steps x images | validation gap | seconds |",
                      "|---|---:|---:|---:|---:|"]
            for r in read_csv(folder / "final.csv"):
                lines.append(f"| {r['pe']} | {int(r['update']):,} | {r['eval_steps']} x "
                             f"{r['augment']} | {float(r['val_gap_pct']):.2f}% | "
                             f"{r['eval_seconds']} |")
        commits = sorted({r["commit"] for r in rows})
        lines += ["", f"Commits: {', '.join(commits)}.", ""]
        for pe in dict.fromkeys(r["pe"] for r in rows):
            mine = [r for r in rows if r["pe"] == pe]
            updates = [int(r["update"]) for r in mine]
            label = f"{folder.name} {pe}"
            gap_ax.plot(updates, [float(r["val_gap_pct"]) for r in mine], "o-", label=label)
            held = [(u, float(r["held_loss"])) for u, r in zip(updates, mine, strict=True)
                    if r.get("held_loss")]
            if held:
                loss_ax.plot(*zip(*held, strict=True), "o-", label=label)
    gap_ax.set(xlabel="updates", ylabel="validation gap to PyVRP (%)",
               title="sampled moves, 300 steps")
    loss_ax.set(xlabel="updates", ylabel="held-out imitation loss (nats)",
                title="states never trained on")
    for ax in (gap_ax, loss_ax):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_png(fig, stem.with_suffix(".png"))
    text = "\n".join(lines)
    atomic_write_text(stem.with_suffix(".md"), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, action="append",
                        help="the run's folder (with --report: one or more)")
    parser.add_argument("--report", type=Path, default=None,
                        help="write STEM.md and STEM.png from the --out folders, train nothing")
    parser.add_argument("--validation", type=Path,
                        help="a benchmarks/pe_curve.py folder (test.npz, reference.csv)")
    parser.add_argument("--problem", default="cvrp")
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--pe", default="ipe_inv_xpe,nope")
    parser.add_argument("--instances", type=int, default=512)
    parser.add_argument("--held-out", type=int, default=32)
    parser.add_argument("--trajectory", type=int, default=200)
    parser.add_argument("--keep-every", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=0.25)
    parser.add_argument("--updates", type=int, default=6000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--target", choices=("move", "ties"), default="move",
                        help="the teacher's move, or any move as good as it (depot copies "
                             "make several moves equal)")
    parser.add_argument("--train-states", choices=("all", "improvable"), default="all",
                        help="train on every state, or only where some move shortens the tour")
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--final-eval", type=budgets, default=[],
                        help="after training, the validation gap at each STEPSxIMAGES budget, "
                             "e.g. 300x1,1000x8 (rows in --out/final.csv)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu-minutes", type=float, default=float("inf"))
    args = parser.parse_args(argv)
    if args.report is not None:
        print(report(args.out, args.report))
        return 0
    if len(args.out) != 1 or args.validation is None:
        parser.error("training takes one --out folder and --validation")
    args.out = args.out[0]
    if not 0 < args.held_out < args.instances:
        parser.error("--held-out must be between 0 and --instances")
    torch.set_num_threads(1)
    deadline = time.process_time() + 60.0 * args.cpu_minutes
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {k: getattr(args, k) for k in ("problem", "size", "instances", "held_out",
                                              "trajectory", "keep_every", "epsilon", "batch",
                                              "lr", "target", "train_states", "seed")}
    protocol = args.out / "protocol.json"
    if protocol.is_file() and json.loads(protocol.read_text()) != settings:
        raise SystemExit(f"error: {protocol} holds other settings; use another --out")
    atomic_write_text(protocol, json.dumps(settings, indent=1) + "\n")
    states_path = args.out / "states.pt"
    if states_path.is_file():
        states = torch.load(states_path, weights_only=True)
    else:
        started = time.perf_counter()
        states = label_states(args.problem, args.size, args.instances, args.trajectory,
                              args.keep_every, args.epsilon, args.seed,
                              improvable_only=args.train_states == "improvable")
        states["batch"] = {k: torch.as_tensor(v) for k, v in states["batch"].items()}
        torch.save(states, states_path)
        print(f"labelled {len(states['target'])} states in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    states["batch"] = {k: v.numpy() for k, v in states["batch"].items()}
    validation = Validation.load(args.validation)
    store = ResultStore(args.out / "curve.csv", ("commit", "date", "command", *COLUMNS),
                        key=("pe", "update"), provenance=Provenance.current())
    final = ResultStore(args.out / "final.csv", ("commit", "date", "command", *FINAL_COLUMNS),
                        key=("pe", "update", "eval_steps", "augment"),
                        provenance=Provenance.current())
    for pe in args.pe.split(","):
        if not run_pe(pe, args, states, (store, final), validation, deadline):
            print("the CPU budget ran out; rerun the same command to resume")
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
