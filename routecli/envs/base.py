"""What a construction environment shows the policy at one step, and shared helpers.

Every step the policy sees the current subproblem as rows ``[first, current, candidates...]``:
row 0 is the starting node (the depot for CVRP), row 1 the current node, rows 2.. the candidate
set ``A_t`` gathered from all nodes (padded to the largest ``|A_t|`` of the batch). Node ids
index the policy's memory, so attention can run over any gathered subset of the N nodes.

Large instances (MiLoop Section 4.1): with :class:`CandidateSets` the set is cut to the ``K``
nearest allowed nodes of the current node, found by the numba kernel of
:mod:`routecli.kernels.candidates`; no step then touches an ``N``-sized tensor except the
in-place visit flags, so a rollout costs time linear in ``N`` (each step attends over
``K + 2`` rows) and ``O(N D)`` memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from routecli.kernels.candidates import CandidateIndex


@dataclass
class Observation:
    """One decision step for a batch of B instances; R = 2 + K rows, K = max |A_t|."""

    nodes: Tensor  # [B, R] long: node id per row (padding rows point at id N, a spare slot)
    features: Tensor  # [B, R, F] float: normalised coordinates (+ normalised demand for CVRP)
    coords: Tensor  # [B, R, 2] float: per-step normalised coordinates
    valid: Tensor  # [B, R] bool: False on padding rows
    feasible: Tensor  # [B, K] bool: candidates the policy may pick now (Eq. 11)
    num_candidates: Tensor  # [B] long: |A_t|
    capacity: Tensor | None = None  # [B] float: remaining capacity / C (CVRP)


ROW_ALIGN = 8
"""Candidate sets are padded to a multiple of this many rows. A rollout otherwise shows the
policy a new number of rows at every step, and on a CPU every new matrix shape costs oneDNN a
kernel compilation (several milliseconds, more than the product) that its bounded primitive
cache forgets again within a training step."""


def aligned(k: int) -> int:
    """``k`` rounded up to a multiple of :data:`ROW_ALIGN` (at least one)."""
    return max(-(-k // ROW_ALIGN), 1) * ROW_ALIGN


def compact(available: Tensor, pad_id: int) -> tuple[Tensor, Tensor]:
    """Gather the available node ids to the front. ``[B, N] bool -> ids [B, K], valid [B, K]``.

    K is the largest count in the batch rounded up by :func:`aligned`; shorter rows are padded
    with ``pad_id``. A stable sort keeps ids ascending, so the result is deterministic.
    """
    counts = available.sum(1)  # [B]
    k = aligned(int(counts.max()))
    order = torch.argsort((~available).to(torch.int8), dim=1, stable=True)[:, :k]  # [B, <=K]
    order = F.pad(order, (0, k - order.shape[1]))
    valid = torch.arange(k, device=available.device)[None, :] < counts[:, None]
    return order.masked_fill(~valid, pad_id), valid


class CandidateSets:
    """The ``K`` nearest allowed nodes of each rollout's current node, for rollouts that all
    decode the same instance (any of its 8 symmetric images: they keep every distance), or,
    with coords ``[B, N, 2]``, for B rollouts of B instances, one per row (teacher forcing on
    a batch of labelled TSP instances).

    coords ``[N, 2]`` or ``[B, N, 2]``; demand ``[N]`` (CVRP, one instance, as a share of the
    capacity): only customers that fit the remaining capacity are candidates, and the depot
    (node 0) is always one while the vehicle is away. The static neighbour lists hold ``2 K``
    nodes, so the grid fallback is only needed once most of a neighbourhood is visited.
    """

    def __init__(self, coords: np.ndarray, k: int, demand: np.ndarray | None = None):
        if k < 1:
            raise ValueError(f"the candidate set size must be positive, got {k}")
        per_row = np.ndim(coords) == 3
        if per_row and demand is not None:
            raise ValueError("candidate sets with demands take one instance")
        self.k = k
        self.indexes = [CandidateIndex(xy, list_size=2 * k)
                        for xy in (coords if per_row else [coords])]
        self.demand = None if demand is None else np.asarray(demand, np.float64)

    def select(self, current: Tensor, visited: Tensor, pad_id: int,
               depot_open: Tensor | None = None,
               remaining: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Candidate ids ``[B, K']`` (ascending, ``pad_id`` padding) and their validity, as
        :func:`compact` returns them; K' is the largest set size of the batch, rounded up by
        :func:`aligned`."""
        depot = None if depot_open is None else depot_open.cpu().numpy()
        room = None if remaining is None else remaining.double().cpu().numpy()
        at, seen = current.cpu().numpy(), visited.cpu().numpy()
        if len(self.indexes) == 1:
            found, sizes = self.indexes[0].query(at, seen, self.k,
                                                 always=0 if depot is not None else -1,
                                                 always_open=depot, demand=self.demand,
                                                 remaining=room)
        else:  # one query per row, each on its own instance
            if len(self.indexes) != len(at):
                raise ValueError(f"candidate sets of {len(self.indexes)} instances asked for "
                                 f"{len(at)} rows")
            rows = [index.query(at[r:r + 1], seen[r:r + 1], self.k)
                    for r, index in enumerate(self.indexes)]
            found = np.concatenate([f for f, _ in rows])
            sizes = np.concatenate([n for _, n in rows])
        width = aligned(int(sizes.max()))
        ids = torch.from_numpy(found[:, :width]).to(visited.device)
        ids = F.pad(ids, (0, width - ids.shape[1]), value=-1)
        # ascending ids: the same row order as compact(), so K >= N reproduces full decoding
        ids = ids.masked_fill(ids < 0, pad_id).sort(1).values
        return ids, ids != pad_id


