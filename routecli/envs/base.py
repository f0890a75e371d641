"""What a construction environment shows the policy at one step, and shared helpers.

Every step the policy sees the current subproblem as rows ``[first, current, candidates...]``:
row 0 is the starting node (the depot for CVRP), row 1 the current node, rows 2.. the candidate
set ``A_t`` gathered from all nodes (padded to the largest ``|A_t|`` of the batch). Node ids
index the policy's memory, so attention can run over any gathered subset of the N nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


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


def compact(available: Tensor, pad_id: int) -> tuple[Tensor, Tensor]:
    """Gather the available node ids to the front. ``[B, N] bool -> ids [B, K], valid [B, K]``.

    K is the largest count in the batch; shorter rows are padded with ``pad_id``. A stable sort
    keeps ids ascending, so the result is deterministic.
    """
    counts = available.sum(1)  # [B]
    k = max(int(counts.max()), 1)
    order = torch.argsort((~available).to(torch.int8), dim=1, stable=True)[:, :k]  # [B, K]
    valid = torch.arange(k, device=available.device)[None, :] < counts[:, None]
    return order.masked_fill(~valid, pad_id), valid


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
