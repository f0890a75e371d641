"""Training instances and the labelled pools of the supervised recipe.

Distributions (:func:`training_batch`):

- ``uniform``: the papers' instances (``x ~ U[0,1]^2``; CVRP demands ``U{1..9}``, capacity 50).
- ``mixed``: instances the way files are read. Coordinates are integers on a ``[0, 1000]^2``
  grid (CVRPLIB X), uniform or clustered, with an aspect ratio in ``[0.5, 1]``, brought to the
  unit square by :func:`routecli.problems.geometry.unit_square` exactly as ``routecli solve``
  feeds a file to the policy. CVRP depots are random, central or in a corner; demands come
  from one of :data:`DEMAND_RANGES` per instance (X and AGS use unit to 100-unit demands); the
  capacity is set from a target route length drawn log-uniformly in
  :data:`ROUTE_LENGTHS` customers (X routes hold 3 to 25 customers, AGS 15 to 117).

A :class:`LabelStore` is a growing set of labelled instances of one (problem, distribution,
size) kept in the repository (``data/labels``): PyVRP solutions on a deterministic iteration
budget, or LKH-3 tours (TSP, ``labeller="lkh"``: near-optimal in 2-7 s at 500-1,000 nodes,
where PyVRP's labels take minutes), computed in chunks (in the background by
``benchmarks/build_labels.py``, or by a supervised stage that needs more), and reused by every
later run on any machine. A :class:`LabelPool` is the in-memory form a training stage samples
from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from routecli import generate
from routecli.atomic import atomic_write
from routecli.baselines.lkh import lkh_tour, require_elkai
from routecli.baselines.reference import ReferenceBudget, reference_solutions
from routecli.baselines.reference import decode as decode_solution
from routecli.baselines.reference import encode as encode_solution
from routecli.errors import OptionError
from routecli.miloop.options import DISTRIBUTIONS, LABELLERS, MIXED_PROBLEMS, Labeller
from routecli.problems import Routes, Tour, check
from routecli.problems.geometry import augment8, unit_square
from routecli.tasks import Executor, Task, make_executor, run_tasks, task_key

GRID = 1000  # integer coordinates of mixed instances, as in CVRPLIB X
DEMAND_RANGES = ((1, 1), (1, 3), (1, 10), (5, 10), (1, 100), (50, 100))
ROUTE_LENGTHS = (5.0, 150.0)  # customers per route of mixed CVRP instances, log-uniform


def mixed_instance(problem: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One ``mixed`` instance with ``n`` nodes (TSP) or customers (CVRP), unbatched."""
    nodes = n + (problem == "cvrp")
    if rng.random() < 0.5:
        xy = generate.uniform_locations(rng, 1, nodes)[0]
    else:
        xy = generate.clustered_locations(rng, 1, nodes)[0]
    xy = np.rint(xy * GRID * np.array([1.0, rng.uniform(0.5, 1.0)]))
    if problem == "tsp":
        return {"locs": unit_square(xy)}
    depot = rng.integers(3)  # random (as drawn), centre, corner
    if depot:
        xy[0] = xy[1:].mean(0).round() if depot == 1 else xy[1:].min(0)
    lo, hi = DEMAND_RANGES[rng.integers(len(DEMAND_RANGES))]
    demand = rng.integers(lo, hi + 1, size=nodes)
    demand[0] = 0
    length = np.exp(rng.uniform(*np.log(ROUTE_LENGTHS)))
    capacity = max(float(hi), float(np.ceil(length * (lo + hi) / 2)))
    return {"locs": unit_square(xy), "demand": demand, "capacity": np.array(capacity)}