def normalise_coords(coords: Tensor, valid: Tensor) -> Tensor:
    """Shift the valid rows to the origin and scale by their larger side (aspect ratio kept).

    coords ``[B, R, 2]``, valid ``[B, R]``; returns ``[B, R, 2]`` inside the unit square
    (padding rows map to 0). Section 3.1 "Initial Embedding": every subproblem looks alike.
    """
    big = torch.finfo(coords.dtype).max
    lo = coords.masked_fill(~valid[..., None], big).amin(1, keepdim=True)  # [B, 1, 2]
    hi = coords.masked_fill(~valid[..., None], -big).amax(1, keepdim=True)  # [B, 1, 2]
    side = (hi - lo).amax(-1, keepdim=True).clamp_min(1e-9)  # [B, 1, 1]
    return ((coords - lo) / side).masked_fill(~valid[..., None], 0.0)


def path_length(locs: Tensor, path: Tensor) -> Tensor:
    """Length of the closed walk ``path`` (last node back to the first). locs ``[B, N, 2]``,
    path ``[B, T]`` -> ``[B]``."""
    points = locs.gather(1, path[..., None].expand(-1, -1, 2))  # [B, T, 2]
    return (points - points.roll(-1, dims=1)).norm(dim=-1).sum(1)


class Walks:
    """What a routing environment records: the node each of its B rollouts moved to at every
    step, from the first node on, and the length of each closed walk (routes return to the
    depot, a tour to its first node)."""

    locs: Tensor  # [B, N, 2]
    actions: list[Tensor]  # one [B] long per step

    def paths(self) -> Tensor:
        """``[B, T]`` the nodes in visiting order (a CVRP's depot returns included)."""
        return torch.stack(self.actions, 1)

    def cost(self) -> Tensor:
        """``[B]`` closed walk lengths (the negated reward)."""
        return path_length(self.locs, self.paths())


class LockStepWalks(Walks):
    """Walks that visit one new node per step, so every rollout ends after N steps."""

    batch: int
    num_nodes: int

    @property
    def done(self) -> Tensor:
        """``[B]`` bool: every node visited."""
        return torch.full((self.batch,), len(self.actions) >= self.num_nodes, dtype=torch.bool,
                          device=self.locs.device)
