"""The PE probe (PE paper Section 5.2, Table 3): does an encoding, untrained, already order node
pairs the way desiderata D1-D3 (Section 3.1) ask?

For each solution two sets of customer pairs are drawn:

- *route pairs* ``(u, v)``: distinct customers on the same route, uniform over all such pairs;
- *any pairs*: two distinct customers of the solution, uniform.

Targets (``d`` is the cumulative travel distance from the depot along the route, ``d_L`` the
route's length):

- **D1** (route pairs): the in-route travel-distance gap ``|d_u - d_v|``.
- **D2** (route pairs): the cyclic arc distance ``min(|d_u - d_v|, d_L - |d_u - d_v|)``, the
  travel distance between the two along the closed route, the shorter way round.
- **D3** (any pairs): route membership ``1[route(u) != route(v)]``. Its Spearman correlation with
  a PE distance is positive exactly when inter-route pairs sit farther apart than intra-route
  pairs; the paper's statistic, the ratio of mean inter-route to mean intra-route PE distance,
  is reported beside it (``d3_ratio``; > 1 separates routes).

PE-induced distance of a pair, by kind:

- **node**: ``||PE(u) - PE(v)||_2``.
- **bias**: ``-(bias(u, v) + bias(v, u)) / 2`` averaged over heads (a larger logit bias means
  "closer"; symmetrised because e.g. RPE is not symmetric).
- **rotary**: ``||R(u) 1 - R(v) 1||_2``, the distance between the all-ones query rotated to the
  two positions; it is a decreasing function of the rotary logit ``<R(u) 1, R(v) 1>``.

Learnable encodings are probed as initialised (seeded); the statistic is Spearman's rho
(``scipy.stats.spearmanr``), undefined (NaN) for an encoding that is constant (NoPE).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy.stats import spearmanr

from routecli.errors import OptionError
from routecli.pe import PE_REGISTRY, RouteBatch
from routecli.pe.base import PositionalEncoding
from routecli.pe.kinds import build_pe, pair_scores, slot_vectors
from routecli.resources import require_memory

TARGETS = ("D1", "D2", "D3")

# Table 3 of the PE paper (CVRP-100): our registry name -> (D1, D2, D3). The paper's IPE on
# CVRP is the direction-invariant variant (Section 5.2 / Table 12).
PAPER_TABLE3 = {
    "ape": (0.002, -0.001, 0.003), "sin": (-0.310, -0.319, 0.329),
    "rope": (-0.290, -0.125, 0.072), "rpe": (0.007, 0.010, 0.001),
    "alibi": (-0.310, -0.319, 0.327), "lap": (0.715, 0.721, 0.359),
    "rwse": (0.090, 0.086, 0.138), "spd": (0.824, 0.830, 0.332),
    "dact": (0.096, 0.096, 0.017), "cycleformer": (0.126, 0.085, 0.218),
    "ipe_inv": (0.934, 0.866, 0.229), "xpe": (0.815, 0.806, 0.396),
    "ipe_inv_xpe": (0.877, 0.923, 0.384),
}


@dataclass(frozen=True)
class PairSample:
    """Sampled pairs: ``row``, ``u``, ``v`` slot indices ``[P]`` and their targets."""

    row: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor


def route_pairs(batch: RouteBatch, per_solution: int, generator: torch.Generator) -> PairSample:
    """``per_solution`` same-route customer pairs per row, uniform over all such pairs."""
    customer = batch.is_customer
    route_size = (batch.length - 1).clamp_min(0)
    # Picking u with weight (m - 1) and then v uniform among the m - 1 others of u's route makes
    # every unordered same-route pair equally likely.
    weight = (customer & (route_size > 1)).float() * (route_size - 1).float()
    keep = weight.sum(1) > 0
    rows = torch.nonzero(keep).squeeze(1)
    u = torch.multinomial(weight[rows], per_solution, replacement=True, generator=generator)
    row = rows[:, None].expand_as(u)
    m = route_size[row, u]
    offset = (torch.rand(u.shape, generator=generator) * (m - 1).float()).long() + 1
    target_pos = (batch.pos[row, u] - 1 + offset) % m + 1
    slot_of = _slot_lookup(batch)
    v = slot_of[row, batch.route[row, u], target_pos]
    return PairSample(row.reshape(-1), u.reshape(-1), v.reshape(-1))


def any_pairs(batch: RouteBatch, per_solution: int, generator: torch.Generator) -> PairSample:
    """``per_solution`` pairs of distinct customers per row (uniform; self-pairs are redrawn
    as the next customer)."""
    customer = batch.is_customer.float()
    rows = torch.nonzero(customer.sum(1) > 1).squeeze(1)
    picks = torch.multinomial(customer[rows], 2 * per_solution, replacement=True,
                              generator=generator)
    u, v = picks[:, :per_solution], picks[:, per_solution:]
    count = customer[rows].sum(1, keepdim=True).long()
    rank = torch.cumsum(customer[rows], 1).long() - 1  # rank of a customer among customers
    order = customer[rows].argsort(dim=1, descending=True, stable=True)  # customers first
    clash = u == v
    v = torch.where(clash, order.gather(1, (rank.gather(1, v) + 1) % count), v)
    row = rows[:, None].expand_as(u)
    return PairSample(row.reshape(-1), u.reshape(-1), v.reshape(-1))


def _slot_lookup(batch: RouteBatch) -> torch.Tensor:
    """``[B, R + 1, L_max + 1]``: slot of (route, position)."""
    routes = int(batch.route.max()) + 1
    positions = int(batch.pos.max()) + 1
    table = torch.zeros(batch.batch_size, routes, positions, dtype=torch.long)
    customer = batch.is_customer
    rows = torch.arange(batch.batch_size)[:, None].expand_as(batch.node)
    slots = torch.arange(batch.num_slots)[None].expand_as(batch.node)
    table[rows[customer], batch.route[customer], batch.pos[customer]] = slots[customer]
    return table


def targets(batch: RouteBatch, route: PairSample, anyp: PairSample) -> dict[str, np.ndarray]:
    """D1, D2 on the route pairs and D3 on the any pairs (see module docstring)."""
    gap = (batch.cum[route.row, route.u] - batch.cum[route.row, route.v]).abs().double()
    total = batch.total[route.row, route.u].double()
    d3 = batch.route[anyp.row, anyp.u] != batch.route[anyp.row, anyp.v]
    return {"D1": gap.numpy(), "D2": torch.minimum(gap, total - gap).numpy(),
            "D3": d3.double().numpy()}


@torch.no_grad()
def pe_distances(pe: PositionalEncoding, batch: RouteBatch, pairs: PairSample,
                 out: torch.Tensor | None = None) -> np.ndarray:
    """PE-induced distance of each pair (see module docstring); ``out`` is ``pe(batch)`` if
    already computed. ``[P]``."""
    out = pe(batch) if out is None else out
    r, u, v = pairs.row, pairs.u, pairs.v
    vectors = slot_vectors(pe, out)  # [B, S, D]
    if vectors is None:  # a pairwise encoding: the larger what it adds, the nearer the pair
        scores = pair_scores(pe, out)
        sym = -(scores[r, :, u, v] + scores[r, :, v, u]) / 2  # [P, H|1]
        return sym.mean(1).double().numpy()
    return torch.linalg.norm(vectors[r, u] - vectors[r, v], dim=-1).double().numpy()


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho, NaN when either side is constant or undefined."""
    if np.isnan(x).any() or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(x, y).statistic)