def training_batch(problem: str, distribution: str, size: int, num: int,
                   seed: int) -> dict[str, np.ndarray]:
    """``num`` instances of ``size`` nodes (TSP) or customers (CVRP) as a numpy batch; a
    ``mixed`` instance ``i`` depends only on ``(seed, size, i)``."""
    if distribution == "uniform":
        return generate.GENERATORS[problem](num, size, seed)
    if distribution != "mixed" or problem not in MIXED_PROBLEMS:
        raise ValueError(f"no {distribution!r} training distribution for {problem}; "
                         f"choose from {', '.join(DISTRIBUTIONS)} (mixed: tsp, cvrp)")
    rows = [mixed_instance(problem, size, np.random.default_rng([seed, size, i]))
            for i in range(num)]
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def label_sequences(problem: str, solutions: list[Tour | Routes],
                    rng: np.random.Generator) -> torch.Tensor:
    """Solutions as node sequences ``[B, T]`` for teacher forcing.

    TSP tours start at a random node in a random direction; CVRP routes come in random order
    and direction, joined by depot visits and padded with depot no-ops (both are symmetries
    of the objective, so the policy is not taught an arbitrary order). PDTSP tours start at
    the depot in the solver's direction (the reverse breaks precedence).
    """
    sequences = []
    for solution in solutions:
        if problem == "pdtsp":
            assert isinstance(solution, Tour)
            sequences.append(solution.order)
        elif problem == "tsp":
            assert isinstance(solution, Tour)
            tour = np.roll(solution.order, -int(rng.integers(len(solution.order))))
            sequences.append(tour if rng.random() < 0.5 else np.roll(tour[::-1], 1))
        else:
            assert isinstance(solution, Routes)
            path = [0]
            for r in rng.permutation(len(solution.routes)):
                route = solution.routes[r]
                path.extend((route if rng.random() < 0.5 else route[::-1]).tolist() + [0])
            sequences.append(np.asarray(path))
    out = np.zeros((len(sequences), max(len(seq) for seq in sequences)), np.int64)
    for i, seq in enumerate(sequences):
        out[i, :len(seq)] = seq
    return torch.as_tensor(out)


def equivalent_actions(problem: str, labels: torch.Tensor, nodes: int) -> torch.Tensor | None:
    """The actions as good as the label's ``[B, T, nodes]`` (node ids) for sequences ``labels``
    ``[B, T]`` of :func:`label_sequences`, or ``None`` where only the label's action is.

    A label's route order and direction are drawn at random, so where it starts a route
    (CVRP: a customer after the depot) any end of a route it has not yet started is as good;
    where a TSP tour leaves its start, either neighbour is. Elsewhere the set is the label's
    action alone. Teacher forcing towards the set (``-log P(set)``) leaves out the entropy of
    the arbitrary order, which no policy can learn.
    """
    if problem not in ("cvrp", "tsp"):
        return None
    batch, steps = labels.shape
    out = torch.zeros(batch, steps, nodes, dtype=torch.bool, device=labels.device)
    out.scatter_(2, labels[:, :, None], True)
    if problem == "tsp":
        out[:, 1].scatter_(1, labels[:, -1:], True)
        return out
    padded = torch.nn.functional.pad(labels, (1, 1))  # depot before the first and after the last
    customer = labels != 0
    starts = customer & (padded[:, :-2] == 0)  # [B, T]
    ends = customer & (padded[:, 2:] == 0)
    for b in range(batch):
        first = starts[b].nonzero()[:, 0]  # [R] positions of route starts, in order
        last = ends[b].nonzero()[:, 0]
        for r, t in enumerate(first.tolist()):
            out[b, t, labels[b, first[r:]]] = True
            out[b, t, labels[b, last[r:]]] = True
    return out


@dataclass
class LabelPool:
    """Labelled instances of one size, in memory (see the module docstring)."""

    problem: str
    raw: dict[str, np.ndarray]  # the instances, a numpy batch
    solutions: list[Tour | Routes]

    def __len__(self) -> int:
        return len(self.solutions)

    def sample(self, rows: np.ndarray, rng: np.random.Generator,
               device: str) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """Instances ``rows`` as tensors, in one random symmetric image of the unit square
        (the same for the whole batch), and their labels as :func:`label_sequences`."""
        data = {k: torch.as_tensor(v[rows], dtype=torch.long if k == "demand" else torch.float32)
                for k, v in self.raw.items()}
        data["locs"] = augment8(data["locs"])[int(rng.integers(8))]
        labels = label_sequences(self.problem, [self.solutions[i] for i in rows], rng)
        return {k: v.to(device) for k, v in data.items()}, labels.to(device)


def chunk_seed(seed: int, chunk: int) -> int:
    """The generator seed of chunk ``chunk`` of a label store of instance seed ``seed``."""
    return int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0] >> 1)


LABEL_CHUNK = 200  # instances per file of a PyVRP LabelStore
# instances per file of an LKH store: its 500-2,000-node labels take seconds each, and a
# chunk is what a stopped labeller loses
LKH_CHUNK = 20
LKH_RUNS = 1  # LKH-3 runs per label
LABEL_SEED = 0  # the stores' instances; validation (987654) and evaluation (2026) sets differ


def require_labeller(problem: str, labeller: str) -> None:
    """Refuse, in one line, a labeller that cannot label ``problem`` on this machine."""
    if labeller not in LABELLERS:
        raise OptionError(f"--labeller: choose {', '.join(LABELLERS)}, not {labeller!r}")
    if labeller == "lkh":
        if problem != "tsp":
            raise OptionError(f"--labeller lkh labels TSP instances only, not {problem} "
                              "(use pyvrp)")
        require_elkai("--labeller lkh")


@dataclass(frozen=True)
class LabelStore:
    """A growing, committed set of labelled instances of one (problem, distribution, size,
    seed, labeller and its budget): a folder of chunk files of ``chunk`` instances each
    (default :data:`LABEL_CHUNK`, :data:`LKH_CHUNK` for LKH).

    ``labeller``: ``pyvrp`` (PyVRP on ``budget``) or ``lkh`` (TSP: :data:`LKH_RUNS` LKH-3
    runs, ``budget`` unused); it names the folder, so stores of the two never mix. Chunk ``c``
    holds only the solutions (``int16``) and a digest of its instances, which are regenerated
    from ``(seed, c)`` on load; the digest proves they are the ones labelled. A chunk is
    written atomically, so a labeller that is stopped loses at most one chunk, and a later
    one (on any machine) goes on at the first missing chunk.
    """

    root: Path
    problem: str
    distribution: str
    size: int
    budget: ReferenceBudget
    seed: int = LABEL_SEED
    chunk: int = 0  # 0: the labeller's default
    labeller: Labeller = "pyvrp"

    def __post_init__(self) -> None:
        require_labeller(self.problem, self.labeller)
        if not self.chunk:
            object.__setattr__(self, "chunk", LKH_CHUNK if self.labeller == "lkh" else LABEL_CHUNK)

    @property
    def folder(self) -> Path:
        solver = f"lkh-r{LKH_RUNS}" if self.labeller == "lkh" else f"i{self.budget.iterations}"
        return Path(self.root) / (f"{self.problem}-{self.distribution}-{self.size}-s{self.seed}-"
                                  f"{solver}-c{self.chunk}")

    def chunk_path(self, chunk: int) -> Path:
        return self.folder / f"chunk-{chunk:05d}.npz"

    def chunk_instances(self, chunk: int) -> dict[str, np.ndarray]:
        return training_batch(self.problem, self.distribution, self.size, self.chunk,
                              chunk_seed(self.seed, chunk))

    def chunks(self) -> list[int]:
        """The chunks labelled so far, in order."""
        return sorted(int(p.stem.split("-")[1]) for p in self.folder.glob("chunk-*.npz"))

    def __len__(self) -> int:
        return self.chunk * len(self.chunks())

    def label_arrays(self, chunk: int, jobs: int = 1) -> dict[str, Any]:
        """The arrays of chunk ``chunk``: the labeller's solutions (PyVRP on the store's
        budget with ``jobs`` processes, or LKH tours, each checked feasible), encoded, and the
        digest of the instances (a task, in any process; :meth:`write_chunk` stores them)."""
        from routecli.generate import batch_instances

        raw = self.chunk_instances(chunk)
        instances = batch_instances(self.problem, raw)
        solutions: list[Tour | Routes]
        if self.labeller == "lkh":
            solutions = [Tour(lkh_tour(xy, LKH_RUNS)) for xy in raw["locs"]]
            for instance, solution in zip(instances, solutions, strict=True):
                check(instance, solution)
        else:
            solutions = reference_solutions(instances, self.budget, jobs=jobs, progress=False)
        encoded = [encode_solution(s) for s in solutions]
        arrays: dict[str, Any] = {"digest": np.array(_digest(raw))}
        for name in encoded[0]:
            arrays[f"label_{name}"] = np.concatenate([e[name] for e in encoded]).astype(np.int16)
            arrays[f"length_{name}"] = np.array([len(e[name]) for e in encoded], np.int16)
        return arrays

    def write_chunk(self, chunk: int, arrays: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.chunk_path(chunk), lambda fh: np.savez_compressed(fh, **arrays))

    def label_chunk(self, chunk: int, jobs: int = 1) -> None:
        """Label chunk ``chunk`` (:meth:`label_arrays`) and write it."""
        self.write_chunk(chunk, self.label_arrays(chunk, jobs))

    def chunk_task(self, chunk: int) -> Task:
        """Labelling chunk ``chunk`` as a task (its result goes to :meth:`write_chunk`)."""
        return Task(task_key("labels", f"{self.folder.name}-{chunk}", folder=self.folder.name,
                             chunk=chunk), self.label_arrays, (chunk,))

    def read_chunk(self, chunk: int) -> LabelPool:
        raw = self.chunk_instances(chunk)
        with np.load(self.chunk_path(chunk), allow_pickle=False) as data:
            if str(data["digest"]) != _digest(raw):
                raise ValueError(f"{self.chunk_path(chunk)}: its instances no longer regenerate "
                                 "(the generator changed); relabel this store")
            names = [k[len("label_"):] for k in data.files if k.startswith("label_")]
            pieces = {name: np.split(data[f"label_{name}"].astype(np.int64),
                                     np.cumsum(data[f"length_{name}"])[:-1]) for name in names}
        solutions = [decode_solution({name: pieces[name][i] for name in names})
                     for i in range(self.chunk)]
        return LabelPool(self.problem, raw, solutions)

    def ensure(self, count: int, jobs: int = 1, progress: bool = True,
               executor: Executor | None = None) -> LabelPool:
        """Label the missing chunks among the first ``ceil(count / chunk)``, a task each on
        ``executor`` (default: a local pool of ``jobs`` processes), each written as it
        finishes; then load every chunk there is (a store grown in the background gives
        more)."""
        missing = [c for c in range(-(-count // self.chunk)) if not self.chunk_path(c).exists()]
        if missing and progress:
            print(f"labelling {len(missing) * self.chunk} {self.problem}-{self.size} instances "
                  f"into {self.folder}", flush=True)
        with executor or make_executor("pool", jobs) as engine:
            run_tasks([self.chunk_task(c) for c in missing], engine,
                      lambda task, arrays: self.write_chunk(task.args[0], arrays))
        return self.load()

    def load(self, limit: int | None = None) -> LabelPool:
        """The first ``limit`` labelled instances (all by default) as one pool."""
        chunks = self.chunks()
        if limit is not None:
            chunks = chunks[:max(1, -(-limit // self.chunk))]
        if not chunks:
            raise FileNotFoundError(f"no labels in {self.folder}")
        pools = [self.read_chunk(c) for c in chunks]
        raw = {k: np.concatenate([p.raw[k] for p in pools]) for k in pools[0].raw}
        return LabelPool(self.problem, raw, [s for p in pools for s in p.solutions])


def _digest(raw: dict[str, np.ndarray]) -> str:
    import hashlib

    h = hashlib.sha256()
    for key in sorted(raw):
        h.update(key.encode())
        h.update(np.ascontiguousarray(raw[key], dtype=np.float64).tobytes())
    return h.hexdigest()[:16]