# Reference "distances" that are not encodings: how far pure index order, or the normalised
# cyclic travel distance that a circular distance-indexed PE can at best express, gets on D1-D3.
REFERENCES = {
    "ref_index_gap": "index gap |i - j|",
    "ref_cyclic_arc": "normalised cyclic arc min(g, 1 - g), g = |d_u - d_v| / d_L",
}


def reference_distance(name: str, batch: RouteBatch, pairs: PairSample) -> np.ndarray:
    """The reference pair distances of :data:`REFERENCES` (the arc is NaN across routes). ``[P]``."""
    r, u, v = pairs.row, pairs.u, pairs.v
    if name == "ref_index_gap":
        return (batch.pos[r, u] - batch.pos[r, v]).abs().double().numpy()
    gap = (batch.cum[r, u] - batch.cum[r, v]).abs().double() / batch.total[r, u].double()
    arc = torch.minimum(gap, 1 - gap)
    same = batch.route[r, u] == batch.route[r, v]
    return torch.where(same, arc, torch.full_like(arc, float("nan"))).numpy()


def _ratio(inter: float, intra: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(inter) / intra)


def check_room(num: int, nodes: int, pairs_per_solution: int, dim: int, num_heads: int,
               chunk: int = 100) -> None:
    """Refuse a probe whose peak memory would not fit: the sampled pairs of every solution
    (ids, targets and distances, both sets, ranked for Spearman) and one chunk's encoding
    (a bias encoding holds ``[chunk, heads, N, N]``)."""
    pairs = 2 * num * pairs_per_solution * 160
    encoding = 8 * min(chunk, num) * nodes * max(num_heads * nodes, dim)
    require_memory(pairs + encoding, f"probing {num:,} solution{'s' * (num != 1)} of "
                   f"{nodes:,} nodes "
                   f"({pairs_per_solution:,} pairs each, width {dim})")


def probe(batch: RouteBatch, names: list[str], pairs_per_solution: int = 1000, dim: int = 128,
          num_heads: int = 8, seed: int = 0, chunk: int = 100,
          pe_options: dict[str, dict] | None = None,
          on_done: Callable[[str], None] | None = None) -> dict[str, dict[str, float]]:
    """Spearman correlation of each named PE's (or :data:`REFERENCES` entry's) pair distances
    with D1, D2, D3, plus ``d3_ratio``. Solutions are processed ``chunk`` rows at a time to
    bound memory; ``on_done`` is called with each name when it is finished (progress bars)."""
    check_room(batch.batch_size, batch.num_slots, pairs_per_solution, dim, num_heads, chunk)
    generator = torch.Generator().manual_seed(seed)
    samples = []
    for start in range(0, batch.batch_size, chunk):
        part = batch.index(slice(start, start + chunk))
        rp = route_pairs(part, pairs_per_solution, generator)
        ap = any_pairs(part, pairs_per_solution, generator)
        samples.append((part, rp, ap, targets(part, rp, ap)))
    goal = {t: np.concatenate([s[3][t] for s in samples]) for t in TARGETS}
    results: dict[str, dict[str, float]] = {}
    for name in names:
        route_chunks: list[np.ndarray] = []
        any_chunks: list[np.ndarray] = []
        if name in REFERENCES:
            for part, rp, ap, _ in samples:
                route_chunks.append(reference_distance(name, part, rp))
                any_chunks.append(reference_distance(name, part, ap))
        else:
            torch.manual_seed(seed)  # learnable encodings are probed as initialised
            pe = build_pe(name, dim, dim // num_heads, num_heads,
                          **(pe_options or {}).get(name, {})).eval()
            for part, rp, ap, _ in samples:
                with torch.no_grad():
                    out = pe(part)
                route_chunks.append(pe_distances(pe, part, rp, out))
                any_chunks.append(pe_distances(pe, part, ap, out))
        on_route, on_any = np.concatenate(route_chunks), np.concatenate(any_chunks)
        inter = goal["D3"] > 0
        intra_mean = on_any[~inter].mean() if (~inter).any() else float("nan")
        inter_mean = on_any[inter].mean() if inter.any() else float("nan")
        results[name] = {
            "D1": spearman(on_route, goal["D1"]),
            "D2": spearman(on_route, goal["D2"]),
            "D3": spearman(on_any, goal["D3"]),
            # a ratio of mean distances needs non-negative distances (not so for biases);
            # inf when intra-route pairs coincide (per-route encodings)
            "d3_ratio": _ratio(inter_mean, intra_mean) if on_any.min() >= 0 else float("nan"),
        }
        if on_done is not None:
            on_done(name)
    return results


def probe_options(names: list[str], dim: int, heads: int, ipe_schedule: str,
                  ipe_amplitude: str | None) -> dict[str, dict[str, Any]]:
    """The options of each probed encoding (IPE's frequency schedule and amplitude for the
    encodings built on it), checked with the widths (``OptionError`` naming the flag)."""
    from routecli.pe.routing import AMPLITUDES, SCHEDULES, HierarchicalPE, InRoutePE

    if dim % 2 or (dim // heads) % 2:
        raise OptionError(f"--dim must be even and --dim / --heads even (RoPE), got {dim}/{heads}")
    if ipe_schedule not in SCHEDULES:
        raise OptionError(f"--ipe-schedule must be one of {', '.join(SCHEDULES)}")
    if ipe_amplitude not in (None, *AMPLITUDES):
        raise OptionError(f"--ipe-amplitude must be one of {', '.join(AMPLITUDES)}")
    if ipe_schedule == "geometric" and ipe_amplitude == "harmonic":
        raise OptionError("--ipe-amplitude harmonic needs --ipe-schedule integer")
    ipe = {"schedule": ipe_schedule, "amplitude": ipe_amplitude}
    return {n: ipe for n in names if n in PE_REGISTRY
            and PE_REGISTRY[n].build.func in (InRoutePE, HierarchicalPE)}


# The columns of a table of probe_rows (``--out`` CSV)
PROBE_COLUMNS = ["pe", "title", "kind", "D1", "D1_paper", "D2", "D2_paper", "D3", "D3_paper",
                 "d3_ratio"]


def probe_rows(results: dict[str, dict[str, float]], names: list[str],
               set_name: str) -> list[dict[str, Any]]:
    """One row per probed name: its kind, rho for D1-D3 beside the paper's Table 3 (CVRP-100
    only) and the D3 ratio."""
    rows = []
    for n in names:
        r = results[n]
        paper = PAPER_TABLE3.get(n, (math.nan,) * 3) if set_name == "cvrp-100" else (math.nan,) * 3
        title, kind = (REFERENCES[n], "reference") if n in REFERENCES else (
            PE_REGISTRY[n].title, PE_REGISTRY[n].kind)
        rows.append({"pe": n, "title": title, "kind": kind,
                     "D1": r["D1"], "D1_paper": paper[0], "D2": r["D2"], "D2_paper": paper[1],
                     "D3": r["D3"], "D3_paper": paper[2], "d3_ratio": r["d3_ratio"]})
    return rows
